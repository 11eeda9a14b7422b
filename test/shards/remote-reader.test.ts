/**
 * Reads of remote chunks through the object cache (src/shards/worker/remote-reader.ts) against a
 * real `file:` object store: a miss fetched once and then served from the cache, read-ahead of
 * the next entries, compaction replacing entries and the reaper deleting the old objects under a
 * reader (the ledger read again, the new object read), a missing object the ledger still names
 * and a flipped byte each failing only the reads that reach them, and an outage not remembered.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type SvcError } from '../../src/errors';
import { type ObjectStore, RangeCache, openObjectStore } from '../../src/objects';
import { encodeDataFrame } from '../../src/shards/worker/frame';
import { type RemoteBatch, RemoteChunks, type RemoteEntry } from '../../src/shards/worker/remote-chunks';
import { RemoteReader, rememberDamage } from '../../src/shards/worker/remote-reader';
import { encodeRecordBatch } from '../../src/util/record-batch';

const S = '/rr/s';
let dir: string;
let store: ObjectStore;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-remote-reader-'));
  store = openObjectStore(`file:${dir}`);
});
afterAll(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Frames of seqs [from, to), 2 records a batch, as another writer (stream id 9) wrote them. */
function frames(from: number, to: number): Buffer {
  const out: Buffer[] = [];
  for (let s = from; s < to; s += 2) {
    const records = Array.from({ length: Math.min(2, to - s) }, (_, i) => ({ key: null, value: Buffer.from(`value-${s + i}`), headers: null }));
    out.push(encodeDataFrame(9, Buffer.from(encodeRecordBatch({ baseOffset: s, baseTimestamp: 1_700_000_000_000, records })), false));
  }
  return Buffer.concat(out);
}

/** A world: objects g/<n> each holding seqs [10n, 10n + 10) after 64 bytes of another stream's. */
async function world(name: string, n: number, clock?: { now: number }) {
  const ledger: RemoteEntry[] = [];
  for (let k = 0; k < n; k++) {
    const body = frames(10 * k, 10 * k + 10);
    const o = `${name}/g/${k}`;
    await store.put(o, [Buffer.alloc(64, 7), body]);
    ledger.push({ o, off: 64, len: body.length, from: 10 * k, to: 10 * k + 10 });
  }
  const gets: string[] = [];
  let down = false;
  const chunks = new RemoteChunks(S, ledger, 0);
  const cache = new RangeCache<RemoteBatch[]>({ budgetBytes: 1 << 20, sizeOf: (v) => (v as RemoteBatch[]).reduce((t, b) => t + b.batch.length, 0), remember: rememberDamage });
  let refreshes = 0;
  const reader = new RemoteReader({
    chunks,
    cache,
    get: async (key, range) => {
      gets.push(key);
      if (down) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'Unreachable' });
      return store.get(key, range);
    },
    refresh: async () => {
      refreshes++;
      return ledger.slice();
    },
    startSeq: () => 0,
    readAheadBytes: Math.floor(2.5 * ledger[0]!.len),
    ...(clock !== undefined ? { now: () => clock.now, refreshMs: 30_000 } : {}),
  });
  const settled = async (): Promise<void> => {
    for (let i = 0; i < 1000 && cache.stats.inFlight > 0; i++) await new Promise((r) => setTimeout(r, 10));
  };
  return { ledger, gets, chunks, cache, reader, settled, refreshes: () => refreshes, setDown: (d: boolean) => (down = d) };
}

const seqsOf = (bs: RemoteBatch[]): number[] => bs.flatMap((b) => Array.from({ length: b.lastSeq - b.baseSeq + 1 }, (_, i) => b.baseSeq + i));

async function corruptOf(p: Promise<unknown>): Promise<SvcError> {
  return p.then(
    () => {
      throw new Error('did not fail');
    },
    (err: unknown) => err as SvcError,
  );
}

it('fetches a miss once, serves it from the cache, and reads the next entries ahead', async () => {
  const w = await world('a', 5);
  const first = w.reader.peek(3, 1 << 20);
  expect(first.batches).toEqual([]);
  expect(first.missing).toEqual(w.ledger[0]);
  await Promise.all([w.reader.fetch(3), w.reader.fetch(5)]);
  await w.settled();
  // One GET for seq 3's entry, read-ahead of the next two (its budget), none more.
  expect(w.gets).toEqual(['a/g/0', 'a/g/1', 'a/g/2']);
  const p = w.reader.peek(3, 1 << 20);
  expect(seqsOf(p.batches)[0]).toBe(2); // the batch holding 3 starts at 2: the caller cuts it
  expect(p.next).toBe(30);
  expect(p.missing).toEqual(w.ledger[3]);
  // A byte budget: at least one batch, whole batches only.
  expect(seqsOf(w.reader.peek(10, 1).batches)).toEqual([10, 11]);
});

it('follows compaction: a deleted object the ledger no longer names is read from its replacement', async () => {
  const w = await world('b', 3);
  // Compaction writes c/0 with seqs 0..19 and replaces the first two entries; the reaper deletes g/0 and g/1.
  const body = frames(0, 20);
  await store.put('b/c/0', body);
  w.ledger.splice(0, 2, { o: 'b/c/0', off: 0, len: body.length, from: 0, to: 20 });
  await store.delete('b/g/0');
  await store.delete('b/g/1');
  await w.reader.fetch(12);
  expect(w.refreshes()).toBe(1);
  expect(w.chunks.entries.map((e) => e.o)).toEqual(['b/c/0', 'b/g/2']);
  expect(seqsOf(w.reader.peek(12, 1 << 20).batches).slice(0, 3)).toEqual([12, 13, 14]);
});

it('prefers compaction\'s object once the entries are older than the refresh interval, before the old objects are deleted', async () => {
  const clock = { now: 0 };
  const w = await world('bc', 4, clock);
  const body = frames(0, 30);
  await store.put('bc/c/0', body);
  w.ledger.splice(0, 3, { o: 'bc/c/0', off: 0, len: body.length, from: 0, to: 30 });
  // Within the interval the adopt's entries are read (g/0 still exists: the reaper's grace).
  await w.reader.fetch(3);
  await w.settled();
  expect(w.refreshes()).toBe(0);
  expect(w.gets[0]).toBe('bc/g/0');
  // Past it, the next miss reads the ledger first and fetches the compacted object.
  clock.now = 30_000;
  w.gets.length = 0;
  await w.reader.fetch(35);
  await w.reader.fetch(12);
  expect(w.refreshes()).toBe(1);
  expect(w.chunks.entries.map((e) => e.o)).toEqual(['bc/c/0', 'bc/g/3']);
  expect(w.gets).toContain('bc/c/0');
  expect(w.gets.filter((k) => k === 'bc/g/1' || k === 'bc/g/2')).toEqual([]);
  expect(seqsOf(w.reader.peek(12, 1 << 20).batches).slice(0, 3)).toEqual([12, 13, 14]);
});

it('a missing object the ledger still names, or a flipped byte, fails only the reads that reach it', async () => {
  const w = await world('c', 4);
  await store.delete('c/g/1');
  const file = path.join(dir, 'c/g/2');
  const bytes = fs.readFileSync(file);
  bytes[64 + 30]! ^= 0x10;
  fs.writeFileSync(file, bytes);
  const missing = await corruptOf(w.reader.fetch(15));
  expect(missing.code).toBe('data_corrupt');
  expect(missing.details).toEqual({ stream: S, from_seq: 10, to_seq: 19, object: 'c/g/1', offset: 64, length: w.ledger[1]!.len });
  const flipped = await corruptOf(w.reader.fetch(25));
  expect(flipped.code).toBe('data_corrupt');
  expect(flipped.details).toMatchObject({ stream: S, from_seq: 20, to_seq: 29, object: 'c/g/2' });
  await w.settled();
  // Remembered: reading it again is no GET.
  const before = w.gets.filter((k) => k === 'c/g/2').length;
  expect((await corruptOf(w.reader.fetch(25))).code).toBe('data_corrupt');
  expect(w.gets.filter((k) => k === 'c/g/2').length).toBe(before);
  // Around them: served.
  await w.reader.fetch(0);
  await w.reader.fetch(30);
  expect(seqsOf(w.reader.peek(0, 1 << 20).batches)).toEqual(Array.from({ length: 10 }, (_, i) => i));
  expect(w.reader.peek(0, 1 << 20).missing).toEqual(w.ledger[1]);
  expect(seqsOf(w.reader.peek(30, 1 << 20).batches)).toEqual(Array.from({ length: 10 }, (_, i) => 30 + i));
});

it('an outage is storage_unavailable and not remembered', async () => {
  const w = await world('d', 1);
  w.setDown(true);
  expect((await corruptOf(w.reader.fetch(0))).code).toBe('storage_unavailable');
  w.setDown(false);
  await w.reader.fetch(0);
  expect(seqsOf(w.reader.peek(0, 1 << 20).batches)).toHaveLength(10);
});
