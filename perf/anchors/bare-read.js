'use strict';
// Anchor: the ceiling for W4/W5 (catch-up reads). A bare uWebSockets.js server that answers a
// catch-up page with bytes it already holds in memory: no storage, no index, no CRC check, no
// framing work. It answers the Svc protocol's page request exactly as the node does (same bodies,
// `Svc-Next-Seq` and `Svc-Up-To-Date`), so the same reader reads both, and
// "Svc ÷ bare read" is the share of the engine's read ceiling that Svc keeps.
//
// Which bytes: the pages Svc itself sent in the same run. perf/lib/workloads.js keeps the bodies
// of Svc's untimed verification pass (per record size and format) in the run's scratch dir; the
// load request below reads them into memory. When Svc did not run (or failed), `raw` is built from
// the same record bodies the preload appends (perf/lib/bodies.js), in pages of the requested size;
// `binary` then has no bytes to serve and answers 404.
//
//   POST /_load?size=<record bytes>&count=<records>   load (or build) the pages; 204 when done
//   GET  /<stream>?seq=<n>&format=raw|binary           the page that starts at seq n
//
// The body is written with tryEnd/onWritable, which hands uWS the caller's buffer without copying
// what the socket does not take at once (uWS's own streaming pattern).
//
// Usage: node perf/anchors/bare-read.js <port> <captureDir>
// Each process serves one record size at a time; at most the pages of one load are held (~100 MB for W5).

const fs = require('node:fs');
const path = require('node:path');
const uws = require('@trufflesuite/uws-js-unofficial');
const { recordBody } = require('../lib/bodies');

const port = Number(process.argv[2] ?? 0);
const captureDir = process.argv[3] ?? '';
const RAW_PAGE_BYTES = 16 * 1024 * 1024;

/** format → Map<seq, {body, next, upToDate}> */
let pages = new Map();

/** The capture file written by workloads.js: a JSON index line, then the page bodies back to back. */
function readCapture(size, format) {
  const file = path.join(captureDir, `capture-${size}-${format}.bin`);
  if (captureDir === '' || !fs.existsSync(file)) return null;
  const all = fs.readFileSync(file);
  const nl = all.indexOf(10);
  const index = JSON.parse(all.subarray(0, nl).toString('utf8'));
  const out = new Map();
  let at = nl + 1;
  for (const p of index) {
    out.set(p.seq, { body: all.subarray(at, at + p.length), next: String(p.next), upToDate: p.upToDate ? 'true' : 'false' });
    at += p.length;
  }
  return out;
}

/** Raw pages built from the preload's record bodies (when Svc left no capture). */
function buildRaw(size, count) {
  const perPage = Math.max(1, Math.floor(RAW_PAGE_BYTES / size));
  const out = new Map();
  for (let seq = 0; seq < count; seq += perPage) {
    const n = Math.min(perPage, count - seq);
    const body = Buffer.allocUnsafe(n * size);
    for (let i = 0; i < n; i++) recordBody(seq + i, size).copy(body, i * size);
    out.set(seq, { body, next: String(seq + n), upToDate: seq + n >= count ? 'true' : 'false' });
  }
  return out;
}

function load(size, count) {
  const next = new Map();
  next.set('raw', readCapture(size, 'raw') ?? buildRaw(size, count));
  const bin = readCapture(size, 'binary');
  if (bin !== null) next.set('binary', bin);
  pages = next;
}

/** Write `body` whole, resuming from onWritable while the socket is full. */
function send(res, page, state) {
  res.cork(() => {
    res.writeStatus('200 OK');
    res.writeHeader('content-type', 'application/octet-stream');
    res.writeHeader('svc-next-seq', page.next);
    res.writeHeader('svc-up-to-date', page.upToDate);
    const total = page.body.length;
    // The offset before the first tryEnd: onWritable's offsets count from the same origin.
    const start = res.getWriteOffset();
    const [ok, done] = res.tryEnd(page.body, total);
    if (ok || done) return;
    res.onWritable((offset) => {
      if (state.aborted) return true;
      const [ok2] = res.tryEnd(page.body.subarray(offset - start), total);
      return ok2;
    });
  });
}

const app = uws.App();

app.post('/_load', (res, req) => {
  const q = new URLSearchParams(req.getQuery() ?? '');
  const size = Number(q.get('size'));
  const count = Number(q.get('count'));
  res.onAborted(() => {});
  res.onData((_c, isLast) => {
    if (!isLast) return;
    load(size, count);
    res.cork(() => res.writeStatus('204 No Content').end());
  });
});

app.get('/*', (res, req) => {
  const q = new URLSearchParams(req.getQuery() ?? '');
  const state = { aborted: false };
  res.onAborted(() => (state.aborted = true));
  const byFormat = pages.get(q.get('format') ?? 'raw');
  const page = byFormat && byFormat.get(Number(q.get('seq') ?? 0));
  if (!page) {
    res.cork(() => res.writeStatus('404 Not Found').end('no such page'));
    return;
  }
  send(res, page, state);
});

app.listen('127.0.0.1', port, (listenSocket) => {
  if (!listenSocket) {
    process.stderr.write(`bare-read: cannot listen on 127.0.0.1:${port}\n`);
    process.exit(1);
  }
  process.stdout.write(`LISTENING ${uws.us_socket_local_port(listenSocket)}\n`);
  const stop = () => {
    uws.us_listen_socket_close(listenSocket);
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
});
