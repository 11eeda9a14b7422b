#!/usr/bin/env node
'use strict';
// A local cluster on loopback ports, for trying `--metadata etcd://…` by hand:
//
//   node ops/local-cluster.js [--nodes 1-3] [--seconds N] [--keep] [--no-objects]
//
//   3 etcd members (127.0.0.1, free ports) ◀── --metadata etcd://m1,m2,m3/svc-local ── svc node 1..N
//                                                --objects file:<dir>/objects (shared) ──┘
//
// With objects (the default) stream data lives in one shared `file:` object store, so streams fail
// over when a node is killed and move with POST /admin/transfer; --no-objects keeps each stream on
// its owner's disk.
//
// Prints every address, then runs until Ctrl-C / SIGTERM (or for --seconds), and tears everything
// down: nodes first (SIGTERM, graceful), then the etcd members; the data directory is removed
// unless --keep. Build first (`npm run build`): nodes run dist/main.js. Auth is off, so everything
// binds loopback only. Nodes on one etcd prefix form a cluster: streams are placed on the nodes,
// and a request to a node that does not own its stream gets 307 to the owner (docs/cluster.md).

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startEtcd, freePorts } = require('./lib/etcd-local');

const ROOT = path.resolve(__dirname, '..');
const MAIN = path.join(ROOT, 'dist', 'main.js');

function parseArgs(argv) {
  const o = { nodes: 3, seconds: 0, keep: false, objects: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--nodes') o.nodes = Number(argv[++i]);
    else if (a === '--seconds') o.seconds = Number(argv[++i]);
    else if (a === '--keep') o.keep = true;
    else if (a === '--no-objects') o.objects = false;
    else {
      console.error(`unknown argument ${a}\nusage: node ops/local-cluster.js [--nodes 1-3] [--seconds N] [--keep] [--no-objects]`);
      process.exit(2);
    }
  }
  if (!Number.isInteger(o.nodes) || o.nodes < 0 || o.nodes > 3) {
    console.error('--nodes must be 0, 1, 2 or 3');
    process.exit(2);
  }
  return o;
}

/** Start one node and resolve once it logged "node started". */
async function startNode(i, url, dir, objects) {
  const [listen, admin, kafka] = await freePorts(3);
  return new Promise((resolve, reject) => {
    const dataDir = path.join(dir, `node${i}`);
    const args = [MAIN, 'serve', '--metadata', url, '--data-dir', dataDir, '--listen', `127.0.0.1:${listen}`, '--admin-listen', `127.0.0.1:${admin}`, '--kafka-listen', `127.0.0.1:${kafka}`];
    if (objects !== null) args.push('--objects', `file:${objects}`);
    const log = fs.openSync(path.join(dir, `node${i}.log`), 'a');
    const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', log] });
    fs.closeSync(log);
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d.toString();
      fs.appendFileSync(path.join(dir, `node${i}.log`), d);
      if (out.includes('"node started"')) resolve({ i, proc, listen, admin, kafka, dataDir });
    });
    proc.once('exit', (code) => reject(new Error(`node ${i} exited with ${code} before starting; see ${path.join(dir, `node${i}.log`)}`)));
  });
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.nodes > 0 && !fs.existsSync(MAIN)) {
    console.error('dist/main.js not found: run `npm run build` first');
    process.exit(1);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-local-cluster-'));
  let etcd = null;
  const nodes = [];
  let stopping = null;
  const stop = () =>
    (stopping ??= (async () => {
      for (const n of nodes) {
        if (n.proc.exitCode === null && n.proc.signalCode === null) {
          const gone = new Promise((r) => n.proc.once('exit', r));
          n.proc.kill('SIGTERM');
          await gone;
        }
      }
      if (etcd) await etcd.stop();
      if (!o.keep) fs.rmSync(dir, { recursive: true, force: true });
      console.log(o.keep ? `stopped; data kept in ${dir}` : 'stopped; data removed');
    })());
  process.on('SIGINT', () => stop().then(() => process.exit(0)));
  process.on('SIGTERM', () => stop().then(() => process.exit(0)));
  try {
    etcd = await startEtcd(path.join(dir, 'etcd'), 3);
    const url = etcd.url('svc-local');
    console.log(`etcd: ${etcd.endpoints.join(', ')}  (etcdctl --endpoints ${etcd.endpoints.join(',')} …)`);
    console.log(`--metadata ${url}`);
    const objects = o.objects ? path.join(dir, 'objects') : null;
    if (objects !== null) {
      fs.mkdirSync(objects);
      console.log(`--objects file:${objects}`);
    }
    for (let i = 1; i <= o.nodes; i++) {
      const n = await startNode(i, url, dir, objects);
      nodes.push(n);
      console.log(`node ${i}: protocol http://127.0.0.1:${n.listen}  admin http://127.0.0.1:${n.admin}  kafka 127.0.0.1:${n.kafka}`);
    }
    console.log(`logs and data: ${dir}`);
    if (o.seconds > 0) setTimeout(() => stop().then(() => process.exit(0)), o.seconds * 1000);
    else console.log('Ctrl-C stops the cluster.');
  } catch (err) {
    console.error(err.message);
    await stop();
    process.exit(1);
  }
}

main();
