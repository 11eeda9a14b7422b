#!/usr/bin/env node
'use strict';
// The schema registry listener (docs/schema-registry.md) on one node with the embedded metadata
// store: what a registration costs (each is durable before it is answered: id counter, schema
// record, id record, version record), and how many reads by id and lookups a node answers, the
// calls every producer and consumer makes once per schema (its client caches the answer).
//
//   node perf/registry.js        # PERF_REGISTRY_SCHEMAS (default 200) registrations, then
//                                # PERF_DURATION (default 5 s) of reads by id and of lookups,
//                                # PERF_CONNECTIONS (default 16) requests in flight
//
// Prints its figures; writes no file. Needs `npm run build` first (it starts dist/main.js).

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { intEnv } = require('./lib/util');

const ROOT = path.resolve(__dirname, '..');

function startNode(dataDir) {
  const args = [path.join(ROOT, 'dist', 'main.js'), 'serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--kafka-listen', '127.0.0.1:0', '--schema-registry-listen', '127.0.0.1:0', '--data-dir', dataDir];
  const proc = spawn(process.execPath, args, { env: { ...process.env, SVC_RESERVE_BYTES: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`node did not start:\n${out}`)), 20_000);
    proc.stdout.on('data', (d) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.includes('"node started"'));
      if (line === undefined) return;
      clearTimeout(timer);
      resolve({ proc, url: `http://${JSON.parse(line).schemaRegistry}` });
    });
    proc.stderr.on('data', (d) => (out += d.toString()));
    proc.once('exit', (code) => reject(new Error(`node exited with ${code}:\n${out}`)));
  });
}

const pct = (xs, p) => xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const schemaOf = (i) => JSON.stringify({ type: 'record', name: `R${i % 20}`, namespace: 'perf', fields: [{ name: 'a', type: 'string' }, { name: `f${i}`, type: 'long', default: 0 }] });
const post = (url, body) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' }, body });

async function loop(durationS, connections, call) {
  const latencies = [];
  const end = Date.now() + durationS * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < end) {
        const t = process.hrtime.bigint();
        const r = await call(n++);
        await r.arrayBuffer();
        if (r.status !== 200) throw new Error(`status ${r.status}`);
        latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
    }),
  );
  return { rps: latencies.length / durationS, p50: pct(latencies, 50), p99: pct(latencies, 99) };
}

async function main() {
  const schemas = intEnv('PERF_REGISTRY_SCHEMAS', 200, 100_000);
  const duration = intEnv('PERF_DURATION', 5, 600);
  const connections = intEnv('PERF_CONNECTIONS', 16, 1024);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-perf-registry-'));
  const { proc, url } = await startNode(dataDir);
  try {
    const load = os.loadavg()[0];
    const reg = [];
    const ids = [];
    const t0 = Date.now();
    for (let i = 0; i < schemas; i++) {
      const t = process.hrtime.bigint();
      const r = await post(`${url}/subjects/perf-${i % 20}/versions`, JSON.stringify({ schema: schemaOf(i) }));
      if (r.status !== 200) throw new Error(`register: ${r.status} ${await r.text()}`);
      ids.push((await r.json()).id);
      reg.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    const regS = (Date.now() - t0) / 1000;
    console.log(`register: ${schemas} schemas in ${regS.toFixed(2)} s (${(schemas / regS).toFixed(0)}/s, one at a time), p50 ${pct(reg, 50).toFixed(2)} ms, p99 ${pct(reg, 99).toFixed(2)} ms`);
    const byId = await loop(duration, connections, (n) => fetch(`${url}/schemas/ids/${ids[n % ids.length]}`));
    console.log(`GET /schemas/ids/{id}: ${byId.rps.toFixed(0)} req/s, p50 ${byId.p50.toFixed(2)} ms, p99 ${byId.p99.toFixed(2)} ms (${connections} in flight)`);
    const lookup = await loop(duration, connections, (n) => post(`${url}/subjects/perf-${n % 20}`, JSON.stringify({ schema: schemaOf(n % 20) })));
    console.log(`POST /subjects/{s} (lookup): ${lookup.rps.toFixed(0)} req/s, p50 ${lookup.p50.toFixed(2)} ms, p99 ${lookup.p99.toFixed(2)} ms (${connections} in flight)`);
    console.log(`load average ${load.toFixed(2)} at start, ${os.loadavg()[0].toFixed(2)} at end; ${os.cpus().length} cores, node ${process.version}`);
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
