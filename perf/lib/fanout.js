'use strict';
// W6 live fan-out: N live readers of one stream while a writer appends at a fixed rate.
//
//   run.js ── runFanout() ──spawn (bash: raise `ulimit -n`, exec node)──▶ this file as a child
//                                                                         │ one process, one clock:
//        ┌── N raw TCP connections (node:net): SSE streams or long-poll loops ─┤
//        └── writer: paced POSTs (undici Pool), ack time per stream position ──┘
//                                 ──▶ server under test (Svc, Svc DS or the DS reference server)
//
// Phases, per server and mode:
//   1. create an empty stream; server RSS (VmRSS from /proc/<pid>/status) with no reader;
//   2. open M/2 readers (M = memReaders, at least N) and wait until every one is attached (SSE:
//      first `control` event; long-poll: request sent and not answered), settle 2 s, RSS; the
//      other M/2 the same way: memory per idle reader = (RSS with M idle readers − RSS with M/2)
//      ÷ (M/2), what one more reader costs; beside it (RSS with M − RSS with none) ÷ M, which
//      also holds one-off costs; then all but N readers leave (settle 2 s);
//   3. the writer appends RATE records/s for the run length; each acknowledgement stamps the
//      time of the stream position it created; every reader stamps the time each position
//      reaches it; delivery latency = receipt − acknowledgement (0 when the receipt came first);
//   4. drain for up to 8 s, then report p50/p99/max latency, deliveries, drops and peak RSS.
//
// Positions: Svc position = seq + 1 (`id:` of a `record` event + 1; a long-poll's Svc-Next-Seq;
// the append's Svc-Next-Seq). DS position = the second part of an offset ÷ (record size + 5) for
// the reference server (its memory store counts bytes and frames each message with 5 bytes), the
// second part itself for Svc's DS listener (it counts records; `offsetUnit: 'records'`): from
// `streamNextOffset` in SSE control events, Stream-Next-Offset on long-poll answers and on appends.
//
// The readers do not parse events fully: per socket chunk they find the last position marker,
// and every position up to it counts as received at that moment. Events are never split across
// the servers' write calls, so a marker is complete within a chunk except at TCP boundaries;
// an incomplete last marker falls back to the one before it.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');

const DRAIN_MS = 8_000;
const ATTACH_MS = 25_000;
const SETTLE_MS = 2_000;
const CONNECT_BATCH = 500;
// One writer with up to 128 appends in flight, one per connection (undici does not pipeline POSTs):
// enough to offer 1,000 appends/s to a server that answers within 128 ms.
const WRITER_CONNECTIONS = 128;
const MAX_WRITER_IN_FLIGHT = WRITER_CONNECTIONS;
const HIST_STEP_MS = 0.1; // latency histogram resolution
const HIST_MAX_MS = 120_000;

// ───────────────────────────── parent side ─────────────────────────────

/** Run one fan-out measurement in a child process with a raised open-file limit. */
function runFanout(opts) {
  const nofile = Math.max(65535, Math.max(opts.readers, opts.memReaders ?? 0) + 4096);
  // Raise the soft limit as far as the hard limit allows; exec keeps the IPC channel (fd 3).
  const script = `ulimit -n ${nofile} 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$0" "$@"`;
  const child = spawn('bash', ['-c', script, process.execPath, __filename], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      child.kill('SIGKILL');
      reject(new Error(`fan-out client did not finish within ${opts.hardTimeoutMs} ms`));
    }, opts.hardTimeoutMs);
    child.on('message', (m) => {
      if (settled || !m || m.type !== 'result') return;
      settled = true;
      clearTimeout(timer);
      if (m.error) reject(new Error(m.error));
      else resolve(m.result);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (settled) return;
      settled = true;
      reject(new Error(`fan-out client exited (${code ?? signal}) without a result`));
    });
    child.send({ type: 'run', opts });
  });
}

// ───────────────────────────── child side ─────────────────────────────

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function rssOf(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** User + system CPU seconds of a process so far (clock ticks of 100 Hz, as Linux reports them). */
function cpuOf(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

/** User + system CPU seconds of a process's main thread alone (the gateway thread). */
function mainCpuOf(pid) {
  return cpuOf(`${pid}/task/${pid}`);
}

function softNofile() {
  // Node has no getrlimit; /proc shows the limits of this process.
  try {
    const m = /Max open files\s+(\d+)/.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
    return m ? Number(m[1]) : Infinity;
  } catch {
    return Infinity;
  }
}

class Histogram {
  constructor() {
    this.buckets = new Uint32Array(Math.ceil(HIST_MAX_MS / HIST_STEP_MS) + 1);
    this.count = 0;
    this.max = 0;
  }
  add(ms, n = 1) {
    const b = Math.min(this.buckets.length - 1, Math.max(0, Math.round(ms / HIST_STEP_MS)));
    this.buckets[b] += n;
    this.count += n;
    if (ms > this.max) this.max = ms;
  }
  percentile(p) {
    if (this.count === 0) return NaN;
    const want = Math.ceil(this.count * p);
    let seen = 0;
    for (let i = 0; i < this.buckets.length; i++) {
      seen += this.buckets[i];
      if (seen >= want) return i * HIST_STEP_MS;
    }
    return this.max;
  }
}

/** The per-protocol parts: request paths, position markers, ack headers. */
function protocolOf(o) {
  // DS offsets: the reference memory store counts bytes (4-byte length + newline per message);
  // Svc's DS listener counts records (offsetUnit 'records').
  const frame = o.offsetUnit === 'records' ? 1 : o.recordSize + 5;
  const dsPos = (offset) => {
    const i = offset.indexOf('_');
    return i < 0 ? NaN : Math.round(Number(offset.slice(i + 1)) / frame);
  };
  if (o.proto === 'svc') {
    return {
      streamPath: o.streamPath,
      createHeaders: { 'content-type': 'application/octet-stream' },
      ssePath: `${o.streamPath}?live=sse&seq=0`,
      pollPath: (pos) => `${o.streamPath}?live=long-poll&seq=${pos}`,
      firstPollPos: 0,
      ackPos: (headers) => Number(headers['svc-next-seq']),
      pollPos: (headerText) => {
        const m = /\r\nsvc-next-seq: *(\d+)/i.exec(headerText);
        return m ? Number(m[1]) : NaN;
      },
      // `id: <seq>` of a record event; position = seq + 1.
      marker: Buffer.from('\nid: '),
      markerPos: (buf, at) => {
        let p = at;
        let v = 0;
        let digits = 0;
        while (p < buf.length && buf[p] >= 0x30 && buf[p] <= 0x39) {
          v = v * 10 + (buf[p] - 0x30);
          p++;
          digits++;
        }
        return digits > 0 && p < buf.length ? v + 1 : NaN; // a number cut by the chunk end is incomplete
      },
      errorMarker: Buffer.from('event: error'),
    };
  }
  return {
    streamPath: o.streamPath,
    createHeaders: { 'content-type': 'application/octet-stream' },
    ssePath: `${o.streamPath}?offset=now&live=sse`,
    pollPath: (pos, offset) => `${o.streamPath}?offset=${offset ?? 'now'}&live=long-poll`,
    firstPollPos: 0,
    ackPos: (headers) => dsPos(String(headers['stream-next-offset'] ?? '')),
    pollPos: (headerText) => {
      const m = /\r\nstream-next-offset: *([0-9_]+)/i.exec(headerText);
      return m ? { pos: dsPos(m[1]), offset: m[1] } : { pos: NaN, offset: null };
    },
    // `"streamNextOffset":"<16 digits>_<16 digits>"` in a control event.
    marker: Buffer.from('"streamNextOffset":"'),
    markerPos: (buf, at) => {
      const end = at + 33;
      if (end >= buf.length || buf[end] !== 0x22) return NaN;
      return dsPos(buf.toString('latin1', at, end));
    },
    errorMarker: null,
  };
}

/** The last complete position marker in `buf`, or NaN. */
function lastPosition(proto, buf) {
  let i = buf.lastIndexOf(proto.marker);
  while (i >= 0) {
    const pos = proto.markerPos(buf, i + proto.marker.length);
    if (!Number.isNaN(pos)) return pos;
    if (i === 0) break;
    i = buf.lastIndexOf(proto.marker, i - 1);
  }
  return NaN;
}

async function run(o) {
  const url = new URL(o.baseUrl);
  const host = url.hostname;
  const port = Number(url.port);
  const proto = protocolOf(o);
  const { Pool } = require('undici');
  const pool = new Pool(o.baseUrl, { connections: WRITER_CONNECTIONS, pipelining: 1, keepAliveTimeout: 30_000 });
  const limit = softNofile();
  if (Math.max(o.readers, o.memReaders ?? 0) + 64 > limit) throw new Error(`open-file limit ${limit} is below ${Math.max(o.readers, o.memReaders ?? 0)} readers; raise the hard limit (ulimit -Hn)`);

  const created = await pool.request({ path: proto.streamPath, method: 'PUT', headers: proto.createHeaders });
  await created.body.dump();
  if (created.statusCode !== 201 && created.statusCode !== 200) throw new Error(`PUT ${proto.streamPath} → ${created.statusCode}`);

  // Acknowledgement time per position (NaN until acknowledged).
  const maxPositions = Math.ceil(o.rate * o.seconds) + 16;
  const acks = new Float64Array(maxPositions + 1).fill(NaN);
  const hist = new Histogram();
  const histAppend = new Histogram();
  let receivedBeforeAck = 0;
  let measuring = false;
  const readers = [];
  const stats = { errors: 0, dropped: 0, closed: 0, badStatus: 0, ready: 0 };

  /** Every position in (r.pos, pos] reached reader r at time t. */
  function received(r, pos, t) {
    if (!(pos > r.pos)) return;
    if (measuring) {
      for (let p = r.pos + 1; p <= pos && p <= maxPositions; p++) {
        const a = acks[p];
        if (Number.isNaN(a)) {
          receivedBeforeAck++;
          hist.add(0);
        } else hist.add(t - a);
      }
    }
    r.pos = pos;
  }

  await sleep(1000);
  const rssBefore = rssOf(o.serverPid);

  // ── attach readers: the first half, RSS, the second half, RSS ──
  // The second half's growth is what one more idle reader costs. The first half's also holds what
  // the first readers of a mode cost once (its code compiled, the heap grown to take them), which
  // a few hundred readers cannot amortise: both figures are reported.
  const attachDeadline = Date.now() + ATTACH_MS;
  const attach = async (from, to) => {
    for (let i = from; i < to; i += CONNECT_BATCH) {
      const batch = [];
      for (let j = i; j < Math.min(to, i + CONNECT_BATCH); j++) {
        batch.push(o.mode === 'sse' ? openSse(j) : openPoller(j));
      }
      await Promise.all(batch);
      if (Date.now() > attachDeadline) break;
    }
    while (stats.ready < to && Date.now() < attachDeadline) await sleep(50);
    if (stats.ready < to) throw new Error(`only ${stats.ready} of ${o.readers} readers attached within ${ATTACH_MS / 1000} s (errors ${stats.errors}, bad status ${stats.badStatus})`);
    await sleep(SETTLE_MS);
  };
  // Memory is measured over `memReaders` idle readers (at least `readers`): with 1,000 long-pollers
  // the steps in which V8's heap grows (MBs) were as large as the figure, which moved between 7 and
  // 12 KiB per reader from run to run on one build. Readers beyond `readers` leave before the load.
  const memReaders = Math.max(o.readers, o.memReaders ?? 0);
  const half = Math.floor(memReaders / 2);
  await attach(0, half);
  const rssHalf = rssOf(o.serverPid);
  await attach(half, memReaders);
  const rssIdle = rssOf(o.serverPid);
  if (memReaders > o.readers) {
    for (const r of readers.splice(o.readers)) {
      r.dead = true;
      r.sock.destroy();
    }
    await sleep(SETTLE_MS);
  }

  // ── load ──
  let sent = 0;
  let acked = 0;
  let writeErrors = 0;
  let inFlight = 0;
  let maxAckPos = 0;
  let peakRss = rssIdle;
  let stopping = false;
  measuring = true;
  const body = Buffer.alloc(o.recordSize, 0x61);
  const serverCpu0 = cpuOf(o.serverPid);
  const serverMainCpu0 = mainCpuOf(o.serverPid);
  stats.chunks = 0;
  const clientCpu0 = process.cpuUsage();
  const started = performance.now();
  const writerDone = new Promise((resolve) => {
    const tick = setInterval(() => {
      const now = performance.now();
      const elapsed = now - started;
      if (elapsed >= o.seconds * 1000) {
        clearInterval(tick);
        resolve();
        return;
      }
      const due = Math.min(maxPositions - 16, Math.floor((elapsed / 1000) * o.rate));
      while (sent < due && inFlight < MAX_WRITER_IN_FLIGHT) {
        sent++;
        inFlight++;
        const sentAt = performance.now();
        pool.request({ path: proto.streamPath, method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body }).then(
          async (res) => {
            const t = performance.now();
            await res.body.dump();
            inFlight--;
            const pos = proto.ackPos(res.headers);
            if (res.statusCode >= 300 || !Number.isFinite(pos)) {
              writeErrors++;
              return;
            }
            acked++;
            histAppend.add(t - sentAt);
            if (pos <= maxPositions && Number.isNaN(acks[pos])) acks[pos] = t;
            if (pos > maxAckPos) maxAckPos = pos;
          },
          () => {
            inFlight--;
            if (!stopping) writeErrors++;
          },
        );
      }
    }, 2);
  });
  const rssTimer = setInterval(() => {
    const r = rssOf(o.serverPid);
    if (r > peakRss) peakRss = r;
  }, 250);
  await writerDone;
  const writeSeconds = (performance.now() - started) / 1000;
  const serverCpu = (cpuOf(o.serverPid) - serverCpu0) / writeSeconds;
  const serverMainCpu = (mainCpuOf(o.serverPid) - serverMainCpu0) / writeSeconds;
  const chunksWhileWriting = stats.chunks;
  const c = process.cpuUsage(clientCpu0);
  const clientCpu = (c.user + c.system) / 1e6 / writeSeconds;
  while (inFlight > 0 && performance.now() - started < o.seconds * 1000 + 5000) await sleep(10);

  // ── drain ──
  const drainStart = performance.now();
  const live = () => readers.filter((r) => !r.dead);
  while (performance.now() - drainStart < DRAIN_MS && live().some((r) => r.pos < maxAckPos)) await sleep(20);
  const drainMs = performance.now() - drainStart;
  clearInterval(rssTimer);
  measuring = false;
  const expected = o.readers * maxAckPos;
  let delivered = 0;
  for (const r of readers) delivered += Math.min(r.pos, maxAckPos);
  const result = {
    mode: o.mode,
    readers: o.readers,
    ratePerSec: o.rate,
    appendsPerSec: acked / writeSeconds,
    appended: acked,
    writeErrors,
    p50: hist.percentile(0.5),
    p99: hist.percentile(0.99),
    max: hist.max,
    /** Append round trip as the writer saw it. */
    appendP50: histAppend.percentile(0.5),
    appendP99: histAppend.percentile(0.99),
    samples: hist.count,
    receivedBeforeAck,
    deliveredShare: expected > 0 ? delivered / expected : NaN,
    drainMs,
    memReaders,
    memPerReader: (rssIdle - rssHalf) / (memReaders - half),
    memPerReaderAll: (rssIdle - rssBefore) / memReaders,
    rssBefore,
    rssHalf,
    rssIdle,
    peakRss,
    /** Cores busy while the writer ran (1 = one core). */
    serverCpu,
    /** Cores busy on the server's main thread alone while the writer ran. */
    serverMainCpu,
    /** SSE socket chunks the readers received while the writer ran (about one per server write). */
    chunksWhileWriting,
    clientCpu,
    dropped: stats.dropped,
    readerErrors: stats.errors + stats.badStatus,
    closedByServer: stats.closed,
    /** Appends still unanswered when the measurement ended (a server that fell behind). */
    appendsPending: inFlight,
  };
  for (const r of readers) r.sock.destroy();
  // Appends a slow server has not answered yet are abandoned, not awaited.
  stopping = true;
  await pool.destroy().catch(() => {});
  return result;

  // ── SSE reader: one raw connection, headers once, then marker scans per chunk ──
  function openSse() {
    return new Promise((resolve) => {
      const r = { sock: null, pos: 0, dead: false, head: true, pending: null, ready: false };
      readers.push(r);
      const sock = net.connect({ host, port });
      r.sock = sock;
      sock.setNoDelay(true);
      sock.once('connect', () => {
        sock.write(`GET ${proto.ssePath} HTTP/1.1\r\nHost: ${host}:${port}\r\nAccept: text/event-stream\r\n\r\n`);
        resolve();
      });
      sock.on('data', (chunk) => {
        const t = performance.now();
        if (r.head) {
          const buf = r.pending ? Buffer.concat([r.pending, chunk]) : chunk;
          const end = buf.indexOf('\r\n\r\n');
          if (end < 0) {
            r.pending = buf;
            return;
          }
          r.head = false;
          r.pending = null;
          if (!/^HTTP\/1\.1 200/.test(buf.toString('latin1', 0, 16))) {
            stats.badStatus++;
            r.dead = true;
            sock.destroy();
            return;
          }
          chunk = buf.subarray(end + 4);
        }
        if (measuring) stats.chunks++;
        if (!r.ready && chunk.indexOf('event: control') >= 0) {
          r.ready = true;
          stats.ready++;
        }
        // An `error` event is the last thing a server sends: look at the chunk's end only (a full scan per chunk costs the client more than anything else).
        if (proto.errorMarker !== null && chunk.indexOf(proto.errorMarker, Math.max(0, chunk.length - 1024)) >= 0) {
          stats.dropped++;
          r.dead = true;
        }
        const pos = lastPosition(proto, chunk);
        if (!Number.isNaN(pos)) received(r, pos, t);
      });
      sock.on('error', () => {
        if (!r.dead) stats.errors++;
        r.dead = true;
        resolve();
      });
      sock.on('close', () => {
        if (!r.dead && measuring) stats.closed++;
        r.dead = true;
      });
    });
  }

  // ── long-poller: one raw keep-alive connection, one request at a time ──
  function openPoller() {
    return new Promise((resolve) => {
      const r = { sock: null, pos: proto.firstPollPos, offset: null, dead: false, buf: null, ready: false };
      readers.push(r);
      const sock = net.connect({ host, port });
      r.sock = sock;
      sock.setNoDelay(true);
      const send = () => sock.write(`GET ${proto.pollPath(r.pos, r.offset)} HTTP/1.1\r\nHost: ${host}:${port}\r\n\r\n`);
      sock.once('connect', () => {
        send();
        // Attached once the request is out: it waits at the tail, unanswered.
        setTimeout(() => {
          if (!r.ready && !r.dead) {
            r.ready = true;
            stats.ready++;
          }
        }, 200);
        resolve();
      });
      sock.on('data', (chunk) => {
        const t = performance.now();
        r.buf = r.buf ? Buffer.concat([r.buf, chunk]) : chunk;
        while (r.buf !== null) {
          const res = parseResponse(r.buf);
          if (res === null) return;
          r.buf = res.rest.length > 0 ? res.rest : null;
          if (res.status === 200 || res.status === 204) {
            const p = proto.pollPos(res.head);
            const pos = typeof p === 'number' ? p : p.pos;
            if (typeof p === 'object' && p.offset) r.offset = p.offset;
            if (res.status === 200 && Number.isFinite(pos)) received(r, pos, t);
          } else {
            stats.badStatus++;
            r.dead = true;
            sock.destroy();
            return;
          }
          send();
        }
      });
      sock.on('error', () => {
        if (!r.dead) stats.errors++;
        r.dead = true;
        resolve();
      });
      sock.on('close', () => {
        if (!r.dead && measuring) stats.closed++;
        r.dead = true;
      });
    });
  }
}

/**
 * One HTTP/1.1 response from the front of `buf`, or null when it is not complete yet:
 * {status, head (status line and headers as text), rest}. Handles Content-Length, chunked and
 * bodiless (204, 304) responses.
 */
function parseResponse(buf) {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const head = buf.toString('latin1', 0, end + 2);
  const status = Number(head.slice(9, 12));
  let p = end + 4;
  if (status === 204 || status === 304) return { status, head, rest: buf.subarray(p) };
  const cl = /\r\ncontent-length: *(\d+)/i.exec(head);
  if (cl) {
    const n = Number(cl[1]);
    if (buf.length < p + n) return null;
    return { status, head, rest: buf.subarray(p + n) };
  }
  if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
    for (;;) {
      const lineEnd = buf.indexOf('\r\n', p);
      if (lineEnd < 0) return null;
      const size = parseInt(buf.toString('latin1', p, lineEnd), 16);
      if (!Number.isFinite(size)) throw new Error('bad chunk size');
      p = lineEnd + 2 + size + 2;
      if (buf.length < p) return null;
      if (size === 0) return { status, head, rest: buf.subarray(p) };
    }
  }
  return { status, head, rest: buf.subarray(p) };
}

if (require.main === module) {
  process.on('message', (m) => {
    if (!m || m.type !== 'run') return;
    run(m.opts).then(
      (result) => process.send({ type: 'result', result }, () => process.exit(0)),
      (err) => process.send({ type: 'result', error: String((err && err.stack) || err) }, () => process.exit(1)),
    );
  });
}

module.exports = { runFanout };
