'use strict';
// Micro-benchmark of a raw catch-up read inside one shard (dist/, a real RocksDB index and segment
// files, no HTTP, no thread hop), for the two layouts W4/W5 compare: `batched` (appends of 1,000
// records, as `svc` is preloaded) and `single` (one record per append, as a Durable Streams client
// appends and as `svc-ds` is preloaded: a frame and a RecordBatch header per record). Each pass
// reads the stream start to end in pages of 16 MiB (the DS listener's page); the figures are CPU
// µs per MB of values (process CPU: the read's thread and V8's GC threads) and its minimum and
// median over the passes. Minimums move least on a shared machine.
//
// Usage: node perf/micro/raw-read-layouts.js [recordBytes=100] [passes=30]   (LAYOUTS=single: one layout)
//        PERF_MEM_DIST=perf/.work/dist-old node perf/micro/raw-read-layouts.js 1024   # another build
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const DIST = path.resolve(__dirname, '..', '..', process.env.PERF_MEM_DIST || 'dist');
const W = path.join(DIST, 'shards', 'worker');
const { Shard } = require(path.join(W, 'shard.js'));
const { SegmentLog } = require(path.join(W, 'segment-log.js'));
const { openRocksStore } = require(path.join(W, 'rocks-store.js'));

const SIZE = Number(process.argv[2] || 100);
const PASSES = Number(process.argv[3] || 30);
const RECORDS = 100_000;
const PAGE = 16 << 20;

async function layout(kind) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-raw-layouts-'));
  const store = await openRocksStore(path.join(dir, 'index'));
  const shard = new Shard(store, SegmentLog.open(path.join(dir, 'log'), 64 << 20), { shardId: 0, shardCount: 1, maxChunkBytes: 1 << 20, limits: { maxRecordBytes: 1 << 20, maxBatchRecords: 1000 } });
  await new Promise((resolve, reject) => {
    shard.create({ name: '/s', contentType: 'application/octet-stream', ttlSeconds: null, expiresAtMs: null, closed: false, records: [] }, (err) => (err ? reject(err) : resolve()));
    shard.flush();
  });
  const perAppend = kind === 'batched' ? 1000 : 1;
  const records = Array.from({ length: perAppend }, () => ({ key: null, value: Buffer.alloc(SIZE, 97), headers: null }));
  // 1,000 records per group commit either way: the single layout's appends are sent 1,000 at a time.
  for (let done = 0; done < RECORDS; ) {
    const acks = [];
    for (let n = 0; n < 1000; n += perAppend, done += perAppend) {
      acks.push(new Promise((resolve, reject) => shard.append({ name: '/s', origin: 'http', payload: { kind: 'records', records }, contentType: null, close: false }, (err) => (err ? reject(err) : resolve()))));
    }
    shard.flush();
    await Promise.all(acks);
  }
  await new Promise((r) => setTimeout(r, 300)); // past the checkpoint: the index is in RocksDB
  const perMB = [];
  for (let p = 0; p < PASSES; p++) {
    const c0 = process.cpuUsage();
    let seq = 0;
    let bytes = 0;
    for (;;) {
      const r = shard.read({ name: '/s', seq, count: RECORDS, bytes: PAGE, format: 'raw' });
      bytes += r.body.length;
      seq = r.nextSeq;
      if (r.upToDate) break;
    }
    if (bytes !== RECORDS * SIZE) throw new Error(`read ${bytes} B, expected ${RECORDS * SIZE}`);
    const c = process.cpuUsage(c0);
    perMB.push((c.user + c.system) / (bytes / 1e6));
  }
  await shard.close();
  fs.rmSync(dir, { recursive: true, force: true });
  const sorted = [...perMB].sort((a, b) => a - b);
  return { min: sorted[0], median: sorted[Math.floor(sorted.length / 2)] };
}

(async () => {
  for (const kind of (process.env.LAYOUTS || 'batched,single').split(',')) {
    const r = await layout(kind);
    console.log(`${kind.padEnd(8)} ${SIZE} B records: ${r.min.toFixed(0)} µs CPU per MB (min), ${r.median.toFixed(0)} (median)`);
  }
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
