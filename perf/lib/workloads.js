'use strict';
// The six workloads. Each one runs every server in its `servers` list in turn, in
// the same process tree and the same run, with identical warm-up, duration and load
// generator settings, so that the ratios in RESULTS.md compare like with like.
//
// W1-W3 are driven by wrk (one thread, N connections); W4/W5 by the catch-up reader;
// W6 by the fan-out client (perf/lib/fanout.js: raw TCP readers and a paced writer).
// Servers speaking the Durable Streams protocol (svc-ds, ds-mem, ds-file; `proto.name === 'ds'`)
// all get the DS form of a workload: same bodies, scripts, readers and fan-out.

const fs = require('node:fs');
const path = require('node:path');
const { runWrk } = require('./wrk');
const { catchUp } = require('./reader');
const { runFanout } = require('./fanout');
const { startServer } = require('./servers');
const { recordBody, svcJsonBatch, dsJsonArray } = require('./bodies');
const { parallel } = require('./util');

const RECORD = 100; // bytes per record in W1-W4
const BATCH = 1000; // records per W3 append
const SPREAD = 1000; // streams in W2
const PRELOAD = 100000; // records preloaded for W4/W5
const BIG_RECORD = 1024; // bytes per record in W5
const FANOUT_SSE = 10000; // W6 SSE readers (PERF_FANOUT_READERS)
const FANOUT_POLL = 1000; // W6 long-pollers (PERF_FANOUT_POLLERS)
const FANOUT_RATE = 1000; // W6 appended records per second (PERF_FANOUT_RATE)
const FANOUT_RUN_MS = 60_000; // hard limit of one W6 measurement (attach + load + drain)

/** Write a body file for wrk's Lua scripts (wrk reads it once in init()). */
function bodyFile(workDir, name, buf) {
  const file = path.join(workDir, name);
  if (!fs.existsSync(file)) fs.writeFileSync(file, buf);
  return file;
}

/** Warm-up run (discarded) then the measured run, same script and settings. */
async function wrkPair(cfg, opts) {
  if (cfg.warmup > 0) await runWrk({ ...opts, seconds: cfg.warmup, connections: cfg.connections });
  return runWrk({ ...opts, seconds: cfg.duration, connections: cfg.connections });
}

/**
 * Figures from one measured wrk run. Rates count successful (2xx) responses only:
 * wrk counts a non-2xx answer as a request, so its raw rate would credit failures.
 */
function wrkRow(r, recordsPerRequest) {
  const e = r.errors || {};
  const bad = e.status ?? r.non2xx ?? 0;
  const ok = Math.max(0, r.requests - bad);
  const rps = r.seconds > 0 ? ok / r.seconds : r.rps;
  return {
    rps,
    recordsPerSec: rps * recordsPerRequest,
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests,
    badStatus: bad,
    socketErrors: (e.connect || 0) + (e.read || 0) + (e.write || 0),
    timeouts: e.timeout || 0,
  };
}

const WORKLOADS = {
  W1: {
    title: 'W1: durable single-record appends, one stream',
    describe: `POST one ${RECORD}-byte record per request to one stream; wrk -t1 -c{c}.`,
    kind: 'wrk',
    servers: ['svc', 'bare-uws', 'svc-ds', 'ds-mem', 'ds-file'],
    async run(server, cfg) {
      const { proto, baseUrl } = server;
      await proto.create(baseUrl, 'w1');
      const body = bodyFile(cfg.workDir, 'record-100.bin', recordBody(0, RECORD));
      const r = await wrkPair(cfg, {
        url: baseUrl + proto.path('w1'),
        script: 'append.lua',
        args: [body, proto.recordContentType],
      });
      return [{ variant: '', ...wrkRow(r, 1) }];
    },
  },
  W2: {
    title: `W2: durable single-record appends spread over ${SPREAD} streams`,
    describe: `POST one ${RECORD}-byte record per request to one of ${SPREAD} streams picked at random; wrk -t1 -c{c}.`,
    kind: 'wrk',
    servers: ['svc', 'bare-uws', 'svc-ds', 'ds-mem', 'ds-file'],
    async run(server, cfg) {
      const { proto, baseUrl } = server;
      await parallel(SPREAD, 16, (i) => proto.create(baseUrl, `w2-${String(i).padStart(4, '0')}`));
      const body = bodyFile(cfg.workDir, 'record-100.bin', recordBody(0, RECORD));
      const r = await wrkPair(cfg, {
        url: baseUrl,
        script: 'append-spread.lua',
        args: [body, proto.recordContentType, proto.path('w2-'), SPREAD],
      });
      return [{ variant: '', ...wrkRow(r, 1) }];
    },
  },
  W3: {
    title: `W3: ${BATCH}-record JSON batch appends, one stream`,
    describe:
      `POST ${BATCH} records of ${RECORD} bytes per request to one stream; wrk -t1 -c{c}. ` +
      'Svc: application/vnd.svc.batch+json `{"records":[{"body":…}]}`; ' +
      'DS: a JSON-mode stream, POST of a JSON array of 100-character strings (each element one message).',
    kind: 'wrk',
    servers: ['svc', 'svc-ds', 'ds-mem', 'ds-file'],
    async run(server, cfg) {
      const { proto, baseUrl } = server;
      const isSvc = proto.name === 'svc';
      await proto.create(baseUrl, 'w3', { json: !isSvc });
      const body = isSvc
        ? bodyFile(cfg.workDir, 'svc-batch-1000.json', svcJsonBatch(0, BATCH, RECORD))
        : bodyFile(cfg.workDir, 'ds-array-1000.json', dsJsonArray(0, BATCH, RECORD));
      const r = await wrkPair(cfg, {
        url: baseUrl + proto.path('w3'),
        script: 'append.lua',
        args: [body, proto.batchContentType],
      });
      return [{ variant: '', ...wrkRow(r, BATCH) }];
    },
  },
  W4: {
    title: `W4: catch-up read of ${PRELOAD / 1000}k × ${RECORD} B records`,
    describe:
      `Preload one stream with ${PRELOAD} records of ${RECORD} bytes (not timed), then read it start to end ` +
      'over one keep-alive connection, page after page, repeatedly for the run length.',
    kind: 'read',
    servers: ['svc', 'bare-read', 'svc-cold', 'svc-ds', 'ds-mem', 'ds-file'],
    recordSize: RECORD,
    formats: { svc: ['json', 'raw', 'binary'], ds: ['json', 'raw'] },
    run: (server, cfg) => readWorkload(server, cfg, RECORD, WORKLOADS.W4.formats),
  },
  W5: {
    title: `W5: catch-up read of ${PRELOAD / 1000}k × 1 KiB records, raw`,
    describe: `As W4 with ${BIG_RECORD}-byte records, raw format only (DS: an application/octet-stream stream).`,
    kind: 'read',
    servers: ['svc', 'bare-read', 'svc-cold', 'svc-ds', 'ds-mem', 'ds-file'],
    recordSize: BIG_RECORD,
    formats: { svc: ['raw'], ds: ['raw'] },
    run: (server, cfg) => readWorkload(server, cfg, BIG_RECORD, WORKLOADS.W5.formats),
  },
  W6: {
    title: 'W6: live fan-out, one stream, many live readers',
    describe:
      'One writer appends {rate} records/s of ' + RECORD + ' bytes (single-record POSTs, paced) to one stream for the run length, while ' +
      '{sse} SSE readers, and in a second measurement {poll} long-pollers, follow it. Latency runs from the append\'s ' +
      'acknowledgement to the reader\'s receipt of that record, both stamped on the one client clock. Memory per idle reader, in both modes over ' +
      '{sse} idle readers (the long-pollers beyond {poll} leave before the load): (server RSS with all of them attached and idle − RSS with half of them) ÷ the other half, what one more reader costs; ' +
      'in brackets (RSS with all − RSS with none) ÷ readers, which also holds what the first readers of a mode cost once (its code compiled, the heap grown). Svc: `live=sse` and `live=long-poll`; ' +
      'DS (Svc DS and DS memory): `live=sse` and `live=long-poll` with `offset=now`.',
    kind: 'fanout',
    servers: ['svc', 'svc-ds', 'ds-mem'],
    run: (server, cfg) => fanoutWorkload(server, cfg),
  },
};

/**
 * W6 on one server: SSE, then long-poll on a fresh process of the same server, so that memory per
 * idle reader is not read off a heap the first measurement left grown.
 */
async function fanoutWorkload(server, cfg) {
  const rows = [];
  const plan = [
    ['sse', cfg.fanoutReaders ?? FANOUT_SSE],
    ['long-poll', cfg.fanoutPollers ?? FANOUT_POLL],
  ];
  for (const [i, [mode, readers]] of plan.entries()) {
    let fresh = null;
    try {
      if (i > 0) {
        await server.stop();
        fresh = await startServer(server.id, cfg.workDir);
      }
      const s = fresh ?? server;
      const r = await runFanout({
        baseUrl: s.baseUrl,
        proto: s.proto.name,
        offsetUnit: s.proto.offsetUnit,
        streamPath: s.proto.path(`fanout-${mode}`),
        mode,
        readers,
        // Memory per idle reader over as many idle readers as the SSE measurement has (fanout.js).
        memReaders: cfg.fanoutReaders ?? FANOUT_SSE,
        rate: cfg.fanoutRate ?? FANOUT_RATE,
        seconds: cfg.duration,
        recordSize: RECORD,
        serverPid: s.pid,
        hardTimeoutMs: FANOUT_RUN_MS,
      });
      rows.push({ variant: mode, ...r });
    } catch (err) {
      rows.push({ variant: mode, error: err.message });
    } finally {
      if (fresh) await fresh.stop().catch(() => {});
    }
  }
  return rows;
}

/**
 * Keep the pages Svc sent in its verification pass for the bare read anchor (anchors/bare-read.js),
 * which serves the same bytes from memory: a JSON index line, then the bodies back to back.
 */
function writeCapture(workDir, size, format, pages) {
  const index = pages.map((p) => ({ seq: p.seq, next: p.next, upToDate: p.upToDate, length: p.body.length }));
  const file = path.join(workDir, `capture-${size}-${format}.bin`);
  fs.writeFileSync(file, Buffer.concat([Buffer.from(JSON.stringify(index) + '\n'), ...pages.map((p) => p.body)]));
}

async function readWorkload(server, cfg, size, formats) {
  const { proto, baseUrl } = server;
  const isSvc = proto.name === 'svc'; // Svc, or the bare read anchor that answers like it
  const capturing = server.id === 'svc';
  const rows = [];
  const streams = {}; // format → stream name
  if (isSvc) {
    // One octet-stream stream, read back in each of Svc's formats.
    await proto.create(baseUrl, 'catchup');
    await server.preload('catchup', PRELOAD, size);
    for (const f of formats.svc) streams[f] = 'catchup';
  } else {
    // DS has one read format per stream content type: octet-stream (raw bytes) or JSON.
    for (const f of formats.ds) {
      const name = f === 'json' ? 'catchup-json' : 'catchup';
      await proto.create(baseUrl, name, { json: f === 'json' });
      await server.preload(name, PRELOAD, size, { json: f === 'json' });
      streams[f] = name;
    }
  }
  const own = isSvc ? formats.svc.filter((f) => proto.readFormats.includes(f)) : formats.ds;
  for (const format of own) {
    const capture = capturing && format !== 'json' ? [] : undefined;
    if (capturing) fs.rmSync(path.join(cfg.workDir, `capture-${size}-${format}.bin`), { force: true });
    try {
      const r = await catchUp({
        baseUrl,
        proto,
        stream: streams[format],
        format,
        recordSize: size,
        expectRecords: PRELOAD,
        pageBytes: cfg.pageBytes,
        seconds: cfg.duration,
        capture,
        serverPid: server.pid,
      });
      if (capture) writeCapture(cfg.workDir, size, format, capture);
      rows.push({ variant: format, ...r });
    } catch (err) {
      rows.push({ variant: format, error: err.message });
    }
  }
  return rows;
}

module.exports = { WORKLOADS, RECORD, BATCH, SPREAD, PRELOAD, BIG_RECORD, FANOUT_SSE, FANOUT_POLL, FANOUT_RATE };
