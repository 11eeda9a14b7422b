'use strict';
// Micro-benchmark of a catch-up read on the worker alone: one shard, one stream preloaded with N
// single-record appends (a frame per record, as W4/W5 preload), read start to end in 16 MiB pages
// in each format. Reports payload MB per CPU second (process.cpuUsage, best of 10 passes), so
// that a loaded machine skews it less than wall time; every frame's CRC-32C is checked on reads.
// Usage: node perf/micro/catch-up-read.js [recordBytes=100] [records=100000] [distDir=dist]
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

async function main() {
  const size = Number(process.argv[2] ?? 100);
  const n = Number(process.argv[3] ?? 100000);
  const dist = path.resolve(process.argv[4] ?? path.join(__dirname, '..', '..', 'dist'));
  const { Shard } = require(path.join(dist, 'shards/worker/shard'));
  const { SegmentLog } = require(path.join(dist, 'shards/worker/segment-log'));
  const { openMemoryStore } = require(path.join(dist, 'shards/worker/memory-store'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-micro-'));
  const shard = new Shard(openMemoryStore(), SegmentLog.open(path.join(dir, 'log'), 64 << 20), { shardId: 0, shardCount: 1, maxChunkBytes: 1 << 20, limits: { maxRecordBytes: 1 << 20, maxBatchRecords: 1000 } });
  const call = (f) => new Promise((resolve, reject) => f((e, r) => (e ? reject(e) : resolve(r))));
  const created = call((r) => shard.create({ name: '/s', contentType: 'text/plain', ttlSeconds: null, expiresAtMs: null, closed: false, records: [] }, r));
  shard.flush();
  await created;
  const value = Buffer.alloc(size, 120);
  const appends = [];
  for (let i = 0; i < n; i++) appends.push(call((r) => shard.append({ name: '/s', origin: 'http', payload: { kind: 'records', records: [{ key: null, value, headers: null }] }, contentType: null, close: false }, r)));
  shard.flush();
  await Promise.all(appends);
  const out = { recordBytes: size, records: n };
  for (const format of ['raw', 'binary', 'json']) {
    let best = 0;
    for (let rep = 0; rep < 10; rep++) {
      const t0 = process.cpuUsage();
      for (let seq = 0, got = 0; got < n; ) {
        const r = shard.read({ name: '/s', seq, count: Math.floor((16 << 20) / size), bytes: 16 << 20, format });
        got += r.count;
        seq = r.nextSeq;
      }
      const u = process.cpuUsage(t0);
      best = Math.max(best, (n * size) / ((u.user + u.system) / 1e6) / 1e6);
    }
    out[`${format} MB/cpu-s`] = Math.round(best);
  }
  console.log(JSON.stringify(out));
  await shard.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
