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
// PERF_CLUSTER_STREAMS=1000 gives W2's load instead (each append to one of that many streams at
// random; perf/wrk/append-spread.lua and paced-append-spread.lua) and writes its own section.
// PERF_WORK_DIR puts the nodes' data directories, the `file:` objects and etcd's data in a
// directory of that filesystem (default perf/.work): the filesystem is part of what an object
// costs (perf/README.md, "Machine caveats": ext4 without a journal).
// Each run gets a fresh node (started, warmed up PERF_WARMUP_S, measured, then watched until it is
// quiet again: the work the load left behind, and stopped); the order alternates per round so
// drift in the machine's load falls on every side. Writes the "Objects mode: append cost" section
// of perf/RESULTS.md (W2: "Objects mode: append cost over 1,000 streams"), between its markers.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startSvc } = require('./lib/servers');
const { runWrk, haveWrk } = require('./lib/wrk');
const { recordBody } = require('./lib/bodies');
const { http, cpuSeconds, etcdCpuSeconds, metricSample, intEnv, freePorts, parallel, sleep } = require('./lib/util');
const { writeResultsSection } = require('./lib/results');
const { startEtcd } = require('../ops/lib/etcd-local');
const { startS3rver } = require('./lib/s3rver');
const { putFloor, txnFloor, createCostUs, GROUP_BYTES } = require('./lib/commit-floors');

const PERF_DIR = __dirname;
const STREAMS = intEnv('PERF_CLUSTER_STREAMS', 1, 10000);
const W = STREAMS === 1 ? 'W1' : 'W2';
const START = STREAMS === 1 ? '<!-- cluster-append:start -->' : '<!-- cluster-append-w2:start -->';
const END = STREAMS === 1 ? '<!-- cluster-append:end -->' : '<!-- cluster-append-w2:end -->';
const TITLE = STREAMS === 1 ? 'Objects mode: append cost' : `Objects mode: append cost over ${STREAMS.toLocaleString('en-US')} streams`;
/** The streams appended to: /w1, or /w2-0000 … for W2's load. */
const streamPath = (i) => (STREAMS === 1 ? '/w1' : `/w2-${String(i).padStart(4, '0')}`);
/** Longest wait after a measured run for the node to finish what the load left (s). */
const DRAIN_MAX_S = 120;
/**
 * Shortest wait after a measured run (s): the reaper deletes an object only 10 s after nothing
 * refers to it (its grace), on a tick every 2 s, so a node freeing objects as the load ends is calm
 * for those seconds and busy after them; W1's objects-mode node deleted the run's ~2,400 objects
 * from some 6 to 15 s after the load.
 */
const DRAIN_MIN_S = 16;
/**
 * A node is quiet under this share of a core: an idle objects-mode node holding 1,000 compacted
 * streams spends 3–4.5% (its main thread's timers, compaction visiting 64 streams a second, the
 * reaper's pass over the o/ records), a single-node one under 2%.
 */
const QUIET_SHARE = 0.05;
/** Counted after the node is quiet, before its floor is measured: the settle time of compaction and of the records format's indexer (10 s), and a tick. */
const SETTLE_S = 12;
// Before each measured run: W1's streams are compacted from the first second (a stream crowds past
// 32 entries at once), W2's 1,000 only once their entries settle (10 s) or crowd (~8 s at 4,000
// appends a second), and the code that runs only then is compiled as it warms: a W2 run measured
// after 2 s counted a compiler's work and not compaction's (PERF_WARMUP_S).
const WARMUP_S = intEnv('PERF_WARMUP_S', STREAMS === 1 ? 2 : 20, 600);
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
  const workRoot = process.env.PERF_WORK_DIR || path.join(PERF_DIR, '.work');
  fs.mkdirSync(workRoot, { recursive: true });
  const workDir = fs.mkdtempSync(path.join(workRoot, 'cluster-append-'));
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
      // The file system's create cost now (it moves with what was deleted in the minutes before).
      const createUs = createCostUs(workDir);
      // The admin listener, for the group commit's figures around the measured run (docs/metrics.md).
      const [adminPort] = await freePorts(1);
      args.push('--admin', '--admin-listen', `127.0.0.1:${adminPort}`);
      live = await startSvc(workDir, { name: `svc-${side}`, args, env });
      await parallel(STREAMS, 16, async (i) => {
        const res = await http('PUT', `${live.baseUrl}${streamPath(i)}`, { headers: { 'content-type': 'application/octet-stream' } });
        if (res.status !== 201) throw new Error(`PUT ${streamPath(i)} (${side}) → ${res.status} ${res.body.toString()}`);
      });
      const type = 'application/octet-stream';
      const load =
        STREAMS === 1
          ? rate === null
            ? { url: `${live.baseUrl}/w1`, script: 'append.lua', args: [body, type], connections }
            : { url: `${live.baseUrl}/w1`, script: 'paced-append.lua', args: [body, type, '', String(rate)], connections: pacedConnections }
          : rate === null
            ? { url: live.baseUrl, script: 'append-spread.lua', args: [body, type, '/w2-', STREAMS], connections }
            : { url: live.baseUrl, script: 'paced-append-spread.lua', args: [body, type, '/w2-', STREAMS, String(rate)], connections: pacedConnections };
      // The whole load (warm-up, run and drain) is counted too: background work started by the
      // warm-up's appends is in the drain, and charging it to the run's appends alone overstates it.
      const loadCpu = cpuSeconds(live.pid);
      const loadStart = Date.now();
      const warm = await runWrk({ ...load, seconds: WARMUP_S });
      const scrape = async () => (await http('GET', `http://127.0.0.1:${adminPort}/metrics`)).body.toString();
      const before = { metrics: await scrape(), etcd: etcdCpuSeconds(etcd) };
      const cpuBefore = cpuSeconds(live.pid);
      const w = await runWrk({ ...load, seconds: duration });
      const cpu = cpuSeconds(live.pid) - cpuBefore;
      const legs = commitLegs(before.metrics, await scrape(), etcdCpuSeconds(etcd) - before.etcd);
      // Work the appends leave behind (objects mode: compaction of their entries, the reaper of
      // the group objects it frees) runs on after the load; a node short of CPU falls behind with
      // it under load. So the CPU until the node is quiet again (under QUIET_SHARE of a core for
      // 4 s, at least DRAIN_MIN_S and at most DRAIN_MAX_S) is counted too, less the node's idle
      // floor over that time (its timers, compaction's visits of its streams: measured for 4 s
      // once quiet): an upper bound still, as it includes what the warm-up left.
      const drainStart = Date.now();
      // Quiet: two 2 s windows in a row under the share (the reaper ticks every 2 s, so one window
      // can fall between its bursts of deletes).
      let quiet = false;
      for (let prev = cpuSeconds(live.pid), calm = 0; !quiet && Date.now() - drainStart < DRAIN_MAX_S * 1000; ) {
        await sleep(2000);
        const now = cpuSeconds(live.pid);
        calm = now - prev < QUIET_SHARE * 2 ? calm + 1 : 0;
        quiet = calm >= 2 && Date.now() - drainStart >= DRAIN_MIN_S * 1000;
        prev = now;
      }
      // Background work that waits for its entries to settle (compaction, the records format's
      // indexer: 10 s) comes in bursts after the load, and a floor measured among them counted it
      // as idle and took it off (under --objects-ledger records the "with the work left behind"
      // figure came out below the run's own). So once quiet the drain runs a settle time longer,
      // counted, before the floor is measured.
      if (quiet) await sleep(SETTLE_S * 1000);
      const drainS = (Date.now() - drainStart) / 1000;
      const quietCpu = cpuSeconds(live.pid);
      const floorStart = Date.now();
      await sleep(4000);
      const floor = quiet ? (cpuSeconds(live.pid) - quietCpu) / ((Date.now() - floorStart) / 1000) : 0;
      const drainedCpu = quietCpu - cpuBefore - floor * drainS;
      const wholeCpu = quietCpu - loadCpu - (floor * (floorStart - loadStart)) / 1000;
      await live.stop();
      live = null;
      const bad = (w.errors && w.errors.status) || w.non2xx || 0;
      if (bad > 0) throw new Error(`${side}: ${bad} non-2xx answers`);
      const run = { phase, rate, round: r + 1, side, rps: w.requests / w.seconds, p50: w.latency.p50, p99: w.latency.p99, cpuUs: (cpu / w.requests) * 1e6, drainedUs: (drainedCpu / w.requests) * 1e6, wholeUs: (wholeCpu / (warm.requests + w.requests)) * 1e6, drainS, quiet, floorShare: floor, createUs, ...legs };
      runs.push(run);
      console.log(
        `${phase} round ${run.round} ${side.padEnd(18)} ${rate === null ? '' : `offered ${rate}/s, `}file create ${run.createUs.toFixed(0)} µs before, ${Math.round(run.rps)} appends/s, p50 ${ms(run.p50)} ms, p99 ${ms(run.p99)} ms, ${run.cpuUs.toFixed(1)} µs node CPU per append (${run.drainedUs.toFixed(1)} with ${run.drainS.toFixed(0)} s after the load${run.quiet ? `, idle floor ${(run.floorShare * 100).toFixed(1)}% of a core` : ', not quiet'}; ${run.wholeUs.toFixed(1)} over the whole load), ` +
          `${fixed(run.framesPerGroup, 1)} frames per group, group commit ${fixed(run.commitMs, 2)} ms (PUT ${fixed(run.putMs, 2)}, ledger txn ${fixed(run.txnMs, 2)}, ${fixed(run.groupsPerTxn, 1)} groups per txn), etcd ${fixed(run.etcdUsPerGroup, 0)} µs CPU per group`,
      );
    };
    const order = (r) => (r % 2 === 0 ? sides : [...sides].reverse());
    for (let r = 0; r < rounds; r++) for (const side of order(r)) await measure('closed', r, side, null);
    const closedMean = (side) => runs.filter((x) => x.phase === 'closed' && x.side === side).reduce((a, x) => a + x.rps, 0) / rounds;
    const rate = pacedRate ?? Math.max(1000, Math.floor((0.8 * Math.min(...sides.filter((x) => x !== 'objects-s3').map(closedMean))) / 1000) * 1000);
    for (let r = 0; r < rounds; r++) for (const side of order(r)) await measure('paced', r, side, rate);
    const section = render({ runs, sides, rounds, duration, connections, pacedConnections, rate, members, floors, extra: extraArgs.join(' '), fsName: describeFs(workDir), load: `${loadBefore.toFixed(2)} at start, ${os.loadavg()[0].toFixed(2)} at end` });
    console.log('\n' + section);
    writeResultsSection(START, END, section, TITLE);
  } finally {
    if (live !== null) await live.stop().catch(() => {});
    await etcd.stop();
    if (s3 !== null) await s3.stop();
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

/** The filesystem a directory is on, as the benchmark's reader needs it: its type and, for ext4, whether it has a journal. */
function describeFs(dir) {
  const mounts = fs.readFileSync('/proc/self/mounts', 'utf8').split('\n').map((l) => l.split(' ')).filter((f) => f.length > 2);
  const real = fs.realpathSync(dir);
  const m = mounts.filter((f) => real === f[1] || real.startsWith(f[1].endsWith('/') ? f[1] : `${f[1]}/`)).sort((a, b) => b[1].length - a[1].length)[0];
  if (m === undefined) return 'an unknown filesystem';
  let journal = '';
  if (m[2] === 'ext4') {
    const dev = path.basename(m[0]);
    try {
      journal = fs.readFileSync(`/sys/fs/ext4/${dev}/journal_task`, 'utf8').trim() === '<none>' ? ' without a journal' : ' with a journal';
    } catch {
      journal = '';
    }
  }
  return `${m[2]}${journal}`;
}

const fixed = (v, digits) => (v === null ? '—' : v.toFixed(digits));
/** "lo–hi" of whole numbers (one number when they are equal). */
const range = (xs) => {
  const lo = Math.round(Math.min(...xs));
  const hi = Math.round(Math.max(...xs));
  return lo === hi ? String(lo) : `${lo}–${hi}`;
};

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

function render({ runs, sides, rounds, duration, connections, pacedConnections, rate, members, floors, extra, fsName, load }) {
  const lines = [
    START,
    `## ${TITLE}`,
    '',
    (STREAMS === 1 ? 'The W1 load (single 100-byte appends to one stream, wrk -t1)' : `The W2 load (single 100-byte appends, each to one of ${STREAMS.toLocaleString('en-US')} streams at random, wrk -t1)`) +
      ' against one node in single-node mode ' +
      '(`--metadata local`: local write + fdatasync) and in objects mode (`--metadata etcd://…`, `--objects file:<dir>`: ' +
      'object PUT, create-only (write + fdatasync of a temporary file opened ahead, link to the key, directory fsync), then the local write without fdatasync and the answer, the fenced ledger txn recording the groups behind, several per txn (groups that create or change a stream wait for it); ' +
      '`objects-s3`: `--objects s3://…` on s3rver from npm on the same machine, which stores each object as files)' +
      (extra === '' ? ', ' : `; \`objects-args\`: objects mode with \`${extra}\`, `) +
      `same build, same run, ${members} etcd 3.4 member(s) on the same machine. Written by \`node perf/cluster-append.js\`. ` +
      'The machine was shared with other work (load below): compare the sides of one round, not figures across sections.',
    '',
    `- date: ${new Date().toISOString()}; ${os.cpus().length} cores, ${os.type()} ${os.release()}, node ${process.version}; load average (1 min): ${load}`,
    `- closed loop: ${rounds} rounds × ${duration} s per run, ${connections} connections, each as fast as its answers come (the rate a side reaches); ` +
      `paced: ${rounds} rounds × ${duration} s per run, every side offered ${rate} appends/s over ${pacedConnections} connections (\`perf/wrk/${STREAMS === 1 ? 'paced-append.lua' : 'paced-append-spread.lua'}\`: the CPU an append costs at one load); a ${WARMUP_S} s warm-up before each run`,
    `- with the work left behind: the node's CPU from the measured run's start until it is quiet again (under ${QUIET_SHARE * 100}% of a core in two 2 s windows in a row, at least ${DRAIN_MIN_S} s (the reaper's grace) and at most ${DRAIN_MAX_S} s after the load: compaction and the reaper catching up) and ${SETTLE_S} s more (what waits to settle: compaction's runs, the records format's indexer), less its idle floor over the wait (measured for 4 s after that), per measured append; an upper bound, as it includes what the warm-up left`,
    `- over the whole load: the node's CPU from the warm-up's start until quiet (the same drain), less its idle floor over that time, per append of the warm-up and the run: every append's share of the background work it caused, none of it charged twice (the goal's figure with the run's own)`,
    `- data directories, \`file:\` objects and etcd's data on ${fsName}; a file's create there cost this process ${range(runs.map((x) => x.createUs))} µs of CPU before a run (\`createCostUs\` in \`perf/lib/commit-floors.js\`: on ext4 without a journal it grows with the files deleted in the minutes before, by earlier runs' reapers too, and every group object pays it)`,
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
      `| Round | side | appends/s | ÷ local | p50 (ms) | p99 (ms) | node CPU per append (µs) | CPU ÷ local | with the work left behind: µs (s until quiet; idle floor) | ÷ local | whole load: µs | ÷ local | frames per group | group commit (ms) | object PUT (ms) | ledger txn (ms) | groups per txn | etcd CPU per group (µs) |`,
      '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    );
    for (let r = 1; r <= rounds; r++) {
      const local = runs.find((x) => x.phase === phase && x.round === r && x.side === 'local');
      for (const side of sides) {
        const x = runs.find((y) => y.phase === phase && y.round === r && y.side === side);
        lines.push(
          `| ${r} | ${side} | ${Math.round(x.rps)} | ${(x.rps / local.rps).toFixed(3)}× | ${ms(x.p50)} | ${ms(x.p99)} | ${x.cpuUs.toFixed(1)} | ${(x.cpuUs / local.cpuUs).toFixed(2)}× | ${x.drainedUs.toFixed(1)} (${x.quiet ? `${x.drainS.toFixed(0)} s; ${(x.floorShare * 100).toFixed(1)}%` : `not quiet in ${DRAIN_MAX_S} s`}) | ${(x.drainedUs / local.drainedUs).toFixed(2)}× | ${x.wholeUs.toFixed(1)} | ${(x.wholeUs / local.wholeUs).toFixed(2)}× | ` +
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
  const drained = mean('paced', 'objects', 'drainedUs') / mean('paced', 'local', 'drainedUs');
  const whole = mean('paced', 'objects', 'wholeUs') / mean('paced', 'local', 'wholeUs');
  // Paced CPU compares only if both sides kept up with the offered rate.
  const kept = ['local', 'objects'].every((side) => mean('paced', side, 'rps') >= 0.97 * rate);
  lines.push(
    '| Figure | Result |',
    '|---|---|',
    ...(STREAMS === 1
      ? [
          `| W1 append rate, objects (file:) ÷ single node, closed loop (goal ≥ 0.5×) | ${ratio.toFixed(3)}× (${ratio >= 0.5 ? 'PASS' : 'FAIL'}) |`,
          `| W1 p99 in objects mode, closed loop, worst round (goal < 20 ms) | ${ms(p99)} ms (${p99 < 20000 ? 'PASS' : 'FAIL'}) |`,
        ]
      : [`| ${W} append rate, objects (file:) ÷ single node, closed loop (no goal) | ${ratio.toFixed(3)}× |`, `| ${W} p99 in objects mode, closed loop, worst round (no goal) | ${ms(p99)} ms |`]),
    cpuFigure(W, rate, 'objects (file:)', cpu, drained, whole, kept),
    ...(sides.includes('objects-args') ? [cpuFigure(W, rate, `objects (file:) with \`${extra}\``, mean('paced', 'objects-args', 'cpuUs') / mean('paced', 'local', 'cpuUs'), mean('paced', 'objects-args', 'drainedUs') / mean('paced', 'local', 'drainedUs'), mean('paced', 'objects-args', 'wholeUs') / mean('paced', 'local', 'wholeUs'), ['local', 'objects-args'].every((side) => mean('paced', side, 'rps') >= 0.97 * rate))] : []),
    END,
  );
  return lines.join('\n');
}

/**
 * The CPU goal's line for a side: its node CPU per append ÷ single node's, in the run, with the
 * work it left behind (an upper bound: the drain holds the warm-up's backlog too) and over the
 * whole load (warm-up, run and drain ÷ every append of them). Judged on the run and the whole load.
 */
function cpuFigure(W, rate, what, cpu, drained, whole, kept) {
  return `| ${W}: node CPU per append at ${rate} appends/s, ${what} ÷ single node (goal ≤ 1.3×) | ${cpu.toFixed(2)}× in the run, ${whole.toFixed(2)}× over the whole load, ${drained.toFixed(2)}× with the work left behind charged to the run (${!kept ? 'not comparable: a side fell behind the offered rate' : Math.max(cpu, whole) <= 1.3 ? 'PASS' : 'FAIL'}) |`;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
