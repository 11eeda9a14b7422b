/**
 * White-box tests of one shard (no threads, real segment files, in-memory index twin):
 * what black-box HTTP tests cannot see — replay from a lagging checkpoint, dead objects and
 * their reaping, TTL expiry by batch.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type SvcError } from '../../src/errors';
import { openMemoryStore } from '../../src/shards/worker/memory-store';
import { type KvStore } from '../../src/shards/worker/kv-store';
import { SegmentLog } from '../../src/shards/worker/segment-log';
import { type Reply, Shard } from '../../src/shards/worker/shard';
import { tempDir } from '../helpers/node-process';

const rec = (s: string) => ({ key: null, value: Buffer.from(s), headers: null });

function call<T>(f: (reply: Reply<T>) => void, shard: Shard): Promise<T> {
  return new Promise((resolve, reject) => {
    f((err: SvcError | null, r?: T) => (err ? reject(err) : resolve(r as T)));
    shard.flush();
  });
}

function open(dir: string, store: KvStore, segmentBytes = 4096, now?: () => number): Shard {
  return new Shard(store, SegmentLog.open(path.join(dir, 'log'), segmentBytes), { shardId: 0, shardCount: 1, maxChunkBytes: 1 << 20, limits: { maxRecordBytes: 1 << 20, maxBatchRecords: 1000 }, now });
}

async function create(shard: Shard, name: string, ttlSeconds: number | null = null): Promise<void> {
  await call((r) => shard.create({ name, contentType: 'text/plain', ttlSeconds, expiresAtMs: null, closed: false, records: [] }, r), shard);
}

async function append(shard: Shard, name: string, body: string): Promise<number> {
  const r = await call<{ startSeq: number }>((reply) => shard.append({ name, origin: 'http', payload: { kind: 'records', records: [rec(body)] }, contentType: null, close: false }, reply), shard);
  return r.startSeq;
}

function bodies(shard: Shard, name: string, seq = 0): string[] {
  const r = shard.read({ name, seq, count: 100000, bytes: 1 << 30, format: 'json' });
  return (JSON.parse(r.body.toString()) as Array<{ body: string }>).map((x) => x.body);
}

describe('a shard', () => {
  it('replays the log beyond a checkpoint that lags, as after a crash', async () => {
    const dir = tempDir();
    const store = openMemoryStore();
    const shard = open(dir, store);
    await create(shard, '/a');
    for (let i = 0; i < 20; i++) await append(shard, '/a', `r${i}`);
    // Reopen over the same files with an empty index: everything comes back from the log.
    const fresh = open(dir, openMemoryStore());
    expect(fresh.recovery.replayedFrames).toBeGreaterThanOrEqual(21);
    expect(bodies(fresh, '/a')).toEqual(Array.from({ length: 20 }, (_, i) => `r${i}`));
    // After a clean close the index is complete: nothing needs replay.
    await shard.close();
    const warm = open(dir, store);
    expect(warm.recovery.replayedFrames).toBe(0);
    expect(bodies(warm, '/a')).toHaveLength(20);
  });

  it('counts sealed segments as objects, marks them destroyed when their data is dead, and reaps them', async () => {
    const dir = tempDir();
    const store = openMemoryStore();
    const shard = open(dir, store, 1024);
    await create(shard, '/big');
    await create(shard, '/keep');
    for (let i = 0; i < 60; i++) await append(shard, '/big', 'x'.repeat(100) + i);
    await append(shard, '/keep', 'kept');
    const before = shard.stats();
    expect(before.objectCount).toBeGreaterThan(3);
    expect(before.destroyedObjectBacklog).toBe(0);

    await call((r) => shard.delete('/big', r), shard);
    shard.maintain();
    const marked = shard.stats();
    // Every sealed segment but the ones holding /keep's record (and the catalog) is dead.
    expect(marked.destroyedObjectBacklog).toBeGreaterThan(0);
    const files = () => fs.readdirSync(path.join(dir, 'log')).length;
    const filesBefore = files();
    const reaped = shard.reap();
    expect(reaped).toBe(marked.destroyedObjectBacklog);
    expect(files()).toBe(filesBefore - reaped);
    expect(shard.stats().destroyedObjectBacklog).toBe(0);
    expect(bodies(shard, '/keep')).toEqual(['kept']);
    // Recovery from the checkpoint never needs a reaped segment.
    const again = open(dir, store, 1024);
    expect(bodies(again, '/keep')).toEqual(['kept']);
    expect(() => again.head('/big')).toThrow(/no stream/);
  });

  it('expires records older than the TTL batch by batch and reports the new start', async () => {
    const dir = tempDir();
    let now = 1_000_000;
    const shard = open(dir, openMemoryStore(), 1 << 20, () => now);
    await create(shard, '/ttl', 10);
    await append(shard, '/ttl', 'old-1');
    await append(shard, '/ttl', 'old-2');
    now += 8_000;
    await append(shard, '/ttl', 'young');
    now += 3_000; // the first two are 11 s old, the last 3 s
    shard.maintain();
    expect(shard.head('/ttl').startSeq).toBe(2);
    expect(bodies(shard, '/ttl')).toEqual(['young']);
    now += 20_000;
    shard.maintain();
    expect(shard.head('/ttl').startSeq).toBe(3);
    expect(bodies(shard, '/ttl')).toEqual([]);
  });

  it('removes a stream at its absolute expiry and frees the name', async () => {
    const dir = tempDir();
    let now = 5_000;
    const shard = open(dir, openMemoryStore(), 1 << 20, () => now);
    await call((r) => shard.create({ name: '/e', contentType: 'text/plain', ttlSeconds: null, expiresAtMs: 6_000, closed: false, records: [rec('a')] }, r), shard);
    expect(bodies(shard, '/e')).toEqual(['a']);
    now = 6_000;
    expect(() => shard.head('/e')).toThrow(/no stream/);
    await create(shard, '/e');
    expect(shard.head('/e').nextSeq).toBe(0);
  });
});
