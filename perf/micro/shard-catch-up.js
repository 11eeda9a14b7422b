'use strict';
// Micro-benchmark of a catch-up read inside one shard (dist/, a real RocksDB index and segment
// files, no HTTP): the index lookups a read makes, isolated from the gateway and the network.
// Two layouts of 100,000 records of 100 B: `merged` (one stream written alone, W4's layout: a
// chunk per MiB) and `interleaved` (the stream's appends alternate with another stream's, so every
// append of 10 records is a chunk of its own: the index's worst case). Each pass reads the stream
// start to end in pages of `count` records (raw format); the figure is CPU µs per page and
// records/s, median of the passes.
//
// Usage: node perf/micro/shard-catch-up.js [count=1000] [passes=7]
//        PERF_MEM_DIST=perf/.work/dist-old node perf/micro/shard-catch-up.js   # another build
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const DIST = path.resolve(__dirname, '..', '..', process.env.PERF_MEM_DIST || 'dist');
const W = path.join(DIST, 'shards', 'worker');
const { Shard } = require(path.join(W, 'shard.js'));
const { SegmentLog } = require(path.join(W, 'segment-log.js'));
const { openRocksStore } = require(path.join(W, 'rocks-store.js'));

const COUNT = Number(process.argv[2] || 1000);
const PASSES = Number(process.argv[3] || 7);
const RECORDS = 100_000;
const PER_APPEND = 10;

const call = (shard, f) =>
  new Promise((resolve, reject) => {
    f((err, r) => (err ? reject(err) : resolve(r)));
    shard.flush();
  });

async function layout(kind) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-catch-up-'));
  const store = await openRocksStore(path.join(dir, 'index'));
  const shard = new Shard(store, SegmentLog.open(path.join(dir, 'log'), 64 << 20), { shardId: 0, shardCount: 1, maxChunkBytes: 1 << 20, limits: { maxRecordBytes: 1 << 20, maxBatchRecords: 1000 } });
  for (const name of ['/s', '/other']) await call(shard, (r) => shard.create({ name, contentType: 'application/octet-stream', ttlSeconds: null, expiresAtMs: null, closed: false, records: [] }, r));
  const records = Array.from({ length: PER_APPEND }, () => ({ key: null, value: Buffer.alloc(100, 97), headers: null }));
  const append = (name) => call(shard, (r) => shard.append({ name, origin: 'http', payload: { kind: 'records', records }, contentType: null, close: false }, r));
  for (let i = 0; i < RECORDS / PER_APPEND; i++) {
    await append('/s');
    if (kind === 'interleaved') await append('/other');
  }
  await new Promise((r) => setTimeout(r, 300)); // past the checkpoint: the index is in RocksDB
  const perPage = [];
  let rate = [];
  for (let p = 0; p < PASSES; p++) {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    let seq = 0;
    let pages = 0;
    for (;;) {
      const r = shard.read({ name: '/s', seq, count: COUNT, bytes: 16 << 20, format: 'raw' });
      pages++;
      seq = r.nextSeq;
      if (r.upToDate) break;
    }
    const c = process.cpuUsage(c0);
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    perPage.push((c.user + c.system) / pages);
    rate.push(RECORDS / secs);
  }
  await shard.close();
  fs.rmSync(dir, { recursive: true, force: true });
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return { kind, cpuUsPerPage: median(perPage), recordsPerSec: median(rate) };
}

(async () => {
  for (const kind of ['merged', 'interleaved']) {
    const r = await layout(kind);
    console.log(`${kind.padEnd(12)} pages of ${COUNT}: ${r.cpuUsPerPage.toFixed(1)} µs CPU per page, ${Math.round(r.recordsPerSec).toLocaleString('en')} records/s`);
  }
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
