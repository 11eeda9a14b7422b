#!/usr/bin/env node
'use strict';
// Objects mode on a store with a real object store's latency (docs/objects.md, "Latency"): single
// 100-byte appends to one stream (W1) and spread over 1,000 streams (W2), wrk -t1 with 64
// connections, against one node from the same build in the same run:
//
//   local        --metadata local (write + fdatasync of the local segment log)
//   objects      --objects file:<dir> (create-only puts: most groups acknowledged before the ledger txn)
//   s3-0ms       --objects s3://… on s3rver from npm on this machine (no added latency)
//   s3-<N>ms     the same behind perf/lib/delay-proxy.js: every PUT held N ms, every GET, HEAD,
//                DELETE and listing N/2 ms (PERF_OBJECTS_DELAYS, default "20,50")
//
//   node perf/objects-latency.js      # PERF_ROUNDS (default 1) × PERF_DURATION (default 5 s) per run
//   PERF_OBJECTS_LOADS=W1             # one workload only (default "W1,W2")
//   PERF_OBJECTS_DIST=perf/.work/dist-old   # another build of dist/ (before/after of a change)
//   PERF_OBJECTS_ARGS='--objects-puts-in-flight 8'   # extra flags for the objects-mode nodes
//
// Reports appends/s and its ratio to local, p50/p99, node CPU per append, and the object PUTs per
// second the node made; writes the "Objects mode: a store with S3's latency" section of
// perf/RESULTS.md. Anchors, from what they publish (not run here): S2 standard acknowledges in
// ≤ 400 ms, WarpStream and Bufstream produce at p99 ~500 ms; S2 Express and WarpStream Lightning
// in ≤ 40–50 ms.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startSvc } = require('./lib/servers');
const { runWrk, haveWrk } = require('./lib/wrk');
const { recordBody } = require('./lib/bodies');
const { http, cpuSeconds, intEnv, parallel } = require('./lib/util');
const { writeResultsSection } = require('./lib/results');
const { startEtcd } = require('../ops/lib/etcd-local');
const { startS3rver } = require('./lib/s3rver');
const { startDelayProxy } = require('./lib/delay-proxy');

const PERF_DIR = __dirname;
const START = '<!-- objects-latency:start -->';
const END = '<!-- objects-latency:end -->';
const WARMUP_S = 2;
const SPREAD = 1000;
const ms = (us) => (us / 1000).toFixed(2);

async function main() {
  if (!haveWrk()) {
    console.error('perf: `wrk` was not found on PATH; install it with `apt-get install wrk`.');
    process.exit(1);
  }
  const rounds = intEnv('PERF_ROUNDS', 1, 10);
  const duration = intEnv('PERF_DURATION', 5, 30);
  const connections = intEnv('PERF_CONNECTIONS', 64, 1024);
  const delays = (process.env.PERF_OBJECTS_DELAYS || '20,50').split(',').filter(Boolean).map(Number);
  fs.mkdirSync(path.join(PERF_DIR, '.work'), { recursive: true });
  const workDir = fs.mkdtempSync(path.join(PERF_DIR, '.work', 'objects-latency-'));
  const body = path.join(workDir, 'record-100.bin');
  fs.writeFileSync(body, recordBody(0, 100));
  const loadBefore = os.loadavg()[0];
  const etcd = await startEtcd(path.join(workDir, 'etcd'), 1);
  const s3 = await startS3rver(path.join(workDir, 's3'), ['perf-objects']);
  const proxies = new Map();
  for (const d of delays) proxies.set(d, await startDelayProxy(s3.url, { putMs: d, getMs: d / 2 }));
  const sides = ['local', 'objects', 's3-0ms', ...delays.map((d) => `s3-${d}ms`)];
  const loads = (process.env.PERF_OBJECTS_LOADS || 'W1,W2').split(',').filter((l) => l === 'W1' || l === 'W2');
  const dist = process.env.PERF_OBJECTS_DIST || undefined;
  const extra = (process.env.PERF_OBJECTS_ARGS || '').split(' ').filter(Boolean);
  let live = null;
  let n = 0;
  try {
    const runs = [];
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? sides : [...sides].reverse();
      for (const load of loads) {
        for (const side of order) {
          const args = [];
          let env;
          if (side !== 'local') {
            const prefix = `perf-${process.pid}-${n++}`;
            const delay = side.startsWith('s3-') ? Number(side.slice(3, -2)) : null;
            const endpoint = delay === null ? null : delay === 0 ? s3.url : proxies.get(delay).url;
            const objects = endpoint === null ? `file:${fs.mkdtempSync(path.join(workDir, 'objects-'))}` : `s3://perf-objects/${prefix}?endpoint=${endpoint}&region=us-east-1`;
            args.push('--metadata', etcd.url(prefix), '--objects', objects, ...extra);
            // s3rver takes any credentials; the node refuses s3:// without them.
            if (endpoint !== null) env = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };
          }
          live = await startSvc(workDir, { name: `svc-${side}`, args, env, dist });
          const names = load === 'W1' ? ['w1'] : Array.from({ length: SPREAD }, (_, i) => `w2-${String(i).padStart(4, '0')}`);
          await parallel(names.length, 16, async (i) => {
            // On a busy machine a create may wait out the 5 s stall (503, maybe written): sent again, 409 then means it was.
            for (let attempt = 0; ; attempt++) {
              const res = await http('PUT', `${live.baseUrl}/${names[i]}`, { headers: { 'content-type': 'application/octet-stream' } });
              if (res.status === 201 || (res.status === 409 && attempt > 0)) return;
              if (res.status !== 503 || attempt >= 5) throw new Error(`PUT /${names[i]} (${side}) → ${res.status} ${res.body.toString()}`);
            }
          });
          const wrk =
            load === 'W1'
              ? { url: `${live.baseUrl}/w1`, script: 'append.lua', args: [body, 'application/octet-stream'], connections }
              : { url: live.baseUrl, script: 'append-spread.lua', args: [body, 'application/octet-stream', '/w2-', SPREAD], connections };
          await runWrk({ ...wrk, seconds: WARMUP_S });
          const puts = side.startsWith('s3-') && side !== 's3-0ms' ? proxies.get(Number(side.slice(3, -2))).stats : null;
          const putsBefore = puts === null ? 0 : puts.requests;
          const cpuBefore = cpuSeconds(live.pid);
          const w = await runWrk({ ...wrk, seconds: duration });
          const cpu = cpuSeconds(live.pid) - cpuBefore;
          await live.stop();
          live = null;
          const bad = (w.errors && w.errors.status) || w.non2xx || 0;
          const run = { round: r + 1, load, side, rps: w.requests / w.seconds, p50: w.latency.p50, p99: w.latency.p99, cpuUs: (cpu / Math.max(1, w.requests)) * 1e6, bad, requestsPerS: puts === null ? null : (puts.requests - putsBefore) / w.seconds };
          runs.push(run);
          console.log(
            `round ${run.round} ${load} ${side.padEnd(8)} ${Math.round(run.rps)} appends/s, p50 ${ms(run.p50)} ms, p99 ${ms(run.p99)} ms, ${run.cpuUs.toFixed(1)} µs node CPU per append` +
              (run.requestsPerS === null ? '' : `, ${Math.round(run.requestsPerS)} store requests/s`) +
              (bad > 0 ? `, ${bad} non-2xx` : ''),
          );
        }
      }
    }
    const section = render({ runs, sides, loads, rounds, duration, connections, delays, extra, dist, load: `${loadBefore.toFixed(2)} at start, ${os.loadavg()[0].toFixed(2)} at end` });
    console.log('\n' + section);
    writeResultsSection(START, END, section, 'Objects mode: a store with S3\'s latency');
  } finally {
    if (live !== null) await live.stop().catch(() => {});
    for (const p of proxies.values()) await p.stop();
    await s3.stop();
    await etcd.stop();
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

function render({ runs, sides, loads, rounds, duration, connections, delays, extra, dist, load }) {
  const lines = [
    START,
    "## Objects mode: a store with S3's latency",
    '',
    'Single 100-byte appends, wrk -t1, to one stream (W1) and to one of 1,000 streams at random (W2), against one node in single-node mode ' +
      '(`local`), in objects mode on `file:` objects (`objects`), on s3rver from npm on this machine (`s3-0ms`) and on the same s3rver behind ' +
      `\`perf/lib/delay-proxy.js\`, which holds every PUT ${delays.join(' or ')} ms and every other request half that (\`s3-<N>ms\`): same build, same run, ` +
      'one etcd 3.4 member on this machine. s3rver ignores `If-None-Match` on PUT, so on `s3://` every group waits for its ledger transaction (late). ' +
      'Written by `node perf/objects-latency.js`. The machine was shared with other work (load below): compare the sides of one round.',
    '',
    `- date: ${new Date().toISOString()}; ${os.cpus().length} cores, ${os.type()} ${os.release()}, node ${process.version}; load average (1 min): ${load}`,
    `- ${rounds} round(s) × ${duration} s per run, ${connections} connections, after a 2 s warm-up of each${extra.length > 0 ? `; objects-mode nodes with \`${extra.join(' ')}\`` : ''}${dist !== undefined ? `; build \`${dist}\`` : ''}`,
    '- anchors (published, not run here): S2 standard acknowledges in ≤ 400 ms; WarpStream and Bufstream produce at p99 ~500 ms; S2 Express and WarpStream Lightning in ≤ 40–50 ms',
    '',
    '| Round | load | side | appends/s | ÷ local | p50 (ms) | p99 (ms) | node CPU per append (µs) | store requests/s |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (let r = 1; r <= rounds; r++) {
    for (const l of loads) {
      const local = runs.find((x) => x.round === r && x.load === l && x.side === 'local');
      for (const side of sides) {
        const x = runs.find((y) => y.round === r && y.load === l && y.side === side);
        lines.push(
          `| ${r} | ${l} | ${side} | ${Math.round(x.rps)}${x.bad > 0 ? ` (${x.bad} non-2xx)` : ''} | ${(x.rps / local.rps).toFixed(3)}× | ${ms(x.p50)} | ${ms(x.p99)} | ${x.cpuUs.toFixed(1)} | ${x.requestsPerS === null ? '—' : Math.round(x.requestsPerS)} |`,
        );
      }
    }
  }
  lines.push(END);
  return lines.join('\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
