#!/usr/bin/env node
'use strict';
// What `--metadata etcd://…` costs: the W1 load (single 100-byte record appends to one stream,
// wrk -t1, 64 connections) against nodes from the same build with `--metadata local` and with
// `--metadata etcd://…` (a 3-member etcd on loopback, ops/lib/etcd-local.js), in the same run:
//
//   node perf/metadata-etcd.js    # PERF_META_ROUNDS (default 2) × PERF_DURATION (default 5 s) per run
//
// Two pairs per round, each run on a fresh node (started, warmed up 2 s, measured, stopped),
// alternating the order so drift in the machine's load falls on both sides:
//   auth off:      appends never touch the metadata, so local and etcd should match;
//   auth required: every request's token check runs sync() first — with etcd a read index (one
//                  linearizable read of the head revision shared by the requests waiting, then a
//                  wait for the view) — so the difference in p50/p99 is what the read index adds
//                  per request at 64 concurrent clients.
// Writes the "Metadata on etcd" section of perf/RESULTS.md (between its markers).

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startSvc } = require('./lib/servers');
const { runWrk, haveWrk } = require('./lib/wrk');
const { recordBody } = require('./lib/bodies');
const { http, cpuSeconds, intEnv } = require('./lib/util');
const { writeResultsSection } = require('./lib/results');
const { startEtcd } = require('../ops/lib/etcd-local');

const PERF_DIR = __dirname;

const START = '<!-- metadata-etcd:start -->';
const END = '<!-- metadata-etcd:end -->';
const WARMUP_S = 2;


const sum = (xs) => xs.reduce((a, b) => a + b, 0);

/** Linearizable and serializable reads (Range RPCs) every etcd member has answered so far, from its /metrics. */
async function etcdReads(etcd) {
  let total = 0;
  for (const ep of etcd.endpoints) {
    const res = await http('GET', `http://${ep}/metrics`);
    for (const line of res.body.toString().split('\n')) {
      if (line.startsWith('grpc_server_handled_total{') && line.includes('grpc_method="Range"')) total += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return total;
}
const ms = (us) => (us / 1000).toFixed(2);

async function main() {
  if (!haveWrk()) {
    console.error('perf: `wrk` was not found on PATH; install it with `apt-get install wrk`.');
    process.exit(1);
  }
  const rounds = intEnv('PERF_META_ROUNDS', 2, 10);
  const duration = intEnv('PERF_DURATION', 5, 10);
  const connections = intEnv('PERF_CONNECTIONS', 64, 1024);
  fs.mkdirSync(path.join(PERF_DIR, '.work'), { recursive: true });
  const workDir = fs.mkdtempSync(path.join(PERF_DIR, '.work', 'meta-'));
  const token = `${Buffer.from('bench').toString('base64url')}.${crypto.randomBytes(32).toString('base64url')}`;
  const body = path.join(workDir, 'record-100.bin');
  fs.writeFileSync(body, recordBody(0, 100));
  const loadBefore = os.loadavg()[0];
  const etcd = await startEtcd(path.join(workDir, 'etcd'), 3);
  let live = null;
  let prefixN = 0;
  try {
    const runs = [];
    for (let r = 0; r < rounds; r++) {
      for (const auth of ['off', 'required']) {
        const backends = r % 2 === 0 ? ['local', 'etcd'] : ['etcd', 'local'];
        for (const backend of backends) {
          const args = [];
          if (backend === 'etcd') args.push('--metadata', etcd.url(`perf-${process.pid}-${prefixN++}`));
          if (auth === 'required') args.push('--auth', 'required', '--auth-bootstrap-token', token);
          live = await startSvc(workDir, { name: `svc-meta-${backend}-${auth}`, args });
          const authHeader = auth === 'required' ? `Bearer ${token}` : '';
          const headers = { 'content-type': 'application/octet-stream', ...(authHeader ? { authorization: authHeader } : {}) };
          const res = await http('PUT', `${live.baseUrl}/w1`, { headers });
          if (res.status !== 201) throw new Error(`PUT /w1 (${backend}, auth ${auth}) → ${res.status} ${res.body.toString()}`);
          const load = { url: `${live.baseUrl}/w1`, script: 'append.lua', args: [body, 'application/octet-stream', authHeader], connections };
          await runWrk({ ...load, seconds: WARMUP_S });
          const cpuBefore = cpuSeconds(live.pid);
          const readsBefore = await etcdReads(etcd);
          const w = await runWrk({ ...load, seconds: duration });
          const cpu = cpuSeconds(live.pid) - cpuBefore;
          const reads = (await etcdReads(etcd)) - readsBefore;
          await live.stop();
          live = null;
          const bad = (w.errors && w.errors.status) || w.non2xx || 0;
          if (bad > 0) throw new Error(`${backend}, auth ${auth}: ${bad} non-2xx answers`);
          const run = { round: r + 1, backend, auth, rps: w.requests / w.seconds, p50: w.latency.p50, p99: w.latency.p99, cpuUs: (cpu / w.requests) * 1e6, readsPerAppend: reads / w.requests };
          runs.push(run);
          console.log(`round ${run.round} auth ${auth.padEnd(8)} ${backend.padEnd(5)} ${Math.round(run.rps)} appends/s, p50 ${ms(run.p50)} ms, p99 ${ms(run.p99)} ms, ${run.cpuUs.toFixed(1)} µs node CPU per append, ${run.readsPerAppend.toFixed(3)} etcd reads per append`);
        }
      }
    }
    const direct = await measureSync(etcd.url(`perf-${process.pid}-sync`), connections, duration);
    console.log(`read index alone: ${direct.syncs} syncs by ${connections} callers, p50 ${ms(direct.p50)} ms, p99 ${ms(direct.p99)} ms, ${direct.readsPerSync.toFixed(3)} etcd reads and ${direct.cpuUs.toFixed(1)} µs CPU per sync`);
    const section = render({ direct, runs, rounds, duration, connections, load: `${loadBefore.toFixed(2)} at start, ${os.loadavg()[0].toFixed(2)} at end` });
    console.log('\n' + section);
    writeResultsSection(START, END, section, 'Metadata on etcd');
  } finally {
    if (live !== null) await live.stop().catch(() => {});
    await etcd.stop();
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

/**
 * The token check's read index alone, in this process: `callers` loops each awaiting sync() (as
 * one request's token check does) for `seconds`; the time each sync() takes is what the read
 * index adds to a request.
 */
async function measureSync(url, callers, seconds) {
  const { openMetaStore } = require(path.join(PERF_DIR, '..', 'dist', 'actors'));
  const store = await openMetaStore(url, '');
  try {
    await store.put('tokens/bench', { n: 1 });
    const lat = [];
    const end = Date.now() + seconds * 1000;
    const reads0 = store.stats.headReads;
    const cpu0 = process.cpuUsage();
    await Promise.all(
      Array.from({ length: callers }, async () => {
        while (Date.now() < end) {
          const t = process.hrtime.bigint();
          await store.sync();
          lat.push(Number(process.hrtime.bigint() - t) / 1000);
          // The next request of this client arrives in a later turn, as over a socket.
          await new Promise((r) => setImmediate(r));
        }
      }),
    );
    const cpu = process.cpuUsage(cpu0);
    lat.sort((a, b) => a - b);
    const at = (q) => lat[Math.min(lat.length - 1, Math.floor(lat.length * q))];
    return { syncs: lat.length, p50: at(0.5), p99: at(0.99), p999: at(0.999), readsPerSync: (store.stats.headReads - reads0) / lat.length, cpuUs: (cpu.user + cpu.system) / lat.length };
  } finally {
    await store.close();
  }
}

function render({ direct, runs, rounds, duration, connections, load }) {
  const of = (backend, auth) => runs.filter((r) => r.backend === backend && r.auth === auth);
  const rate = (backend, auth) => sum(of(backend, auth).map((r) => r.rps)) / of(backend, auth).length;
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    const m = Math.floor(s.length / 2);
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
  };
  const lat = (backend, auth, p) => median(of(backend, auth).map((r) => r[p]));
  const lines = [
    START,
    '## Metadata on etcd',
    '',
    'The W1 load (single 100-byte appends to one stream, wrk -t1) against nodes with `--metadata local` and with ' +
      '`--metadata etcd://…` (3 etcd 3.4 members on loopback, on the same machine), same build, same run; every ' +
      'measured run gets a fresh node, the order alternates per round. With auth off an append never touches the ' +
      'metadata; with auth required every request runs the token check, which with etcd waits for a read index ' +
      '(one linearizable read of the head revision shared by all requests waiting, then the view catching up). ' +
      'Written by `node perf/metadata-etcd.js`. The machine was shared with other work (load below): compare ' +
      'the two sides of a round, not figures across sections.',
    '',
    `- date: ${new Date().toISOString()}; ${os.cpus().length} cores, ${os.type()} ${os.release()}, node ${process.version}; load average (1 min): ${load}`,
    `- ${rounds} rounds × ${duration} s per run, ${connections} connections, after a 2 s warm-up of each`,
    '',
    '| Round | auth | local (appends/s) | etcd (appends/s) | etcd ÷ local | p50 local / etcd (ms) | p99 local / etcd (ms) | node CPU per append, local / etcd (µs) | etcd reads per append (etcd side) |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (let r = 1; r <= rounds; r++) {
    for (const auth of ['off', 'required']) {
      const l = runs.find((x) => x.round === r && x.auth === auth && x.backend === 'local');
      const e = runs.find((x) => x.round === r && x.auth === auth && x.backend === 'etcd');
      lines.push(`| ${r} | ${auth} | ${Math.round(l.rps)} | ${Math.round(e.rps)} | ${(e.rps / l.rps).toFixed(3)}× | ${ms(l.p50)} / ${ms(e.p50)} | ${ms(l.p99)} / ${ms(e.p99)} | ${l.cpuUs.toFixed(1)} / ${e.cpuUs.toFixed(1)} | ${e.readsPerAppend.toFixed(3)} |`);
    }
  }
  const cpuPer = (backend, auth) => sum(of(backend, auth).map((r) => r.cpuUs * r.rps)) / sum(of(backend, auth).map((r) => r.rps));
  const ratioOff = rate('etcd', 'off') / rate('local', 'off');
  const ratioReq = rate('etcd', 'required') / rate('local', 'required');
  lines.push(
    '',
    '| Figure | Result |',
    '|---|---|',
    `| W1 append rate, etcd ÷ local, auth off (goal ≥ 0.9×) | ${ratioOff.toFixed(3)}× (${ratioOff >= 0.9 ? 'PASS' : 'FAIL'}) |`,
    `| W1 append rate, etcd ÷ local, auth required (goal ≥ 0.9×) | ${ratioReq.toFixed(3)}× (${ratioReq >= 0.9 ? 'PASS' : 'FAIL'}) |`,
    `| node CPU per append, etcd ÷ local: auth off / auth required | ${(cpuPer('etcd', 'off') / cpuPer('local', 'off')).toFixed(3)}× / ${(cpuPer('etcd', 'required') / cpuPer('local', 'required')).toFixed(3)}× |`,
    `| token check's read index alone, ${connections} concurrent callers in one process, ${duration} s: time added per request | p50 ${ms(direct.p50)} ms, p99 ${ms(direct.p99)} ms, p99.9 ${ms(direct.p999)} ms (${direct.syncs} checks; ${direct.readsPerSync.toFixed(3)} etcd reads and ${direct.cpuUs.toFixed(1)} µs CPU per check) |`,
    `| token check with read index over HTTP, added per request at ${connections} clients (median over rounds of etcd − local, auth required; noisy) | p50 +${ms(lat('etcd', 'required', 'p50') - lat('local', 'required', 'p50'))} ms, p99 +${ms(lat('etcd', 'required', 'p99') - lat('local', 'required', 'p99'))} ms |`,
    '',
    'With auth off both sides run the same code on the append path: their spread is the machine\'s noise, and node CPU ' +
      'per append is the steadier figure. With auth required the etcd side waits for a read index on every request ' +
      '(the local store\'s check is synchronous); the read index alone is the "read index alone" row.',
    END,
  );
  return lines.join('\n');
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
