/**
 * The read cache's budget bounds what its entries cost, not only their bytes: an entry's key and
 * objects are counted beside its bytes (read-cache.ts, ENTRY_OVERHEAD). With small chunks (appends
 * interleaved over many streams) a cache that counted bytes alone held far more than its budget.
 * Its bytes live in slabs of its own, reused in place: a turnover of entries allocates nothing and
 * leaves nothing for the collector, and a slab a read in progress took a view of is not reused.
 */
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { encodeRecordBatch } from '../../src/util/record-batch';
import { renderBatches, renderValues } from '../../src/shards/worker/chunk-render';
import { FrameType, encodeFrame } from '../../src/shards/worker/frame';
import { ReadCache } from '../../src/shards/worker/read-cache';
import { type Chunk } from '../../src/shards/worker/stream-state';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Heap bytes in use once everything unreachable is collected. */
function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** One data frame of stream `streamId` holding `records` records of 100 bytes, and its chunk. */
function chunkOf(streamId: number, records: number): { frame: Buffer; chunk: Chunk } {
  const batch = encodeRecordBatch({ baseOffset: 0, baseTimestamp: 0, records: Array.from({ length: records }, () => ({ key: null, value: Buffer.alloc(100, 97), headers: null })) });
  const frame = encodeFrame(FrameType.Data, streamId, batch);
  return { frame, chunk: { baseSeq: 0, lastSeq: records - 1, segId: 1, pos: 0, len: frame.length, maxTs: 0 } };
}

describe('read cache memory', () => {
  it.each([
    ['raw', 1],
    ['raw', 10],
    ['binary', 1],
  ] as const)('counts at least what its %s entries of %i 100-byte records cost on the heap and in ArrayBuffers', (kind, records) => {
    const n = 20_000;
    const cache = new ReadCache(1 << 30);
    const { frame, chunk } = chunkOf(7, records);
    const before = heapUsed();
    for (let i = 0; i < n; i++) {
      // A stream and a position of its own per entry, as chunks of many streams are.
      const buf = Buffer.from(frame);
      const e = kind === 'raw' ? renderValues(buf, 7, chunk, cache.alloc) : renderBatches(buf, 7, chunk, cache.alloc);
      if (e === null || e === 'spoiled') throw new Error('chunk not rendered');
      cache.put(0, 1000 + i, 1, i * 4096, e);
      cache.endRead();
    }
    // Its entries' objects, and the bytes written into its slabs (the slabs are its memory: allocated once, resident as written).
    const cost = heapUsed() - before + cache.slabs.written;
    expect(cache.stats.fills).toBe(n);
    // What the budget is charged covers what the entries take (and some of malloc's own overhead, which neither figure shows).
    expect(cache.stats.bytes).toBeGreaterThanOrEqual(cost);
  });

  it('keeps what it counts within its budget however small the entries', () => {
    const budget = 4 << 20;
    const cache = new ReadCache(budget);
    const { frame, chunk } = chunkOf(7, 1);
    for (let i = 0; i < 50_000; i++) {
      const e = renderValues(Buffer.from(frame), 7, chunk, cache.alloc);
      if (e === null || e === 'spoiled') throw new Error('chunk not rendered');
      cache.put(0, 1000 + i, 1, i * 4096, e);
      cache.endRead();
    }
    expect(cache.stats.bytes).toBeLessThanOrEqual(budget);
    expect(cache.stats.bytes).toBeGreaterThan(budget / 2);
  });

  it.each(['raw', 'binary'] as const)('keeps %s entries in slabs of its own, reused: a steady turnover allocates no memory and leaves none to collect', (kind) => {
    const budget = 16 << 20;
    const cache = new ReadCache(budget);
    const { frame, chunk } = chunkOf(7, 10);
    // One buffer for every render (a raw render moves bytes inside it): the cache's are the only allocations.
    const buf = Buffer.allocUnsafeSlow(frame.length);
    const turn = (from: number, n: number): void => {
      for (let i = from; i < from + n; i++) {
        frame.copy(buf);
        const e = kind === 'raw' ? renderValues(buf, 7, chunk, cache.alloc) : renderBatches(buf, 7, chunk, cache.alloc);
        if (e === null || e === 'spoiled') throw new Error('chunk not rendered');
        cache.put(0, 1000 + (i % 5000), 1, i * 4096, e);
        cache.endRead();
      }
    };
    // Over the budget several times: every slab has been emptied and taken again.
    turn(0, 40_000);
    const slabs = cache.slabs.allocated;
    expect(slabs).toBeLessThanOrEqual(budget + budget / 4);
    const arrayBuffers = process.memoryUsage().arrayBuffers;
    turn(40_000, 40_000);
    expect(cache.slabs.allocated).toBe(slabs);
    // One entry an ArrayBuffer of its own left some 40 MB of evicted ones here for the collector.
    expect(process.memoryUsage().arrayBuffers - arrayBuffers).toBeLessThan(1 << 20);
    expect(cache.stats.bytes).toBeLessThanOrEqual(budget);
    expect(cache.stats.fills).toBe(80_000);
  });

  it('does not reuse a slab a read in progress took an entry from: the entry that would need it is not kept, and the read\'s view stays intact', () => {
    const budget = 1 << 20;
    const cache = new ReadCache(budget);
    const { frame, chunk } = chunkOf(7, 10);
    const put = (i: number): Buffer | null => {
      const e = renderBatches(Buffer.from(frame), 7, chunk, cache.alloc);
      if (e === null) return null;
      cache.put(0, 1000 + i, 1, i * 4096, e);
      return e.batches;
    };
    // Fill the cache, in reads of their own.
    for (let i = 0; i < 2000; i++) {
      put(i);
      cache.endRead();
    }
    // One read takes the oldest entry still held, then renders on until the cache must reuse its slab.
    let oldest = -1;
    for (let i = 0; i < 2000 && oldest < 0; i++) if (cache.get(0, 1, i * 4096, chunk.len, 'binary') !== undefined) oldest = i;
    const view = cache.get(0, 1, oldest * 4096, chunk.len, 'binary')!.batches;
    const copy = Buffer.from(view);
    let refused = 0;
    for (let i = 2000; i < 4000; i++) if (put(i) === null) refused++;
    expect(refused).toBeGreaterThan(0);
    expect(view.equals(copy)).toBe(true);
    cache.endRead();
    // Once that read is over, the slab is taken again.
    expect(put(4000)).not.toBeNull();
  });
});
