#!/usr/bin/env node
'use strict';
// Durability classes (docs/storage.md, "Durability classes"): one writer that appends one record
// at a time with the official Durable Streams client (@durable-streams/client, pinned in the root
// package.json; `await stream.append(body)`, each append waiting for the one before), against
//
//   svc sync    a stream of a `--protocol ds` node, class `sync` (acknowledged after fdatasync)
//   svc async   a stream of the same node, class `async` (Svc-Durability: async at create)
//   DS memory   the Durable Streams reference server (@durable-streams/server, perf/package.json)
//               in memory: no disk at all, the ceiling a sequential writer can reach
//
// in the same run, rounds alternating the three so drift in the machine's load falls on all of
// them. Prints per round and per target appends/s, server CPU per append (µs, user + system of
// all its threads, from /proc) and the load average; then the medians and async ÷ DS memory.
//
//   node perf/durability.js                          # PERF_DUR_SECONDS=5 per target and round, PERF_DUR_ROUNDS=3
//   PERF_DUR_BYTES=256 node perf/durability.js       # record size (default 100 bytes)

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { startSvc, startServer } = require('./lib/servers');
const { cpuSeconds, intEnv } = require('./lib/util');

const PERF_DIR = __dirname;
const seconds = intEnv('PERF_DUR_SECONDS', 5, 600);
const rounds = intEnv('PERF_DUR_ROUNDS', 3, 100);
const bytes = intEnv('PERF_DUR_BYTES', 100, 1 << 20);

function ensurePerfDeps() {
  if (fs.existsSync(path.join(PERF_DIR, 'node_modules', '@durable-streams', 'server'))) return;
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: PERF_DIR, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('`npm ci` in perf/ failed');
}

async function createStream(baseUrl, name, headers) {
  const res = await fetch(`${baseUrl}/v1/stream/${name}`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', ...headers } });
  if (res.status !== 201) throw new Error(`create ${name}: ${res.status} ${await res.text()}`);
}

/** One sequential writer for `seconds`: appends/s and the server's CPU µs per append. */
async function measure(DurableStream, target) {
  const stream = new DurableStream({ url: target.url, contentType: 'application/octet-stream', batching: false });
  const body = Buffer.alloc(bytes, 0x61);
  for (let i = 0; i < 20; i++) await stream.append(body); // warm the connection and the JIT
  const cpu0 = cpuSeconds(target.pid);
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  let n = 0;
  while (performance.now() < end) {
    await stream.append(body);
    n++;
  }
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds(target.pid) - cpu0;
  return { rate: n / elapsed, cpuUs: (cpu / n) * 1e6, load: os.loadavg()[0] };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main() {
  ensurePerfDeps();
  const { DurableStream } = require('@durable-streams/client');
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-perf-durability-'));
  const svc = await startSvc(workDir, { ds: true });
  const ref = await startServer('ds-mem', workDir);
  try {
    await createStream(svc.baseUrl, 'dur-sync', {});
    await createStream(svc.baseUrl, 'dur-async', { 'svc-durability': 'async' });
    await createStream(ref.baseUrl, 'dur-ref', {});
    const targets = [
      { label: 'svc sync', pid: svc.pid, url: `${svc.baseUrl}/v1/stream/dur-sync` },
      { label: 'svc async', pid: svc.pid, url: `${svc.baseUrl}/v1/stream/dur-async` },
      { label: 'DS memory', pid: ref.pid, url: `${ref.baseUrl}/v1/stream/dur-ref` },
    ];
    console.log(`durability: one sequential writer, official DS client, ${bytes} B records, ${seconds} s per target, ${rounds} rounds, ${os.cpus().length} CPUs`);
    const results = new Map(targets.map((t) => [t.label, []]));
    for (let r = 0; r < rounds; r++) {
      // Rotate the order each round.
      const order = targets.map((_, i) => targets[(i + r) % targets.length]);
      for (const t of order) {
        const m = await measure(DurableStream, t);
        results.get(t.label).push(m);
        console.log(`round ${r + 1}  ${t.label.padEnd(10)} ${m.rate.toFixed(0).padStart(7)} appends/s  ${m.cpuUs.toFixed(1).padStart(7)} µs CPU/append  load ${m.load.toFixed(2)}`);
      }
    }
    console.log('\nmedian of the rounds:');
    const med = {};
    for (const [label, ms] of results) {
      med[label] = { rate: median(ms.map((m) => m.rate)), cpuUs: median(ms.map((m) => m.cpuUs)), load: median(ms.map((m) => m.load)) };
      console.log(`  ${label.padEnd(10)} ${med[label].rate.toFixed(0).padStart(7)} appends/s  ${med[label].cpuUs.toFixed(1).padStart(7)} µs CPU/append  load ${med[label].load.toFixed(2)}`);
    }
    const ratio = med['svc async'].rate / med['DS memory'].rate;
    console.log(`\nsvc async ÷ DS memory: ${ratio.toFixed(2)}×  (goal ≥ 1×)`);
    console.log(`svc async ÷ svc sync:  ${(med['svc async'].rate / med['svc sync'].rate).toFixed(2)}×`);
  } finally {
    await svc.stop();
    await ref.stop();
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
