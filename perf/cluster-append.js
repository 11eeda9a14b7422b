#!/usr/bin/env node
'use strict';
// What objects mode costs an append (docs/cluster.md, "Objects mode: where data lives"): the W1
// load (single 100-byte record appends to one stream, wrk -t1, 64 connections) against a node
// from the same build in single-node mode (`--metadata local`: write + fdatasync of the local
// segment log) and in objects mode on one node (`--metadata etcd://…` on a local etcd,
// `--objects file:<dir>`: the group's object put create-only, then, for early groups, the local
// write without fdatasync and the answer, the fenced ledger txn behind in batches; late groups
// wait for their txn), in the same run:
//
//   node perf/cluster-append.js    # PERF_CLUSTER_ROUNDS (default 2) × PERF_DURATION (default 5 s) per run
//
// PERF_ETCD_MEMBERS (default 1) etcd members on loopback (ops/lib/etcd-local.js);
// PERF_OBJECTS_FLUSH_MS (default: none) adds a side with that --objects-flush-ms;
// PERF_OBJECTS_S3=1 adds a side with `--objects s3://…` on a local S3 server (s3rver from npm,
// perf/lib/s3rver.js), with the flush window when one is given; PERF_OBJECTS_ARGS='<flags>' adds a
// side `objects-args` with those `svc serve` flags. Then the same sides again, each offered one rate
// (PERF_RATE, default 80% of the slowest non-s3 side's closed-loop rate) over PERF_PACED_CONNECTIONS
// (256): node CPU per append at one load (goal: objects ≤ 1.3× single node).
// Each run gets a fresh node (started, warmed up 2 s, measured, stopped); the order alternates per
// round so drift in the machine's load falls on every side. Writes the "Objects mode: append cost"
// section of perf/RESULTS.md (between its markers).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startSvc } = require('./lib/servers');
const { runWrk, haveWrk } = require('./lib/wrk');
const { recordBody } = require('./lib/bodies');
const { http, cpuSeconds, etcdCpuSeconds, metricSample, intEnv, freePorts } = require('./lib/util');
const { writeResultsSection } = require('./lib/results');
const { startEtcd } = require('../ops/lib/etcd-local');
const { startS3rver } = require('./lib/s3rver');
const { putFloor, txnFloor, GROUP_BYTES } = require('./lib/commit-floors');

const PERF_DIR = __dirname;
const START = '<!-- cluster-append:start -->';
const END = '<!-- cluster-append:end -->';
const WARMUP_S = 2;
const ms = (us) => (us / 1000).toFixed(2);

async function main() {
  if (!haveWrk()) {
    console.error('perf: `wrk` was not found on PATH; install it with `apt-get install wrk`.');
    process.exit(1);
  }
  const rounds = intEnv('PERF_CLUSTER_ROUNDS', 2, 10);
  const duration = intEnv('PERF_DURATION', 5, 10);
  const connections = intEnv('PERF_CONNECTIONS', 64, 1024);
  // The paced phase: every side offered one rate (perf/wrk/paced-append.lua) over more connections,
  // so CPU per append compares like with like; PERF_RATE, else 80% of the slowest `file:` or local
  // side's closed-loop rate, rounded down to 1,000.
  const pacedRate = process.env.PERF_RATE === undefined ? null : intEnv('PERF_RATE', 20000, 1000000);
  const pacedConnections = intEnv('PERF_PACED_CONNECTIONS', 256, 1024);
  const members = intEnv('PERF_ETCD_MEMBERS', 1, 5);
  const flushMs = process.env.PERF_OBJECTS_FLUSH_MS === undefined ? null : intEnv('PERF_OBJECTS_FLUSH_MS', 0, 10000);
  fs.mkdirSync(path.join(PERF_DIR, '.work'), { recursive: true });
  const workDir = fs.mkdtempSync(path.join(PERF_DIR, '.work', 'cluster-append-'));
  const body = path.join(workDir, 'record-100.bin');
  fs.writeFileSync(body, recordBody(0, 100));
  const loadBefore = os.loadavg()[0];
  const etcd = await startEtcd(path.join(workDir, 'etcd'), members);
  const s3 = process.env.PERF_OBJECTS_S3 === '1' ? await startS3rver(path.join(workDir, 's3'), ['perf-objects']) : null;
  // PERF_OBJECTS_ARGS: a side `objects-args` with these extra `svc serve` flags (an experiment's).
  const extraArgs = (process.env.PERF_OBJECTS_ARGS || '').split(' ').filter(Boolean);
  const sides = ['local', 'objects', ...(flushMs === null ? [] : [`objects-flush-${flushMs}`]), ...(extraArgs.length === 0 ? [] : ['objects-args']), ...(s3 === null ? [] : ['objects-s3'])];
  let live = null;
  let n = 0;
  try {
    // Each remote leg alone first, one at a time and with no load: the floors the loaded figures are set against.
    const floors = { put: await putFloor(path.join(workDir, 'floor-objects')), txn: await txnFloor(etcd, `perf-${process.pid}-floor`) };
    console.log(
      `alone: object PUT of ${GROUP_BYTES} B p50 ${floors.put.p50.toFixed(2)} ms (p99 ${floors.put.p99.toFixed(2)}); ` +
        `ledger commit p50 ${floors.txn.p50.toFixed(2)} ms (p99 ${floors.txn.p99.toFixed(2)}), etcd ${floors.txn.etcdUs.toFixed(0)} µs CPU per commit`,
    );
    const runs = [];
    const measure = async (phase, r, side, rate) => {
      const args = [];
      let env;
      if (side !== 'local') {
        const prefix = `perf-${process.pid}-${n++}`;
        const objects = side === 'objects-s3' ? `s3://perf-objects/${prefix}?endpoint=${s3.url}&region=us-east-1` : `file:${fs.mkdtempSync(path.join(workDir, 'objects-'))}`;
        args.push('--metadata', etcd.url(prefix), '--objects', objects);
        if (side.startsWith('objects-flush-') || (side === 'objects-s3' && flushMs !== null)) args.push('--objects-flush-ms', String(flushMs));
        if (side === 'objects-args') args.push(...extraArgs);
        // s3rver takes any credentials; the node refuses s3:// without them.
        if (side === 'objects-s3') env = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };
      }
      // The admin listener, for the group commit's figures around the measured run (docs/metrics.md).
      const [adminPort] = await freePorts(1);
      args.push('--admin', '--admin-listen', `127.0.0.1:${adminPort}`);
      live = await startSvc(workDir, { name: `svc-${side}`, args, env });
      const res = await http('PUT', `${live.baseUrl}/w1`, { headers: { 'content-type': 'application/octet-stream' } });
      if (res.status !== 201) throw new Error(`PUT /w1 (${side}) → ${res.status} ${res.body.toString()}`);
      const load = rate === null
        ? { url: `${live.baseUrl}/w1`, script: 'append.lua', args: [body, 'application/octet-stream'], connections }
        : { url: `${live.baseUrl}/w1`, script: 'paced-append.lua', args: [body, 'application/octet-stream', '', String(rate)], connections: pacedConnections };
      await runWrk({ ...load, seconds: WARMUP_S });
      const scrape = async () => (await http('GET', `http://127.0.0.1:${adminPort}/metrics`)).body.toString();
      const before = { metrics: await scrape(), etcd: etcdCpuSeconds(etcd) };
      const cpuBefore = cpuSeconds(live.pid);
      const w = await runWrk({ ...load, seconds: duration });
      const cpu = cpuSeconds(live.pid) - cpuBefore;
      const legs = commitLegs(before.metrics, await scrape(), etcdCpuSeconds(etcd) - before.etcd);
      await live.stop();
      live = null;
      const bad = (w.errors && w.errors.status) || w.non2xx || 0;
      if (bad > 0) throw new Error(`${side}: ${bad} non-2xx answers`);
      const run = { phase, rate, round: r + 1, side, rps: w.requests / w.seconds, p50: w.latency.p50, p99: w.latency.p99, cpuUs: (cpu / w.requests) * 1e6, ...legs };
      runs.push(run);
      console.log(
        `${phase} round ${run.round} ${side.padEnd(18)} ${rate === null ? '' : `offered ${rate}/s, `}${Math.round(run.rps)} appends/s, p50 ${ms(run.p50)} ms, p99 ${ms(run.p99)} ms, ${run.cpuUs.toFixed(1)} µs node CPU per append, ` +
          `${fixed(run.framesPerGroup, 1)} frames per group, group commit ${fixed(run.commitMs, 2)} ms (PUT ${fixed(run.putMs, 2)}, ledger txn ${fixed(run.txnMs, 2)}, ${fixed(run.groupsPerTxn, 1)} groups per txn), etcd ${fixed(run.etcdUsPerGroup, 0)} µs CPU per group`,
      );
    };
    const order = (r) => (r % 2 === 0 ? sides : [...sides].reverse());
    for (let r = 0; r < rounds; r++) for (const side of order(r)) await measure('closed', r, side, null);
    const closedMean = (side) => runs.filter((x) => x.phase === 'closed' && x.side === side).reduce((a, x) => a + x.rps, 0) / rounds;
    const rate = pacedRate ?? Math.max(1000, Math.floor((0.8 * Math.min(...sides.filter((x) => x !== 'objects-s3').map(closedMean))) / 1000) * 1000);
    for (let r = 0; r < rounds; r++) for (const side of order(r)) await measure('paced', r, side, rate);
    const section = render({ runs, sides, rounds, duration, connections, pacedConnections, rate, members, floors, load: `${loadBefore.toFixed(2)} at start, ${os.loadavg()[0].toFixed(2)} at end` });
    console.log('\n' + section);
    writeResultsSection(START, END, section, 'Objects mode: append cost');
  } finally {
    if (live !== null) await live.stop().catch(() => {});
    await etcd.stop();
    if (s3 !== null) await s3.stop();
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

const fixed = (v, digits) => (v === null ? '—' : v.toFixed(digits));

/**
 * Where a group commit's time went over the measured run, from the node's metrics before and
 * after (docs/metrics.md): frames per group, and the mean of the whole commit, of its object PUT
 * and of its ledger transaction (null where the side has none); groups per ledger transaction;
 * etcd's CPU per group.
 */
function commitLegs(before, after, etcdSeconds) {
  const delta = (name, labels) => metricSample(after, name, labels) - metricSample(before, name, labels);
  const meanMs = (name, labels) => {
    const n = delta(`${name}_count`, labels);
    return n > 0 ? (delta(`${name}_sum`, labels) / n) * 1000 : null;
  };
  const groups = delta('svc_group_commit_frames_count');
  const txnMs = meanMs('svc_objects_ledger_commit_seconds');
  const txns = delta('svc_objects_ledger_commit_seconds_count');
  return {
    groupsPerTxn: txns > 0 ? groups / txns : null,
    framesPerGroup: groups > 0 ? delta('svc_group_commit_frames_sum') / groups : null,
    commitMs: meanMs('svc_group_commit_duration_seconds'),
    putMs: meanMs('svc_object_store_request_seconds', 'op="put"'),
    txnMs,
    etcdUsPerGroup: groups > 0 && txnMs !== null ? (etcdSeconds / groups) * 1e6 : null,
  };
}

function render({ runs, sides, rounds, duration, connections, pacedConnections, rate, members, floors, load }) {
  const lines = [
    START,
    '## Objects mode: append cost',
    '',
    'The W1 load (single 100-byte appends to one stream, wrk -t1) against one node in single-node mode ' +
      '(`--metadata local`: local write + fdatasync) and in objects mode (`--metadata etcd://…`, `--objects file:<dir>`: ' +
      'object PUT, create-only (write + fdatasync of a temporary file opened ahead, link to the key, directory fsync), then the local write without fdatasync and the answer, the fenced ledger txn recording the groups behind, several per txn (groups that create or change a stream wait for it); ' +
      '`objects-s3`: `--objects s3://…` on s3rver from npm on the same machine, which stores each object as files), ' +
      `same build, same run, ${members} etcd 3.4 member(s) on the same machine. Written by \`node perf/cluster-append.js\`. ` +
      'The machine was shared with other work (load below): compare the sides of one round, not figures across sections.',
    '',
    `- date: ${new Date().toISOString()}; ${os.cpus().length} cores, ${os.type()} ${os.release()}, node ${process.version}; load average (1 min): ${load}`,
    `- closed loop: ${rounds} rounds × ${duration} s per run, ${connections} connections, each as fast as its answers come (the rate a side reaches); ` +
      `paced: ${rounds} rounds × ${duration} s per run, every side offered ${rate} appends/s over ${pacedConnections} connections (\`perf/wrk/paced-append.lua\`: the CPU an append costs at one load); a 2 s warm-up before each run`,
    `- each remote leg alone, one at a time, before the rounds and with no other load of this benchmark (\`perf/lib/commit-floors.js\`, the product's code): ` +
      `a \`file:\` object PUT of ${GROUP_BYTES} B (about one W1 group) p50 ${floors.put.p50.toFixed(2)} ms, p99 ${floors.put.p99.toFixed(2)} ms; ` +
      `a ledger commit of one stream's entry p50 ${floors.txn.p50.toFixed(2)} ms, p99 ${floors.txn.p99.toFixed(2)} ms, etcd ${floors.txn.etcdUs.toFixed(0)} µs CPU per commit`,
    '',
    'Where a group commit\'s time goes, from the node\'s metrics over the measured run (docs/metrics.md): frames per group; the mean group commit ' +
      '(`svc_group_commit_duration_seconds`: local, write + fdatasync; objects, from the group\'s start to its local write, the wait for the group before it included), ' +
      'its object PUT (`svc_object_store_request_seconds{op="put"}`) and its ledger transaction in etcd (`svc_objects_ledger_commit_seconds`, behind the answer for early groups), groups recorded per transaction; etcd\'s CPU per group.',
    '',
  ];
  for (const phase of ['closed', 'paced']) {
    lines.push(
      phase === 'closed' ? '**Closed loop** (each side at the rate it reaches):' : `**Paced** (every side offered ${rate} appends/s; ÷ local compares CPU per append):`,
      '',
      `| Round | side | appends/s | ÷ local | p50 (ms) | p99 (ms) | node CPU per append (µs) | CPU ÷ local | frames per group | group commit (ms) | object PUT (ms) | ledger txn (ms) | groups per txn | etcd CPU per group (µs) |`,
      '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    );
    for (let r = 1; r <= rounds; r++) {
      const local = runs.find((x) => x.phase === phase && x.round === r && x.side === 'local');
      for (const side of sides) {
        const x = runs.find((y) => y.phase === phase && y.round === r && y.side === side);
        lines.push(
          `| ${r} | ${side} | ${Math.round(x.rps)} | ${(x.rps / local.rps).toFixed(3)}× | ${ms(x.p50)} | ${ms(x.p99)} | ${x.cpuUs.toFixed(1)} | ${(x.cpuUs / local.cpuUs).toFixed(2)}× | ` +
            `${fixed(x.framesPerGroup, 1)} | ${fixed(x.commitMs, 2)} | ${fixed(x.putMs, 2)} | ${fixed(x.txnMs, 2)} | ${fixed(x.groupsPerTxn, 1)} | ${fixed(x.etcdUsPerGroup, 0)} |`,
        );
      }
    }
    lines.push('');
  }
  const mean = (phase, side, k) => runs.filter((x) => x.phase === phase && x.side === side).reduce((a, x) => a + x[k], 0) / rounds;
  const ratio = mean('closed', 'objects', 'rps') / mean('closed', 'local', 'rps');
  const p99 = Math.max(...runs.filter((x) => x.phase === 'closed' && x.side === 'objects').map((x) => x.p99));
  const cpu = mean('paced', 'objects', 'cpuUs') / mean('paced', 'local', 'cpuUs');
  // Paced CPU compares only if both sides kept up with the offered rate.
  const kept = ['local', 'objects'].every((side) => mean('paced', side, 'rps') >= 0.97 * rate);
  lines.push(
    '| Figure | Result |',
    '|---|---|',
    `| W1 append rate, objects (file:) ÷ single node, closed loop (goal ≥ 0.5×) | ${ratio.toFixed(3)}× (${ratio >= 0.5 ? 'PASS' : 'FAIL'}) |`,
    `| W1 p99 in objects mode, closed loop, worst round (goal < 20 ms) | ${ms(p99)} ms (${p99 < 20000 ? 'PASS' : 'FAIL'}) |`,
    `| Node CPU per append at ${rate} appends/s, objects (file:) ÷ single node (goal ≤ 1.3×) | ${cpu.toFixed(2)}× (${!kept ? 'not comparable: a side fell behind the offered rate' : cpu <= 1.3 ? 'PASS' : 'FAIL'}) |`,
    END,
  );
  return lines.join('\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
