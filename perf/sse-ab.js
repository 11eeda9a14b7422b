#!/usr/bin/env node
'use strict';
// W6's SSE fan-out (perf/lib/fanout.js: 10,000 raw TCP SSE readers of one stream, a writer pacing
// 1,000 single-record appends/s) against several node variants in the same run, alternating the
// order every round (A B / B A / …) so drift in the machine's load falls on every side; a fresh
// node and data directory per measured run.
//
//   PERF_SSE_VARIANTS='before=perf/.work/dist-before;after=dist;after-t2=dist --sse-threads 2' node perf/sse-ab.js
//
// PERF_SSE_VARIANTS: `id=builddir [serve flags]`, separated by `;` (default `dist=dist`).
// PERF_SSE_ROUNDS (default 2), PERF_DURATION (default 5 s of appends), PERF_FANOUT_READERS
// (default 10000), PERF_FANOUT_RATE (default 1000). Prints per run: appends/s reached, delivery
// p50/p99/max, append p99, the node's CPU (cores busy; user + system of all its threads, from
// /proc) and CPU per delivered event (node CPU time ÷ (reader, record) pairs delivered), the main
// thread's CPU seconds over the whole measurement (attach, load, drain), the socket chunks readers
// received while the writer ran (about one per server write) and node / main-thread CPU per chunk
// over the same time, client CPU.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { runFanout } = require('./lib/fanout');
const { startNode, mainThreadCpuSeconds } = require('./lib/builds-ab');
const { intEnv } = require('./lib/util');

const ROOT = path.resolve(__dirname, '..');

function variants() {
  const spec = process.env.PERF_SSE_VARIANTS || 'dist=dist';
  return spec
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const eq = s.indexOf('=');
      const [dist, ...args] = s.slice(eq + 1).trim().split(/\s+/);
      return { id: s.slice(0, eq), dist: path.resolve(ROOT, dist), args };
    });
}

const fmt = (ms) => (Number.isFinite(ms) ? `${ms.toFixed(1)} ms` : '–');

async function main() {
  const vs = variants();
  const rounds = intEnv('PERF_SSE_ROUNDS', 2, 10);
  const seconds = intEnv('PERF_DURATION', 5, 10);
  const readers = intEnv('PERF_FANOUT_READERS', 10000, 100000);
  const rate = intEnv('PERF_FANOUT_RATE', 1000, 100000);
  fs.mkdirSync(path.join(ROOT, 'perf', '.work'), { recursive: true });
  const workDir = fs.mkdtempSync(path.join(ROOT, 'perf', '.work', 'sse-ab-'));
  console.log(`# W6 SSE A/B: ${readers} readers, ${rate} appends/s for ${seconds} s; ${os.cpus().length} cores, load average (1 min) ${os.loadavg()[0].toFixed(2)} at start; ${new Date().toISOString()}`);
  console.log('| round | variant | appends/s | p50 | p99 | max | append p99 | delivered | node CPU (cores) | node CPU per delivered event | main thread CPU (s) | chunks received | node / main thread CPU per chunk | client CPU | errors |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const all = [];
  try {
    for (let r = 0; r < rounds; r++) {
      for (const v of r % 2 === 0 ? vs : [...vs].reverse()) {
        const node = await startNode(v.dist, workDir, `node-${v.id}`, v.args);
        try {
          const main0 = mainThreadCpuSeconds(node.pid);
          const res = await runFanout({
            baseUrl: node.base,
            proto: 'svc',
            streamPath: '/fanout-sse',
            mode: 'sse',
            readers,
            rate,
            seconds,
            recordSize: 100,
            serverPid: node.pid,
            hardTimeoutMs: 90_000,
          });
          // The main thread's CPU over the whole measurement (attach, load, drain): the gateway thread.
          const mainCpu = mainThreadCpuSeconds(node.pid) - main0;
          // Node CPU over the append phase ÷ the (reader, record) pairs of that phase.
          const pairs = res.readers * res.appended * res.deliveredShare;
          const nsPerEvent = ((res.serverCpu * seconds) / pairs) * 1e9;
          // CPU per socket chunk a reader received while the writer ran (about one per server write):
          // node total, and the main thread alone.
          const usPerChunk = ((res.serverCpu * seconds) / res.chunksWhileWriting) * 1e6;
          const mainUsPerChunk = ((res.serverMainCpu * seconds) / res.chunksWhileWriting) * 1e6;
          all.push({ id: v.id, ...res, nsPerEvent, mainCpu, usPerChunk, mainUsPerChunk });
          const errors = res.dropped + res.readerErrors + res.closedByServer + res.writeErrors;
          console.log(
            `| ${r + 1} | ${v.id} | ${res.appendsPerSec.toFixed(0)} | ${fmt(res.p50)} | ${fmt(res.p99)} | ${fmt(res.max)} | ${fmt(res.appendP99)} | ${(res.deliveredShare * 100).toFixed(1)}% | ${res.serverCpu.toFixed(2)} | ${(nsPerEvent / 1000).toFixed(2)} µs | ${mainCpu.toFixed(2)} | ${res.chunksWhileWriting} | ${usPerChunk.toFixed(1)} / ${mainUsPerChunk.toFixed(1)} µs | ${res.clientCpu.toFixed(2)} | ${errors} |`,
          );
        } finally {
          await node.stop();
        }
      }
    }
  } finally {
    fs.rmSync(workDir, { recursive: true, force: true });
  }
  console.log(`\nload average (1 min) at end: ${os.loadavg()[0].toFixed(2)}`);
  for (const v of vs) {
    const runs = all.filter((x) => x.id === v.id);
    const med = (k) => runs.map((x) => x[k]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
    console.log(`${v.id}: median p99 ${fmt(med('p99'))}, p50 ${fmt(med('p50'))}, node CPU per delivered event ${(med('nsPerEvent') / 1000).toFixed(2)} µs, per chunk ${med('usPerChunk').toFixed(1)} µs (main thread ${med('mainUsPerChunk').toFixed(1)} µs), appends/s ${med('appendsPerSec').toFixed(0)}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
