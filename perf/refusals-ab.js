#!/usr/bin/env node
'use strict';
// Two builds side by side on refused requests: GET of a stream that does not exist (404
// not_found, the refusal a client polling for a stream, or reading one just deleted, gets), wrk
// -t1 -c16, a fresh node per measured run, alternating A B, B A, … (perf/lib/builds-ab.js).
//
//   PERF_AB_A=perf/.work/dist-old PERF_AB_B=dist node perf/refusals-ab.js
//
// PERF_AB_A / PERF_AB_B: build directories (default dist for both: the method's own noise);
// PERF_AB_ROUNDS (default 3) × PERF_DURATION (default 5 s) per build. Prints per run and per
// build: refusals/s and the node's CPU per refusal (all its threads, and its main thread alone).
// PERF_REFUSAL_PATH: another path to GET (default /nosuch/x/y).

const { compareBuilds } = require('./lib/builds-ab');

const path = process.env.PERF_REFUSAL_PATH || '/nosuch/x/y';

compareBuilds({
  name: 'refusals',
  describe: `GET ${path} (a stream that does not exist: 404), 16 connections`,
  unit: 'refusal',
  writeBody: () => '',
  path,
  contentType: 'application/octet-stream',
  prepare: async () => {},
  script: 'get.lua',
  scriptArgs: () => [path],
  refused: true,
  connections: 16,
}).catch((err) => {
  console.error(err);
  process.exit(1);
});
