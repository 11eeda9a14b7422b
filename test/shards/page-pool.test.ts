/**
 * Read page buffers (src/shards/worker/page-pool.ts; docs/storage.md, "Read page buffers"): a
 * pooled page of 64 KiB or more reaches the gateway thread in a slab of shared memory, comes back
 * through `ShardClient.recycle` and is rendered into again by a later page; a page never recycled
 * is never written over; a read not pooled gets a buffer of its own. (A worker restarted while a page is out: test/gateway/read-pool.test.ts.) Real workers
 * from dist/ (import-fixture.ts).
 */
import type * as Shards from '../../src/shards';
import { tempDir } from '../helpers/node-process';
import { type ShardClient } from './helpers/import-fixture';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const dist = require('../../dist/shards') as typeof Shards;

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

function start(dataDir: string, readPoolBytes: number): Promise<ShardClient> {
  return dist.ShardClient.start({
    dataDir,
    workers: 1,
    shards: 1,
    segmentBytes: 64 * 1024 * 1024,
    limits: { maxRecordBytes: 1 << 20, maxBatchRecords: 10_000 },
    retentionIntervalMs: 60_000,
    reaperIntervalMs: 60_000,
    log: silent,
    reserveBytes: 0,
    readPoolBytes,
  });
}

/** Record `i` of stream `tag`: 500 bytes that say which record of which stream they are. */
const valueOf = (tag: string, i: number): Buffer => Buffer.from(`${tag}:${i}:`.padEnd(500, String.fromCharCode(97 + (i % 26))));

async function fill(c: ShardClient, name: string, tag: string, n: number): Promise<Buffer> {
  await c.create({ name, contentType: 'application/octet-stream', records: [], ttlSeconds: null, expiresAtMs: null, closed: false });
  const all: Buffer[] = [];
  for (let at = 0; at < n; at += 1000) {
    const records = Array.from({ length: Math.min(1000, n - at) }, (_, k) => valueOf(tag, at + k));
    all.push(...records);
    await c.append({ name, origin: 'http', payload: { kind: 'records', records: records.map((value) => ({ key: null, value, headers: null })) }, contentType: null, close: false });
  }
  return Buffer.concat(all);
}

const page = (c: ShardClient, name: string, seq: number, bytes: number, format: Shards.ReadFormat = 'raw', pooled = true): Promise<Shards.ReadResult> => c.read({ name, seq, count: 1 << 20, bytes, format, pooled });

async function poolStats(c: ShardClient): Promise<Shards.ReadPoolStats> {
  const s = await c.stats();
  if (s.readPool === undefined) throw new Error('no read pool stats');
  return s.readPool;
}

const turn = (): Promise<void> => new Promise((r) => setTimeout(r, 20));

describe('read page buffers', () => {
  test('a recycled page buffer is reused by a later page, whose bytes are its own; a page kept is never written over', async () => {
    const dataDir = tempDir();
    const c = await start(dataDir, 64 * 1024 * 1024);
    let open = true;
    try {
      const a = await fill(c, '/a', 'a', 4000);
      const b = await fill(c, '/b', 'b', 4000);
      const first = await page(c, '/a', 0, 1 << 20);
      expect(first.body.equals(a.subarray(0, first.body.length))).toBe(true);
      expect(first.body.length).toBeGreaterThan(900_000);
      const s0 = await poolStats(c);
      expect(s0.allocated).toBe(1);
      expect(s0.reused).toBe(0);

      // Kept (not recycled): the next pages get other buffers and it stays as read.
      const keptCopy = Buffer.from(first.body);
      const second = await page(c, '/b', 0, 1 << 20);
      expect(second.body.equals(b.subarray(0, second.body.length))).toBe(true);
      expect(first.body.equals(keptCopy)).toBe(true);
      expect((await poolStats(c)).reused).toBe(0);

      // Recycled: handed back, counted, and the next page of that size is rendered into it.
      c.recycle(second.body);
      c.recycle(second.body); // a second call does nothing
      await turn();
      const s1 = await poolStats(c);
      expect(s1.returned).toBe(1);
      expect(s1.bytes).toBe(1 << 20);
      const third = await page(c, '/a', 1000, 1 << 20);
      expect(third.body.equals(a.subarray(1000 * 500, 1000 * 500 + third.body.length))).toBe(true);
      // The same memory: the recycled body now shows the third page's bytes.
      expect(second.body.buffer === third.body.buffer).toBe(false);
      expect(second.body.subarray(0, 100).equals(third.body.subarray(0, 100))).toBe(true);
      const s2 = await poolStats(c);
      expect(s2.reused).toBe(1);
      expect(s2.allocated).toBe(1 + 1); // first, second; third reused second's
      expect(first.body.equals(keptCopy)).toBe(true);

      // Not pooled: a buffer of its own, not counted, and recycling it does nothing.
      const own = await page(c, '/a', 0, 1 << 20, 'raw', false);
      expect(own.body.buffer).toBeInstanceOf(ArrayBuffer);
      c.recycle(own.body);
      await turn();
      expect(await poolStats(c)).toEqual(s2);

      // Every format the pool serves, page after page with recycling, equals the same reads of the
      // same data directory without the pool (after this client is closed).
      const pages: Array<{ format: Shards.ReadFormat; seq: number; next: number; body: Buffer }> = [];
      for (const format of ['raw', 'binary', 'json', 'json-array'] as const) {
        for (let seq = 0; seq < 4000; ) {
          const on = await page(c, '/a', seq, 256 * 1024, format);
          pages.push({ format, seq, next: on.nextSeq, body: Buffer.from(on.body) });
          c.recycle(on.body);
          seq = on.nextSeq;
        }
      }
      const s3 = await poolStats(c);
      expect(s3.reused).toBeGreaterThan(s2.reused + 20);
      open = false;
      await c.close();
      const off = await start(dataDir, 0);
      try {
        for (const p of pages) {
          const ref = await page(off, '/a', p.seq, 256 * 1024, p.format);
          expect([p.format, p.seq, ref.nextSeq, ref.body.equals(p.body)]).toEqual([p.format, p.seq, p.next, true]);
        }
        expect((await off.stats()).readPool).toBeUndefined();
      } finally {
        await off.close();
      }
    } finally {
      if (open) await c.close();
    }
  });
});
