#!/usr/bin/env node
'use strict';
// What `--auth required` costs on the hot path: single-record appends (the W1 load) against two
// Svc nodes from the same build, one with `--auth off` and one with `--auth required` whose every
// request carries a bearer token (authenticated, hashed, compared and scope-checked per request).
//
//   node perf/auth-overhead.js       # PERF_AUTH_ROUNDS (default 4) × PERF_DURATION (default 5 s) per node
//
// Each measured run gets a fresh node of its own (started, warmed up for 2 s, measured, stopped),
// alternating off/required, required/off, … so drift in the machine's load falls on both sides.
// PERF_AUTH_CONTROL=1 runs both sides with auth off: the ratio it prints is the method's noise.
// The result is required ÷ off on the summed appends per second; the goal is ≥ 0.95 (under 5%
// throughput cost). It replaces the "Auth overhead" section of perf/RESULTS.md (run.js keeps that
// section when it rewrites the file).

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startSvc } = require('./lib/servers');
const { runWrk, haveWrk } = require('./lib/wrk');
const { recordBody } = require('./lib/bodies');
const { http, cpuSeconds, intEnv } = require('./lib/util');
const { authSection, replaceAuthSection } = require('./lib/auth-section');

const PERF_DIR = __dirname;
const RECORD = 100;
const WARMUP_S = 2;



async function main() {
  if (!haveWrk()) {
    console.error('perf: `wrk` was not found on PATH; install it with `apt-get install wrk`.');
    process.exit(1);
  }
  const rounds = intEnv('PERF_AUTH_ROUNDS', 4, 10);
  const duration = intEnv('PERF_DURATION', 5, 10);
  const connections = intEnv('PERF_CONNECTIONS', 64, 1024);
  fs.mkdirSync(path.join(PERF_DIR, '.work'), { recursive: true });
  const workDir = fs.mkdtempSync(path.join(PERF_DIR, '.work', 'auth-'));
  const token = `${Buffer.from('bench').toString('base64url')}.${crypto.randomBytes(32).toString('base64url')}`;
  const body = path.join(workDir, 'record-100.bin');
  fs.writeFileSync(body, recordBody(0, RECORD));
  const loadBefore = os.loadavg()[0];

  const modes = [
    { id: 'off', args: [], auth: '' },
    { id: 'required', args: ['--auth', 'required', '--auth-bootstrap-token', token], auth: `Bearer ${token}` },
  ];
  // PERF_AUTH_CONTROL=1: both sides run with auth off (the header is still sent): the noise floor of the method.
  if (process.env.PERF_AUTH_CONTROL === '1') modes[1].args = [];
  let live = null;
  try {
    const runs = [];
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? modes : [...modes].reverse();
      for (const m of order) {
        // A fresh node per measured run, alone on the machine's cores (no other node's background work).
        live = await startSvc(workDir, { name: `svc-auth-${m.id}`, args: m.args });
        const headers = { 'content-type': 'application/octet-stream', ...(m.auth ? { authorization: m.auth } : {}) };
        const res = await http('PUT', `${live.baseUrl}/w1`, { headers });
        if (res.status !== 201) throw new Error(`PUT /w1 on the auth ${m.id} node → ${res.status} ${res.body.toString()}`);
        const load = { url: `${live.baseUrl}/w1`, script: 'append.lua', args: [body, 'application/octet-stream', m.auth], connections };
        await runWrk({ ...load, seconds: WARMUP_S }); // discarded: JIT, first segment
        const cpuBefore = cpuSeconds(live.pid);
        const w = await runWrk({ ...load, seconds: duration });
        const cpu = cpuSeconds(live.pid) - cpuBefore;
        await live.stop();
        live = null;
        const bad = (w.errors && w.errors.status) || w.non2xx || 0;
        if (bad > 0) throw new Error(`auth ${m.id}: ${bad} non-2xx answers in round ${r + 1}`);
        const rps = w.requests / w.seconds;
        const cpuUs = (cpu / w.requests) * 1e6;
        runs.push({ round: r + 1, mode: m.id, rps, p99: w.latency.p99, cpuUs });
        console.log(`round ${r + 1} auth ${m.id.padEnd(8)} ${Math.round(rps)} appends/s, p99 ${(w.latency.p99 / 1000).toFixed(2)} ms, ${cpuUs.toFixed(1)} µs node CPU per append`);
      }
    }
    const section = authSection({
      runs,
      rounds,
      duration,
      connections,
      date: new Date().toISOString(),
      load: `${loadBefore.toFixed(2)} at start, ${os.loadavg()[0].toFixed(2)} at end`,
      machine: `${os.cpus().length} cores, ${os.type()} ${os.release()}, node ${process.version}`,
    });
    console.log('\n' + section);
    if (process.env.PERF_AUTH_CONTROL === '1') {
      console.log('perf: control run (auth off on both sides): perf/RESULTS.md left unchanged');
      return;
    }
    const file = path.join(PERF_DIR, 'RESULTS.md');
    fs.writeFileSync(file, replaceAuthSection(fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '', section));
    console.log('perf: wrote the auth overhead section of perf/RESULTS.md');
  } finally {
    if (live !== null) await live.stop().catch(() => {});
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
