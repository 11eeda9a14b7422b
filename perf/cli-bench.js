'use strict';
// `svc bench append` beside wrk on the same workload: one node (from dist/), one stream,
// single-record 100-byte appends over N keep-alive connections for D seconds, closed loop.
// Rounds alternate the order (wrk first, then svc; then svc first) so neither always runs on
// a warmer node. Prints a Markdown table with the ratio svc ÷ wrk; RESULTS.md is edited by hand.
//
//   node perf/cli-bench.js                 # 6 rounds × 5 s each, 64 connections
//   CLI_BENCH_SECONDS=5 CLI_BENCH_ROUNDS=1 CLI_BENCH_CONNECTIONS=32 node perf/cli-bench.js

const { spawn, execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { haveWrk, runWrk } = require('./lib/wrk');

const ROOT = path.resolve(__dirname, '..');
const SECONDS = Math.min(Number(process.env.CLI_BENCH_SECONDS || 5), 20);
const ROUNDS = Math.min(Number(process.env.CLI_BENCH_ROUNDS || 6), 10);
const CONNECTIONS = Number(process.env.CLI_BENCH_CONNECTIONS || 64);
const RECORD = 100;

function startNode(dataDir) {
  const args = [path.join(ROOT, 'dist', 'main.js'), 'serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--kafka-listen', '127.0.0.1:0', '--data-dir', dataDir];
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.includes('"node started"'));
      if (line) resolve({ proc, url: `http://${JSON.parse(line).listen}` });
    });
    proc.once('exit', (code) => reject(new Error(`node exited with ${code}`)));
  });
}

function svcBench(url, stream) {
  const argv = [path.join(ROOT, 'bin', 'svc'), 'bench', 'append', '--url', url, '--stream', stream, '-c', String(CONNECTIONS), '--duration', String(SECONDS), '--record-size', String(RECORD), '-o', 'json'];
  return new Promise((resolve, reject) =>
    execFile(process.execPath, argv, { timeout: (SECONDS + 30) * 1000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout)))),
  );
}

async function main() {
  if (!haveWrk()) throw new Error('wrk is not on PATH (apt-get install wrk)');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-bench-'));
  const node = await startNode(dataDir);
  const stream = '/cli-bench';
  await fetch(node.url + stream, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } });
  const bodyFile = path.join(dataDir, 'body.bin');
  fs.writeFileSync(bodyFile, Buffer.alloc(RECORD, 'x'));
  const rows = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['wrk', 'svc'] : ['svc', 'wrk'];
      const got = {};
      for (const tool of order) {
        if (tool === 'wrk') {
          const r = await runWrk({ url: node.url + stream, script: 'append.lua', args: [bodyFile, 'application/octet-stream'], seconds: SECONDS, connections: CONNECTIONS });
          got.wrk = { rps: r.rps, p50: r.latency.p50 / 1000, p99: r.latency.p99 / 1000, errors: Object.values(r.errors).reduce((a, b) => a + b, 0) };
        } else {
          const r = await svcBench(node.url, stream);
          got.svc = { rps: r.requestsPerSec, p50: r.latencyMs.p50, p99: r.latencyMs.p99, errors: r.errors };
        }
      }
      rows.push(got);
    }
  } finally {
    node.proc.kill('SIGTERM');
  }
  const f = (n) => Math.round(n).toLocaleString('en-US');
  console.log(`Single-record ${RECORD} B appends, one stream, ${CONNECTIONS} connections, ${SECONDS} s per run, ${os.cpus().length} CPUs\n`);
  console.log('| round | wrk req/s | svc bench req/s | svc ÷ wrk | wrk p50 / p99 ms | svc p50 / p99 ms | errors wrk / svc |');
  console.log('|---|---|---|---|---|---|---|');
  rows.forEach((r, i) =>
    console.log(`| ${i + 1} | ${f(r.wrk.rps)} | ${f(r.svc.rps)} | ${(r.svc.rps / r.wrk.rps).toFixed(3)}× | ${r.wrk.p50.toFixed(2)} / ${r.wrk.p99.toFixed(2)} | ${r.svc.p50.toFixed(2)} / ${r.svc.p99.toFixed(2)} | ${r.wrk.errors} / ${r.svc.errors} |`),
  );
  const sum = (k) => rows.reduce((a, r) => a + r[k].rps, 0);
  console.log(`\nOverall: svc bench ÷ wrk = ${(sum('svc') / sum('wrk')).toFixed(3)}× (goal ≥ 0.8×)`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
