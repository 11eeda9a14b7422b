#!/usr/bin/env node
// svc-cache soak (see perf/s3/README.md, "Soak"): svc-cache in front of an s3rver origin, no fault
// injected, SOAK_CLIENTS clients (default 64), each with its own keep-alive connection, sending a
// mix of whole GETs (memory and disk hits, misses after writes and TTL expiry), ranges, HEADs,
// conditional GETs, PUTs and GETs of missing keys. Now and then a client pauses across the
// server's 10 s keep-alive timeout before its next request, as pooled SDK connections do.
//
// It counts, and the run fails on any:
//   - connection resets and other transport errors (ECONNRESET, EPIPE, socket hang up, parse errors);
//   - responses with a status other than expected (5xx included) or a body shorter than announced
//     (the origin's own 5xx answers to forwarded requests, which svc-cache passes on as they came,
//     are counted apart: they carry the origin's request id, not svc-cache's);
//   - "Closing file descriptor N on garbage collection" on svc-cache's stderr (svc-cache runs with
//     --expose-gc and a full collection every 2 s, perf/s3/gc-tick.js);
//   - open file descriptors of svc-cache (/proc/PID/fd, sampled every SOAK_SAMPLE_S seconds) not
//     back to the baseline once the load stopped and the connections closed.
//
// Usage: node perf/s3/soak.js [--duration SECONDS] [--clients N] [--json] [--write]
//   --duration  load time in seconds (default 600, also SOAK_DURATION)
//   --clients   concurrent clients (default 64, also SOAK_CLIENTS)
//   --json      print only the summary as one JSON line (the jest guard reads it)
//   --write     replace the "## Soak" section of perf/s3/RESULTS.md with this run
// Env: SOAK_ENGINE (uws | node, default uws), SOAK_PAUSE (probability of a pause per request,
// default 0.002), SOAK_OBJECTS (objects read, default 200), SOAK_WRITES (share of PUTs, default 0.15), SOAK_ORIGIN (moto | s3rver, default
// moto), SOAK_AGENT_TIMEOUT (client socket timeout in ms, default 60000; 0: none), SOAK_SAMPLE_S
// (fd sample period, default 5). Needs `npm run build` first, and moto_server on the PATH.
'use strict';

const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { startChild, stopChildren } = require('../lib/children');

const ROOT = path.resolve(__dirname, '..', '..');
const args = process.argv.slice(2);
function arg(name, env, def) {
  const i = args.indexOf(name);
  if (i >= 0 && args[i + 1] !== undefined) return Number(args[i + 1]);
  return Number(process.env[env] || def);
}
const DURATION_S = arg('--duration', 'SOAK_DURATION', 600);
const CLIENTS = arg('--clients', 'SOAK_CLIENTS', 64);
const JSON_ONLY = args.includes('--json');
const PAUSE = Number(process.env.SOAK_PAUSE || 0.002);
/**
 * The origin: moto (moto_server, in memory) by default, or s3rver (SOAK_ORIGIN=s3rver, what the
 * jest guard uses). s3rver overwrites an object's file in place, so a GET racing a PUT of the same
 * key can get a body shorter than its Content-Length (or a 500) from the origin, which svc-cache
 * can only pass on by cutting the connection; with s3rver the PUTs go to keys no one reads.
 */
const ORIGIN = process.env.SOAK_ORIGIN || 'moto';
/** Share of requests that are PUTs (overwrites of the objects read), default 0.15. */
const WRITES = Number(process.env.SOAK_WRITES ?? 0.15);
const AGENT_TIMEOUT = Number(process.env.SOAK_AGENT_TIMEOUT ?? 60_000);
const SAMPLE_S = Number(process.env.SOAK_SAMPLE_S || 5);
const BUCKET = 'soak';
const OBJECTS = Number(process.env.SOAK_OBJECTS || 200);
/** Sizes of the objects: memory hits (≤ 64 KiB here), disk hits streamed from a file, a few large ones. */
const SIZES = [0, 1, 1024, 4096, 16 * 1024, 64 * 1024, 200 * 1024, 1024 * 1024];

const say = (msg) => JSON_ONLY || process.stderr.write(`${msg}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function fdCount(pid) {
  try {
    return fs.readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return -1;
  }
}

/** One request on `agent`; resolves {status, headers, bytes}, rejects with the transport error. */
function request(base, agent, method, key, headers = {}, body) {
  return new Promise((resolve, reject) => {
    const u = new URL(base);
    const h = { ...headers };
    if (body !== undefined) h['content-length'] = String(body.length);
    const req = http.request({ host: u.hostname, port: u.port, path: key === "" ? `/${BUCKET}` : `/${BUCKET}/${key}`, method, headers: h, agent }, (res) => {
      let n = 0;
      res.on('data', (d) => (n += d.length));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, bytes: n }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function bodyOf(size, seed) {
  return Buffer.alloc(size, seed % 251);
}

/** A free port on 127.0.0.1 (moto_server takes no port 0). */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.once('error', reject);
  });
}

/** Starts the origin; resolves with its URL. */
async function startOrigin(work) {
  if (ORIGIN === 'moto') {
    const port = await freePort();
    await startChild('moto_server', ['-H', '127.0.0.1', '-p', String(port)], {}, /Running on/);
    return `http://127.0.0.1:${port}`;
  }
  const o = await startChild(process.execPath, ['--openssl-legacy-provider', path.join(__dirname, 'origin.js')], { ORIGIN_DIR: path.join(work, 'origin'), ORIGIN_BUCKETS: BUCKET }, /\{"port":(\d+)\}/);
  return `http://127.0.0.1:${o.match[1]}`;
}

async function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cache-soak-'));
  const originUrl = await startOrigin(work);
  const cache = await startChild(
    process.execPath,
    ['--expose-gc', '-r', path.join(__dirname, 'gc-tick.js'), path.join(ROOT, 'bin', 'svc-cache')],
    {
      SVC_CACHE_SERVER_LISTEN: '127.0.0.1:0',
      SVC_CACHE_SERVER_ENGINE: process.env.SOAK_ENGINE || 'uws',
      SVC_CACHE_METRICS_LISTEN: '',
      SVC_CACHE_ORIGIN_ENDPOINT: originUrl,
      SVC_CACHE_ORIGIN_ACCESS_KEY_ID: 'S3RVER',
      SVC_CACHE_ORIGIN_SECRET_ACCESS_KEY: 'S3RVER',
      SVC_CACHE_CACHE_DIR: path.join(work, 'cache'),
      // Short TTL: revalidations all the time. Small tiers: evictions race reads. PUTs over
      // 32 KiB are not populated: the next GET is a miss.
      SVC_CACHE_BUCKETS_TTL_SECONDS: '3',
      SVC_CACHE_CACHE_MEMORY_OBJECT_MAX: String(64 * 1024),
      SVC_CACHE_CACHE_MEMORY_BYTES: String(4 * 1024 * 1024),
      SVC_CACHE_CACHE_DISK_BYTES: String(24 * 1024 * 1024),
      SVC_CACHE_POPULATE_MAX: String(32 * 1024),
      SVC_CACHE_LOG_LEVEL: 'info',
    },
    /"listen":"http:\/\/127\.0\.0\.1:(\d+)"/,
  );
  const pid = cache.child.pid;
  const base = `http://127.0.0.1:${cache.match[1]}`;
  let stderr = '';
  let stdout = '';
  cache.child.stderr.on('data', (d) => (stderr += d));
  cache.child.stdout.on('data', (d) => (stdout = (stdout + d).slice(-200_000)));

  // Seed every object through the cache.
  const seedAgent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  if (ORIGIN === 'moto') {
    const r = await request(base, seedAgent, 'PUT', '', {});
    if (r.status !== 200) throw new Error(`CreateBucket: ${r.status}`);
  }
  const sizes = [];
  await Promise.all(
    Array.from({ length: 8 }, async (_, w) => {
      for (let i = w; i < OBJECTS; i += 8) {
        sizes[i] = SIZES[i % SIZES.length];
        const r = await request(base, seedAgent, 'PUT', `k${i}`, {}, bodyOf(sizes[i], i));
        if (r.status !== 200) throw new Error(`seed PUT k${i}: ${r.status}`);
      }
    }),
  );
  seedAgent.destroy();
  await sleep(7000); // origin keep-alive sockets of the seed close (s3rver: 5 s)
  const baseline = fdCount(pid);
  say(`soak: ${CLIENTS} clients for ${DURATION_S} s against ${base} (pid ${pid}), baseline ${baseline} fds`);

  let ownIdPrefix;
  const counts = { origin5xx: {}, requests: 0, byOp: {}, byStatus: {}, transport: {}, unexpected: [], short: 0, pauses: 0 };
  const samples = [];
  const loadavgStart = os.loadavg().map((l) => Math.round(l * 100) / 100);
  // The commit of the program under test, read as the load starts.
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
  const started = Date.now();
  const deadline = started + DURATION_S * 1000;
  const sampler = setInterval(() => {
    samples.push({ t: Math.round((Date.now() - started) / 1000), fds: fdCount(pid) });
    if (!JSON_ONLY) say(`  t=${samples.at(-1).t}s fds=${samples.at(-1).fds} requests=${counts.requests} errors=${Object.values(counts.transport).reduce((a, b) => a + b, 0)} unexpected=${counts.unexpected.length}`);
  }, SAMPLE_S * 1000);

  const note = (list, k) => (list[k] = (list[k] || 0) + 1);
  const agents = [];
  async function client(c) {
    // A socket timeout makes node's agent honour the server's `Keep-Alive: timeout` hint (node 20
    // ignores the hint on an agent without one); SOAK_AGENT_TIMEOUT=0 leaves it out.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1, ...(AGENT_TIMEOUT > 0 ? { timeout: AGENT_TIMEOUT } : {}) });
    agents.push(agent);
    let seed = c * 7919 + 1;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    while (Date.now() < deadline) {
      if (rnd() < PAUSE) {
        // Idle across the server's keep-alive timeout (10 s), then reuse the connection.
        counts.pauses++;
        await sleep(Math.min(8000 + rnd() * 6000, Math.max(0, deadline - Date.now())));
        if (Date.now() >= deadline) break;
      }
      const i = Math.floor(rnd() * OBJECTS);
      const key = `k${i}`;
      // Reads in the proportions 40 get : 15 range : 10 head : 10 conditional : 10 missing key.
      const put = rnd() < WRITES;
      const x = rnd() * 0.85;
      let op;
      let req;
      let ok;
      if (put) {
        op = 'put';
        const body = bodyOf(SIZES[Math.floor(rnd() * SIZES.length)], Math.floor(rnd() * 1e6));
        // s3rver: keys no one reads (see ORIGIN above); moto: the keys being read.
        req = () => request(base, agent, 'PUT', ORIGIN === 's3rver' ? `w${i}` : key, {}, body);
        ok = (r) => r.status === 200;
      } else if (x < 0.4) {
        op = 'get';
        req = () => request(base, agent, 'GET', key);
        ok = (r) => r.status === 200 && r.bytes === Number(r.headers['content-length']);
      } else if (x < 0.55) {
        op = 'range';
        req = () => request(base, agent, 'GET', key, { range: 'bytes=1-100' });
        ok = (r) => (r.status === 206 || r.status === 416) && r.bytes === Number(r.headers['content-length'] ?? 0);
      } else if (x < 0.65) {
        op = 'head';
        req = () => request(base, agent, 'HEAD', key);
        ok = (r) => r.status === 200;
      } else if (x < 0.75) {
        op = 'conditional';
        req = () => request(base, agent, 'GET', key, { 'if-none-match': '"nope"', 'if-modified-since': new Date(0).toUTCString() });
        ok = (r) => r.status === 200 && r.bytes === Number(r.headers['content-length']);
      } else {
        op = 'miss';
        req = () => request(base, agent, 'GET', `missing-${Math.floor(rnd() * 1e9)}`);
        ok = (r) => r.status === 404;
      }
      note(counts.byOp, op);
      counts.requests++;
      try {
        const r = await req();
        note(counts.byStatus, r.status);
        counts.keepAlive ??= r.headers['keep-alive'] ?? null;
        // svc-cache's request ids: a per-process prefix (8 hex digits) and a counter; a cache hit
        // carries one, and so does every error svc-cache answers itself.
        const id = String(r.headers['x-amz-request-id'] ?? '');
        if (r.headers['x-svc-cache'] === 'hit' && /^[0-9A-F]{16}$/.test(id)) ownIdPrefix ??= id.slice(0, 8);
        if (!ok(r) && r.status >= 500 && ownIdPrefix !== undefined && !id.startsWith(ownIdPrefix)) {
          // The origin's own 5xx to a forwarded request, passed through as it came.
          note(counts.origin5xx, `${op} ${r.status}`);
        } else if (!ok(r)) {
          if (r.status < 300 && r.bytes !== Number(r.headers['content-length'] ?? r.bytes)) counts.short++;
          const what = { op, key, status: r.status, bytes: r.bytes, length: r.headers['content-length'], cache: r.headers['x-svc-cache'], at: Math.round((Date.now() - started) / 1000) };
          say(`  unexpected: ${JSON.stringify(what)}`);
          if (counts.unexpected.length < 20) counts.unexpected.push(what);
          else counts.unexpected.push(null);
        }
      } catch (err) {
        note(counts.transport, err.code || err.message);
      }
    }
  }
  await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
  const loadMs = Date.now() - started;
  clearInterval(sampler);
  for (const a of agents) a.destroy();
  // Client and origin keep-alive connections close (origin: s3rver's 5 s; here: at once).
  let after = fdCount(pid);
  for (let i = 0; i < 20 && after > baseline; i++) {
    await sleep(1000);
    after = fdCount(pid);
  }
  const gcWarnings = (stderr.match(/Closing file descriptor \d+ on garbage collection/g) || []).length;
  const resets = (counts.transport.ECONNRESET || 0) + (counts.transport.EPIPE || 0);
  const transportErrors = Object.values(counts.transport).reduce((a, b) => a + b, 0);
  const fds = samples.map((s) => s.fds);
  const summary = {
    date: new Date().toISOString(),
    commit,
    loadavgStart,
    node: process.version,
    engine: process.env.SOAK_ENGINE || 'uws',
    origin: ORIGIN,
    durationS: Math.round(loadMs / 1000),
    clients: CLIENTS,
    requests: counts.requests,
    perSecond: Math.round(counts.requests / (loadMs / 1000)),
    byOp: counts.byOp,
    byStatus: counts.byStatus,
    pauses: counts.pauses,
    keepAlive: counts.keepAlive,
    resets,
    transportErrors,
    transport: counts.transport,
    unexpected: counts.unexpected.length,
    origin5xx: counts.origin5xx,
    unexpectedSample: counts.unexpected.filter(Boolean).slice(0, 5),
    short: counts.short,
    gcWarnings,
    fds: { baseline, min: Math.min(...fds), max: Math.max(...fds), after, samples: fds.length },
    loadavg: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
  summary.pass = transportErrors === 0 && counts.unexpected.length === 0 && gcWarnings === 0 && after <= baseline;
  if (!summary.pass && !JSON_ONLY) {
    const lines = stdout.split('\n');
    const problems = [...lines.filter((l) => /"level":"error"/.test(l)).slice(0, 10), ...lines.filter((l) => /"level":"warn"/.test(l))];
    process.stderr.write(`svc-cache warnings and errors (${problems.length}, last 20):\n${problems.slice(-20).join('\n')}\nsvc-cache stderr (last 4 KiB):\n${stderr.slice(-4096)}\n`);
  }
  process.stdout.write(JSON.stringify(summary) + '\n');
  if (args.includes('--write')) writeResults(summary);
  stopChildren();
  fs.rmSync(work, { recursive: true, force: true });
  process.exitCode = summary.pass ? 0 : 1;
}

/** The run as the "## Soak" section of RESULTS.md (replacing the one there; run.js keeps it). */
function resultsSection(r) {
  const list = (o) => Object.entries(o).map(([k, v]) => `${k} ${v}`).join(', ') || 'none';
  return [
    '## Soak',
    '',
    `Generated by \`node perf/s3/soak.js --write\` on ${r.date} at commit ${r.commit}: ${r.clients} keep-alive clients for ${r.durationS} s against svc-cache (${r.engine}) in front of ${r.origin}, no fault injected, Node ${r.node}, 2 CPUs shared with other work (load average ${r.loadavgStart.join(' / ')} at the start, ${r.loadavg.join(' / ')} at the end).`,
    '',
    '| measure | value |',
    '|---|---|',
    `| requests | ${r.requests} (${r.perSecond}/s) |`,
    `| by kind | ${list(r.byOp)} |`,
    `| by status | ${list(r.byStatus)} |`,
    `| idle pauses across the keep-alive timeout | ${r.pauses} |`,
    `| connection resets | **${r.resets}** |`,
    `| transport errors | **${r.transportErrors}** (${list(r.transport)}) |`,
    `| unexpected answers from svc-cache (status, short body) | **${r.unexpected}** |`,
    `| the origin's own 5xx, passed through (not svc-cache's) | ${list(r.origin5xx)} |`,
    `| "Closing file descriptor … on garbage collection" | **${r.gcWarnings}** |`,
    `| svc-cache open descriptors | ${r.fds.baseline} before the load, ${r.fds.min}–${r.fds.max} under it (${r.fds.samples} samples, the 64 client and the origin connections included), ${r.fds.after} after it |`,
    `| result | ${r.pass ? 'pass' : '**FAIL**'} |`,
    '',
  ].join('\n');
}

function writeResults(r) {
  const file = path.join(__dirname, 'RESULTS.md');
  const old = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const at = old.indexOf('\n## Soak');
  fs.writeFileSync(file, (at >= 0 ? old.slice(0, at) : old.replace(/\n*$/, '')) + '\n\n' + resultsSection(r));
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`soak failed: ${err.stack || err}\n`);
    stopChildren();
    process.exit(2);
  });
}

module.exports = { writeResults };
