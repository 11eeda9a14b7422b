#!/usr/bin/env node
'use strict';
// W1 against W2 on two builds: durable 100 B single-record appends to one stream (W1) and to one of
// 1,000 streams picked at random (W2), wrk -t1 -c64, a fresh node per measured run, the order of
// the builds reversed every round so drift in the machine's load falls on both.
//
//   PERF_AB_A=perf/.work/dist-main PERF_AB_B=dist node perf/spread-ab.js
//
// PERF_AB_ROUNDS (default 3) × PERF_DURATION (default 5 s) per build and load; PERF_SPREAD_LOADS=W2
// measures one load only. Per run: appends/s,
// wrk's p99, the node's CPU per append (µs, all threads, from /proc) and its main thread's, and from the node's
// /metrics (--metrics-listen) the group commits per append (each is one write + fdatasync of one
// shard's log) and the frames per group. The W2/W1 ratio is printed per build at the end.

const os = require('node:os');
const path = require('node:path');
const { http, intEnv, freePort, parallel, metricSample } = require('./lib/util');
const { pairedRuns, W1_LOAD } = require('./lib/builds-ab');

const SPREAD = 1000; // streams in W2, as perf/run.js

/** The group-commit figures the node exports (docs/metrics.md): groups and frames so far, summed over its shards. */
async function commitFigures(port) {
  const res = await http('GET', `http://127.0.0.1:${port}/metrics`);
  const text = res.body.toString();
  const value = (name) => metricSample(text, name);
  return { groups: value('svc_group_commit_frames_count'), frames: value('svc_group_commit_frames_sum'), syncs: value('svc_log_syncs_total'), seconds: value('svc_group_commit_duration_seconds_sum') };
}

const LOADS = {
  W1: { ...W1_LOAD },
  W2: {
    ...W1_LOAD,
    path: '/w2-',
    async prepare(base, headers) {
      await parallel(SPREAD, 16, async (i) => {
        const res = await http('PUT', `${base}/w2-${String(i).padStart(4, '0')}`, { headers });
        if (res.status !== 201) throw new Error(`PUT /w2-${i} → ${res.status}`);
      });
    },
    script: 'append-spread.lua',
    scriptArgs: (body) => [body, 'application/octet-stream', '/w2-', SPREAD],
  },
};

async function main() {
  const rounds = intEnv('PERF_AB_ROUNDS', 3, 20);
  const loads = (process.env.PERF_SPREAD_LOADS || 'W1,W2').split(',');
  const duration = intEnv('PERF_DURATION', 5, 10);
  const builds = [
    { id: 'A', dist: process.env.PERF_AB_A || 'dist' },
    { id: 'B', dist: process.env.PERF_AB_B || 'dist' },
  ];
  console.log(`A = ${builds[0].dist}, B = ${builds[1].dist}; single 100 B appends, 64 connections; load average before: ${os.loadavg()[0].toFixed(2)}`);
  console.log('| round | load | build | appends/s | p99 ms | node CPU µs per append | main thread CPU µs per append | group commits per append | frames per group | log fdatasyncs per append | ms per group commit |\n|---|---|---|---|---|---|---|---|---|---|---|');
  const all = [];
  for (let r = 0; r < rounds; r++) {
    for (const [load, o] of Object.entries(LOADS).filter(([k]) => loads.includes(k))) {
      let metricsPort = 0;
      let before = null;
      let figures = null;
      const order = r % 2 === 0 ? builds : [...builds].reverse();
      const runs = await pairedRuns({
        ...o,
        name: `spread-${load}`,
        connections: 64,
        rounds: 1,
        duration,
        variants: order.map((b) => ({
          id: b.id,
          setup: async () => {
            metricsPort = await freePort();
            return {
              dist: path.resolve(b.dist),
              args: ['--metrics-listen', `127.0.0.1:${metricsPort}`],
              during() {
                before = commitFigures(metricsPort);
                return () => null;
              },
            };
          },
        })),
        async check() {
          const b = await before;
          const a = await commitFigures(metricsPort);
          figures = { groups: a.groups - b.groups, frames: a.frames - b.frames, syncs: a.syncs - b.syncs, seconds: a.seconds - b.seconds };
        },
        onRun(x) {
          x.extra = figures;
          all.push({ ...x, load });
          console.log(`| ${r + 1} | ${load} | ${x.id} | ${Math.round(x.rps)} | ${(x.p99 / 1000).toFixed(2)} | ${x.cpuUs.toFixed(1)} | ${x.mainUs.toFixed(1)} | ${(figures.groups / x.requests).toFixed(3)} | ${(figures.frames / Math.max(1, figures.groups)).toFixed(1)} | ${figures.syncs === 0 ? '—' : (figures.syncs / x.requests).toFixed(3)} | ${((figures.seconds / Math.max(1, figures.groups)) * 1000).toFixed(2)} |`);
        },
      });
      void runs;
    }
  }
  console.log('\n| build | load | appends/s | worst p99 ms | node CPU µs per append | group commits per append | W2 ÷ W1 |\n|---|---|---|---|---|---|---|');
  for (const b of builds) {
    const rate = {};
    for (const load of loads) {
      const mine = all.filter((x) => x.id === b.id && x.load === load);
      const req = mine.reduce((a, x) => a + x.requests, 0);
      const secs = mine.reduce((a, x) => a + x.seconds, 0);
      const cpu = mine.reduce((a, x) => a + x.cpuUs * x.requests, 0) / req;
      const groups = mine.reduce((a, x) => a + x.extra.groups, 0);
      rate[load] = req / secs;
      console.log(`| ${b.id} | ${load} | ${Math.round(req / secs)} | ${(Math.max(...mine.map((x) => x.p99)) / 1000).toFixed(2)} | ${cpu.toFixed(1)} | ${(groups / req).toFixed(3)} | ${load === 'W2' && rate.W1 !== undefined ? (rate.W2 / rate.W1).toFixed(2) : ''} |`);
    }
  }
  console.log(`load average after: ${os.loadavg()[0].toFixed(2)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
