/**
 * The read cache's budget bounds what its entries cost, not only their bytes: an entry's key,
 * objects and ArrayBuffer are counted (read-cache.ts, ENTRY_OVERHEAD). With small chunks (appends
 * interleaved over many streams) a cache that counted bytes alone held far more than its budget.
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

/** Heap and ArrayBuffer bytes in use once everything unreachable is collected. */
function used(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
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
    const before = used();
    for (let i = 0; i < n; i++) {
      // A stream and a position of its own per entry, as chunks of many streams are.
      const buf = Buffer.from(frame);
      const e = kind === 'raw' ? renderValues(buf, 7, chunk) : renderBatches(buf, 7, chunk);
      if (e === null || e === 'spoiled') throw new Error('chunk not rendered');
      cache.put(0, 1000 + i, 1, i * 4096, e);
    }
    const cost = used() - before;
    expect(cache.stats.fills).toBe(n);
    // What the budget is charged covers what the entries take (and some of malloc's own overhead, which neither figure shows).
    expect(cache.stats.bytes).toBeGreaterThanOrEqual(cost);
  });

  it('keeps what it counts within its budget however small the entries', () => {
    const budget = 4 << 20;
    const cache = new ReadCache(budget);
    const { frame, chunk } = chunkOf(7, 1);
    for (let i = 0; i < 50_000; i++) {
      const e = renderValues(Buffer.from(frame), 7, chunk);
      if (e === null || e === 'spoiled') throw new Error('chunk not rendered');
      cache.put(0, 1000 + i, 1, i * 4096, e);
    }
    expect(cache.stats.bytes).toBeLessThanOrEqual(budget);
    expect(cache.stats.bytes).toBeGreaterThan(budget / 2);
  });
});
