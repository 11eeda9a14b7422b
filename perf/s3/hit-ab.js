#!/usr/bin/env node
// Interleaved A/B of svc-cache's 4 KiB hit path: two (or more) builds of svc-cache in front of
// one s3rver origin, static auth, measured in alternating wrk cells so load from elsewhere on
// the machine hits every build alike. Reports req/s and server CPU µs per hit (user + system
// from /proc) for "one presigned URL repeated" and "a new signature per request".
//
// Usage: node perf/s3/hit-ab.js <root> [<root> ...]   (each root holds bin/svc-cache and dist/;
//        "." is this checkout)   Env: PERF_DURATION (s per cell, default 3), PERF_ROUNDS
//        (default 5), PERF_CONNECTIONS (default 16), PERF_SIGNATURES (default 20000),
//        PERF_CELLS (same,fresh), PERF_CPU_PROF=<dir> (start every svc-cache under `node --cpu-prof` writing there),
//        PERF_THREADS=1 (also the main thread's share of the CPU per hit; the rest is V8's GC helpers).
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { parseWrkOutput } = require('../lib/wrk');

const ROOT = path.resolve(__dirname, '..', '..');
const DURATION = Number(process.env.PERF_DURATION || 3);
const ROUNDS = Number(process.env.PERF_ROUNDS || 5);
const CONNECTIONS = Number(process.env.PERF_CONNECTIONS || 16);
const SIGNATURES = Number(process.env.PERF_SIGNATURES || 20000);
const PROF = process.env.PERF_CPU_PROF;
const CELLS = (process.env.PERF_CELLS || 'same,fresh').split(',');
const AK = 'BENCHKEY';
const SK = 'bench-secret';
const roots = (process.argv.slice(2).length ? process.argv.slice(2) : ['.']).map((r) => path.resolve(r));

const { startChild: start, stopChildren } = require('../lib/children');

function request(url, method = 'GET', body) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: body ? { 'content-length': body.length } : {} }, (res) => {
      let n = 0;
      res.on('data', (d) => (n += d.length));
      res.on('end', () => resolve({ status: res.statusCode, bytes: n }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;
function cpuMicros(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1e6) / CLK_TCK;
}
/** CPU µs of the process's main thread alone (the rest: V8's GC helpers, libuv's pool). */
function mainThreadMicros(pid) {
  const f = fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1e6) / CLK_TCK;
}

function wrk(url, extra = []) {
  const r = spawnSync('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${DURATION}s`, '--timeout', '5s', url, ...extra], { encoding: 'utf8' });
  const p = parseWrkOutput(r.stdout || '');
  if (p.non2xx > 0) throw new Error(`wrk saw non-2xx answers from ${url}:\n${r.stdout}`);
  return p;
}

async function main() {
  const { presignUrl, SigningKeyCache } = require(path.join(ROOT, 'dist', 's3', 'sigv4'));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cache-ab-'));
  const origin = await start(process.execPath, ['--openssl-legacy-provider', path.join(__dirname, 'origin.js')], { ORIGIN_DIR: path.join(work, 'origin'), ORIGIN_BUCKETS: 'bench' }, /\{"port":(\d+)\}/);
  const direct = `http://127.0.0.1:${origin.match[1]}`;
  await request(`${direct}/bench/hit4k`, 'PUT', Buffer.alloc(4096, 'x'));
  const keys = new SigningKeyCache();
  const builds = [];
  for (const [i, root] of roots.entries()) {
    const args = PROF ? ['--cpu-prof', '--cpu-prof-dir', PROF, path.join(root, 'bin', 'svc-cache')] : [path.join(root, 'bin', 'svc-cache')];
    const c = await start(
      process.execPath,
      args,
      {
        SVC_CACHE_SERVER_LISTEN: '127.0.0.1:0',
        SVC_CACHE_METRICS_LISTEN: '',
        SVC_CACHE_ORIGIN_ENDPOINT: direct,
        SVC_CACHE_ORIGIN_ACCESS_KEY_ID: 'S3RVER',
        SVC_CACHE_ORIGIN_SECRET_ACCESS_KEY: 'S3RVER',
        SVC_CACHE_AUTH_MODE: 'static',
        SVC_CACHE_AUTH_ACCESS_KEY_ID: AK,
        SVC_CACHE_AUTH_SECRET_ACCESS_KEY: SK,
        SVC_CACHE_CACHE_DIR: path.join(work, `cache-${i}`),
        SVC_CACHE_BUCKETS_TTL_SECONDS: '3600',
      },
      /"listen":"http:\/\/127\.0\.0\.1:(\d+)"/,
    );
    const base = `http://127.0.0.1:${c.match[1]}`;
    const url = (now) => presignUrl('GET', new URL(`${base}/bench/hit4k`), { accessKeyId: AK, secretAccessKey: SK }, 'us-east-1', keys, 604800, now);
    const same = url(Date.now());
    const targets = path.join(work, `targets-${i}`);
    const now = Date.now();
    const lines = [];
    for (let j = 0; j < SIGNATURES; j++) {
      const u = new URL(url(now - j * 1000));
      lines.push(u.pathname + u.search);
    }
    fs.writeFileSync(targets, lines.join('\n') + '\n');
    for (let j = 0; j < 2; j++) {
      const r = await request(same);
      if (r.status !== 200 || r.bytes !== 4096) throw new Error(`${root}: warming answered ${r.status}`);
    }
    builds.push({ root, pid: c.child.pid, base, same, targets, cells: { same: [], fresh: [] } });
  }
  for (let round = 0; round < ROUNDS; round++)
    for (const cell of CELLS)
      for (const b of round % 2 ? [...builds].reverse() : builds) {
        const before = cpuMicros(b.pid);
        const beforeMain = mainThreadMicros(b.pid);
        const w = cell === 'same' ? wrk(b.same) : wrk(b.base, ['-s', path.join(__dirname, 'cycle.lua'), '--', b.targets]);
        b.cells[cell].push({ rps: w.rps, cpu: (cpuMicros(b.pid) - before) / w.requests, main: (mainThreadMicros(b.pid) - beforeMain) / w.requests });
      }
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const rows = builds.map((b) => {
    const row = { build: path.relative(process.cwd(), b.root) || '.' };
    for (const cell of CELLS) {
      row[`${cell} req/s`] = Math.round(median(b.cells[cell].map((c) => c.rps)));
      row[`${cell} µs CPU/hit`] = +median(b.cells[cell].map((c) => c.cpu)).toFixed(1);
      if (process.env.PERF_THREADS) row[`${cell} main thread µs`] = +median(b.cells[cell].map((c) => c.main)).toFixed(1);
    }
    return row;
  });
  process.stdout.write(`wrk -t1 -c${CONNECTIONS}, ${ROUNDS} rounds × ${DURATION} s per cell, medians; load average ${os.loadavg().map((x) => x.toFixed(1)).join(' / ')}\n`);
  console.table(rows);
  if (process.env.PERF_VERBOSE) for (const b of builds) process.stdout.write(`${b.root}: ${JSON.stringify(b.cells)}\n`);
  stopChildren();
  await new Promise((r) => setTimeout(r, 1000));
  fs.rmSync(work, { recursive: true, force: true });
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
