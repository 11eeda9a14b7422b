/**
 * readStreamFromObjects: a stream's frames laid out in group objects in a `file:`-style directory
 * (several streams' frames per object, as group commit writes them), its ledger entries and `m/`
 * record, read back and imported into a real ShardClient: identical records, ranges fetched a
 * bounded number at a time, entries below the start never fetched, damage refused.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { type SvcError } from '../../src/errors';
import { type ObjectRangeReader, type StreamEntry, type StreamLedgerReader, nextEntryCounter, readStreamFromObjects } from '../../src/shards/stream-source';
import { type ImportedMeta } from '../../src/shards/types';
import { FrameType } from '../../src/shards/worker/frame';
import { type Shard } from '../../src/shards/worker/shard';
import { readBatchHeader } from '../../src/util/record-batch';
import { tempDir } from '../helpers/node-process';
import { type ShardClient, call, createdMeta, logFrames, openLocalShard, rec, readAll, startShards } from '../shards/helpers/import-fixture';

/** A directory of objects, keys as relative paths (what the `file:` store keeps; test-only). */
class DirStore implements ObjectRangeReader {
  readonly gets: string[] = [];
  inFlight = 0;
  maxInFlight = 0;
  constructor(readonly dir: string) {}

  async put(key: string, body: Buffer): Promise<void> {
    const file = path.join(this.dir, key);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, body);
  }

  async get(key: string, range?: { offset: number; length: number }): Promise<Buffer> {
    this.gets.push(key);
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
    try {
      await new Promise((r) => setTimeout(r, 2));
      const f = await fs.open(path.join(this.dir, key), 'r');
      try {
        if (range === undefined) return await f.readFile();
        const b = Buffer.alloc(range.length);
        const { bytesRead } = await f.read(b, 0, range.length, range.offset);
        return b.subarray(0, bytesRead);
      } finally {
        await f.close();
      }
    } finally {
      this.inFlight--;
    }
  }
}

const NAME = '/obj/s';

async function write(shard: Shard, name: string, values: string[], key: string | null = null): Promise<void> {
  await call(shard, (r) => shard.append({ name, origin: 'http', payload: { kind: 'records', records: values.map((v) => rec(v, key, [['h', v.slice(0, 4)]])) }, contentType: null, close: false }, r));
}

/**
 * The stream written by a local shard beside another one, then laid out as group commit does in
 * objects mode: each "group" object holds a few frames of the other stream and then the stream's
 * next frames (contiguous); one entry per object.
 */
async function layOut(store: DirStore): Promise<{ reader: StreamLedgerReader; source: Shard; entries: StreamEntry[] }> {
  const dir = tempDir();
  const source = openLocalShard(dir);
  for (const name of [NAME, '/obj/other']) {
    await call(source, (r) => source.create({ name, contentType: 'application/octet-stream', ttlSeconds: null, expiresAtMs: null, closed: false, records: [] }, r));
  }
  for (let i = 0; i < 60; i++) {
    await write(source, NAME, [`a${i}`, `b${i}`, `c${i}`], `k${i}`);
    await write(source, '/obj/other', [`noise ${i}`]);
  }
  await call(source, (r) => source.trim({ name: NAME, seq: 100 }, r));
  const mine = logFrames(path.join(dir, 'log'), source.head(NAME).streamId);
  const other = logFrames(path.join(dir, 'log'), source.head('/obj/other').streamId);
  const entries: StreamEntry[] = [];
  for (let g = 0; g * 6 < mine.length; g++) {
    const frames = mine.slice(g * 6, g * 6 + 6);
    const before = Buffer.concat(other.slice(g * 2, g * 2 + 2));
    const key = `g/n1/1/0/${String(g).padStart(12, '0')}`;
    await store.put(key, Buffer.concat([before, ...frames]));
    const seqs = frames.filter((f) => f[8] === FrameType.Data).map((f) => readBatchHeader(f, 13));
    const from = seqs.length === 0 ? 0 : seqs[0]!.baseOffset;
    const to = seqs.length === 0 ? from : seqs[seqs.length - 1]!.baseOffset + seqs[seqs.length - 1]!.lastOffsetDelta + 1;
    entries.push({ o: key, off: before.length, len: frames.reduce((n, f) => n + f.length, 0), from, to });
  }
  const meta: ImportedMeta = { meta: createdMeta(mine), startSeq: source.head(NAME).startSeq, sealed: false };
  const reader: StreamLedgerReader = {
    meta: async (s) => (s === NAME ? meta : null),
    entries: async (s) => (s === NAME ? entries : []),
  };
  return { reader, source, entries };
}

let target: ShardClient;

describe('reading a stream back from the object store', () => {
  it('imports it with every record as written, fetching a bounded window of ranges and none wholly below the start', async () => {
    target = await startShards(tempDir(), 2);
    const store = new DirStore(tempDir());
    const { reader, source, entries } = await layOut(store);
    expect(entries.length).toBeGreaterThan(10);
    const input = await readStreamFromObjects(reader, store, NAME, { concurrency: 4 });
    expect(input).not.toBeNull();
    const r = await target.importStream(NAME, input!);
    expect(r.info.startSeq).toBe(100);
    expect(r.info.nextSeq).toBe(180);
    const want = source.read({ name: NAME, seq: 100, count: 1000, bytes: 1 << 20, format: 'json' });
    const got = await readAll(target, NAME, 'json');
    expect(got.body.equals(want.body)).toBe(true);
    // Entries whose data ends at or below seq 100 were skipped; the others fetched once each, ≤ 4 at a time.
    const skipped = entries.filter((e) => e.from < e.to && e.to <= 100).map((e) => e.o);
    expect(skipped.length).toBeGreaterThan(0);
    expect(store.gets).toEqual(entries.map((e) => e.o).filter((o) => !skipped.includes(o)));
    expect(store.maxInFlight).toBeGreaterThan(1);
    expect(store.maxInFlight).toBeLessThanOrEqual(4);
    await source.close();
  });

  it('fails the import with data_corrupt when a byte of an object is flipped, and imports nothing', async () => {
    const store = new DirStore(tempDir());
    const { reader, source, entries } = await layOut(store);
    const victim = entries[entries.length - 2]!;
    const file = path.join(store.dir, victim.o);
    const bytes = await fs.readFile(file);
    bytes[victim.off + victim.len - 5] = bytes[victim.off + victim.len - 5]! ^ 0x10;
    await fs.writeFile(file, bytes);
    await target.dropStream(NAME);
    const err = (await target.importStream(NAME, (await readStreamFromObjects(reader, store, NAME))!).catch((e: unknown) => e)) as SvcError;
    expect(err.code).toBe('data_corrupt');
    expect(err.message).toContain(victim.o);
    await expect(target.head(NAME)).rejects.toMatchObject({ code: 'not_found' });
    await source.close();
  });

  it('fails with storage_unavailable when an object is missing, and answers null for a stream the ledger does not hold', async () => {
    const store = new DirStore(tempDir());
    const { reader, source, entries } = await layOut(store);
    await fs.rm(path.join(store.dir, entries[entries.length - 1]!.o));
    await expect(target.importStream(NAME, (await readStreamFromObjects(reader, store, NAME))!)).rejects.toMatchObject({ code: 'storage_unavailable' });
    await expect(target.head(NAME)).rejects.toMatchObject({ code: 'not_found' });
    expect(await readStreamFromObjects(reader, store, '/obj/none')).toBeNull();
    await source.close();
    // Closed here, not in afterAll (see import-fixture.ts).
    await target.close();
  });
});

describe('the next entry counter of the epoch a move opened the stream at', () => {
  const e = (epoch: number, counter: number): StreamEntry => ({ o: `g/n1/1/0/${epoch}-${counter}`, off: 0, len: 0, from: 0, to: 0, epoch, counter });

  it('is one above the highest counter recorded under that epoch (the tail recovered under it), else 0', async () => {
    const entries = [e(1, 0), e(1, 1), e(3, 0), e(3, 4), e(3, 2), e(5, 0)];
    expect(nextEntryCounter(entries, 3)).toBe(5);
    expect(nextEntryCounter(entries, 4)).toBe(0);
    expect(nextEntryCounter([{ epoch: undefined, counter: undefined }], 1)).toBe(0);
    const meta: ImportedMeta = { meta: {}, startSeq: 0, sealed: false };
    const reader: StreamLedgerReader = { meta: async () => meta, entries: async () => entries };
    const none: ObjectRangeReader = { get: async () => Buffer.alloc(0) };
    expect((await readStreamFromObjects(reader, none, NAME, { epoch: 5 }))!.nextCounter).toBe(1);
    expect((await readStreamFromObjects(reader, none, NAME))!.nextCounter).toBe(0);
  });
});
