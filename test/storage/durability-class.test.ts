/**
 * What a power loss may take from `sync` and `async` streams (docs/storage.md, "Durability
 * classes"), white-box on one shard. A SIGKILL leaves the page cache to the kernel
 * (durability-crash.test.ts); a power loss takes whatever was not fdatasynced. This test follows
 * every fdatasync the shard's log makes (write with sync, sync, syncNow) and records, per segment,
 * how far its bytes are synced; "the machine loses power" is then a copy of the segment files cut
 * to those lengths, opened as a fresh shard with an empty index (the index is rebuilt from the
 * log). That models the worst case, where nothing unsynced was written back: a real power loss
 * can keep part of it, which recovery treats as a torn tail (crash.test.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type SvcError } from '../../src/errors';
import { openMemoryStore } from '../../src/shards/worker/memory-store';
import { SegmentLog } from '../../src/shards/worker/segment-log';
import { type Reply, Shard } from '../../src/shards/worker/shard';
import { CHECKPOINT_EVERY_MS } from '../../src/shards/worker/checkpointer';
import { ASYNC_IN_OBJECTS_MODE, createConfig } from '../../src/shards/worker/stream-config';
import { tempDir } from '../helpers/node-process';

const rec = (s: string) => ({ key: null, value: Buffer.from(s), headers: null });

function call<T>(f: (reply: Reply<T>) => void, shard: Shard): Promise<T> {
  return new Promise((resolve, reject) => {
    f((err: SvcError | null, r?: T) => (err ? reject(err) : resolve(r as T)));
    shard.flush();
  });
}

/** A segment log whose fdatasyncs are followed: synced[segId] = bytes known durable. */
function trackedLog(dir: string, segmentBytes: number): { log: SegmentLog; synced: Map<number, number> } {
  const log = SegmentLog.open(dir, segmentBytes);
  const synced = new Map<number, number>();
  const mark = (segId: number, len: number): void => {
    synced.set(segId, Math.max(synced.get(segId) ?? 0, len));
  };
  const write = log.write.bind(log);
  log.write = async (bufs, options) => {
    const w = await write(bufs, options);
    if (options?.sync !== false && options?.journaled !== true) w.locations.forEach((l, i) => mark(l.segId, l.pos + bufs[i]!.length));
    return w;
  };
  // Bytes written before an fdatasync starts are durable once it returns.
  const sizes = (segIds: Iterable<number>): Array<[number, number]> => [...segIds].map((s) => [s, log.segmentSize(s)]);
  const sync = log.sync.bind(log);
  log.sync = async (segIds) => {
    const before = sizes(segIds);
    await sync(before.map(([s]) => s));
    for (const [s, n] of before) mark(s, n);
  };
  const syncNow = log.syncNow.bind(log);
  log.syncNow = (segIds) => {
    const before = sizes(segIds);
    syncNow(before.map(([s]) => s));
    for (const [s, n] of before) mark(s, n);
  };
  return { log, synced };
}

/** The log as a power loss at this moment could leave it: each segment cut to its synced length. */
function powerLoss(logDir: string, synced: ReadonlyMap<number, number>): string {
  const out = tempDir('svc-powerloss-');
  const outLog = path.join(out, 'log');
  fs.mkdirSync(outLog);
  for (const f of fs.readdirSync(logDir)) {
    const segId = Number(f.replace(/\.seg$/, ''));
    const keep = synced.get(segId) ?? 0;
    if (keep === 0 && !synced.has(segId)) continue; // never synced: the file itself may be gone
    fs.writeFileSync(path.join(outLog, f), fs.readFileSync(path.join(logDir, f)).subarray(0, keep));
  }
  return out;
}

const OPTS = { shardId: 0, shardCount: 1, maxChunkBytes: 1 << 20, limits: { maxRecordBytes: 1 << 20, maxBatchRecords: 1000 } };

function reopen(dir: string): Shard {
  return new Shard(openMemoryStore(), SegmentLog.open(path.join(dir, 'log'), 1 << 20), OPTS);
}

function bodies(shard: Shard, name: string): string[] {
  try {
    const r = shard.read({ name, seq: 0, count: 100000, bytes: 1 << 30, format: 'json' });
    return (JSON.parse(r.body.toString()) as Array<{ body: string }>).map((x) => x.body);
  } catch {
    return []; // the stream's creation itself was lost
  }
}

async function waitFor(cond: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('durability classes and a power loss', () => {
  const dir = tempDir('svc-durclass-');
  const { log, synced } = trackedLog(path.join(dir, 'log'), 1 << 20);
  const shard = new Shard(openMemoryStore(), log, OPTS);
  const append = (name: string, body: string): Promise<unknown> => call((r) => shard.append({ name, origin: 'http', payload: { kind: 'records', records: [rec(body)] }, contentType: null, close: false }, r), shard);
  const tailSynced = (): boolean => (synced.get(log.tail.segId) ?? 0) >= log.tail.pos;

  beforeAll(async () => {
    await call((r) => shard.create({ name: '/s', contentType: 'text/plain', ttlSeconds: null, expiresAtMs: null, closed: false, records: [] }, r), shard);
    await call((r) => shard.create({ name: '/a', contentType: 'text/plain', ttlSeconds: null, expiresAtMs: null, closed: false, records: [], durability: 'async' }, r), shard);
  });

  afterAll(async () => {
    await shard.close();
  });

  it('acknowledges a sync append only once it is synced', async () => {
    for (let i = 0; i < 20; i++) {
      await append('/s', `s${i}`);
      expect(tailSynced()).toBe(true);
    }
    expect(bodies(reopen(powerLoss(path.join(dir, 'log'), synced)), '/s')).toHaveLength(20);
  });

  it('acknowledges an async append before it is synced: a power loss then takes acknowledged appends, never a sync one, and leaves a prefix', async () => {
    const acked: string[] = [];
    for (let i = 0; i < 50; i++) {
      await append('/a', `a${i}`);
      acked.push(`a${i}`);
    }
    // Right after the acknowledgement the bytes are written but (unless a checkpoint ran in between) not synced.
    const image = powerLoss(path.join(dir, 'log'), synced);
    const after = reopen(image);
    const kept = bodies(after, '/a');
    expect(acked.slice(0, kept.length)).toEqual(kept);
    expect(bodies(after, '/s')).toHaveLength(20);
    // The cut image is a log a real power loss can leave; the lost appends are those of the last window.
    expect(kept.length).toBeLessThanOrEqual(acked.length);
  });

  it(`syncs async appends within the checkpoint interval (${CHECKPOINT_EVERY_MS} ms) without any further write`, async () => {
    await append('/a', 'last-async');
    const t0 = Date.now();
    expect(tailSynced()).toBe(false);
    await waitFor(tailSynced);
    // Reported, not asserted tightly: the timer is CHECKPOINT_EVERY_MS, a loaded machine runs it later.
    console.log(`async append synced ${Date.now() - t0} ms after its acknowledgement (window ${CHECKPOINT_EVERY_MS} ms)`);
    const kept = bodies(reopen(powerLoss(path.join(dir, 'log'), synced)), '/a');
    expect(kept).toHaveLength(51);
    expect(kept[50]).toBe('last-async');
  });

  it('a sync append after async ones makes them durable too (the log stays a synced prefix)', async () => {
    for (let i = 0; i < 10; i++) await append('/a', `b${i}`);
    await append('/s', 'after-async');
    expect(tailSynced()).toBe(true);
    const after = reopen(powerLoss(path.join(dir, 'log'), synced));
    expect(bodies(after, '/a')).toHaveLength(61);
    expect(bodies(after, '/s')).toHaveLength(21);
  });

  it('changes a stream class by config, and refuses async in objects mode', async () => {
    const info = await call<{ durability: string; durabilityDefault: boolean }>((r) => shard.configure({ name: '/a', durability: null }, r), shard);
    expect(info).toMatchObject({ durability: 'sync', durabilityDefault: true });
    await append('/a', 'now-sync');
    expect(tailSynced()).toBe(true);
    expect(() => createConfig({ name: '/o', contentType: 'text/plain', ttlSeconds: null, expiresAtMs: null, closed: false, records: [], durability: 'async' }, undefined, true)).toThrow(ASYNC_IN_OBJECTS_MODE);
  });
});
