#!/usr/bin/env node
'use strict';
// Two builds side by side on W4's catch-up reads (100k × 100 B records, preloaded, read start to
// end over one keep-alive connection, pages of PERF_PAGE_BYTES), raw and binary: a fresh node per
// run, alternating A B, B A, … so drift in the machine's load falls on both. Made for the read page
// buffers (docs/storage.md, "Read page buffers"), whose effect is on the garbage collector.
//
//   PERF_AB_A=/path/to/old/dist PERF_AB_B=dist node perf/read-pool-ab.js
//
// PERF_AB_ROUNDS (default 3) × PERF_DURATION (default 5 s) per build and format; PERF_PAGE_BYTES
// (default 16 MiB, as W4); PERF_SVC_NODE_FLAGS: Node/V8 flags for both nodes. Prints per run: payload
// MB/s and the node's CPU per MB (µs, user + system of all its threads, from /proc), and that of
// its main (gateway) thread alone; the rest is the shard worker threads, V8's helper threads (the
// garbage collector's parallel and concurrent work) and libuv's, which /proc names alike ("node").
// Then the sums per build and format.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { catchUp } = require('./lib/reader');
const { http, parallel, intEnv } = require('./lib/util');
const { startNode } = require('./lib/builds-ab');
const { svcJsonBatch } = require('./lib/bodies');

const ROOT = path.resolve(__dirname, '..');
const RECORDS = 100_000;
const SIZE = 100;
const FORMATS = ['raw', 'binary'];
const CLOCK_TICKS = 100; // USER_HZ on Linux
const SVC_PROTO = { name: 'svc', path: (s) => `/${s}` };

/** CPU seconds of the process's main thread and of all its other threads. */
function threadCpu(pid) {
  const out = { main: 0, rest: 0 };
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out[tid === String(pid) ? 'main' : 'rest'] += (Number(f[11]) + Number(f[12])) / CLOCK_TICKS;
  }
  return out;
}

async function preload(base) {
  const res = await http('PUT', `${base}/catchup`, { headers: { 'content-type': 'application/octet-stream' } });
  if (res.status !== 201) throw new Error(`PUT /catchup → ${res.status}`);
  await parallel(RECORDS / 1000, 4, async (b) => {
    const r = await http('POST', `${base}/catchup`, { headers: { 'content-type': 'application/vnd.svc.batch+json' }, body: svcJsonBatch(b * 1000, 1000, SIZE) });
    if (r.status !== 200) throw new Error(`preload POST → ${r.status}`);
  });
}

async function main() {
  const builds = [
    { id: 'A', dist: path.resolve(ROOT, process.env.PERF_AB_A || 'dist') },
    { id: 'B', dist: path.resolve(ROOT, process.env.PERF_AB_B || 'dist') },
  ];
  const rounds = intEnv('PERF_AB_ROUNDS', 3, 20);
  const seconds = intEnv('PERF_DURATION', 5, 10);
  const pageBytes = intEnv('PERF_PAGE_BYTES', 16 * 1024 * 1024, 16 * 1024 * 1024);
  fs.mkdirSync(path.join(ROOT, 'perf', '.work'), { recursive: true });
  const workDir = fs.mkdtempSync(path.join(ROOT, 'perf', '.work', 'read-pool-ab-'));
  console.log(`A = ${builds[0].dist}, B = ${builds[1].dist}; W4 catch-up, ${RECORDS} × ${SIZE} B, pages of ${pageBytes} B; load average before: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log('| round | build | format | payload MB/s | node CPU µs/MB | main thread µs/MB | other threads µs/MB |\n|---|---|---|---:|---:|---:|---:|');
  const runs = [];
  const perMB = (s, mb) => ((s * 1e6) / mb).toFixed(0);
  try {
    for (let r = 0; r < rounds; r++) {
      for (const b of r % 2 === 0 ? builds : [...builds].reverse()) {
        const node = await startNode(b.dist, workDir, `node-${b.id}`, []);
        try {
          await preload(node.base);
          for (const format of FORMATS) {
            const t0 = threadCpu(node.pid);
            const x = await catchUp({ baseUrl: node.base, proto: SVC_PROTO, stream: 'catchup', format, recordSize: SIZE, expectRecords: RECORDS, pageBytes, seconds, serverPid: node.pid });
            const t1 = threadCpu(node.pid);
            const mb = (x.records * SIZE) / 1e6;
            const d = Object.fromEntries(Object.keys(t1).map((k) => [k, t1[k] - t0[k]]));
            runs.push({ build: b.id, format, mb, seconds: x.seconds, cpuUsPerMB: x.cpuUsPerMB, cpu: d });
            console.log(`| ${r + 1} | ${b.id} | ${format} | ${x.payloadMBps.toFixed(1)} | ${x.cpuUsPerMB.toFixed(0)} | ${perMB(d.main, mb)} | ${perMB(d.rest, mb)} |`);
          }
        } finally {
          await node.stop();
        }
      }
    }
    for (const format of FORMATS) {
      for (const b of builds) {
        const mine = runs.filter((x) => x.build === b.id && x.format === format);
        const mb = mine.reduce((a, x) => a + x.mb, 0);
        const s = mine.reduce((a, x) => a + x.seconds, 0);
        const sum = (k) => mine.reduce((a, x) => a + x.cpu[k], 0);
        const cpuUs = mine.reduce((a, x) => a + x.cpuUsPerMB * x.mb, 0) / mb;
        console.log(`| all | ${b.id} | ${format} | ${(mb / s).toFixed(1)} | ${cpuUs.toFixed(0)} | ${perMB(sum('main'), mb)} | ${perMB(sum('rest'), mb)} |`);
      }
    }
    console.log(`load average after: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  } finally {
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
