'use strict';
// Launchers for the servers under test, each in its own process so that it has its
// own event loop (the load generator and reader client live elsewhere):
//
//   svc       node dist/main.js serve ...            (the product, built from src/)
//   svc-ds    node dist/main.js serve --protocol ds  (the product on the Durable Streams protocol)
//   bare-uws  node perf/anchors/bare-uws.js          (ceiling for W1/W2)
//   bare-read node perf/anchors/bare-read.js         (ceiling for W4/W5: Svc's pages from memory)
//   ds-mem    node perf/lib/ds-server.js             (reference server, in-memory store)
//   ds-file   node perf/lib/ds-server.js <dataDir>   (reference server, file store)
//
// Each launcher returns a handle {id, label, baseUrl, proto, stop(), preload()}.
// `proto` is the protocol adapter: how that server names streams, creates them,
// appends one record or a batch, and answers catch-up reads.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { freePort, freePorts, waitForPort, http, parallel } = require('./util');
const { svcJsonBatch, recordBody } = require('./bodies');

const ROOT = path.resolve(__dirname, '..', '..');

const SVC_PROTO = {
  name: 'svc',
  path: (stream) => `/${stream}`,
  recordContentType: 'application/octet-stream',
  batchContentType: 'application/vnd.svc.batch+json',
  // Catch-up read formats this server offers (Svc names).
  readFormats: ['json', 'raw', 'binary'],
  async create(baseUrl, stream, { json = false } = {}) {
    void json; // Svc streams are all octet-stream here; JSON is a read format and a batch media type.
    const res = await http('PUT', baseUrl + SVC_PROTO.path(stream), {
      headers: { 'content-type': 'application/octet-stream' },
    });
    if (res.status !== 201 && res.status !== 200) {
      throw new Error(`PUT ${SVC_PROTO.path(stream)} → ${res.status} ${res.body.toString().slice(0, 200)}`);
    }
  },
};

const DS_PROTO = {
  name: 'ds',
  path: (stream) => `/v1/stream/${stream}`,
  recordContentType: 'application/octet-stream',
  // A JSON stream: POSTing an array appends each element as one message (PROTOCOL.md, JSON mode).
  batchContentType: 'application/json',
  // 'raw' = an application/octet-stream stream, 'json' = an application/json stream.
  readFormats: ['json', 'raw'],
  // What the second part of an offset counts (W6 turns offsets into stream positions): the
  // reference memory store's byte position, each message framed with 5 bytes.
  offsetUnit: 'bytes',
  async create(baseUrl, stream, { json = false } = {}) {
    const res = await http('PUT', baseUrl + DS_PROTO.path(stream), {
      headers: { 'content-type': json ? 'application/json' : 'application/octet-stream' },
    });
    if (res.status !== 201 && res.status !== 200) {
      throw new Error(`PUT ${DS_PROTO.path(stream)} → ${res.status} ${res.body.toString().slice(0, 200)}`);
    }
  },
};

// The Svc node's Durable Streams listener: the same protocol, driven exactly like the reference
// server. Its offsets count records (`…_0000000000000042` = after the first 42 records).
const SVC_DS_PROTO = { ...DS_PROTO, offsetUnit: 'records' };

const BARE_PROTO = {
  name: 'bare',
  path: (stream) => `/${stream}`,
  recordContentType: 'application/octet-stream',
  batchContentType: null,
  readFormats: [],
  async create() {},
};

// The bare read anchor answers Svc's page requests (same query, same Svc-* headers), so the reader
// reads it as Svc; it has nothing to create and serves `raw` and `binary` only.
const BARE_READ_PROTO = { ...SVC_PROTO, readFormats: ['raw', 'binary'], async create() {} };

/**
 * Run `node <args>` through bash with the open-file limit raised as far as allowed (W6 holds
 * 10,000 connections per server); `exec` keeps the PID and the IPC channel.
 */
function spawnNode(args, options) {
  const script = 'ulimit -n 65535 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$0" "$@"';
  return spawn('bash', ['-c', script, process.execPath, ...args], options);
}

function tail(file, lines = 30) {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** Wrap a child process: exit tracking, log file, and a stop() that ends only this PID. */
function track(child, logFile) {
  const state = { exited: false, code: null, signal: null };
  const exitPromise = new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      Object.assign(state, { exited: true, code, signal });
      resolve();
    });
  });
  async function stop() {
    if (!state.exited) {
      child.kill('SIGTERM');
      const t = setTimeout(() => {
        if (!state.exited) child.kill('SIGKILL');
      }, 5000);
      await exitPromise;
      clearTimeout(t);
    }
  }
  return { state, stop, logTail: () => tail(logFile) };
}

function openLog(workDir, id) {
  const logFile = path.join(workDir, `${id}.log`);
  return { logFile, fd: fs.openSync(logFile, 'a') };
}

/**
 * Start the Svc node under test; `ds` = with its Durable Streams listener (`--protocol ds`) instead
 * of the Svc protocol, all other flags the same. `args` are extra flags (auth-overhead.js starts
 * one node with `--auth required`), `name` names its log and data dir when two run side by side,
 * `dist` another build's directory (default `dist/`).
 * Throws (with the log tail) if it does not come up.
 */
async function startSvc(workDir, { ds = false, args = [], name, env, dist } = {}) {
  const id = ds ? 'svc-ds' : 'svc';
  const [port, kafkaPort] = await freePorts(2);
  const dataDir = fs.mkdtempSync(path.join(workDir, `${name || id}-data-`));
  const { logFile, fd } = openLog(workDir, name || id);
  const main = path.join(dist === undefined ? path.join(ROOT, 'dist') : path.resolve(ROOT, dist), 'main.js');
  if (!fs.existsSync(main)) {
    fs.closeSync(fd);
    throw new Error('dist/main.js not found: build the project first (npm run build)');
  }
  const protocol = ds ? ['--protocol', 'ds'] : [];
  // Its own Kafka port too: the default (9092) would collide with any other node on the machine.
  // PERF_SVC_NODE_FLAGS: Node/V8 flags for the node under test (e.g. --single-threaded-gc), to compare runtime settings.
  const nodeFlags = (process.env.PERF_SVC_NODE_FLAGS || '').split(' ').filter(Boolean);
  const child = spawnNode([...nodeFlags, main, 'serve', ...protocol, '--listen', `127.0.0.1:${port}`, '--kafka-listen', `127.0.0.1:${kafkaPort}`, '--no-admin', '--data-dir', dataDir, '--log-level', 'warn', ...args], {
    cwd: ROOT,
    stdio: ['ignore', fd, fd],
    ...(env === undefined ? {} : { env: { ...process.env, ...env } }),
  });
  fs.closeSync(fd);
  const t = track(child, logFile);
  try {
    await waitForPort(port, { timeoutMs: 20000, isDead: () => t.state.exited });
  } catch (err) {
    await t.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw new Error(`${LABELS[id]} did not start (${err.message}; exit code ${t.state.code}).\n${t.logTail()}`, { cause: err });
  }
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    id,
    label: LABELS[id],
    pid: child.pid,
    baseUrl,
    /** The Kafka listener, host:port. */
    kafka: `127.0.0.1:${kafkaPort}`,
    proto: ds ? SVC_DS_PROTO : SVC_PROTO,
    async stop() {
      await t.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
    preload: ds ? (stream, count, size, opts) => preloadDsHttp(baseUrl, stream, count, size, opts) : (stream, count, size) => preloadSvc(baseUrl, stream, count, size),
    logTail: t.logTail,
  };
}

/** Svc protocol: preload `count` records of `size` bytes with JSON batch appends (not measured). */
async function preloadSvc(baseUrl, stream, count, size) {
  const perBatch = Math.max(1, Math.min(1000, Math.floor((256 * 1024) / (size + 16))));
  const batches = Math.ceil(count / perBatch);
  await parallel(batches, 4, async (b) => {
    const first = b * perBatch;
    const n = Math.min(perBatch, count - first);
    const res = await http('POST', baseUrl + SVC_PROTO.path(stream), {
      headers: { 'content-type': SVC_PROTO.batchContentType },
      body: svcJsonBatch(first, n, size),
    });
    if (res.status !== 200) throw new Error(`preload POST → ${res.status} ${res.body.toString().slice(0, 200)}`);
  });
}

/**
 * Durable Streams over HTTP (Svc's DS listener; not measured): one `POST` per message, as the
 * reference server's preload appends one message at a time, 64 in flight. The same bodies as the
 * reference preload (`ds-server.js`): the raw record, or on a JSON stream the record as a JSON string.
 * Order does not matter for the reads (they only count and size records).
 */
async function preloadDsHttp(baseUrl, stream, count, size, { json = false } = {}) {
  const url = baseUrl + SVC_DS_PROTO.path(stream);
  const contentType = json ? 'application/json' : 'application/octet-stream';
  await parallel(count, 64, async (i) => {
    const rec = recordBody(i, size);
    const body = json ? Buffer.from(JSON.stringify(rec.toString('latin1'))) : rec;
    const res = await http('POST', url, { headers: { 'content-type': contentType }, body });
    if (res.status < 200 || res.status >= 300) throw new Error(`preload POST ${SVC_DS_PROTO.path(stream)} → ${res.status} ${res.body.toString().slice(0, 200)}`);
  });
  const head = await http('HEAD', url);
  const next = String(head.headers['stream-next-offset'] ?? '');
  if (!next.endsWith(String(count).padStart(16, '0'))) throw new Error(`preload: ${SVC_DS_PROTO.path(stream)} ends at offset ${next}, expected ${count} messages`);
  return next;
}

/** Start an anchor script of perf/anchors/ on a free port; resolves with its port and process tracker. */
async function startAnchor(workDir, id, label, script, extraArgs = []) {
  const port = await freePort();
  const { logFile, fd } = openLog(workDir, id);
  const child = spawnNode([path.join(ROOT, 'perf', 'anchors', script), String(port), ...extraArgs], {
    cwd: ROOT,
    stdio: ['ignore', fd, fd],
  });
  fs.closeSync(fd);
  const t = track(child, logFile);
  try {
    await waitForPort(port, { isDead: () => t.state.exited });
  } catch (err) {
    await t.stop();
    throw new Error(`${label} anchor did not start (${err.message}).\n${t.logTail()}`, { cause: err });
  }
  return { pid: child.pid, baseUrl: `http://127.0.0.1:${port}`, stop: t.stop, logTail: t.logTail };
}

/** Start the bare uWebSockets.js anchor. */
async function startBareUws(workDir) {
  const a = await startAnchor(workDir, 'bare-uws', 'bare uWS', 'bare-uws.js');
  return { id: 'bare-uws', label: 'bare uWS', proto: BARE_PROTO, ...a };
}

/**
 * Start the bare read anchor. It serves the pages Svc sent in the same workload, which
 * workloads.js keeps in `workDir` (capture-<size>-<format>.bin); `preload` loads them.
 */
async function startBareRead(workDir) {
  const a = await startAnchor(workDir, 'bare-read', 'bare read', 'bare-read.js', [workDir]);
  return {
    id: 'bare-read',
    label: LABELS['bare-read'],
    proto: BARE_READ_PROTO,
    ...a,
    async preload(_stream, count, size) {
      const res = await http('POST', `${a.baseUrl}/_load?size=${size}&count=${count}`);
      if (res.status !== 204) throw new Error(`bare read load → ${res.status} ${res.body.toString().slice(0, 200)}`);
    },
  };
}

/** Start the Durable Streams reference server, `file` = durable file store, else memory. */
async function startDs(workDir, { file }) {
  const id = file ? 'ds-file' : 'ds-mem';
  const port = await freePort();
  const dataDir = file ? fs.mkdtempSync(path.join(workDir, 'ds-data-')) : '';
  const { logFile, fd } = openLog(workDir, id);
  const child = spawnNode([path.join(__dirname, 'ds-server.js'), String(port), dataDir], {
    cwd: ROOT,
    stdio: ['ignore', fd, fd, 'ipc'],
  });
  fs.closeSync(fd);
  const t = track(child, logFile);
  const listening = new Promise((resolve, reject) => {
    child.on('message', (m) => m && m.type === 'listening' && resolve(m.url));
    child.once('exit', () => reject(new Error('exited before listening')));
  });
  listening.catch(() => {});
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), 20000);
  });
  try {
    await Promise.race([listening, timeout]);
    clearTimeout(timer);
    await waitForPort(port, { isDead: () => t.state.exited });
  } catch (err) {
    clearTimeout(timer);
    await t.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    throw new Error(`Durable Streams server (${id}) did not start (${err.message}).\n${t.logTail()}`, { cause: err });
  }
  let nextId = 1;
  return {
    id,
    label: file ? 'DS file' : 'DS memory',
    pid: child.pid,
    baseUrl: `http://127.0.0.1:${port}`,
    proto: DS_PROTO,
    async stop() {
      await t.stop();
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
    /** Preload through the server's store API in its own process (not measured; see ds-server.js). */
    preload(stream, count, size, { json = false } = {}) {
      const reqId = nextId++;
      return new Promise((resolve, reject) => {
        const onMsg = (m) => {
          if (!m || m.type !== 'preloaded' || m.id !== reqId) return;
          child.off('message', onMsg);
          if (m.error) reject(new Error(m.error));
          else resolve(m.offset);
        };
        child.on('message', onMsg);
        child.send({ type: 'preload', id: reqId, path: DS_PROTO.path(stream), count, size, json });
      });
    },
    logTail: t.logTail,
  };
}

/** Start a server by id. */
function startServer(id, workDir) {
  switch (id) {
    case 'svc':
      return startSvc(workDir);
    case 'svc-ds':
      return startSvc(workDir, { ds: true });
    case 'svc-cold':
      // Every read walks and checks its frames (docs/storage.md, "Read cache"): the cost of a first read.
      return startSvc(workDir, { args: ['--read-cache-bytes', '0'], name: 'svc-cold' });
    case 'bare-uws':
      return startBareUws(workDir);
    case 'bare-read':
      return startBareRead(workDir);
    case 'ds-mem':
      return startDs(workDir, { file: false });
    case 'ds-file':
      return startDs(workDir, { file: true });
    default:
      throw new Error(`unknown server ${id}`);
  }
}

const LABELS = { svc: 'Svc', 'svc-cold': 'Svc, no read cache', 'svc-ds': 'Svc DS', 'bare-uws': 'bare uWS', 'bare-read': 'bare read', 'ds-mem': 'DS memory', 'ds-file': 'DS file' };
const SERVER_IDS = Object.keys(LABELS);

module.exports = { startServer, startSvc, LABELS, SERVER_IDS, ROOT };
