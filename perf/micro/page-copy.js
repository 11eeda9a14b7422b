'use strict';
// Micro-benchmark of building a 10 MB read page from cached chunk values (the raw catch-up's one
// copy, src/shards/worker/raw-page.ts) into a page of the worker's page pool (shared memory, a
// SharedArrayBuffer) and into a buffer of its own, with `Buffer.copy` (V8's relaxed-atomic
// memmove for shared memory: byte by byte unless source and target are 8-byte aligned to each
// other) and with `copyBytes` (src/util/copy-bytes.ts: Buffer.fill's memcpy). Chunk values of
// uneven lengths put the page's write position at every alignment, as real chunks do.
//
// Usage: node perf/micro/page-copy.js [passes=50]      (after `npm run build`)
const path = require('node:path');
const { copyBytes } = require(path.resolve(__dirname, '..', '..', 'dist', 'util', 'copy-bytes.js'));

const PASSES = Number(process.argv[2] || 50);
const PAGE = 10_000_000;
// Chunk values as a cached 100 B-record stream holds them: ~18 chunks of 550–600 KB, uneven.
const chunks = [];
for (let n = 0; n < PAGE; ) {
  const len = Math.min(PAGE - n, 550_000 + ((chunks.length * 7919) % 50_000));
  chunks.push(Buffer.allocUnsafeSlow(len).fill(chunks.length));
  n += len;
}
const targets = { shared: Buffer.from(new SharedArrayBuffer(16 << 20)), own: Buffer.allocUnsafeSlow(16 << 20) };
const ways = {
  'Buffer.copy': (src, dst, at) => src.copy(dst, at),
  copyBytes: (src, dst, at) => copyBytes(src, dst, at),
};

function pass(way, dst) {
  let at = 0;
  for (const c of chunks) at += way(c, dst, at);
  return at;
}

const rows = [];
for (const [target, dst] of Object.entries(targets)) {
  for (const [name, way] of Object.entries(ways)) {
    pass(way, dst); // warm
    const times = [];
    for (let i = 0; i < PASSES; i++) {
      const t0 = process.hrtime.bigint();
      if (pass(way, dst) !== PAGE) throw new Error('short page');
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    times.sort((a, b) => a - b);
    const median = times[times.length >> 1];
    rows.push({ target, copy: name, 'median ms per 10 MB page': median.toFixed(2), 'GB/s': (PAGE / median / 1e6).toFixed(1), 'µs per MB': ((median * 1000) / 10).toFixed(0) });
  }
}
console.table(rows);
