#!/usr/bin/env node
'use strict';
// Macro benchmark orchestrator: `npm run perf` (or `node perf/run.js [W1 W2 …]`).
//
//   perf/run.js ──┬─ starts one server at a time (Svc, bare uWS, Svc DS, DS memory, DS file),
//                 │  each in its own process on 127.0.0.1 with a fresh data dir
//                 ├─ W1–W3: wrk -t1 -c64 with perf/wrk/*.lua (warm-up, then measured run)
//                 ├─ W4/W5: preload, then the catch-up reader (perf/lib/reader.js)
//                 ├─ W6: live fan-out: SSE readers / long-pollers + a paced writer (perf/lib/fanout.js)
//                 └─ writes perf/RESULTS.md (full runs only) with ratios and goals
//
// Environment: PERF_DURATION (s, default 10, at most 10), PERF_WARMUP (s, default 2),
// PERF_CONNECTIONS (default 64), PERF_PAGE_BYTES (Svc read page, default 16 MiB: the node's largest page),
// PERF_SERVERS (comma list to run only some servers, e.g. `svc,ds-mem` or `svc-ds,ds-mem,ds-file`),
// PERF_FANOUT_READERS (W6 SSE readers, default 10000), PERF_FANOUT_POLLERS (W6 long-pollers,
// default 1000), PERF_FANOUT_RATE (W6 appends per second, default 1000).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const PERF_DIR = __dirname;
const ROOT = path.resolve(PERF_DIR, '..');

/** The DS reference server is a devDependency of perf/ only; install it on first use. */
function ensurePerfDeps() {
  if (fs.existsSync(path.join(PERF_DIR, 'node_modules', '@durable-streams', 'server'))) return;
  console.log('perf: installing perf/ dev dependencies (npm ci) …');
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: PERF_DIR, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error('perf: `npm ci` in perf/ failed');
    process.exit(1);
  }
}

function gitInfo() {
  const rev = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
  if (rev.status !== 0) return 'unknown';
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' });
  return rev.stdout.trim() + (dirty.stdout.trim() ? ' (with uncommitted changes)' : '');
}

function wrkVersion() {
  const r = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  return ((r.stdout || '') + (r.stderr || '')).split('\n')[0].replace(/ Copyright.*/, '').trim() || 'unknown';
}

function numEnv(name, dflt) {
  const v = process.env[name];
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) {
    console.error(`perf: ${name} must be a non-negative number`);
    process.exit(2);
  }
  return n;
}

async function main() {
  ensurePerfDeps();
  const { haveWrk } = require('./lib/wrk');
  const { startServer, LABELS, SERVER_IDS } = require('./lib/servers');
  const { WORKLOADS, FANOUT_SSE, FANOUT_POLL, FANOUT_RATE } = require('./lib/workloads');
  const { renderResults, goals } = require('./lib/results');

  const all = Object.keys(WORKLOADS);
  const args = process.argv.slice(2).map((a) => a.toUpperCase());
  const unknown = args.filter((a) => !all.includes(a));
  if (unknown.length) {
    console.error(`perf: unknown workload(s) ${unknown.join(', ')}; choose from ${all.join(', ')}`);
    process.exit(2);
  }
  const order = args.length ? all.filter((w) => args.includes(w)) : all;
  const subset = args.length > 0;

  let duration = numEnv('PERF_DURATION', 10);
  if (duration > 10) {
    console.warn('perf: PERF_DURATION capped at 10 s per load run');
    duration = 10;
  }
  duration = Math.max(1, Math.round(duration));
  const cfg = {
    duration,
    warmup: Math.round(numEnv('PERF_WARMUP', 2)),
    connections: Math.max(1, Math.round(numEnv('PERF_CONNECTIONS', 64))),
    pageBytes: Math.max(1, Math.round(numEnv('PERF_PAGE_BYTES', 16 * 1024 * 1024))),
    fanoutReaders: Math.max(1, Math.round(numEnv('PERF_FANOUT_READERS', FANOUT_SSE))),
    fanoutPollers: Math.max(1, Math.round(numEnv('PERF_FANOUT_POLLERS', FANOUT_POLL))),
    fanoutRate: Math.max(1, Math.round(numEnv('PERF_FANOUT_RATE', FANOUT_RATE))),
    workDir: '',
  };
  const onlyServers = process.env.PERF_SERVERS ? process.env.PERF_SERVERS.split(',').map((s) => s.trim()).filter(Boolean) : null;
  const unknownServers = (onlyServers || []).filter((s) => !SERVER_IDS.includes(s));
  if (unknownServers.length) {
    console.error(`perf: unknown server(s) ${unknownServers.join(', ')} in PERF_SERVERS; choose from ${SERVER_IDS.join(', ')}`);
    process.exit(2);
  }

  if (order.some((w) => WORKLOADS[w].kind === 'wrk') && !haveWrk()) {
    console.error('perf: `wrk` (HTTP load generator) was not found on PATH.');
    console.error('perf: install it with `apt-get install wrk` (Debian/Ubuntu), or run only W4 W5.');
    process.exit(1);
  }

  fs.mkdirSync(path.join(PERF_DIR, '.work'), { recursive: true });
  cfg.workDir = fs.mkdtempSync(path.join(PERF_DIR, '.work', 'run-'));

  // Servers we started and have not stopped yet: stopped on Ctrl-C and on the way out.
  const live = new Set();
  let interrupted = false;
  const cleanup = async () => {
    for (const s of [...live]) await s.stop().catch(() => {});
    live.clear();
    fs.rmSync(cfg.workDir, { recursive: true, force: true });
  };
  process.on('SIGINT', () => {
    if (interrupted) return;
    interrupted = true;
    console.error('\nperf: interrupted, stopping servers …');
    cleanup().finally(() => process.exit(130));
  });

  const loadBefore = os.loadavg()[0];
  const results = {};
  // A Svc node (either protocol) that did not start once is not started again for later workloads.
  const startErrors = {};
  try {
    for (const wid of order) {
      const w = WORKLOADS[wid];
      console.log(`\n== ${w.title}`);
      const wres = { rows: [] };
      results[wid] = wres;
      for (const sid of w.servers) {
        if (interrupted) return;
        if (onlyServers && !onlyServers.includes(sid)) continue;
        if (startErrors[sid]) {
          wres.rows.push({ server: sid, variant: '', error: `not started: ${startErrors[sid]}` });
          console.log(`   ${LABELS[sid]}: skipped (did not start earlier)`);
          continue;
        }
        process.stdout.write(`   ${LABELS[sid]} … `);
        let server;
        try {
          server = await startServer(sid, cfg.workDir);
          live.add(server);
        } catch (err) {
          if (sid === 'svc' || sid === 'svc-ds') startErrors[sid] = err.message.split('\n')[0];
          wres.rows.push({ server: sid, variant: '', error: err.message });
          console.log(`FAILED to start\n${indent(err.message)}`);
          continue;
        }
        try {
          const rows = await w.run(server, cfg);
          for (const row of rows) wres.rows.push({ server: sid, ...row });
          console.log(rows.map(summary).join('; '));
        } catch (err) {
          wres.rows.push({ server: sid, variant: '', error: err.message });
          console.log(`FAILED: ${err.message}`);
          const t = server.logTail && server.logTail();
          if (t) console.log(indent(t));
        } finally {
          await server.stop().catch(() => {});
          live.delete(server);
        }
      }
    }
  } finally {
    if (!interrupted) await cleanup();
  }
  if (interrupted) return;

  const cpus = os.cpus();
  const meta = [
    ['date', new Date().toISOString()],
    ['node', process.version],
    ['machine', `${cpus.length} cores (${cpus[0] ? cpus[0].model.trim() : 'unknown CPU'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${os.type()} ${os.release()}`],
    ['sharing', 'load generator (wrk or the reader client) and the server under test share these cores'],
    ['load average (1 min)', `${loadBefore.toFixed(2)} at start, ${os.loadavg()[0].toFixed(2)} at end (other work on the machine skews every figure)`],
    ['Svc commit', gitInfo()],
    ['anchors', 'bare uWebSockets.js (@trufflesuite/uws-js-unofficial); @durable-streams/server 0.3.7 in memory and file mode'],
    ['Svc DS', 'the same Svc build with `--protocol ds` (otherwise the same flags as Svc), driven with the DS form of every workload like the reference server'],
    ['load generator', `${wrkVersion()}, -t1, ${cfg.connections} connections`],
    ['run length', `${cfg.warmup} s warm-up + ${cfg.duration} s measured per server and workload (reads: one untimed verification pass, then passes for ${cfg.duration} s)`],
    ['Svc read page', `count and bytes limits of ${cfg.pageBytes} B per request (Svc DS and DS: no limit in the request; the server's own page)`],
    ['workloads', order.join(', ') + (onlyServers ? ` (servers: ${onlyServers.join(', ')})` : '')],
  ];
  if (order.includes('W6')) {
    meta.push([
      'W6 client',
      `one process (perf/lib/fanout.js): ${cfg.fanoutReaders} SSE readers or ${cfg.fanoutPollers} long-pollers on raw TCP connections, ` +
        `a writer pacing ${cfg.fanoutRate} single-record appends/s over 128 connections; ${cfg.duration} s of appends, then up to 8 s of drain`,
    ]);
  }
  const fanout = { readers: cfg.fanoutReaders, pollers: cfg.fanoutPollers, rate: cfg.fanoutRate };
  const md = renderResults({ meta, workloads: WORKLOADS, results, order, connections: cfg.connections, fanout });

  console.log('\n== Goals');
  for (const g of goals(results)) console.log(`   ${g.status.padEnd(7)} ${g.text} — ${g.detail}`);
  if (subset || onlyServers) {
    console.log('\n(subset run: perf/RESULTS.md left unchanged; the tables follow)\n');
    console.log(md);
  } else {
    // Sections written by other scripts are kept: auth overhead (perf/auth-overhead.js), the
    // Kafka listener (perf/kafka/run.js) and memory (perf/memory.js).
    const { existingAuthSection, replaceAuthSection } = require('./lib/auth-section');
    const file = path.join(PERF_DIR, 'RESULTS.md');
    const old = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    const auth = existingAuthSection(old);
    const withAuth = auth === '' ? md : replaceAuthSection(md, auth);
    const kafka = /<!-- kafka-listener:begin[\s\S]*<!-- kafka-listener:end -->\n/.exec(old);
    const withKafka = kafka === null ? withAuth : `${withAuth.trimEnd()}\n\n${kafka[0]}`;
    let kept = withKafka;
    // The hand-written W4/W5 read-ceiling notes of a subset run, until a full run replaces them.
    const readCeiling = /<!-- read-ceiling:begin[\s\S]*<!-- read-ceiling:end -->\n/.exec(old);
    if (readCeiling !== null && !order.includes('W4')) kept = `${kept.trimEnd()}\n\n${readCeiling[0]}`;
    // And the sections other scripts own, in this order: the CLI's load generator (perf/cli-bench.js),
    // metadata on etcd (perf/metadata-etcd.js), memory (perf/memory.js), the cost of metrics and
    // traces (perf/metrics-overhead.js), objects mode's appends (perf/cluster-append.js), failover and
    // transfer figures (written by hand from test/cluster) and SSE
    // fan-out across I/O threads (perf/sse-ab.js), memory under a mixed load (perf/memory-soak.js),
    // objects mode on a delayed store (perf/objects-latency.js), the runtimes (perf/runtimes-ab.js),
    // the catch-up of a moved stream (perf/moved-catchup.js), the durability classes (written by
    // hand from perf/durability.js) and the ds-bench shape (perf/ds-bench.js).
    for (const name of ['cli-bench', 'metadata-etcd', 'memory', 'memory-soak', 'observability-overhead', 'cluster-append', 'cluster-moves', 'sse-threads', 'objects-latency', 'runtimes', 'moved-catchup', 'durability', 'ds-bench']) {
      const section = new RegExp(`<!-- ${name}:(?:begin|start)[\\s\\S]*?<!-- ${name}:end -->\\n?`).exec(old);
      if (section !== null) kept = `${kept.trimEnd()}\n\n${section[0].trimEnd()}\n`;
    }
    fs.writeFileSync(file, kept);
    console.log('\nperf: wrote perf/RESULTS.md');
  }
}

function indent(text) {
  return String(text)
    .split('\n')
    .map((l) => `      ${l}`)
    .join('\n');
}

function summary(row) {
  if (row.error) return `${row.variant ? row.variant + ': ' : ''}FAILED: ${row.error.split('\n')[0]}`;
  if (row.mode !== undefined) {
    const ms = (v) => `${v.toFixed(1)} ms`;
    const drops = row.dropped || row.readerErrors ? `, ${row.dropped} dropped, ${row.readerErrors} errors` : '';
    return (
      `${row.variant} × ${row.readers}: p50 ${ms(row.p50)}, p99 ${ms(row.p99)}, ${(row.memPerReader / 1024).toFixed(1)} KiB/idle reader, ` +
      `${Math.round(row.appendsPerSec)} appends/s, ${(row.deliveredShare * 100).toFixed(2)}% delivered${drops}`
    );
  }
  if ('rps' in row) {
    const bad = row.badStatus ? ` (${row.badStatus} non-2xx!)` : '';
    return `${Math.round(row.rps)} req/s, ${Math.round(row.recordsPerSec)} records/s, p99 ${(row.p99 / 1000).toFixed(2)} ms${bad}`;
  }
  return `${row.variant}: ${row.payloadMBps.toFixed(1)} MB/s, ${Math.round(row.recordsPerSec)} records/s`;
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
