#!/usr/bin/env node
'use strict';
// The ds-bench shape: single 256-byte appends, each to one of N streams picked at random (1,000 and
// 10,000), wrk -t1 -c64, against the node's Durable Streams listener (`svc-ds`, `--protocol ds`,
// durable: every append acknowledged after fdatasync), the node's Svc listener (`svc`, the same
// appends on its own protocol) and the Durable Streams reference server in memory (`ds-mem`, no
// disk at all), in the same run, a fresh server per measured run, the servers' order reversed
// every round so drift in the machine's load falls on all of them.
//
//   node perf/ds-bench.js                       # PERF_ROUNDS (default 2) × PERF_DURATION (default 5 s)
//   PERF_DSB_STREAMS=1000,10000                 # stream counts (default both)
//   PERF_DSB_BYTES=256                          # record size
//   PERF_DSB_SERVERS=svc-ds,svc,ds-mem          # servers (perf/lib/servers.js ids)
//   PERF_SERVER_CPUS=0-7 PERF_LOAD_CPUS=8-11    # taskset CPU lists of the server (all its threads) and of wrk
//
// Reports appends/s, p50/p99 and the server's CPU per append (µs, all its threads, from /proc), and
// each server's rate ÷ the reference server's; the goal (issue text: "≥ 1.5× the DS reference
// server in memory, while durable") is read on svc-ds. Writes the "ds-bench shape" section of
// perf/RESULTS.md. On a machine with more cores, give the server and wrk CPU lists of their own.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { startServer, LABELS } = require('./lib/servers');
const { runWrk, haveWrk } = require('./lib/wrk');
const { writeResultsSection } = require('./lib/results');
const { recordBody } = require('./lib/bodies');
const { cpuSeconds, intEnv, parallel } = require('./lib/util');

const PERF_DIR = __dirname;
const START = '<!-- ds-bench:start -->';
const END = '<!-- ds-bench:end -->';
const WARMUP_S = 2;
const GOAL = 1.5;

async function main() {
  if (!haveWrk()) {
    console.error('perf: `wrk` was not found on PATH; install it with `apt-get install wrk`.');
    process.exit(1);
  }
  const rounds = intEnv('PERF_ROUNDS', 2, 10);
  const duration = intEnv('PERF_DURATION', 5, 30);
  const connections = intEnv('PERF_CONNECTIONS', 64, 1024);
  const bytes = intEnv('PERF_DSB_BYTES', 256, 1 << 20);
  const counts = (process.env.PERF_DSB_STREAMS || '1000,10000').split(',').filter(Boolean).map(Number);
  if (counts.some((n) => !(n >= 1 && n <= 10000))) throw new Error('PERF_DSB_STREAMS: stream counts from 1 to 10000 (the wrk script names streams with 4 digits)');
  const servers = (process.env.PERF_DSB_SERVERS || 'svc-ds,svc,ds-mem').split(',').filter(Boolean);
  const serverCpus = process.env.PERF_SERVER_CPUS || '';
  const loadCpus = process.env.PERF_LOAD_CPUS || '';
  fs.mkdirSync(path.join(PERF_DIR, '.work'), { recursive: true });
  const workDir = fs.mkdtempSync(path.join(PERF_DIR, '.work', 'ds-bench-'));
  const body = path.join(workDir, `record-${bytes}.bin`);
  fs.writeFileSync(body, recordBody(0, bytes));
  const loadBefore = os.loadavg()[0];
  const runs = [];
  try {
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? servers : [...servers].reverse();
      for (const n of counts) {
        for (const id of order) {
          const run = await measure({ id, n, workDir, body, duration, connections, serverCpus, loadCpus });
          run.round = r + 1;
          runs.push(run);
          console.log(`round ${run.round} ${n} streams ${id.padEnd(7)} ${Math.round(run.rps)} appends/s, p50 ${ms(run.p50)} ms, p99 ${ms(run.p99)} ms, ${run.cpuUs.toFixed(1)} µs server CPU per append${run.bad > 0 ? `, ${run.bad} non-2xx` : ''}`);
        }
      }
    }
  } finally {
    fs.rmSync(workDir, { recursive: true, force: true });
  }
  const section = render({ runs, servers, counts, rounds, duration, connections, bytes, serverCpus, loadCpus, load: `${loadBefore.toFixed(2)} at start, ${os.loadavg()[0].toFixed(2)} at end` });
  console.log('\n' + section);
  writeResultsSection(START, END, section, 'ds-bench shape');
}

const ms = (us) => (us / 1000).toFixed(2);

/** One server, fresh: N streams created, a warm-up, then the measured run. */
async function measure({ id, n, workDir, body, duration, connections, serverCpus, loadCpus }) {
  const live = await startServer(id, workDir);
  try {
    // All its threads, the ones started later too: taskset -a pins every thread the process has now.
    if (serverCpus !== '') execFileSync('taskset', ['-a', '-cp', serverCpus, String(live.pid)], { stdio: 'ignore' });
    const names = Array.from({ length: n }, (_, i) => `dsb-${String(i).padStart(4, '0')}`);
    await parallel(names.length, 32, (i) => live.proto.create(live.baseUrl, names[i]));
    const wrk = { url: live.baseUrl, script: 'append-spread.lua', args: [body, live.proto.recordContentType, live.proto.path('dsb-'), n], connections, cpus: loadCpus };
    await runWrk({ ...wrk, seconds: WARMUP_S });
    const cpuBefore = cpuSeconds(live.pid);
    const w = await runWrk({ ...wrk, seconds: duration });
    const cpu = cpuSeconds(live.pid) - cpuBefore;
    return { id, n, rps: w.requests / w.seconds, p50: w.latency.p50, p99: w.latency.p99, cpuUs: (cpu / Math.max(1, w.requests)) * 1e6, bad: (w.errors && w.errors.status) || w.non2xx || 0 };
  } finally {
    await live.stop();
  }
}

function render({ runs, servers, counts, rounds, duration, connections, bytes, serverCpus, loadCpus, load }) {
  const lines = [
    START,
    '## The ds-bench shape: appends spread over 1,000 and 10,000 streams',
    '',
    `Single ${bytes}-byte appends, each to one of N streams picked at random, wrk -t1 -c${connections}, against the node's Durable Streams listener ` +
      '(`svc-ds`: durable, each append acknowledged after fdatasync), its Svc listener (`svc`) and the Durable Streams reference server in memory ' +
      '(`ds-mem`, no disk), a fresh server per run, the order reversed every round. Written by `node perf/ds-bench.js`. Goal (issue text): the ' +
      `durable node ≥ ${GOAL}× the reference server in memory, at 1,000 and at 10,000 streams.`,
    '',
    `- date: ${new Date().toISOString()}; ${os.cpus().length} cores, ${os.type()} ${os.release()}, node ${process.version}; load average (1 min): ${load}`,
    `- ${rounds} round(s) × ${duration} s per run after a ${WARMUP_S} s warm-up; server CPUs: ${serverCpus || 'unpinned'}; wrk CPUs: ${loadCpus || 'unpinned'}`,
    '',
    '| Round | streams | server | appends/s | ÷ DS memory | p50 (ms) | p99 (ms) | server CPU per append (µs) |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (let r = 1; r <= rounds; r++) {
    for (const n of counts) {
      const ref = runs.find((x) => x.round === r && x.n === n && x.id === 'ds-mem');
      for (const id of servers) {
        const x = runs.find((y) => y.round === r && y.n === n && y.id === id);
        if (x === undefined) continue;
        const ratio = ref === undefined ? '—' : `${(x.rps / ref.rps).toFixed(2)}×`;
        lines.push(`| ${r} | ${n.toLocaleString('en-US')} | ${LABELS[id] ?? id} | ${Math.round(x.rps).toLocaleString('en-US')}${x.bad > 0 ? ` (${x.bad} non-2xx)` : ''} | ${ratio} | ${ms(x.p50)} | ${ms(x.p99)} | ${x.cpuUs.toFixed(1)} |`);
      }
    }
  }
  lines.push('', '| Goal | Result |', '|---|---|');
  for (const n of counts) {
    const rate = (id) => {
      const xs = runs.filter((x) => x.n === n && x.id === id).map((x) => x.rps);
      return xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
    };
    const svc = rate('svc-ds');
    const ref = rate('ds-mem');
    if (svc === null || ref === null) continue;
    const ratio = svc / ref;
    lines.push(`| ${n.toLocaleString('en-US')} streams: Svc DS (durable) ≥ ${GOAL}× DS memory, mean of the rounds | ${ratio.toFixed(2)}× (${ratio >= GOAL ? 'PASS' : 'FAIL'}) |`);
  }
  lines.push(END);
  return lines.join('\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
