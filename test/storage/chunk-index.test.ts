/**
 * The chunk index lives in RocksDB; a shard keeps only each stream's newest chunks and a bounded
 * page cache in memory. Interleaved appends make one chunk per append (the index's worst case),
 * so these tests count what the shard holds instead of measuring RSS, and check that reads, trims,
 * deletes, reaping and restarts see exactly the records they did when the whole index was in memory.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type SvcError } from '../../src/errors';
import { CHECKPOINT_EVERY_MS } from '../../src/shards/worker/checkpointer';
import { type KvStore } from '../../src/shards/worker/kv-store';
import { openMemoryStore } from '../../src/shards/worker/memory-store';
import { openRocksStore } from '../../src/shards/worker/rocks-store';
import { SegmentLog } from '../../src/shards/worker/segment-log';
import { type Reply, Shard } from '../../src/shards/worker/shard';
import { tempDir } from '../helpers/node-process';

const rec = (s: string) => ({ key: null, value: Buffer.from(s), headers: null });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function open(dir: string, store: KvStore, cache: number, segmentBytes = 1 << 20, now?: () => number): Shard {
  return new Shard(store, SegmentLog.open(path.join(dir, 'log'), segmentBytes), {
    now,
    shardId: 0,
    shardCount: 1,
    maxChunkBytes: 1 << 20,
    indexCacheChunks: cache,
    limits: { maxRecordBytes: 1 << 20, maxBatchRecords: 1000 },
  });
}

function call<T>(shard: Shard, f: (reply: Reply<T>) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    f((err: SvcError | null, r?: T) => (err ? reject(err) : resolve(r as T)));
    shard.flush();
  });
}

const create = (shard: Shard, name: string, ttlSeconds: number | null = null) => call(shard, (r) => shard.create({ name, contentType: 'text/plain', ttlSeconds, expiresAtMs: null, closed: false, records: [] }, r));

/** One record to each stream per round, all rounds' appends of a round in one group: every append is a chunk of its own. */
async function interleave(shard: Shard, names: string[], rounds: number, from = 0): Promise<void> {
  for (let round = from; round < from + rounds; round++) {
    const acks = names.map((name) => call(shard, (r) => shard.append({ name, origin: 'http', payload: { kind: 'records', records: [rec(`${name}#${round}`)] }, contentType: null, close: false }, r)));
    await Promise.all(acks);
  }
}

/** Every record of a stream, read page by page (`count` records a page) from `seq`. */
function readAll(shard: Shard, name: string, count: number, seq = 0): string[] {
  const out: string[] = [];
  for (;;) {
    const r = shard.read({ name, seq, count, bytes: 1 << 20, format: 'json' });
    out.push(...(JSON.parse(r.body.toString()) as Array<{ body: string }>).map((x) => x.body));
    if (r.upToDate) return out;
    seq = r.nextSeq;
  }
}

const expected = (name: string, from: number, to: number) => Array.from({ length: to - from }, (_, i) => `${name}#${from + i}`);

describe('the chunk index', () => {
  const names = Array.from({ length: 40 }, (_, i) => `/s${i}`);
  const ROUNDS = 60;
  const CACHE = 100;

  /** A shard on `store` (4 KiB segments) with the first `n` streams created and `rounds` interleaved rounds appended to them. */
  async function filled(store: KvStore, n: number, rounds: number): Promise<{ dir: string; shard: Shard; some: string[] }> {
    const dir = tempDir();
    const shard = open(dir, store, 10, 4096);
    const some = names.slice(0, n);
    for (const name of some) await create(shard, name);
    await interleave(shard, some, rounds);
    return { dir, shard, some };
  }

  it('keeps the chunk entries it holds in memory under its bound after many interleaved appends, and reads every record', async () => {
    const dir = tempDir();
    const store = await openRocksStore(path.join(dir, 'index'));
    let shard = open(dir, store, CACHE);
    for (const n of names) await create(shard, n);
    await interleave(shard, names, ROUNDS);
    // Reads before the checkpoint see chunks that are still only in memory.
    expect(readAll(shard, names[3]!, 7)).toEqual(expected(names[3]!, 0, ROUNDS));
    await sleep(CHECKPOINT_EVERY_MS + 150); // past the checkpoint interval
    // One chunk per append (2,400) is in the store; one per stream stays in memory (its last, which appends merge into).
    expect(store.scan(Buffer.from('K')).length).toBe(names.length * ROUNDS);
    expect(shard.indexMemory().recentChunks).toBe(names.length);
    for (const n of names) expect(readAll(shard, n, 7)).toEqual(expected(n, 0, ROUNDS));
    const mem = shard.indexMemory();
    expect(mem.cachedChunks).toBeGreaterThan(0);
    expect(mem.cachedChunks).toBeLessThanOrEqual(CACHE);

    // A restart loads each stream's last chunk only, and reads the rest from the store.
    await shard.close();
    const store2 = await openRocksStore(path.join(dir, 'index'));
    shard = open(dir, store2, CACHE);
    expect(shard.recovery.replayedFrames).toBe(0);
    expect(shard.indexMemory()).toEqual({ recentChunks: names.length, cachedChunks: 0 });
    for (const n of names) expect(readAll(shard, n, 1000, 5)).toEqual(expected(n, 5, ROUNDS));
    expect(shard.indexMemory().cachedChunks).toBeLessThanOrEqual(CACHE);
    // Appends after the restart merge into or follow the loaded last chunk.
    await interleave(shard, names.slice(0, 2), 3, ROUNDS);
    expect(readAll(shard, names[1]!, 11)).toEqual(expected(names[1]!, 0, ROUNDS + 3));
    await shard.close();
  });

  it('trims, deletes and reaps through the stored index, and a restart reads the same', async () => {
    const dir = tempDir();
    const store = await openRocksStore(path.join(dir, 'index'));
    const shard = open(dir, store, 10, 4096);
    for (const n of names.slice(0, 10)) await create(shard, n);
    const some = names.slice(0, 10);
    await interleave(shard, some, ROUNDS);
    await sleep(CHECKPOINT_EVERY_MS + 150); // past the checkpoint interval
    // Trim one stream to the middle of its stored chunks, delete another outright.
    await call(shard, (r) => shard.trim({ name: some[0]!, seq: 25 }, r));
    await call(shard, (r) => shard.delete(some[1]!, r));
    expect(readAll(shard, some[0]!, 4)).toEqual(expected(some[0]!, 25, ROUNDS));
    expect(() => shard.read({ name: some[1]!, seq: 0, count: 1, bytes: 100, format: 'json' })).toThrow();
    // Trim every other stream to its tail: all sealed segments but the newest hold no live data.
    for (const n of some.slice(2)) await call(shard, (r) => shard.trim({ name: n, seq: ROUNDS }, r));
    await call(shard, (r) => shard.trim({ name: some[0]!, seq: ROUNDS }, r));
    shard.maintain();
    const backlog = shard.stats().destroyedObjectBacklog;
    expect(backlog).toBeGreaterThan(0);
    expect(shard.reap()).toBe(backlog);
    await interleave(shard, some.slice(2, 4), 2, ROUNDS);
    expect(readAll(shard, some[2]!, 10)).toEqual(expected(some[2]!, ROUNDS, ROUNDS + 2));

    // A clean restart finds the same.
    await shard.close();
    const again = open(dir, await openRocksStore(path.join(dir, 'index')), 10, 4096);
    expect(readAll(again, some[2]!, 10)).toEqual(expected(some[2]!, ROUNDS, ROUNDS + 2));
    expect(readAll(again, some[5]!, 10)).toEqual([]);
    await again.close();
  });

  it('replays trims, deletes and appends after the last checkpoint over an index that has part of them (a crash)', async () => {
    const store = openMemoryStore();
    const { dir, shard, some } = await filled(store, 6, 40);
    await sleep(CHECKPOINT_EVERY_MS + 150); // past the checkpoint interval
    // After the checkpoint: a trim and a delete (their entries go at once), then appends that only the log has.
    await call(shard, (r) => shard.trim({ name: some[0]!, seq: 30 }, r));
    await call(shard, (r) => shard.delete(some[1]!, r));
    await interleave(shard, some.filter((n) => n !== some[1]), 5, 40);
    // The crash: a copy of the index as it is now, the log as it is now.
    const copy = openMemoryStore();
    copy.write(store.scan(Buffer.alloc(0)).map(([key, value]) => ({ type: 'put' as const, key, value })), false);
    const after = open(dir, copy, 10, 4096);
    expect(after.recovery.replayedFrames).toBeGreaterThan(0);
    expect(readAll(after, some[0]!, 3)).toEqual(expected(some[0]!, 30, 45));
    expect(() => after.read({ name: some[1]!, seq: 0, count: 1, bytes: 100, format: 'json' })).toThrow();
    for (const n of some.slice(2)) expect(readAll(after, n, 6)).toEqual(expected(n, 0, 45));
    await shard.close();
  });

  it('expires records by TTL from stored chunks and reaps what is dead', async () => {
    const dir = tempDir();
    let clock = 1_000_000;
    const store = await openRocksStore(path.join(dir, 'index'));
    const shard = open(dir, store, 10, 4096, () => clock);
    const some = names.slice(0, 5);
    for (const n of some) await create(shard, n, 60);
    // 40 rounds, one second apart: record r of every stream is stamped clock0 + r s.
    for (let round = 0; round < 40; round++) {
      await interleave(shard, some, 1, round);
      clock += 1000;
    }
    await sleep(CHECKPOINT_EVERY_MS + 150); // past the checkpoint interval
    expect(store.scan(Buffer.from('K')).length).toBe(some.length * 40);
    // At clock0 + 85 s, records stamped before clock0 + 25 s are older than the 60 s TTL.
    clock += 45_000;
    shard.maintain();
    for (const n of some) {
      expect(shard.head(n).startSeq).toBe(25);
      expect(readAll(shard, n, 4)).toEqual(expected(n, 25, 40));
    }
    expect(store.scan(Buffer.from('K')).length).toBe(some.length * 15);
    // Everything expires: the streams stay, empty from their tails on, and their sealed segments go.
    clock += 60_000;
    shard.maintain();
    for (const n of some) expect(shard.head(n).startSeq).toBe(40);
    shard.maintain();
    expect(shard.reap()).toBeGreaterThan(0);
    await interleave(shard, some.slice(0, 1), 2, 40);
    expect(readAll(shard, some[0]!, 5)).toEqual(expected(some[0]!, 40, 42));
    await shard.close();
  });

  it('cuts expired batches off the front of a stored first chunk and of an in-memory one', async () => {
    const dir = tempDir();
    let clock = 1_000_000;
    const store = await openRocksStore(path.join(dir, 'index'));
    const shard = open(dir, store, 10, 1 << 20, () => clock);
    await create(shard, '/stored', 60);
    await create(shard, '/recent', 60);
    await create(shard, '/other');
    const one = (name: string, round: number) => interleave(shard, [name], 1, round);
    // Ten appends in a row per stream merge into one chunk each; a second chunk follows /stored's.
    for (let r = 0; r < 10; r++) {
      await one('/stored', r);
      clock += 1000;
    }
    for (let r = 0; r < 10; r++) {
      await one('/recent', r);
      clock += 1000;
    }
    await one('/other', 0);
    await one('/stored', 10);
    await sleep(CHECKPOINT_EVERY_MS + 150); // past the checkpoint interval
    expect(store.scan(Buffer.from('K')).length).toBe(4);
    // 66 s after the first record, /stored's records 0-5 are older than the 60 s TTL; at 74 s /recent's 0-3 (stamped 10-13 s).
    clock = 1_000_000 + 66_000;
    shard.maintain();
    const bases = () => store.scan(Buffer.from('K')).map(([k]) => k.readUInt32BE(9)).sort((a, b) => a - b);
    // /stored's first chunk now starts at 6 in the store; /other's and /recent's start at 0, /stored's second at 10.
    expect(bases()).toEqual([0, 0, 6, 10]);
    expect(shard.head('/stored').startSeq).toBe(6);
    expect(readAll(shard, '/stored', 3)).toEqual(expected('/stored', 6, 11));
    clock = 1_000_000 + 74_000;
    shard.maintain();
    expect(shard.head('/recent').startSeq).toBe(4);
    expect(readAll(shard, '/recent', 3)).toEqual(expected('/recent', 4, 10));
    // By then /stored's first chunk has expired whole (its newest record is 65 s old): only its second is left.
    expect(readAll(shard, '/stored', 3)).toEqual(expected('/stored', 10, 11));
    expect(bases()).toEqual([0, 4, 10]);
    // The cut chunks are stored under their new base seqs, and a restart reads the same.
    await shard.close();
    const again = open(dir, await openRocksStore(path.join(dir, 'index')), 10, 1 << 20, () => clock);
    expect(readAll(again, '/stored', 2)).toEqual(expected('/stored', 10, 11));
    expect(readAll(again, '/recent', 2)).toEqual(expected('/recent', 4, 10));
    await again.close();
  });

  /** The (segment, stream) pairs the K entries name, as `seg/stream`, and those the R entries name (either layout). */
  const kPairs = (store: KvStore): Set<string> => new Set(store.scan(Buffer.from('K')).map(([k, v]) => `${v.readUInt32BE(0)}/${k.readUInt32BE(1)}`));
  const rPairs = (store: KvStore): Set<string> => new Set(store.scan(Buffer.from('R')).map(([k]) => `${k.readUInt32BE(1)}/${k.readUInt32BE(5)}`));
  const sorted = (x: Set<string>): string[] => [...x].sort();

  it('writes one by-segment entry per stream and segment, not per chunk, and deletes it with the stream\'s last chunk there', async () => {
    const store = openMemoryStore();
    const { shard, some } = await filled(store, 10, ROUNDS);
    await sleep(CHECKPOINT_EVERY_MS + 150); // past the checkpoint interval
    const chunks = store.scan(Buffer.from('K')).length;
    const rs = store.scan(Buffer.from('R'));
    // Every append is a chunk of its own; a segment of 4 KiB holds many of each stream's.
    expect(chunks).toBe(some.length * ROUNDS);
    expect(rs.every(([k]) => k.length === 9)).toBe(true);
    expect(sorted(rPairs(store))).toEqual(sorted(kPairs(store)));
    expect(rs.length).toBeLessThan(chunks / 4);
    // A trim to the middle of a segment keeps the stream's entry there; a delete takes all of them.
    await call(shard, (r) => shard.trim({ name: some[0]!, seq: 25 }, r));
    await call(shard, (r) => shard.delete(some[1]!, r));
    expect(sorted(rPairs(store))).toEqual(sorted(kPairs(store)));
    // Appends after the trim, into the segment whose entry the trim may have taken: written again.
    await call(shard, (r) => shard.trim({ name: some[2]!, seq: ROUNDS }, r));
    await interleave(shard, some.slice(2, 3), 3, ROUNDS);
    await sleep(CHECKPOINT_EVERY_MS + 150);
    expect(sorted(rPairs(store))).toEqual(sorted(kPairs(store)));
    expect(readAll(shard, some[0]!, 4)).toEqual(expected(some[0]!, 25, ROUNDS));
    expect(readAll(shard, some[2]!, 4)).toEqual(expected(some[2]!, ROUNDS, ROUNDS + 3));
    // Reaped: only the segments no stream has a chunk in.
    for (const n of some.slice(3)) await call(shard, (r) => shard.trim({ name: n, seq: ROUNDS }, r));
    shard.maintain();
    expect(shard.reap()).toBeGreaterThan(0);
    for (const n of [some[0]!, some[2]!]) expect(readAll(shard, n, 7).length).toBeGreaterThan(0);
    expect(readAll(shard, some[0]!, 4)).toEqual(expected(some[0]!, 25, ROUNDS));
    await shard.close();

    // One segment: a stream trimmed to its tail loses its entry there, and its next chunk in that segment writes it again.
    const one = openMemoryStore();
    const single = open(tempDir(), one, 10, 1 << 20);
    await create(single, '/one');
    await interleave(single, ['/one'], 3);
    await sleep(CHECKPOINT_EVERY_MS + 150);
    expect(rPairs(one).size).toBe(1);
    await call(single, (r) => single.trim({ name: '/one', seq: 3 }, r));
    expect(rPairs(one).size).toBe(0);
    await interleave(single, ['/one'], 2, 3);
    await sleep(CHECKPOINT_EVERY_MS + 150);
    expect(sorted(rPairs(one))).toEqual(sorted(kPairs(one)));
    expect(rPairs(one).size).toBe(1);
    await single.close();
  });

  it('goes on over an index of version 2 (a by-segment entry per chunk): those entries go with their chunks, and its segments are reaped', async () => {
    const store = openMemoryStore();
    const { dir, shard, some } = await filled(store, 6, 40);
    await shard.close();
    // The index as version 2 wrote it: an R entry per chunk, <seg> <stream> <baseSeq>.
    const perChunk = store.scan(Buffer.from('K')).map(([k, v]) => {
      const key = Buffer.alloc(17);
      key.write('R', 0);
      v.copy(key, 1, 0, 4);
      k.copy(key, 5, 1, 13);
      return { type: 'put' as const, key, value: Buffer.alloc(0) };
    });
    store.write([...store.scan(Buffer.from('R')).map(([key]) => ({ type: 'del' as const, key })), ...perChunk, { type: 'put', key: Buffer.from('V'), value: Buffer.from([2]) }], false);
    const reopened = open(dir, store, 10, 4096);
    expect(store.scan(Buffer.from('V'))[0]![1][0]).toBe(2);
    await interleave(reopened, some, 10, 40);
    await sleep(CHECKPOINT_EVERY_MS + 150);
    expect(sorted(rPairs(store))).toEqual(sorted(kPairs(store)));
    // Everything but the last 5 records of each stream goes: no entry of a dropped chunk stays.
    for (const n of some) await call(reopened, (r) => reopened.trim({ name: n, seq: 45 }, r));
    expect(sorted(rPairs(store))).toEqual(sorted(kPairs(store)));
    const kept = new Set(store.scan(Buffer.from('K')).map(([k]) => k.subarray(1).toString('hex')));
    for (const [k] of store.scan(Buffer.from('R'))) if (k.length === 17) expect(kept.has(k.subarray(5).toString('hex'))).toBe(true);
    reopened.maintain();
    expect(reopened.reap()).toBeGreaterThan(0);
    for (const n of some) expect(readAll(reopened, n, 2)).toEqual(expected(n, 45, 50));
    await reopened.close();
  });

  it('builds the by-segment entries of an index written before them, so the reaper never takes live data', async () => {
    const dir = tempDir();
    const store = openMemoryStore();
    const shard = open(dir, store, 10, 2048);
    for (const n of names.slice(0, 4)) await create(shard, n);
    await interleave(shard, names.slice(0, 4), 30);
    await shard.close();
    // An index of the earlier layout: chunk entries only.
    const old = store.scan(Buffer.from('R')).map(([key]) => ({ type: 'del' as const, key }));
    store.write([...old, { type: 'del', key: Buffer.from('V') }], false);
    expect(store.scan(Buffer.from('R'))).toHaveLength(0);
    const reopened = open(dir, store, 10, 2048);
    expect(store.scan(Buffer.from('R')).length).toBeGreaterThan(0);
    reopened.maintain();
    expect(reopened.stats().destroyedObjectBacklog).toBe(0);
    reopened.reap();
    for (const n of names.slice(0, 4)) expect(readAll(reopened, n, 9)).toEqual(expected(n, 0, 30));
    expect(fs.readdirSync(path.join(dir, 'log')).length).toBeGreaterThan(1);
    await reopened.close();
  });

  it('leaves a stream catalog entry alone on plain appends, and a start after a crash takes the next seq from the last chunk', async () => {
    const dir = tempDir();
    const store = await openRocksStore(path.join(dir, 'index'));
    const shard = open(dir, store, 10);
    await create(shard, '/c');
    await interleave(shard, ['/c'], 3);
    await sleep(CHECKPOINT_EVERY_MS + 150);
    const entry = (): { nextSeq: number } => JSON.parse(store.scan(Buffer.from('S'))[0]![1].toString()) as { nextSeq: number };
    const first = entry().nextSeq;
    // Three more appends and their checkpoint: the chunk grows, the catalog entry is not rewritten.
    await interleave(shard, ['/c'], 3, 3);
    await sleep(CHECKPOINT_EVERY_MS + 150);
    expect(entry().nextSeq).toBe(first);
    expect(first).toBeLessThan(6);
    // The crash: the files are reopened as they are, with nothing left in the log to replay.
    const again = open(dir, store, 10);
    expect(again.recovery.replayedFrames).toBe(0);
    expect(again.head('/c').nextSeq).toBe(6);
    await interleave(again, ['/c'], 1, 6);
    expect(readAll(again, '/c', 4)).toEqual(expected('/c', 0, 7));
    await again.close();
  });
});
