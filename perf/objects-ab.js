#!/usr/bin/env node
'use strict';
// Two builds side by side in objects mode on W1's load (single 100 B appends to one stream,
// wrk -t1 -c64): one node with `--metadata etcd://…` on a local etcd member and `--objects
// file:<dir>`, a fresh key prefix and objects directory per run, alternating A B, B A, …
//
//   PERF_AB_A=perf/.work/dist-old PERF_AB_B=dist node perf/objects-ab.js
//
// PERF_AB_A / PERF_AB_B: build directories (default dist for both: the method's own noise);
// PERF_AB_ARGS_A / PERF_AB_ARGS_B: more `svc serve` flags for that side (e.g. `--objects-flush-ms 1`);
// PERF_AB_ROUNDS (default 3) × PERF_DURATION (default 5 s) per build. Prints per run and per
// build: appends/s, p99, the node's CPU per append (all threads, from /proc) and etcd's.
// PERF_AB_AFTER_S (default 0) keeps each node that many seconds after its load and adds a column
// with its CPU per append counted until then: what compaction and the reaper do after the load
// (an object is dead 10 s after it was recorded, so 20 s catches most of W1's).
// PERF_AB_STREAMS=1000 spreads the appends over that many streams (W2's load, /w2-0000 …), and
// PERF_AB_RATE=3000 paces them at that many a second over 256 connections (the CPU an append costs
// at one load: paced-append-spread.lua); PERF_WARMUP_S (default 2; 20 suits W2, whose compaction and
// reaper start once entries are 10 s old) is the discarded warm-up before each run.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pairedRuns, W1_LOAD } = require('./lib/builds-ab');
const { cpuSeconds, http, intEnv } = require('./lib/util');
const { startEtcd } = require('../ops/lib/etcd-local');

async function main() {
  const builds = [
    { id: 'A', dist: process.env.PERF_AB_A || 'dist', args: (process.env.PERF_AB_ARGS_A || '').split(' ').filter(Boolean) },
    { id: 'B', dist: process.env.PERF_AB_B || 'dist', args: (process.env.PERF_AB_ARGS_B || '').split(' ').filter(Boolean) },
  ];
  fs.mkdirSync(path.join(__dirname, '.work'), { recursive: true });
  const root = fs.mkdtempSync(path.join(__dirname, '.work', 'objects-ab-'));
  const etcd = await startEtcd(path.join(root, 'etcd'), 1);
  const etcdPid = etcd.members[0].proc.pid;
  let n = 0;
  const afterS = intEnv('PERF_AB_AFTER_S', 0, 120, 0);
  const streams = intEnv('PERF_AB_STREAMS', 1, 10000);
  const rate = intEnv('PERF_AB_RATE', 0, 1_000_000, 0);
  const name = (i) => `/w2-${String(i).padStart(4, '0')}`;
  // W1 (one stream, closed loop, as before) unless a spread or a rate is asked for.
  const load =
    streams === 1 && rate === 0
      ? { ...W1_LOAD, connections: 64 }
      : {
          ...W1_LOAD,
          connections: rate > 0 ? 256 : 64,
          script: rate > 0 ? 'paced-append-spread.lua' : 'append-spread.lua',
          scriptArgs: (body) => [body, W1_LOAD.contentType, '/w2-', String(streams), ...(rate > 0 ? [String(rate)] : [])],
          prepare: async (base, headers) => {
            for (let i = 0; i < streams; i += 32) {
              await Promise.all(
                Array.from({ length: Math.min(32, streams - i) }, async (_, k) => {
                  const res = await http('PUT', `${base}${name(i + k)}`, { headers });
                  if (res.status !== 201) throw new Error(`PUT ${name(i + k)} → ${res.status} ${res.body.toString()}`);
                }),
              );
            }
          },
        };
  const row = (label, id, rps, p99, cpuUs, etcdUs, afterUs) =>
    `| ${label} | ${id} | ${Math.round(rps)} | ${p99} | ${cpuUs.toFixed(1)} | ${etcdUs.toFixed(1)} |${afterS > 0 ? ` ${afterUs.toFixed(1)} |` : ''}`;
  const shape = `${streams === 1 ? 'to one stream' : `each to one of ${streams} streams`}, ${rate > 0 ? `paced at ${rate}/s over 256 connections` : '64 connections'}`;
  console.log(`A = ${[builds[0].dist, ...builds[0].args].join(' ')}, B = ${[builds[1].dist, ...builds[1].args].join(' ')}; objects mode (file:, one etcd member), single 100 B appends ${shape}; load average before: ${os.loadavg()[0].toFixed(2)}`);
  console.log(`| round | build | appends/s | p99 ms | node CPU µs per append | etcd CPU µs per append |${afterS > 0 ? ` with the ${afterS} s after: node CPU µs per append |` : ''}\n|---|---|---|---|---|---|${afterS > 0 ? '---|' : ''}`);
  try {
    const runs = await pairedRuns({
      ...load,
      name: 'objects-ab-runs',
      warmupS: intEnv('PERF_WARMUP_S', 2, 600),
      rounds: intEnv('PERF_AB_ROUNDS', 3, 20),
      duration: intEnv('PERF_DURATION', 5, 10),
      afterS,
      variants: builds.map((b) => ({
        id: b.id,
        setup: async () => {
          const objects = fs.mkdtempSync(path.join(root, 'objects-'));
          return {
            dist: b.dist,
            args: ['--metadata', etcd.url(`objects-ab-${process.pid}-${n++}`), '--objects', `file:${objects}`, ...b.args],
            during: () => {
              const e0 = cpuSeconds(etcdPid);
              return () => cpuSeconds(etcdPid) - e0;
            },
          };
        },
      })),
      onRun: (x) => console.log(row(x.round, x.id, x.rps, (x.p99 / 1000).toFixed(2), x.cpuUs, (x.extra / x.requests) * 1e6, x.cpuAfterUs ?? 0)),
    });
    for (const b of builds) {
      const mine = runs.filter((x) => x.id === b.id);
      const req = mine.reduce((a, x) => a + x.requests, 0);
      const secs = mine.reduce((a, x) => a + x.seconds, 0);
      const p99s = mine.map((x) => (x.p99 / 1000).toFixed(2)).join(' / ');
      const perAppend = (k) => mine.reduce((a, x) => a + (x[k] ?? 0) * x.requests, 0) / req;
      console.log(row('all', b.id, req / secs, p99s, perAppend('cpuUs'), (mine.reduce((a, x) => a + x.extra, 0) / req) * 1e6, perAppend('cpuAfterUs')));
    }
    console.log(`load average after: ${os.loadavg()[0].toFixed(2)}`);
  } finally {
    await etcd.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
