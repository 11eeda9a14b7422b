/**
 * The read cache (src/shards/worker/read-cache.ts, docs/storage.md "Read cache"): `raw` reads
 * served from rendered chunks give exactly what the walk over the frames gives, for every cut
 * (start inside a chunk, count and byte budgets, the end of the stream, empty values); a chunk
 * that grows is rendered again; the body handed out is never the cache's own buffer; and what is
 * served from it is what was checked when it was read, while a shard without it (or once the
 * entry is gone) reports damage on disk as before.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type SvcError } from '../../src/errors';
import { openMemoryStore } from '../../src/shards/worker/memory-store';
import { ENTRY_OVERHEAD, LENT_BASE, ReadCache, takeCached } from '../../src/shards/worker/read-cache';
import { PARTS_MIN } from '../../src/shards/worker/shard-reader';
import { OPS } from '../../src/shards/protocol';
import { type ReadResult } from '../../src/shards/types';
import { Writer, readEntries } from '../../src/shards/wire';
import { SegmentLog, segmentFileName } from '../../src/shards/worker/segment-log';
import { type Reply, Shard } from '../../src/shards/worker/shard';
import { tempDir } from '../helpers/node-process';

function call<T>(f: (reply: Reply<T>) => void, shard: Shard): Promise<T> {
  return new Promise((resolve, reject) => {
    f((err: SvcError | null, r?: T) => (err ? reject(err) : resolve(r as T)));
    shard.flush();
  });
}

function open(dir: string, cache: ReadCache | undefined, maxChunkBytes = 4096): Shard {
  return new Shard(openMemoryStore(), SegmentLog.open(path.join(dir, 'log'), 1 << 20), {
    // One clock for every shard: two shards given the same appends hold the same bytes.
    now: () => 1_700_000_000_000,
    shardId: 3,
    shardCount: 4,
    maxChunkBytes,
    limits: { maxRecordBytes: 1 << 20, maxBatchRecords: 1000 },
    ...(cache !== undefined ? { readCache: cache } : {}),
  });
}

async function create(shard: Shard, name: string): Promise<void> {
  await call((r) => shard.create({ name, contentType: 'application/octet-stream', ttlSeconds: null, expiresAtMs: null, closed: false, records: [] }, r), shard);
}

async function append(shard: Shard, name: string, values: Array<string | null>): Promise<void> {
  const records = values.map((v) => ({ key: v === null ? null : Buffer.from('k'), value: v === null ? null : Buffer.from(v), headers: null }));
  await call((r) => shard.append({ name, origin: 'http', payload: { kind: 'records', records }, contentType: null, close: false }, r), shard);
}

/** What the walk serves (the json format never uses the cache): values joined, count, next seq. */
function walked(shard: Shard, name: string, seq: number, count: number, bytes: number): { body: string; count: number; nextSeq: number } {
  const r = shard.read({ name, seq, count, bytes, format: 'json' });
  const records = JSON.parse(r.body.toString()) as Array<{ body: string | null }>;
  return { body: records.map((x) => x.body ?? '').join(''), count: r.count, nextSeq: r.nextSeq };
}

function raw(shard: Shard, name: string, seq: number, count: number, bytes: number): { body: string; count: number; nextSeq: number } {
  const r = shard.read({ name, seq, count, bytes, format: 'raw' });
  return { body: r.body.toString(), count: r.count, nextSeq: r.nextSeq };
}

/** 300 records in appends of 1–9 records, values of 0–40 bytes (some null), over many 4 KiB chunks. */
async function fill(shard: Shard, name: string): Promise<number> {
  let n = 0;
  let k = 0;
  while (n < 300) {
    const batch: Array<string | null> = [];
    for (let i = 0; i < 1 + (k % 9) && n < 300; i++, n++) batch.push(n % 17 === 0 ? null : n % 13 === 0 ? '' : `v${n}-`.padEnd(n % 41, String.fromCharCode(97 + (n % 26))));
    await append(shard, name, batch);
    k++;
  }
  return n;
}

/** Reads from every 7th seq: one record, a few, byte budgets smaller than one value and than a batch, everything. */
function cutsOf(total: number): Array<[number, number, number]> {
  const cuts: Array<[number, number, number]> = [];
  for (let seq = 0; seq <= total; seq += 7) for (const [count, bytes] of [[1, 1 << 20], [5, 1 << 20], [1000, 64], [1000, 1], [1000, 0], [37, 500], [1000, 1 << 20]] as const) cuts.push([seq, count, bytes]);
  return cuts;
}

describe('read cache', () => {
  it('serves every cut of a raw read exactly as the walk over the frames does, from the cache once filled', async () => {
    const cache = new ReadCache(8 << 20);
    const shard = open(tempDir(), cache);
    await create(shard, '/s');
    const total = await fill(shard, '/s');
    // The whole stream first: every chunk is read from its first record, so every chunk is rendered.
    expect(raw(shard, '/s', 0, 100000, 1 << 30)).toEqual(walked(shard, '/s', 0, 100000, 1 << 30));
    const filled = cache.stats.fills;
    expect(filled).toBeGreaterThan(3);
    const cuts = cutsOf(total);
    for (const [seq, count, bytes] of cuts) expect([seq, count, bytes, raw(shard, '/s', seq, count, bytes)]).toEqual([seq, count, bytes, walked(shard, '/s', seq, count, bytes)]);
    // Every one of those came from the cache: nothing was rendered again.
    expect(cache.stats.fills).toBe(filled);
    expect(cache.stats.hits).toBeGreaterThan(cuts.length);
  });

  it('gives the same answers with no cache, and a cache too small to hold a chunk keeps nothing', async () => {
    const dir = tempDir();
    const tiny = new ReadCache(1000);
    const shard = open(dir, tiny);
    await create(shard, '/s');
    const total = await fill(shard, '/s');
    expect(raw(shard, '/s', 0, 100000, 1 << 30)).toEqual(walked(shard, '/s', 0, 100000, 1 << 30));
    for (const [seq, count, bytes] of cutsOf(total)) expect([seq, count, bytes, raw(shard, '/s', seq, count, bytes)]).toEqual([seq, count, bytes, walked(shard, '/s', seq, count, bytes)]);
    expect(tiny.stats).toEqual({ hits: 0, fills: 0, bytes: 0, lent: 0, returned: 0 });
  });

  it('keeps at most half of the cache for one stream: a stream larger than that is not rendered and evicted over and over', async () => {
    // 300 records in chunks of up to 1 KiB (each ~0.7 KiB once rendered plus the entry overhead,
    // ~20 KiB in all): more than the whole cache, so without the cap every pass would render each
    // chunk and evict it again.
    const cache = new ReadCache(16 * 1024);
    const shard = open(tempDir(), cache, 1024);
    await create(shard, '/big');
    const total = await fill(shard, '/big');
    expect(raw(shard, '/big', 0, 100000, 1 << 30)).toEqual(walked(shard, '/big', 0, 100000, 1 << 30));
    const first = cache.stats;
    expect(first.fills).toBeGreaterThan(0);
    expect(first.bytes).toBeLessThanOrEqual(8 * 1024);
    for (let pass = 0; pass < 3; pass++) expect(raw(shard, '/big', 0, 100000, 1 << 30).count).toBe(total);
    // The chunks it kept are served on every pass; nothing more was rendered.
    expect(cache.stats.fills).toBe(first.fills);
    expect(cache.stats.hits).toBeGreaterThanOrEqual(3 * first.fills);
    // Another stream still gets its share.
    await create(shard, '/small');
    await append(shard, '/small', ['a', 'b']);
    expect(raw(shard, '/small', 0, 100, 1 << 20).body).toBe('ab');
    expect(cache.stats.fills).toBe(first.fills + 1);
  });

  it('renders a chunk again when it has grown (the stream newest chunk is extended in place)', async () => {
    const cache = new ReadCache(8 << 20);
    const shard = open(tempDir(), cache, 1 << 20);
    await create(shard, '/g');
    await append(shard, '/g', ['a', 'b']);
    expect(raw(shard, '/g', 0, 100, 1 << 20).body).toBe('ab');
    await append(shard, '/g', ['c']);
    await append(shard, '/g', ['d', 'e']);
    expect(raw(shard, '/g', 0, 100, 1 << 20)).toEqual({ body: 'abcde', count: 5, nextSeq: 5 });
    expect(raw(shard, '/g', 3, 100, 1 << 20)).toEqual({ body: 'de', count: 2, nextSeq: 5 });
    expect(cache.stats.fills).toBe(2);
  });

  it('hands out a body of its own: changing it does not change what the next read gets', async () => {
    const cache = new ReadCache(8 << 20);
    const shard = open(tempDir(), cache, 1 << 20);
    await create(shard, '/o');
    await append(shard, '/o', ['hello', 'world']);
    const first = shard.read({ name: '/o', seq: 0, count: 100, bytes: 1 << 20, format: 'raw' });
    expect(first.body.toString()).toBe('helloworld');
    const again = shard.read({ name: '/o', seq: 0, count: 100, bytes: 1 << 20, format: 'raw' });
    again.body.fill(0x78);
    expect(cache.stats.hits).toBeGreaterThan(0);
    expect(shard.read({ name: '/o', seq: 0, count: 100, bytes: 1 << 20, format: 'raw' }).body.toString()).toBe('helloworld');
    expect(shard.read({ name: '/o', seq: 1, count: 100, bytes: 1 << 20, format: 'raw' }).body.toString()).toBe('world');
  });

  it('does not render a chunk for a read that starts inside it', async () => {
    const cache = new ReadCache(8 << 20);
    const shard = open(tempDir(), cache, 1 << 20);
    await create(shard, '/m');
    await append(shard, '/m', ['a', 'b', 'c', 'd']);
    expect(raw(shard, '/m', 2, 100, 1 << 20).body).toBe('cd');
    expect(cache.stats.fills).toBe(0);
  });

  it('serves the bytes it checked; damage on disk is reported once the chunk is read from disk again', async () => {
    const dir = tempDir();
    // Room for five of the 10 × 60 B chunks below (each 640 B rendered plus the entry overhead); a
    // chunk is admitted when its length on disk (under 1 KiB) plus the overhead is at most a quarter.
    const cache = new ReadCache(4 * (1024 + ENTRY_OVERHEAD));
    const shard = open(dir, cache, 1 << 20);
    await create(shard, '/d');
    await append(shard, '/d', ['value-0', 'value-1', 'value-2']);
    expect(raw(shard, '/d', 0, 100, 1 << 20).body).toBe('value-0value-1value-2');
    const file = path.join(dir, 'log', segmentFileName(0));
    const b = fs.readFileSync(file);
    const at = b.indexOf('value-1');
    b[at] = b[at]! ^ 0x20;
    fs.writeFileSync(file, b);
    // From the cache: the bytes as checked, never the damaged ones.
    expect(raw(shard, '/d', 0, 100, 1 << 20).body).toBe('value-0value-1value-2');
    // Once other reads have pushed the entry out, the chunk is read from disk again: the damage is an error.
    for (let i = 0; i < 6; i++) {
      await create(shard, `/e${i}`);
      await append(shard, `/e${i}`, Array.from({ length: 10 }, () => 'x'.repeat(60)));
      expect(raw(shard, `/e${i}`, 0, 100, 1 << 20).count).toBe(10);
    }
    expect(() => shard.read({ name: '/d', seq: 0, count: 100, bytes: 1 << 20, format: 'raw' })).toThrow(/stream \/d: records 0\.\.2 cannot be served/);
    // Meeting the damaged chunk, the cache kept nothing of it: the next read reports it too.
    const fills = cache.stats.fills;
    expect(() => shard.read({ name: '/d', seq: 0, count: 100, bytes: 1 << 20, format: 'raw' })).toThrow(/cannot be served/);
    expect(cache.stats.fills).toBe(fills);
  });
});

describe('read cache, binary format', () => {
  it('serves every cut exactly as the walk does, byte for byte, from the cache once filled', async () => {
    const cache = new ReadCache(8 << 20);
    const cached = open(tempDir(), cache);
    const walking = open(tempDir(), undefined);
    for (const shard of [cached, walking]) {
      await create(shard, '/b');
      await fill(shard, '/b');
    }
    const bin = (shard: Shard, seq: number, count: number, bytes: number) => {
      const r = shard.read({ name: '/b', seq, count, bytes, format: 'binary' });
      return { body: r.body.toString('hex'), count: r.count, nextSeq: r.nextSeq };
    };
    expect(bin(cached, 0, 100000, 1 << 30)).toEqual(bin(walking, 0, 100000, 1 << 30));
    const filled = cache.stats.fills;
    expect(filled).toBeGreaterThan(3);
    const cuts = cutsOf(300);
    for (const [seq, count, bytes] of cuts) expect([seq, count, bytes, bin(cached, seq, count, bytes)]).toEqual([seq, count, bytes, bin(walking, seq, count, bytes)]);
    expect(cache.stats.fills).toBe(filled);
    expect(cache.stats.hits).toBeGreaterThan(cuts.length);
    // The raw entries are separate: a raw read renders its own.
    expect(raw(cached, '/b', 0, 100000, 1 << 30)).toEqual(walked(cached, '/b', 0, 100000, 1 << 30));
    expect(cache.stats.fills).toBe(2 * filled);
  });

  it('hands out a body of its own', async () => {
    const cache = new ReadCache(8 << 20);
    const shard = open(tempDir(), cache, 1 << 20);
    await create(shard, '/o');
    await append(shard, '/o', ['hello', 'world']);
    const first = shard.read({ name: '/o', seq: 0, count: 100, bytes: 1 << 20, format: 'binary' }).body;
    const copy = Buffer.from(first);
    shard.read({ name: '/o', seq: 0, count: 100, bytes: 1 << 20, format: 'binary' }).body.fill(0);
    expect(cache.stats.hits).toBe(1);
    expect(shard.read({ name: '/o', seq: 0, count: 100, bytes: 1 << 20, format: 'binary' }).body.equals(copy)).toBe(true);
  });
});

describe('read cache, slabs reused', () => {
  it('serves what the walk serves while its slabs are emptied and taken again, in both formats, as streams grow', async () => {
    // 12 streams of ~20 KiB each through a 32 KiB cache (8 KiB slabs): every pass empties slabs
    // whose entries earlier reads were served from. (A binary read's own views: read-cache-memory.test.ts.)
    const cache = new ReadCache(32 * 1024);
    const cached = open(tempDir(), cache, 1024);
    const walking = open(tempDir(), undefined, 1024);
    const names = Array.from({ length: 12 }, (_, i) => `/w${i}`);
    for (const shard of [cached, walking]) {
      for (const name of names) await create(shard, name);
      for (const name of names) await fill(shard, name);
    }
    const read = (shard: Shard, name: string, format: 'raw' | 'binary', seq: number, bytes: number) => {
      const r = shard.read({ name, seq, count: 100000, bytes, format });
      return { body: r.body.toString('hex'), count: r.count, nextSeq: r.nextSeq };
    };
    for (let pass = 0; pass < 4; pass++) {
      // New chunks behind the cached ones: a read takes entries from the oldest slabs, then renders
      // new ones into the slabs it must empty for them.
      if (pass > 0) for (const shard of [cached, walking]) for (const name of names) await append(shard, name, Array.from({ length: 30 }, (_, i) => `p${pass}-${i}-`.padEnd(30, 'z')));
      for (const name of names) {
        for (const format of ['binary', 'raw'] as const) {
          for (const [seq, bytes] of [[0, 1 << 30], [0, 4096], [150, 1 << 30]] as const) {
            expect([pass, name, format, seq, bytes, read(cached, name, format, seq, bytes)]).toEqual([pass, name, format, seq, bytes, read(walking, name, format, seq, bytes)]);
          }
        }
      }
    }
    expect(cache.stats.fills).toBeGreaterThan(100);
    expect(cache.stats.hits).toBeGreaterThan(0);
    expect(cache.stats.bytes).toBeLessThanOrEqual(32 * 1024);
    expect(cache.slabs.allocated).toBeLessThanOrEqual(40 * 1024);
  });
});

describe('read cache, pages of parts', () => {
  /** `n` appends of 10 records of 2,000 bytes to `name`, each value naming its stream and record. */
  async function big(shard: Shard, name: string, n: number): Promise<string> {
    let all = '';
    for (let a = 0; a < n; a++) {
      const values = Array.from({ length: 10 }, (_, i) => `${name}:${a * 10 + i}:`.padEnd(2000, String.fromCharCode(97 + ((a + i) % 26))));
      await append(shard, name, values);
      all += values.join('');
    }
    return all;
  }
  const partsRead = (shard: Shard, name: string, seq = 0, bytes = 1 << 30) => shard.read({ name, seq, count: 1_000_000, bytes, format: 'raw', pooled: true, parts: true });
  const joined = (parts: readonly Buffer[] | undefined): string => Buffer.concat(parts ?? []).toString();

  it('serves a large raw page held by the cache as views of it, the same bytes as the walk; a small one, or one not held, as one buffer', async () => {
    const cache = new ReadCache(8 << 20);
    const shard = open(tempDir(), cache, 64 * 1024);
    await create(shard, '/p');
    const all = await big(shard, '/p', 40); // 800 KB in chunks of up to 64 KiB
    // The first read renders every chunk into the cache as it goes, and keeps the views.
    const first = partsRead(shard, '/p');
    expect(first.body.length).toBe(0);
    expect(first.parts!.length).toBeGreaterThan(0);
    expect(first.parts!.length).toBeLessThanOrEqual(14); // a part per chunk at most (800 KB in chunks of up to 64 KiB)
    expect(joined(first.parts)).toBe(all);
    expect(first.count).toBe(400);
    for (const p of first.parts!) expect(p.buffer).toBeInstanceOf(SharedArrayBuffer);
    // From the middle of a chunk (not rendered from there), the same bytes as one buffer.
    const mid = partsRead(shard, '/p', 5);
    expect(mid.parts === undefined || joined(mid.parts) === all.slice(5 * 2000)).toBe(true);
    expect((mid.parts === undefined ? mid.body.toString() : joined(mid.parts))).toBe(all.slice(5 * 2000));
    // Below PARTS_MIN: one buffer of its own.
    const small = partsRead(shard, '/p', 0, PARTS_MIN / 2);
    expect(small.parts).toBeUndefined();
    expect(small.body.toString()).toBe(all.slice(0, small.body.length));
    // Small chunks (parts that would average under PART_AVG_MIN): one buffer.
    const tiny = open(tempDir(), new ReadCache(8 << 20), 4096);
    await create(tiny, '/t');
    const tinyAll = await big(tiny, '/t', 40);
    partsRead(tiny, '/t');
    const again = partsRead(tiny, '/t');
    expect(again.parts).toBeUndefined();
    expect(again.body.toString()).toBe(tinyAll);
    // Without `parts`, never.
    expect(shard.read({ name: '/p', seq: 0, count: 1_000_000, bytes: 1 << 30, format: 'raw', pooled: true }).parts).toBeUndefined();
  });

  it('serves a large binary page held by the cache as views of it, and a batch the range cuts inline, through the wire as the gateway gets them', async () => {
    const cache = new ReadCache(8 << 20);
    const shard = open(tempDir(), cache, 64 * 1024);
    const walking = open(tempDir(), undefined, 64 * 1024);
    for (const sh of [shard, walking]) {
      await create(sh, '/b');
      await big(sh, '/b', 40);
    }
    const binary = (sh: Shard, seq: number, parts: boolean): ReadResult => sh.read({ name: '/b', seq, count: 1_000_000, bytes: 1 << 30, format: 'binary', pooled: true, parts });
    binary(shard, 0, true); // fills the cache
    /** Through a worker's Writer (lending to `cache`) and the gateway's Reader, as a read reply travels. */
    const travel = (r: ReadResult): ReadResult => {
      const w = new Writer(true, null, (parts) => cache.lend(parts));
      const mark = w.beginEntry(1, 0, 0);
      OPS.read.res.write(w, r);
      w.endEntry(mark);
      const { message, shared } = w.take();
      let got: ReadResult | null = null;
      let id = 0;
      readEntries(message, [], (_id, _code, _shard, rd) => (got = OPS.read.res.read(rd)), shared, (_page, slab) => (id = slab));
      if (id !== 0) cache.giveBack(id);
      return got!;
    };
    for (const seq of [0, 3]) {
      // From seq 3: the first batch (10 records) is cut by the range and re-encoded, the rest are views.
      const r = binary(shard, seq, true);
      expect(r.parts).toBeDefined();
      const expected = binary(walking, seq, false).body;
      expect(Buffer.concat(r.parts!).equals(expected)).toBe(true);
      const arrived = travel(r);
      expect(arrived.body.length).toBe(0);
      expect(Buffer.concat(arrived.parts!).equals(expected)).toBe(true);
      if (seq === 3) expect(arrived.parts!.some((p) => !(p.buffer instanceof SharedArrayBuffer))).toBe(true);
    }
    expect(cache.stats.returned).toBe(2);
    expect(cache.lentPages).toBe(0);
  });

  it('keeps a lent page\'s slabs out of use until it is handed back, and lets them go for good when it is not back in time', async () => {
    // A 2 MiB cache (512 KiB slabs) and streams of 800 KB: every read of another stream empties the oldest slabs.
    const cache = new ReadCache(2 << 20);
    const shard = open(tempDir(), cache, 64 * 1024);
    const streams = ['/a', '/b', '/c', '/d', '/e'];
    const data = new Map<string, string>();
    for (const name of streams) {
      await create(shard, name);
      data.set(name, await big(shard, name, 40));
    }
    const page = partsRead(shard, '/a');
    expect(page.parts).toBeDefined();
    const id = cache.lend(page.parts!)!;
    expect(id).toBeGreaterThanOrEqual(LENT_BASE);
    expect(cache.lentPages).toBe(1);
    // Other streams read, again and again, through the slabs around it: its bytes stay as they were.
    for (let pass = 0; pass < 3; pass++) {
      for (const name of streams.slice(1)) {
        const r = partsRead(shard, name);
        expect(r.parts === undefined ? r.body.toString() : joined(r.parts)).toBe(data.get(name));
        expect(joined(page.parts)).toBe(data.get('/a'));
      }
    }
    const slabsBefore = cache.slabs.allocated;
    cache.giveBack(id);
    cache.giveBack(id); // a second time: ignored
    expect(cache.stats.returned).toBe(1);
    expect(cache.lentPages).toBe(0);
    // Once back, its slabs are emptied and taken like any other.
    for (const name of streams.slice(1)) partsRead(shard, name);
    expect(cache.slabs.allocated).toBeLessThanOrEqual(slabsBefore);

    // Lent and never handed back: let go by trim, never written again, and a new slab takes its place.
    const kept = partsRead(shard, '/a');
    const id2 = cache.lend(kept.parts!)!;
    const copy = joined(kept.parts);
    cache.trim(0);
    expect(cache.lentPages).toBe(0);
    for (let pass = 0; pass < 3; pass++) for (const name of streams) {
      const r = partsRead(shard, name);
      expect(r.parts === undefined ? r.body.toString() : joined(r.parts)).toBe(data.get(name));
    }
    expect(joined(kept.parts)).toBe(copy);
    cache.giveBack(id2); // too late: ignored
    expect(cache.stats.returned).toBe(1);
    expect(cache.slabs.allocated).toBeLessThanOrEqual(2 * (2 << 20));
  });
});

describe('takeCached', () => {
  const e = { kind: 'raw' as const, len: 0, baseSeq: 10, values: Buffer.from('aabbbcdddd'), ends: Uint32Array.from([2, 5, 5, 6, 10]) };
  it('cuts by start, count, end and bytes, always taking one record first', () => {
    expect(takeCached(e, 10, 100, 100, Infinity)).toMatchObject({ n: 5, bytes: 10, next: 15, full: false });
    expect(takeCached(e, 11, 100, 2, Infinity)).toMatchObject({ n: 2, bytes: 3, next: 13, full: true });
    expect(takeCached(e, 10, 13, 100, Infinity)).toMatchObject({ n: 3, bytes: 5, next: 13, full: true });
    expect(takeCached(e, 10, 100, 100, 5)).toMatchObject({ n: 3, bytes: 5, next: 13, full: true });
    expect(takeCached(e, 10, 100, 100, 4)).toMatchObject({ n: 1, bytes: 2, next: 11, full: true });
    expect(takeCached(e, 10, 100, 100, 1)).toMatchObject({ n: 0, bytes: 0, next: 10, full: true });
    expect(takeCached(e, 12, 100, 100, 0).n).toBe(1); // an empty value fits in no room
    expect(takeCached(e, 10, 100, 100, 1, true)).toMatchObject({ n: 1, bytes: 2, next: 11, full: true });
    expect(takeCached(e, 11, 100, 100, 3, true)).toMatchObject({ n: 2, bytes: 3, next: 13, full: true });
    expect(takeCached(e, 14, 100, 100, Infinity).part.toString()).toBe('dddd');
    expect(takeCached(e, 10, 10, 100, Infinity)).toMatchObject({ n: 0, full: true });
  });
});
