#!/usr/bin/env node
'use strict';
// Two builds side by side on W1's load: single-record 100 B appends to one stream (wrk -t1 -c64),
// a fresh node per measured run, alternating A B, B A, … so drift in the machine's load falls on both.
//
//   PERF_AB_A=perf/.work/dist-old PERF_AB_B=dist node perf/builds-ab.js
//
// PERF_AB_A / PERF_AB_B: build directories (default dist for both: the method's own noise).
// PERF_AB_ROUNDS (default 3) × PERF_DURATION (default 5 s) per build. Prints per run and per build:
// appends/s and the node's CPU per append (µs, user + system of all its threads, from /proc), and
// that of its main thread alone (the gateway thread). The harness: perf/lib/builds-ab.js.
// For a before/after of a change: copy dist/ of the old commit to perf/.work/ before building the new one.
// PERF_AB_PROTOCOL=ds: the same appends on the Durable Streams listener (`--protocol ds`, POST to
// /v1/stream/w1), as perf/run.js drives Svc DS in W1.

const { compareBuilds, W1_LOAD, W1_RECORD: RECORD } = require('./lib/builds-ab');

const ds = process.env.PERF_AB_PROTOCOL === 'ds';

compareBuilds({
  name: 'ab',
  describe: `single ${RECORD} B appends, 64 connections${ds ? ', Durable Streams listener' : ''}`,
  ...W1_LOAD,
  ...(ds ? { serveArgs: ['--protocol', 'ds'], path: '/v1/stream/w1' } : {}),
  connections: 64,
}).catch((err) => {
  console.error(err);
  process.exit(1);
});
