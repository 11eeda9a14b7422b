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
const { intEnv } = require('./lib/util');
const { pairedRuns, W1_LOAD } = require('./lib/builds-ab');
const { authSection, replaceAuthSection } = require('./lib/auth-section');

const PERF_DIR = __dirname;

async function main() {
  const rounds = intEnv('PERF_AUTH_ROUNDS', 4, 10);
  const duration = intEnv('PERF_DURATION', 5, 10);
  const connections = intEnv('PERF_CONNECTIONS', 64, 1024);
  const token = `${Buffer.from('bench').toString('base64url')}.${crypto.randomBytes(32).toString('base64url')}`;
  const loadBefore = os.loadavg()[0];
  // PERF_AUTH_CONTROL=1: both sides run with auth off (the header is still sent): the noise floor of the method.
  const control = process.env.PERF_AUTH_CONTROL === '1';
  const runs = await pairedRuns({
    name: 'auth',
    variants: [
      { id: 'off', setup: async () => ({}) },
      { id: 'required', setup: async () => ({ args: control ? [] : ['--auth', 'required', '--auth-bootstrap-token', token], auth: `Bearer ${token}` }) },
    ],
    rounds,
    duration,
    connections,
    ...W1_LOAD,
    onRun: (x) => console.log(`round ${x.round} auth ${x.id.padEnd(8)} ${Math.round(x.rps)} appends/s, p99 ${(x.p99 / 1000).toFixed(2)} ms, ${x.cpuUs.toFixed(1)} µs node CPU per append`),
  });
  const section = authSection({
    runs: runs.map((x) => ({ round: x.round, mode: x.id, rps: x.rps, p99: x.p99, cpuUs: x.cpuUs })),
    rounds,
    duration,
    connections,
    date: new Date().toISOString(),
    load: `${loadBefore.toFixed(2)} at start, ${os.loadavg()[0].toFixed(2)} at end`,
    machine: `${os.cpus().length} cores, ${os.type()} ${os.release()}, node ${process.version}`,
  });
  console.log('\n' + section);
  if (control) {
    console.log('perf: control run (auth off on both sides): perf/RESULTS.md left unchanged');
    return;
  }
  const file = path.join(PERF_DIR, 'RESULTS.md');
  fs.writeFileSync(file, replaceAuthSection(fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '', section));
  console.log('perf: wrote the auth overhead section of perf/RESULTS.md');
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
