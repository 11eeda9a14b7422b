'use strict';
// Micro-benchmark of the storage path alone: one shard (real segment files, real RocksDB),
// N concurrent appenders, each waiting for its durable acknowledgement before the next append.
// Usage: node perf/micro/shard-append.js [clients=64] [seconds=3] [dir=os.tmpdir()]
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { openRocksStore } = require('../../dist/shards/worker/rocks-store');
const { SegmentLog } = require('../../dist/shards/worker/segment-log');
const { Shard } = require('../../dist/shards/worker/shard');

async function main() {
  const clients = Number(process.argv[2] ?? 64);
  const seconds = Number(process.argv[3] ?? 3);
  const dir = fs.mkdtempSync(path.join(process.argv[4] ?? os.tmpdir(), 'svc-micro-'));
  const store = await openRocksStore(path.join(dir, 'index'));
  const shard = new Shard(store, SegmentLog.open(path.join(dir, 'log'), 64 << 20), { shardId: 0, shardCount: 1, maxChunkBytes: 1 << 20, limits: { maxRecordBytes: 1 << 20, maxBatchRecords: 10000 } });
  const value = Buffer.alloc(100, 120);
  await new Promise((resolve, reject) => {
    shard.create({ name: '/b', contentType: 'text/plain', ttlSeconds: null, expiresAtMs: null, closed: false, records: [] }, (e) => (e ? reject(e) : resolve()));
    shard.flush();
  });
  let done = 0;
  let scheduled = false;
  const end = Date.now() + seconds * 1000;
  // Like the worker: everything accepted in one turn is flushed together.
  const kick = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      shard.flush();
    });
  };
  const one = () =>
    new Promise((resolve, reject) => {
      shard.append({ name: '/b', origin: 'http', payload: { kind: 'records', records: [{ key: null, value, headers: null }] }, contentType: null, close: false }, (e) => (e ? reject(e) : resolve()));
      kick();
    });
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (Date.now() < end) {
        await one();
        done++;
      }
    }),
  );
  console.log(JSON.stringify({ clients, seconds, appendsPerSec: Math.round(done / seconds) }));
  await shard.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
