'use strict';
// Memory soak: the node's RSS under a mixed load held for minutes, against the stored-data figure.
//
//   node perf/memory-soak.js                    # 10 minutes
//   PERF_SOAK_MINUTES=3 node perf/memory-soak.js
//   PERF_SOAK_BASELINE_MIB=217 node perf/memory-soak.js   # compare with this figure instead of running perf/memory.js
//
// One node (dist/main.js, a fresh data dir under perf/.work/, default settings but the ports) and,
// all at once for the whole run:
//   - appends: 16 in flight to 400 streams, half single records (100 B to 4 KiB), half binary
//     batches of 10 to 100 records of 100 B;
//   - catch-up reads: 4 in flight, a page of up to 1,000 records from a random seq of a random
//     stream, in `raw`, `binary` or `json`;
//   - SSE tails: 20 readers that follow a stream for the whole run, 10 that read for 1 to 5 s,
//     drop the connection and come back with `Last-Event-ID`;
//   - churn: 2 loops that create a stream under a new name, append to it, tail it, read it and
//     delete it;
//   - trims: one stream every 250 ms trimmed to 500 records below its tail.
// RSS (VmRSS of the node process, all its threads) is sampled every 5 s. At the end, the load
// stops and, 10 s later, RSS is read once more (is it released when idle?). The report gives RSS at
// the end against the stored-data benchmark's figure (`node perf/memory.js`, 1M records, run in the
// same invocation first unless PERF_SOAK_BASELINE_MIB is given) and the least-squares slope of RSS
// over the last half of the run. Goals: end RSS ≤ 1.2× the baseline plus the read-side caches'
// budgets (`--read-cache-bytes` and `--read-pool-bytes`, the node's defaults unless PERF_SOAK_ARGS
// sets them: memory the operator grants to reads, which the stored-data benchmark never fills;
// with both set to 0 the goal is 1.2× the baseline itself); slope < 1 MiB/min (not growing: the
// samples swing by ±20 MiB as the C heap is used and trimmed, so a falling slope is noise too, not
// a failure).

const fs = require('node:fs');
const { setMaxListeners } = require('node:events');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { request } = require('undici');
const { freePorts, waitForPort, http, sleep } = require('./lib/util');

const ROOT = path.resolve(__dirname, '..');
const DIST = path.resolve(ROOT, process.env.PERF_SOAK_DIST || 'dist');
const { encodeRecordBatch } = require(path.join(DIST, 'util', 'record-batch.js'));
const { CONFIG_FIELDS, defaultOf } = require(path.join(DIST, 'config.js'));

const MINUTES = Number(process.env.PERF_SOAK_MINUTES || 10);
const SAMPLE_MS = Number(process.env.PERF_SOAK_SAMPLE_MS || 5000);
const STREAMS = 400;
const APPENDERS = 16;
const READERS = 4;
const FOLLOWERS = 20;
const RECONNECTERS = 10;
const CHURNERS = 2;
const KEEP_RECORDS = 500;
const EXTRA_ARGS = (process.env.PERF_SOAK_ARGS || '').split(' ').filter(Boolean);
const NODE_FLAGS = (process.env.PERF_SOAK_NODE_FLAGS || '').split(' ').filter(Boolean);
const NODE_ENV_EXTRA = Object.fromEntries((process.env.PERF_SOAK_NODE_ENV || '').split(' ').filter(Boolean).map((kv) => kv.split('=')));
const SLOPE_LIMIT = 1; // MiB per minute
const RATIO_LIMIT = 1.2;

const MiB = 1024 * 1024;
const statusField = (pid, field) => {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? (Number(m[1]) * 1024) / MiB : NaN;
};
const rssOf = (pid) => statusField(pid, 'VmRSS');

/**
 * Resident memory by kind, from /proc/<pid>/smaps (MiB): `file` (the node binary, libraries),
 * `malloc` (glibc's heaps: the main arena, `[heap]`, and the other arenas, anonymous mappings
 * that start on a 64 MiB boundary, their reserved size) and `other` anonymous memory (V8's heap
 * pages, buffers mmapped on their own, thread stacks). An approximation for diagnosis: a V8 page
 * could start on such a boundary too.
 */
function rssByKind(pid) {
  const out = { file: 0, malloc: 0, other: 0 };
  let kind = 'other';
  for (const line of fs.readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const m = /^([0-9a-f]+)-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (m) {
      const name = m[3];
      if (name.startsWith('/')) kind = 'file';
      else if (name === '[heap]' || (name === '' && m[2] === 'rw-p' && BigInt(`0x${m[1]}`) % (64n * 1024n * 1024n) === 0n)) kind = 'malloc';
      else kind = 'other';
    } else if (line.startsWith('Rss:')) {
      out[kind] += Number(line.split(/\s+/)[1]) / 1024;
    }
  }
  return out;
}

const rand = (n) => Math.floor(Math.random() * n);
const streamName = (i) => `/soak/s-${String(i).padStart(4, '0')}`;

function batchBody(n) {
  const records = [];
  for (let i = 0; i < n; i++) records.push({ key: null, value: Buffer.alloc(100, 97 + (i % 26)), headers: null });
  return encodeRecordBatch({ baseOffset: 0, baseTimestamp: Date.now(), records });
}

/** Least-squares slope of y over x. */
function slope(points) {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((a, p) => a + p[0], 0) / n;
  const my = points.reduce((a, p) => a + p[1], 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return num / den;
}

async function startNode(dataDir, logFile) {
  const [port, kafkaPort, adminPort] = await freePorts(3);
  const fd = fs.openSync(logFile, 'a');
  const child = spawn(
    process.execPath,
    [...NODE_FLAGS, path.join(DIST, 'main.js'), 'serve', '--listen', `127.0.0.1:${port}`, '--kafka-listen', `127.0.0.1:${kafkaPort}`, '--admin-listen', `127.0.0.1:${adminPort}`, '--data-dir', dataDir, '--log-level', 'warn', ...EXTRA_ARGS],
    { cwd: ROOT, stdio: ['ignore', fd, fd], env: { ...process.env, ...NODE_ENV_EXTRA } },
  );
  fs.closeSync(fd);
  let exited = false;
  const exit = new Promise((resolve) => child.once('exit', () => ((exited = true), resolve())));
  await waitForPort(port, { timeoutMs: 120000, isDead: () => exited });
  const stop = async () => {
    if (!exited) child.kill('SIGTERM');
    await exit;
  };
  return { pid: child.pid, base: `http://127.0.0.1:${port}`, admin: `http://127.0.0.1:${adminPort}`, stop, exited: () => exited };
}

/** Read an SSE response until `signal` aborts or the response ends; returns the last record id seen. */
async function sse(url, { lastEventId, signal }) {
  let last = lastEventId;
  try {
    const headers = lastEventId === undefined ? {} : { 'last-event-id': String(lastEventId) };
    const res = await request(url, { method: 'GET', headers, signal, bodyTimeout: 0, headersTimeout: 30000 });
    if (res.statusCode !== 200) {
      await res.body.dump();
      return last;
    }
    let tail = '';
    for await (const chunk of res.body) {
      tail += chunk.toString('latin1');
      const cut = tail.lastIndexOf('\n\n');
      if (cut < 0) continue;
      const events = tail.slice(0, cut);
      tail = tail.slice(cut + 2);
      const ids = events.match(/^id: (\d+)$/gm);
      if (ids) last = Number(ids[ids.length - 1].slice(4));
    }
  } catch {
    // aborted or cut: the caller reconnects
  }
  return last;
}

async function runSoak(baselineMiB) {
  fs.mkdirSync(path.join(ROOT, 'perf', '.work'), { recursive: true });
  const workDir = fs.mkdtempSync(path.join(ROOT, 'perf', '.work', 'soak-'));
  const node = await startNode(path.join(workDir, 'data'), path.join(workDir, 'node.log'));
  const cleanup = async () => {
    await node.stop();
    if (!process.env.PERF_SOAK_KEEP) fs.rmSync(workDir, { recursive: true, force: true });
  };
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
  const counts = { appends: 0, reads: 0, sseConnects: 0, created: 0, deleted: 0, trims: 0, errors: 0 };
  const nextSeq = new Array(STREAMS).fill(0);
  const stop = new AbortController();
  setMaxListeners(0, stop.signal); // one listener per SSE reader
  const running = () => !stop.signal.aborted;
  const fail = (what, r) => {
    counts.errors++;
    if (counts.errors <= 10) console.error(`perf/memory-soak: ${what} → ${r.status} ${r.body.toString().slice(0, 160)}`);
  };
  const samples = [];
  try {
    await sleep(2000);
    const rssStart = rssOf(node.pid);
    for (let i = 0; i < STREAMS; i++) {
      const r = await http('PUT', `${node.base}${streamName(i)}`, { headers: { 'content-type': 'application/octet-stream' } });
      if (r.status !== 201 && r.status !== 200) throw new Error(`create → ${r.status}`);
    }
    const t0 = Date.now();
    const endAt = t0 + MINUTES * 60000;
    const loops = [];
    const loop = (fn) => loops.push((async () => {
      while (running() && Date.now() < endAt) {
        try {
          await fn();
        } catch (err) {
          if (!running()) return;
          counts.errors++;
          if (counts.errors <= 10) console.error(`perf/memory-soak: ${err.message}`);
          await sleep(100);
        }
      }
    })());

    for (let a = 0; a < APPENDERS; a++) {
      loop(async () => {
        const i = rand(STREAMS);
        const single = Math.random() < 0.5;
        const r = single
          ? await http('POST', `${node.base}${streamName(i)}`, { headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(100 + rand(4000), 120) })
          : await http('POST', `${node.base}${streamName(i)}`, { headers: { 'content-type': 'application/vnd.svc.batch' }, body: batchBody(10 + rand(91)) });
        if (r.status !== 200 && r.status !== 204) return fail('append', r);
        counts.appends++;
        const next = Number(r.headers['svc-next-seq']);
        if (next > nextSeq[i]) nextSeq[i] = next;
      });
    }
    const formats = ['raw', 'binary', 'json'];
    for (let k = 0; k < READERS; k++) {
      loop(async () => {
        const i = rand(STREAMS);
        const seq = rand(nextSeq[i] + 1);
        const r = await http('GET', `${node.base}${streamName(i)}?seq=${seq}&format=${formats[rand(3)]}&count=1000`);
        if (r.status !== 200 && r.status !== 400) return fail('read', r);
        counts.reads++;
      });
    }
    for (let k = 0; k < FOLLOWERS; k++) {
      const i = k;
      let last;
      loop(async () => {
        counts.sseConnects++;
        last = await sse(`${node.base}${streamName(i)}?live=sse`, { lastEventId: last, signal: stop.signal });
        await sleep(200);
      });
    }
    for (let k = 0; k < RECONNECTERS; k++) {
      let last;
      let i = rand(STREAMS);
      loop(async () => {
        if (Math.random() < 0.2) {
          i = rand(STREAMS);
          last = undefined;
        }
        const ac = new AbortController();
        const timer = setTimeout(() => ac.abort(), 1000 + rand(4000));
        const onStop = () => ac.abort();
        stop.signal.addEventListener('abort', onStop, { once: true });
        counts.sseConnects++;
        last = await sse(`${node.base}${streamName(i)}?live=sse`, { lastEventId: last, signal: ac.signal });
        clearTimeout(timer);
        stop.signal.removeEventListener('abort', onStop);
      });
    }
    let churnId = 0;
    for (let k = 0; k < CHURNERS; k++) {
      loop(async () => {
        const name = `/soak/churn-${k}-${churnId++}`;
        let r = await http('PUT', `${node.base}${name}`, { headers: { 'content-type': 'application/octet-stream' } });
        if (r.status !== 201) return fail('churn create', r);
        counts.created++;
        const ac = new AbortController();
        const tail = sse(`${node.base}${name}?live=sse`, { signal: ac.signal });
        for (let j = 0; j < 5; j++) {
          r = await http('POST', `${node.base}${name}`, { headers: { 'content-type': 'application/vnd.svc.batch' }, body: batchBody(20) });
          if (r.status !== 200 && r.status !== 204) return fail('churn append', r);
          counts.appends++;
        }
        r = await http('GET', `${node.base}${name}?seq=0&format=raw&count=1000`);
        if (r.status !== 200) return fail('churn read', r);
        r = await http('DELETE', `${node.base}${name}`);
        if (r.status !== 204) return fail('churn delete', r);
        counts.deleted++;
        await Promise.race([tail, sleep(2000)]);
        ac.abort();
      });
    }
    loop(async () => {
      await sleep(250);
      const i = rand(STREAMS);
      if (nextSeq[i] <= KEEP_RECORDS) return;
      const r = await http('POST', `${node.base}${streamName(i)}`, { headers: { 'svc-trim-seq': String(nextSeq[i] - KEEP_RECORDS) } });
      if (r.status !== 200 && r.status !== 204) return fail('trim', r);
      counts.trims++;
    });

    const sampler = (async () => {
      while (Date.now() < endAt && !node.exited()) {
        await sleep(SAMPLE_MS);
        const k = rssByKind(node.pid);
        const s = [(Date.now() - t0) / 60000, rssOf(node.pid), k.malloc, k.other, k.file];
        samples.push(s);
        if (Math.floor(s[0]) > Math.floor(samples.length > 1 ? samples[samples.length - 2][0] : 0) || process.env.PERF_SOAK_VERBOSE) {
          console.error(`perf/memory-soak: ${s[0].toFixed(1)} min RSS ${s[1].toFixed(0)} MiB (malloc ${s[2].toFixed(0)}, other anon ${s[3].toFixed(0)}, files ${s[4].toFixed(0)}), ${counts.appends} appends, ${counts.reads} reads, ${counts.sseConnects} SSE connects, ${counts.deleted} deleted, ${counts.trims} trims, ${counts.errors} errors`);
        }
      }
    })();
    await sampler;
    stop.abort();
    await Promise.all(loops);
    const endRss = samples[samples.length - 1][1];
    await sleep(10000);
    const idleRss = rssOf(node.pid);
    const half = samples.filter((s) => s[0] >= MINUTES / 2);
    const lastHalfSlope = slope(half.map((s) => [s[0], s[1]]));
    const peak = Math.max(...samples.map((s) => s[1]));
    return { rssStart, endRss, idleRss, peak, lastHalfSlope, samples, counts, baselineMiB };
  } finally {
    stop.abort();
    await cleanup();
  }
}

/** A byte setting of the node: its value in PERF_SOAK_ARGS, else the node's default. */
function settingBytes(flag) {
  const i = EXTRA_ARGS.lastIndexOf(flag);
  if (i >= 0) return Number(EXTRA_ARGS[i + 1]);
  const field = CONFIG_FIELDS.find((f) => f.flag === flag);
  if (field === undefined) throw new Error(`no setting ${flag}`);
  return Number(defaultOf(field));
}

/** What the node may hold for reads by its settings: the read cache and the idle read page buffers. */
function readBudgetsMiB() {
  return (settingBytes('--read-cache-bytes') + settingBytes('--read-pool-bytes')) / MiB;
}

function baseline() {
  if (process.env.PERF_SOAK_BASELINE_MIB) return { mib: Number(process.env.PERF_SOAK_BASELINE_MIB), source: 'given (PERF_SOAK_BASELINE_MIB)' };
  console.error('perf/memory-soak: running perf/memory.js with PERF_MEM_RECORDS=1000000 for the baseline');
  const out = spawnSync(process.execPath, [path.join(__dirname, 'memory.js')], { env: { ...process.env, PERF_MEM_RECORDS: '1000000', PERF_MEM_DIST: DIST }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const row = /\| after 1,000,000 records \| [\d,]+ \| (\d+) \|/.exec(out.stdout);
  if (!row) throw new Error(`perf/memory.js gave no 1M row:\n${out.stdout}`);
  return { mib: Number(row[1]), source: 'perf/memory.js, 1M records, this run' };
}

async function main() {
  const base = baseline();
  const r = await runSoak(base.mib);
  const budgets = readBudgetsMiB();
  const limit = RATIO_LIMIT * base.mib + budgets;
  const ratio = (r.endRss - budgets) / base.mib;
  const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(`Mixed load for ${MINUTES} min: ${APPENDERS} appenders over ${STREAMS} streams, ${READERS} catch-up readers, ${FOLLOWERS} following + ${RECONNECTERS} reconnecting SSE readers, ${CHURNERS} create/delete loops, a trim every 250 ms.`);
  console.log(`Done: ${r.counts.appends} appends, ${r.counts.reads} reads, ${r.counts.sseConnects} SSE connections, ${r.counts.created} created / ${r.counts.deleted} deleted, ${r.counts.trims} trims, ${r.counts.errors} errors. Load average at the end: ${load}.\n`);
  console.log('| minute | RSS (MiB) | malloc heaps | other anonymous (V8 heaps, mmapped buffers) | files |');
  console.log('|---:|---:|---:|---:|---:|');
  // The first sample at or after each whole minute (samples drift apart on a loaded machine).
  for (let m = 1; m <= Math.ceil(MINUTES); m++) {
    const s = r.samples.find((x) => x[0] >= m - 0.05) ?? (m === Math.ceil(MINUTES) ? r.samples[r.samples.length - 1] : undefined);
    if (s !== undefined) console.log(`| ${s.map((v, j) => v.toFixed(j === 0 ? 1 : 0)).join(' | ')} |`);
  }
  console.log('');
  console.log(`RSS: ${r.rssStart.toFixed(0)} MiB empty, peak ${r.peak.toFixed(0)}, end ${r.endRss.toFixed(0)}, ${r.idleRss.toFixed(0)} after 10 s idle. Baseline ${base.mib} MiB (${base.source}).\n`);
  console.log('| Goal | Result | Figure |');
  console.log('|---|---|---|');
  console.log(`| RSS at the end within ${RATIO_LIMIT}× the stored-data figure plus the read caches' budgets (${budgets.toFixed(0)} MiB) | **${r.endRss <= limit ? 'PASS' : 'FAIL'}** | ${r.endRss.toFixed(0)} ≤ ${limit.toFixed(0)} MiB: (${r.endRss.toFixed(0)} − ${budgets.toFixed(0)}) ÷ ${base.mib} = ${ratio.toFixed(2)}× |`);
  console.log(`| RSS not growing over the last half (slope < ${SLOPE_LIMIT} MiB/min) | **${r.lastHalfSlope < SLOPE_LIMIT ? 'PASS' : 'FAIL'}** | ${r.lastHalfSlope.toFixed(2)} MiB/min |`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
