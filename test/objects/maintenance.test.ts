/**
 * Compaction and the destroyed-object reaper against a real etcd (one Debian etcd-server member)
 * and a real `file:` object store. The ledger state is made by the ledger's own commit, trim and
 * delete; objects hold frames as the shard writes them.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type EtcdLink } from '../../src/actors';
import { type LedgerKv } from '../../src/objects/maintenance-ledger';
import { ByteRate, type ByteRateClock, Compactor, type Fence, GROUP_OBJECT_WHOLE_MAX, type PlacedStream, type HolderCompare, Ledger, ObjectCensus, type ObjectStore, Reaper, fenceMarker, groupObjectKey, groupTrailer, openObjectStore } from '../../src/objects';
import { FrameType, encodeFrame } from '../../src/shards/worker/frame';
import { etcdForFile } from '../helpers/etcd-for-file';

const etcd = etcdForFile();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const me: Fence = { nodeId: 1, epoch: 1 };

interface World {
  prefix: string;
  ledger: Ledger;
  store: ObjectStore;
  /** Every frame written per stream, in order (what a reader of the ledger must get back). */
  written: Map<string, Buffer[]>;
  /** Next seq per stream. */
  seqs: Map<string, number>;
  counter: number;
}

/** A fresh ledger prefix and its own store directory (the reaper lists the whole store). */
function world(): World {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-maint-'));
  dirs.push(dir);
  const prefix = `maint/${randomBytes(6).toString('hex')}`;
  return { prefix, ledger: new Ledger(etcd.link, prefix), store: openObjectStore(`file:${dir}`), written: new Map(), seqs: new Map(), counter: 0 };
}

/**
 * One group object holding `perStream` frames of each stream (contiguous per stream, as the group
 * commit writes them), PUT, then recorded with the ledger's commit: with a reference marker, as a
 * shard's group commit records it, or (`markers` false) with an r/<object>/<stream> per entry, as
 * a tail recovery and builds before the markers do. Returns its key.
 */
async function group(w: World, streams: string[], perStream = 3, frameBytes = 200, nodeId = 1, markers = true): Promise<string> {
  const key = groupObjectKey(nodeId, 1, 0, w.counter);
  const parts: Buffer[] = [];
  const commits = [];
  let off = 0;
  for (const s of streams) {
    const frames = Array.from({ length: perStream }, (_, i) => encodeFrame(FrameType.Data, 7 + i, randomBytes(frameBytes)));
    const len = frames.reduce((n, f) => n + f.length, 0);
    const from = w.seqs.get(s) ?? 0;
    // A stream's first group records its m/ (as a CREATE frame's group does).
    const meta = w.seqs.has(s) ? {} : { meta: { meta: { name: s }, startSeq: 0, sealed: false } };
    commits.push({ stream: s, fence: me, counter: w.counter, off, len, from, to: from + perStream, ...meta });
    w.seqs.set(s, from + perStream);
    w.written.set(s, [...(w.written.get(s) ?? []), ...frames]);
    parts.push(...frames);
    off += len;
  }
  w.counter++;
  await w.store.put(key, parts);
  const { fenced } = await w.ledger.commit(key, off, commits, { markers });
  expect(fenced).toEqual([]);
  await recordedUpTo(w, groupObjectKey(nodeId, 1, 0, 0).slice(0, -12), w.counter - 1);
  return key;
}

/**
 * The writer's run from 0 recorded every group up to `n` (its h/ mark, as a group commit's
 * ledger txn moves it): its objects are not a run's unrecorded tail, which the reaper keeps for a
 * tail walk (run-tails.ts, tested in tail-recovery.test.ts).
 */
async function recordedUpTo(w: World, writer: string, n: number): Promise<void> {
  await etcd.link.txnOnce([], [{ put: w.ledger.keys.recorded(writer, 0), value: Buffer.from(String(n)) }], []);
}

async function create(w: World, streams: string[]): Promise<void> {
  for (const s of streams) expect((await w.ledger.takeFence(s, me, { create: true })).ok).toBe(true);
}

/** What a reader of the ledger gets: every entry's range, in entry order. */
async function readAll(w: World, stream: string): Promise<Buffer> {
  const entries = await w.ledger.entries(stream);
  const parts = await Promise.all(entries.map((e) => w.store.get(e.o, { offset: e.off, length: e.len })));
  return Buffer.concat(parts);
}

async function storeKeys(w: World): Promise<string[]> {
  const out: string[] = [];
  for (const p of ['c/', 'g/']) for await (const o of w.store.list(p)) out.push(o.key);
  return out;
}

/** Take the maintenance key (`<prefix>/k/maintenance`, create-only, on a lease) as a lease holder does. */
async function takeMaintenance(w: World, nodeId: number): Promise<{ compare: HolderCompare; lease: string }> {
  const lease = await etcd.link.grantLease(30, 5_000);
  const key = `${w.prefix}/k/maintenance`;
  const r = await etcd.link.txnOnce([{ key, absent: true }], [{ put: key, value: Buffer.from(JSON.stringify({ nodeId })), lease }], []);
  expect(r.succeeded).toBe(true);
  return { compare: { key, modRevision: r.revision }, lease };
}

/** `store` with some of its operations replaced (to act at a chosen moment); the rest pass through. */
function around(store: ObjectStore, over: Partial<Pick<ObjectStore, 'put' | 'get' | 'delete'>>): ObjectStore {
  return {
    describe: store.describe,
    createOnly: store.createOnly,
    put: over.put ?? ((k, b, o) => store.put(k, b, o)),
    get: over.get ?? ((k, r) => store.get(k, r)),
    delete: over.delete ?? ((k) => store.delete(k)),
    list: (p, after) => store.list(p, after),
    close: () => store.close(),
  };
}

const reaperOf = (w: World, holder: () => HolderCompare | null, store: ObjectStore = w.store): Reaper =>
  new Reaper({ kv: etcd.link, keys: w.ledger.keys, store, holder }, { runTailPinMs: 0, deadGraceMs: 0, orphanAgeMs: 0, orphanSweepMs: 0, liveRecheckMs: 0 });

/** Every entry of every stream still points at an object the store has, and reads back what was written from `fromSeq`. */
async function expectLiveIntact(w: World, streams: Array<{ name: string; fromFrame: number }>): Promise<void> {
  const present = new Set(await storeKeys(w));
  for (const { name, fromFrame } of streams) {
    for (const e of await w.ledger.entries(name)) expect(present.has(e.o)).toBe(true);
    expect((await readAll(w, name)).equals(Buffer.concat(w.written.get(name)!.slice(fromFrame)))).toBe(true);
  }
}


/** The test's etcd link, counting the calls maintenance makes, by kind. */
function countedLink(): { calls: { get: number; rangePage: number; readMany: number; txnOnce: number }; counted: LedgerKv } {
  const calls = { get: 0, rangePage: 0, readMany: 0, txnOnce: 0 };
  const counted: LedgerKv = {
    rangePage: (...a) => (calls.rangePage++, etcd.link.rangePage(...a)),
    countPrefix: (...a) => etcd.link.countPrefix(...a),
    get: (...a) => (calls.get++, etcd.link.get(...a)),
    readMany: (...a) => (calls.readMany++, etcd.link.readMany(...a)),
    txnOnce: (...a) => (calls.txnOnce++, etcd.link.txnOnce(...a)),
  };
  return { calls, counted };
}

/**
 * The test's etcd link with its transactions held at a gate: reads pass, each transaction waits
 * until `release()`; `reachedGate` resolves when the first one arrives (a ledger call that has read
 * its entries and not yet written anything).
 */
function gatedLink(): { gated: EtcdLink; reachedGate: Promise<void>; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let atGate!: () => void;
  const reachedGate = new Promise<void>((r) => (atGate = r));
  const gated = {
    get closed() {
      return etcd.link.closed;
    },
    rangePrefix: (p: string, ms: number) => etcd.link.rangePrefix(p, ms),
    get: (k: string, ms: number) => etcd.link.get(k, ms),
    txnOnce: async (...a: Parameters<EtcdLink['txnOnce']>) => {
      atGate();
      await gate;
      return etcd.link.txnOnce(...a);
    },
  } as unknown as EtcdLink;
  return { gated, reachedGate, release };
}
describe('compaction', () => {
  it('rewrites a crowded stream\'s small entries into one c/ object that reads back the same frames', async () => {
    const w = world();
    await create(w, ['s/a', 'b']);
    const objects: string[] = [];
    for (let i = 0; i < 40; i++) objects.push(await group(w, ['s/a', 'b']));
    const before = await readAll(w, 's/a');
    const firstKey = (await w.ledger.entries('s/a'))[0]!.key;

    const compactor = new Compactor({ kv: etcd.link, keys: w.ledger.keys, store: w.store, placed: () => [{ name: 's/a', streamId: 42, fence: me }] });
    const t = await compactor.tick();
    // Every entry but the newest, which is never rewritten (tail recovery starts from it).
    expect(t).toMatchObject({ runs: 1, entriesReplaced: 39, fenced: 0 });

    const after = await w.ledger.entries('s/a');
    expect(after).toHaveLength(2);
    expect(after[0]).toMatchObject({ key: firstKey, off: 0, from: 0, to: 117, len: before.length - after[1]!.len });
    expect(after[1]).toMatchObject({ o: objects[39], from: 117, to: 120 });
    expect(after[0]!.o).toMatch(/^c\/42\/0000000001\.\d{12,}$/);
    expect((await readAll(w, 's/a')).equals(before)).toBe(true);
    expect((await readAll(w, 'b')).equals(Buffer.concat(w.written.get('b')!))).toBe(true);
    // The new object is recorded and referenced (r/<c>/<stream>); the group objects keep their
    // reference markers (b's entries still point into them), and no key per stream.
    const keys = w.ledger.keys;
    expect((await etcd.link.get(keys.object(after[0]!.o), 5_000)).kv).not.toBeNull();
    expect(await etcd.link.countPrefix(keys.refs(after[0]!.o), 5_000)).toBe(1);
    for (const o of objects) expect((await etcd.link.rangePrefix(keys.refs(o), 5_000)).kvs.map((kv) => kv.key)).toEqual([keys.referenceMarker(o)]);
    expect(await w.ledger.entries('b')).toHaveLength(40);
    // The compacted entry and the newest left: nothing more to do.
    expect((await compactor.tick()).runs).toBe(0);
  });

  it('leaves a few small entries until they have settled', async () => {
    const w = world();
    await create(w, ['q']);
    for (let i = 0; i < 3; i++) await group(w, ['q']);
    const compactor = new Compactor({ kv: etcd.link, keys: w.ledger.keys, store: w.store, placed: () => [{ name: 'q', streamId: 1, fence: me }] }, { settleMs: 10_000 });
    const now = Date.now();
    expect((await compactor.tick(now)).runs).toBe(0);
    expect(await w.ledger.entries('q')).toHaveLength(3);
    expect(await compactor.tick(now + 10_001)).toMatchObject({ runs: 1, entriesReplaced: 2 });
    expect(await w.ledger.entries('q')).toHaveLength(2);
    expect((await readAll(w, 'q')).equals(Buffer.concat(w.written.get('q')!))).toBe(true);
  });

  it('passes over a stream whose visit found nothing to compact until its first entry not settled yet settles; a crowded one is visited every tick', async () => {
    const w = world();
    await create(w, ['calm', 'crowd']);
    for (let i = 0; i < 3; i++) await group(w, ['calm']);
    for (let i = 0; i < 40; i++) await group(w, ['crowd'], 1, 20);
    const { calls, counted } = countedLink();
    const placed = [
      { name: 'calm', streamId: 1, fence: me },
      { name: 'crowd', streamId: 2, fence: me },
    ];
    // Entries seen are read again by each visit (#seen): the turn's one read-only txn a tick, and what it read.
    const turns: string[][] = [];
    const kv: LedgerKv = {
      ...counted,
      readMany: (reads, ms) => {
        turns.push(reads.flatMap((r) => ('prefix' in r && r.prefix !== undefined ? [r.prefix.split('/i/')[1]!.replace(/\/$/, '')] : [])));
        return counted.readMany(reads, ms);
      },
    };
    const compactor = new Compactor({ kv, keys: w.ledger.keys, store: w.store, placed: () => placed }, { settleMs: 10_000, maxEntries: 32 });
    const now = Date.now();
    // Both visited: crowd (41 entries) makes runs; calm's three entries were first seen now.
    expect((await compactor.tick(now)).runs).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 40; i++) await group(w, ['crowd'], 1, 20);
    // Within the settle time calm is not read at all; crowd, crowded again, is, and compacted;
    // then crowd's few entries are new too, and neither stream is read (no etcd call).
    expect((await compactor.tick(now + 1_000)).runs).toBeGreaterThanOrEqual(1);
    expect((await compactor.tick(now + 5_000)).runs).toBe(0);
    expect((await compactor.tick(now + 9_999)).runs).toBe(0);
    expect(turns).toEqual([['calm', 'crowd'], ['crowd'], ['crowd']]);
    expect(calls.readMany).toBe(3);
    // Once its entries settle, calm is visited and compacted.
    expect(await compactor.tick(now + 10_001)).toMatchObject({ runs: 1, entriesReplaced: 2 });
    expect(turns[3]).toEqual(['calm']);
    for (const n of ['calm', 'crowd']) expect((await readAll(w, n)).equals(Buffer.concat(w.written.get(n)!))).toBe(true);
  });

  it('takes the placed streams in turn, streamsPerTick at a time', async () => {
    const w = world();
    const names = ['r1', 'r2', 'r3'];
    await create(w, names);
    for (let i = 0; i < 3; i++) await group(w, names);
    const compactor = new Compactor({ kv: etcd.link, keys: w.ledger.keys, store: w.store, placed: () => names.map((name, i) => ({ name, streamId: 20 + i, fence: me })) }, { settleMs: 0, streamsPerTick: 1 });
    const counts = async (): Promise<number[]> => Promise.all(names.map(async (n) => (await w.ledger.entries(n)).length));
    expect(await counts()).toEqual([3, 3, 3]);
    expect((await compactor.tick()).runs).toBe(1);
    expect(await counts()).toEqual([2, 3, 3]);
    expect((await compactor.tick()).runs).toBe(1);
    expect((await compactor.tick()).runs).toBe(1);
    expect(await counts()).toEqual([2, 2, 2]);
    for (const n of names) expect((await readAll(w, n)).equals(Buffer.concat(w.written.get(n)!))).toBe(true);
  });

  it('reads the streams a tick visits, their entries and m/ records, with one etcd call, not one or two a stream', async () => {
    const w = world();
    const names = ['quiet-a', 'quiet-b', 'busy'];
    await create(w, names);
    await group(w, names);
    for (let i = 0; i < 3; i++) await group(w, ['busy']);
    const { calls, counted } = countedLink();
    const placed = names.map((name, i) => ({ name, streamId: 200 + i, fence: me }));
    const compactor = new Compactor({ kv: counted, keys: w.ledger.keys, store: w.store, placed: () => placed }, { settleMs: 0 });
    // quiet-a and quiet-b hold one entry each (never in a run), busy a run: one call reads all
    // three streams' entries and m/ records, then busy's run is its txn.
    expect(await compactor.tick()).toMatchObject({ runs: 1 });
    expect(calls).toEqual({ rangePage: 0, get: 0, readMany: 1, txnOnce: 1 });
    // Then none has a run: one call.
    expect(await compactor.tick()).toMatchObject({ runs: 0 });
    expect(calls).toEqual({ rangePage: 0, get: 0, readMany: 2, txnOnce: 1 });
  });

  it('reads the entries past the first page of a stream page by page, and compacts them as before', async () => {
    const w = world();
    await create(w, ['long']);
    // More entries than the turn's first read takes of a stream (64).
    for (let i = 0; i < 90; i++) await group(w, ['long']);
    const { calls, counted } = countedLink();
    const compactor = new Compactor({ kv: counted, keys: w.ledger.keys, store: w.store, placed: () => [{ name: 'long', streamId: 12, fence: me }] }, { settleMs: 0, maxRun: 60, runsPerTick: 2 });
    expect(await compactor.tick()).toMatchObject({ runs: 2, fenced: 0 });
    expect(calls.readMany).toBe(1);
    expect(calls.rangePage).toBeGreaterThanOrEqual(1); // the entries past the first 64
    // 90 entries: a run of 60 and one of the remaining 29 (the newest is never in a run) → 3 entries.
    expect(await w.ledger.entries('long')).toHaveLength(3);
    expect((await readAll(w, 'long')).equals(Buffer.concat(w.written.get('long')!))).toBe(true);
  });

  it('makes runs one after another in a tick when a stream has more entries than one run takes', async () => {
    const w = world();
    await create(w, ['fast']);
    const objects: string[] = [];
    for (let i = 0; i < 23; i++) objects.push(await group(w, ['fast']));
    const compactor = new Compactor({ kv: etcd.link, keys: w.ledger.keys, store: w.store, placed: () => [{ name: 'fast', streamId: 11, fence: me }] }, { settleMs: 0, maxRun: 5, runsPerTick: 3 });
    // Three runs of five entries: 23 entries become 3 + 8.
    expect(await compactor.tick()).toMatchObject({ runs: 3, entriesReplaced: 15, fenced: 0 });
    const after = await w.ledger.entries('fast');
    expect(after).toHaveLength(11);
    expect(after.slice(0, 3).map((e) => e.o)).toEqual([expect.stringMatching(/^c\/11\//), expect.stringMatching(/^c\/11\//), expect.stringMatching(/^c\/11\//)]);
    expect(after.slice(3).map((e) => e.o)).toEqual(objects.slice(15));
    expect((await readAll(w, 'fast')).equals(Buffer.concat(w.written.get('fast')!))).toBe(true);
    // Each c/ object has its own reference; each replaced group object only its marker, whose one
    // entry now points elsewhere or is gone: the reaper takes exactly those.
    const keys = w.ledger.keys;
    for (const e of after.slice(0, 3)) expect(await etcd.link.countPrefix(keys.refs(e.o), 5_000)).toBe(1);
    const { compare } = await takeMaintenance(w, 1);
    expect(await reaperOf(w, () => compare).tick()).toMatchObject({ destroyed: 15, deleted: 15 });
    expect((await storeKeys(w)).filter((k) => k.startsWith('g/'))).toEqual(objects.slice(15));
    // The next tick goes on where this one stopped (the c/ entries are small too: the first run takes them in).
    expect(await compactor.tick()).toMatchObject({ runs: 2, fenced: 0 });
    expect((await readAll(w, 'fast')).equals(Buffer.concat(w.written.get('fast')!))).toBe(true);
  });

  it('started, follows a tick that spent its whole run budget with the next at once, not a second later', async () => {
    const w = world();
    await create(w, ['busy']);
    for (let i = 0; i < 40; i++) await group(w, ['busy']);
    // One run of up to 4 entries a tick, a tick a second: the 40 entries settle (at 4: two
    // tiers of c/ entries, the newest and one too light to merge yet) after some 12 runs, which
    // at one a second would take 12 s; ticks that follow each other at once (each spent its
    // budget) take well under that.
    const compactor = new Compactor({ kv: etcd.link, keys: w.ledger.keys, store: w.store, placed: () => [{ name: 'busy', streamId: 13, fence: me }] }, { settleMs: 0, maxRun: 4, runsPerTick: 1, intervalMs: 1_000 });
    const t0 = Date.now();
    compactor.start();
    let entries = 40;
    let changed = t0;
    // Settled: no change for 2.5 s (two idle ticks).
    while (Date.now() - changed < 2_500 && Date.now() - t0 < 20_000) {
      await new Promise((r) => setTimeout(r, 50));
      const n = (await w.ledger.entries('busy')).length;
      if (n !== entries) changed = Date.now();
      entries = n;
    }
    await compactor.stop();
    expect(entries).toBeLessThanOrEqual(4);
    expect(changed - t0).toBeLessThan(6_000);
    expect((await readAll(w, 'busy')).equals(Buffer.concat(w.written.get('busy')!))).toBe(true);
  });

  it('copies each byte of a stream that gains a small entry at a time a few times, not once per run (size-tiered runs)', async () => {
    const w = world();
    await create(w, ['slow']);
    const compactor = new Compactor({ kv: etcd.link, keys: w.ledger.keys, store: w.store, placed: () => [{ name: 'slow', streamId: 14, fence: me }] }, { settleMs: 0 });
    // A small entry, then a tick: a compacted entry merged with every newer one was copied again by
    // each run, 23x the stream's bytes after 48 entries and growing with the stream (458x after 2,000).
    for (let i = 0; i < 48; i++) {
      await group(w, ['slow'], 1, 200);
      await compactor.tick();
    }
    const data = Buffer.concat(w.written.get('slow')!).length;
    const written = compactor.stats().writtenBytes;
    expect(written / data).toBeLessThan(8);
    // A few tiers of c/ entries, each at least twice the next, and the newest.
    const entries = await w.ledger.entries('slow');
    expect(entries.length).toBeLessThanOrEqual(6);
    const compacted = entries.slice(0, -1).filter((e) => e.o.startsWith('c/')).map((e) => e.len);
    for (let i = 1; i < compacted.length; i++) expect(compacted[i - 1]!).toBeGreaterThan(compacted[i]!);
    expect((await readAll(w, 'slow')).equals(Buffer.concat(w.written.get('slow')!))).toBe(true);
  });

  it('reads a small group object once, whole, for every stream whose part it holds; a large one by range', async () => {
    const w = world();
    const names = ['g1', 'g2', 'g3', 'g4', 'g5', 'g6', 'g7', 'g8'];
    await create(w, names);
    const small: string[] = [];
    for (let i = 0; i < 12; i++) small.push(await group(w, names, 2, 100));
    // Over GROUP_OBJECT_WHOLE_MAX: each stream's part of it is read on its own, as before.
    const large = await group(w, names.slice(0, 2), 1, GROUP_OBJECT_WHOLE_MAX / 2);
    for (let i = 0; i < 3; i++) small.push(await group(w, names, 2, 100));
    for (const e of await w.ledger.entries('g1')) expect(e.size).toBeGreaterThan(0);
    const gets: Array<{ key: string; whole: boolean }> = [];
    const store = around(w.store, {
      get: (k, r) => {
        gets.push({ key: k, whole: r === undefined });
        return w.store.get(k, r);
      },
    });
    const placed = (): PlacedStream[] => names.map((name, i) => ({ name, streamId: 80 + i, fence: me }));
    const compactor = new Compactor({ kv: etcd.link, keys: w.ledger.keys, store, placed }, { settleMs: 0 });
    const t = await compactor.tick();
    expect(t.fenced).toBe(0);
    expect(t.entriesReplaced).toBeGreaterThanOrEqual(8 * 12);
    for (const n of names) expect((await readAll(w, n)).equals(Buffer.concat(w.written.get(n)!))).toBe(true);
    // Each small group object the runs took was read once, whole, for all eight streams (one GET
    // per entry was 8 a group); the large one by range, once per stream that took it in a run.
    const wholeKeys = gets.filter((g) => g.whole).map((g) => g.key);
    expect(new Set(wholeKeys).size).toBe(wholeKeys.length);
    for (const o of small.slice(0, 12)) expect(wholeKeys).toContain(o);
    expect(wholeKeys).not.toContain(large);
    expect(gets.filter((g) => !g.whole).every((g) => g.key === large)).toBe(true);
    expect(compactor.groupObjectStats.misses).toBe(wholeKeys.length);
    expect(compactor.groupObjectStats.hits + compactor.groupObjectStats.joined).toBeGreaterThanOrEqual(7 * 12);
  });

  it('compacts several streams at once into one shared object, their runs holding at most maxRunBytes in memory together', async () => {
    const w = world();
    const names = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'];
    await create(w, names);
    for (let i = 0; i < 3; i++) await group(w, names);
    const runBytes = (await w.ledger.entries('p1')).slice(0, 2).reduce((n, e) => n + e.len, 0);
    // Each PUT (a compacted object) takes 150 ms; how many are under way at once is recorded.
    const slowPuts = (): { store: ObjectStore; most: () => number; puts: () => number } => {
      let now = 0;
      let most = 0;
      let puts = 0;
      const store = around(w.store, {
        put: async (k, b, o) => {
          puts++;
          most = Math.max(most, ++now);
          await new Promise((r) => setTimeout(r, 150));
          now--;
          return w.store.put(k, b, o);
        },
      });
      return { store, most: () => most, puts: () => puts };
    };
    const placed = (): Array<{ name: string; streamId: number; fence: Fence }> => names.map((name, i) => ({ name, streamId: 60 + i, fence: me }));
    const objectsOf = async (): Promise<Set<string>> => new Set(await Promise.all(names.map(async (n) => (await w.ledger.entries(n))[0]!.o)));
    const wide = slowPuts();
    const t0 = Date.now();
    expect(await new Compactor({ kv: etcd.link, keys: w.ledger.keys, store: wide.store, placed }, { settleMs: 0 }).tick()).toMatchObject({ runs: 6, fenced: 0 });
    // Six runs made together: one object of 150 ms holds them all (six of them, one after
    // another, took 900 ms; side by side, six PUTs).
    expect(wide.puts()).toBe(1);
    expect(Date.now() - t0).toBeLessThan(700);
    expect((await objectsOf()).size).toBe(1);
    for (const n of names) expect((await readAll(w, n)).equals(Buffer.concat(w.written.get(n)!))).toBe(true);

    // Runs of about maxRunBytes each: one at a time, whatever the streams in parallel, each in an object of its own.
    for (let i = 0; i < 2; i++) await group(w, names);
    const narrow = slowPuts();
    const t = await new Compactor({ kv: etcd.link, keys: w.ledger.keys, store: narrow.store, placed }, { settleMs: 0, maxRunBytes: 2 * runBytes + 64 }).tick();
    expect(t).toMatchObject({ runs: 6, fenced: 0 });
    expect(narrow.most()).toBe(1);
    expect(narrow.puts()).toBe(6);
    expect((await objectsOf()).size).toBe(6);
    for (const n of names) expect((await readAll(w, n)).equals(Buffer.concat(w.written.get(n)!))).toBe(true);
  });

  it('records a shared object before its runs\' transactions, each of which names its range and the object\'s size; the next tier reads it once, whole', async () => {
    const w = world();
    const names = Array.from({ length: 10 }, (_, i) => `sh-${i}`);
    await create(w, names);
    for (let i = 0; i < 3; i++) await group(w, names, 2, 100);
    const txns: Array<{ compares: number; puts: string[] }> = [];
    const kv: LedgerKv = {
      ...countedLink().counted,
      txnOnce: (c, ok, f) => {
        txns.push({ compares: c.length, puts: ok.flatMap((op) => ('put' in op ? [op.put] : [])) });
        return etcd.link.txnOnce(c, ok, f);
      },
    };
    // Ids in the reverse of name order: the object is named after the lowest, whichever run came first.
    const placed = (): PlacedStream[] => names.map((name, i) => ({ name, streamId: 209 - i, fence: me }));
    expect(await new Compactor({ kv, keys: w.ledger.keys, store: w.store, placed }, { settleMs: 0 }).tick()).toMatchObject({ runs: 10, fenced: 0 });
    const entries = await Promise.all(names.map(async (n) => (await w.ledger.entries(n))[0]!));
    const shared = entries[0]!.o;
    expect(shared).toMatch(/^c\/200\//);
    const size = (await w.store.get(shared)).length;
    // One object, each stream's run at its own range, end to end, every entry naming the size.
    expect(entries.every((e) => e.o === shared && e.size === size)).toBe(true);
    const byOffset = [...entries].sort((a, b) => a.off - b.off);
    byOffset.forEach((e, i) => expect(e.off).toBe(i === 0 ? 0 : byOffset[i - 1]!.off + byOffset[i - 1]!.len));
    expect(byOffset[9]!.off + byOffset[9]!.len).toBe(size);
    // Its o/ record first, alone; then one transaction per run, which puts no o/ record of its own.
    const objectKey = w.ledger.keys.object(shared);
    expect(txns[0]).toEqual({ compares: 0, puts: [objectKey] });
    expect(txns.slice(1)).toHaveLength(10);
    for (const x of txns.slice(1)) expect(x.puts).not.toContain(objectKey);
    expect(await etcd.link.countPrefix(w.ledger.keys.refs(shared), 5_000)).toBe(10);
    for (const n of names) expect((await readAll(w, n)).equals(Buffer.concat(w.written.get(n)!))).toBe(true);

    // The next tier: each stream's compacted entry with newer ones, the shared object read once, whole.
    for (let i = 0; i < 4; i++) await group(w, names, 2, 100);
    const gets: Array<{ key: string; whole: boolean }> = [];
    const store = around(w.store, {
      get: (k, r) => {
        gets.push({ key: k, whole: r === undefined });
        return w.store.get(k, r);
      },
    });
    expect(await new Compactor({ kv: etcd.link, keys: w.ledger.keys, store, placed }, { settleMs: 0 }).tick()).toMatchObject({ runs: 10, fenced: 0 });
    expect(gets.filter((g) => g.key === shared)).toEqual([{ key: shared, whole: true }]);
    for (const n of names) expect((await readAll(w, n)).equals(Buffer.concat(w.written.get(n)!))).toBe(true);
    // No stream refers to the first shared object any more: the reaper frees it.
    expect(await etcd.link.countPrefix(w.ledger.keys.refs(shared), 5_000)).toBe(0);
    const { compare } = await takeMaintenance(w, 1);
    await reaperOf(w, () => compare).tick();
    expect(await storeKeys(w)).not.toContain(shared);
    await expectLiveIntact(w, names.map((name) => ({ name, fromFrame: 0 })));
  });

  it('a run\'s transaction that arrives after the reaper took its shared object for dead fails its compare and points nothing at it', async () => {
    const w = world();
    const names = ['late-a', 'late-b', 'late-c'];
    await create(w, names);
    for (let i = 0; i < 3; i++) await group(w, names);
    const before = await Promise.all(names.map((n) => w.ledger.entries(n)));
    // The runs' transactions (the ones with compares) wait at a gate; the shared object's record goes through.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let held = 0;
    const kv: LedgerKv = {
      ...countedLink().counted,
      txnOnce: async (c, ok, f) => {
        if (c.length > 0) {
          held++;
          await gate;
        }
        return etcd.link.txnOnce(c, ok, f);
      },
    };
    const placed = (): PlacedStream[] => names.map((name, i) => ({ name, streamId: 300 + i, fence: me }));
    const ticking = new Compactor({ kv, keys: w.ledger.keys, store: w.store, placed }, { settleMs: 0 }).tick();
    while (held < 3) await new Promise((r) => setTimeout(r, 5));
    // Recorded, and nothing refers to it yet: past the grace (0 here), the reaper deletes it.
    const shared = (await storeKeys(w)).find((k) => k.startsWith('c/'))!;
    expect((await etcd.link.get(w.ledger.keys.object(shared), 5_000)).kv).not.toBeNull();
    const { compare } = await takeMaintenance(w, 1);
    expect(await reaperOf(w, () => compare).tick()).toMatchObject({ destroyed: 1, deleted: 1 });
    expect(await storeKeys(w)).not.toContain(shared);
    // The runs' transactions then arrive: each fails on the record's revision, and nothing points at the deleted object.
    release();
    expect(await ticking).toMatchObject({ runs: 0, fenced: 3 });
    expect(await Promise.all(names.map((n) => w.ledger.entries(n)))).toEqual(before);
    expect(await etcd.link.countPrefix(w.ledger.keys.refs(shared), 5_000)).toBe(0);
    await expectLiveIntact(w, names.map((name) => ({ name, fromFrame: 0 })));
  });

  it('a shared object whose record fails is referred to by no run: its streams are as they were, and it is an orphan', async () => {
    const w = world();
    const names = ['rec-a', 'rec-b'];
    await create(w, names);
    for (let i = 0; i < 3; i++) await group(w, names);
    const before = await Promise.all(names.map((n) => w.ledger.entries(n)));
    const kv: LedgerKv = {
      ...countedLink().counted,
      txnOnce: (c, ok, f) => (c.length === 0 ? Promise.reject(new Error('etcd is not answering')) : etcd.link.txnOnce(c, ok, f)),
    };
    const placed = (): PlacedStream[] => names.map((name, i) => ({ name, streamId: 400 + i, fence: me }));
    await expect(new Compactor({ kv, keys: w.ledger.keys, store: w.store, placed }, { settleMs: 0 }).tick()).rejects.toThrow('etcd is not answering');
    expect(await Promise.all(names.map((n) => w.ledger.entries(n)))).toEqual(before);
    const shared = (await storeKeys(w)).filter((k) => k.startsWith('c/'));
    expect(shared).toHaveLength(1);
    expect((await etcd.link.get(w.ledger.keys.object(shared[0]!), 5_000)).kv).toBeNull();
    const { compare } = await takeMaintenance(w, 1);
    expect(await reaperOf(w, () => compare).tick()).toMatchObject({ orphans: 1 });
    await expectLiveIntact(w, names.map((name) => ({ name, fromFrame: 0 })));
  });

  it('never PUTs over an object: a new compactor of the same epoch (a restarted maintenance thread) takes keys of its own, and passes over one that exists', async () => {
    const w = world();
    await create(w, ['k']);
    for (let i = 0; i < 3; i++) await group(w, ['k']);
    const placed = (): PlacedStream[] => [{ name: 'k', streamId: 70, fence: me }];
    const at = Date.UTC(2026, 5, 1);
    /** A Compactor made while the clock reads `ms` (its counter starts from the clock). */
    const madeAt = (ms: number, store: ObjectStore = w.store): Compactor => {
      const clock = jest.spyOn(Date, 'now').mockReturnValue(ms);
      try {
        return new Compactor({ kv: etcd.link, keys: w.ledger.keys, store, placed }, { settleMs: 0 });
      } finally {
        clock.mockRestore();
      }
    };
    expect((await madeAt(at).tick()).runs).toBe(1);
    const first = (await w.ledger.entries('k'))[0]!;
    expect(first.o).toMatch(/^c\/70\//);
    const firstBytes = await w.store.get(first.o);

    // A compactor made in the same millisecond would take the same key: the store has it, so the
    // next is taken. (A PUT over it made the stream read another run's frames, and an etcd txn
    // that deleted and put the key's reference at once failed: "duplicate key given in txn".)
    for (let i = 0; i < 3; i++) await group(w, ['k']);
    expect((await madeAt(at).tick()).runs).toBe(1);
    expect((await w.store.get(first.o)).equals(firstBytes)).toBe(true);
    // A later one, on a store without create-only puts, starts past both.
    for (let i = 0; i < 3; i++) await group(w, ['k']);
    const plain = { ...around(w.store, {}), createOnly: false };
    expect((await madeAt(at + 1000, plain).tick()).runs).toBeGreaterThanOrEqual(1);
    const objects = (await storeKeys(w)).filter((k) => k.startsWith('c/70/'));
    expect(new Set(objects).size).toBe(objects.length);
    expect((await w.store.get(first.o)).equals(firstBytes)).toBe(true);
    expect((await readAll(w, 'k')).equals(Buffer.concat(w.written.get('k')!))).toBe(true);
  });

  it('reads a stream\'s entries from its first small one on, and only as many as the tick can use', async () => {
    const w = world();
    await create(w, ['long']);
    for (let i = 0; i < 12; i++) await group(w, ['long']);
    // Reads of i/ are counted (the turn's first read of the stream, and any page after it): where each starts and how many pairs come back.
    const reads: Array<{ from: string; pairs: number }> = [];
    const kv = {
      rangePage: async (...a: Parameters<EtcdLink['rangePage']>) => {
        const page = await etcd.link.rangePage(...a);
        if (a[1] === w.ledger.keys.entries('long')) reads.push({ from: a[0], pairs: page.kvs.length });
        return page;
      },
      readMany: async (...a: Parameters<EtcdLink['readMany']>) => {
        const res = await etcd.link.readMany(...a);
        a[0].forEach((q, i) => {
          if ('prefix' in q && q.prefix === w.ledger.keys.entries('long')) reads.push({ from: q.from, pairs: res.results[i]!.kvs.length });
        });
        return res;
      },
      countPrefix: (p: string, ms: number) => etcd.link.countPrefix(p, ms),
      get: (k: string, ms: number) => etcd.link.get(k, ms),
      txnOnce: (...a: Parameters<EtcdLink['txnOnce']>) => etcd.link.txnOnce(...a),
    };
    let fence = me;
    // Entries of 3 frames of 200 B are small below 1 KiB; a run of 4 of them (c/, ~2.4 KiB) is large.
    const compactor = new Compactor({ kv, keys: w.ledger.keys, store: w.store, placed: () => [{ name: 'long', streamId: 12, fence }] }, { settleMs: 0, smallBytes: 1024, maxRun: 4, runsPerTick: 2 });
    // Two runs: entries [0, 4) and [4, 8) become two large c/ entries; a read of 2 × 4 + 1 pairs at most.
    expect(await compactor.tick()).toMatchObject({ runs: 2, entriesReplaced: 8 });
    expect(reads).toEqual([{ from: w.ledger.keys.entries('long'), pairs: 9 }]);
    const entries = await w.ledger.entries('long');
    expect(entries.map((e) => e.len >= 1024)).toEqual([true, true, false, false, false, false]);
    for (let i = 0; i < 4; i++) await group(w, ['long']);
    reads.length = 0;
    // The next tick starts at the first small entry (the cursor): the two large ones are not read again.
    expect(await compactor.tick()).toMatchObject({ runs: 2, entriesReplaced: 7 });
    expect(reads[0]).toEqual({ from: entries[2]!.key, pairs: 8 });
    expect((await readAll(w, 'long')).equals(Buffer.concat(w.written.get('long')!))).toBe(true);
    // Under another placement (the stream moved away and back) the cursor no longer holds: read from the start.
    expect((await w.ledger.takeFence('long', { nodeId: 1, epoch: 2 }, { from: me })).ok).toBe(true);
    fence = { nodeId: 1, epoch: 2 };
    reads.length = 0;
    await compactor.tick();
    expect(reads[0]!.from).toBe(w.ledger.keys.entries('long'));
  });

  it('never copies a damaged frame: the run stays as it was', async () => {
    const w = world();
    await create(w, ['d']);
    const objects: string[] = [];
    for (let i = 0; i < 4; i++) objects.push(await group(w, ['d']));
    const before = await w.ledger.entries('d');
    // Flip a payload byte of the second object's first frame on disk.
    const obj = await w.store.get(objects[1]!);
    obj[20] = obj[20]! ^ 0xff;
    await w.store.put(objects[1]!, obj);
    const compactor = new Compactor({ kv: etcd.link, keys: w.ledger.keys, store: w.store, placed: () => [{ name: 'd', streamId: 3, fence: me }] }, { settleMs: 0 });
    expect((await compactor.tick()).runs).toBe(0);
    expect(await w.ledger.entries('d')).toEqual(before);
    expect(await storeKeys(w)).toEqual(objects);
  });

  it('writes nothing when the stream moved; its object is an orphan the reaper deletes', async () => {
    const w = world();
    await create(w, ['m']);
    const objects: string[] = [];
    for (let i = 0; i < 5; i++) objects.push(await group(w, ['m']));
    const before = await w.ledger.entries('m');
    // Another node opened the stream (epoch 2): this owner's compaction is fenced.
    expect((await w.ledger.takeFence('m', { nodeId: 2, epoch: 2 }, { from: me })).ok).toBe(true);
    const compactor = new Compactor({ kv: etcd.link, keys: w.ledger.keys, store: w.store, placed: () => [{ name: 'm', streamId: 9, fence: me }] }, { settleMs: 0 });
    expect(await compactor.tick()).toMatchObject({ runs: 0, fenced: 1 });
    expect(await w.ledger.entries('m')).toEqual(before);
    const orphans = (await storeKeys(w)).filter((k) => k.startsWith('c/'));
    expect(orphans).toHaveLength(1);
    expect((await etcd.link.get(w.ledger.keys.object(orphans[0]!), 5_000)).kv).toBeNull();

    const { compare } = await takeMaintenance(w, 1);
    const t = await reaperOf(w, () => compare).tick();
    expect(t).toMatchObject({ holder: true, destroyed: 0, orphans: 1 });
    expect(await storeKeys(w)).toEqual(objects);
    await expectLiveIntact(w, [{ name: 'm', fromFrame: 0 }]);
  });
  /**
   * The race a trim and a compaction can run: the trim's group commit writes m/, the trim reads
   * the entries, the compaction commits, then the trim's txn deletes by key what it read, which
   * includes the run's first key (where the compacted entry now is). Staged in both windows: the
   * trim begins during the compaction's PUT (before its second m/ read), or just before its txn.
   */
  it.each(['during the PUT', 'just before the txn'])('gives up a run that a trim reaches into (trim begun %s); the trim stands whole', async (when) => {
    const w = world();
    await create(w, ['t']);
    for (let i = 0; i < 6; i++) await group(w, ['t']);
    // The trim's ledger: its transactions wait at a gate, so it has read the entries but not yet deleted them.
    const { gated, reachedGate, release } = gatedLink();
    const trimmer = new Ledger(gated, w.prefix);
    let trim: Promise<boolean> | null = null;
    const beginTrim = async (): Promise<void> => {
      if (trim !== null) return;
      // The trim's group commit records the new start in m/, then the trim reads and waits at the gate.
      const m = await etcd.link.get(w.ledger.keys.meta('t'), 5_000);
      const meta = JSON.parse(m.kv!.value.toString()) as Record<string, unknown>;
      await etcd.link.txnOnce([], [{ put: w.ledger.keys.meta('t'), value: Buffer.from(JSON.stringify({ ...meta, startSeq: 9 })) }], []);
      trim = trimmer.trim('t', me, 9);
      await reachedGate;
    };
    const store = around(w.store, {
      put: async (key, body) => {
        await w.store.put(key, body);
        if (when === 'during the PUT') await beginTrim();
      },
    });
    const kv = {
      rangePage: etcd.link.rangePage.bind(etcd.link),
      countPrefix: etcd.link.countPrefix.bind(etcd.link),
      get: etcd.link.get.bind(etcd.link),
      readMany: etcd.link.readMany.bind(etcd.link),
      txnOnce: async (...a: Parameters<EtcdLink['txnOnce']>) => {
        if (when === 'just before the txn') await beginTrim();
        return etcd.link.txnOnce(...a);
      },
    };
    const compactor = new Compactor({ kv, keys: w.ledger.keys, store, placed: () => [{ name: 't', streamId: 5, fence: me }] }, { settleMs: 0 });
    expect(await compactor.tick()).toMatchObject({ runs: 0, fenced: 1 });
    release();
    expect(await trim).toBe(true);
    expect((await w.ledger.entries('t')).map((e) => [e.from, e.to])).toEqual([
      [9, 12],
      [12, 15],
      [15, 18],
    ]);
    expect((await readAll(w, 't')).equals(Buffer.concat(w.written.get('t')!.slice(9)))).toBe(true);
    // A later tick compacts what the trim left.
    expect(await new Compactor({ kv: etcd.link, keys: w.ledger.keys, store: w.store, placed: () => [{ name: 't', streamId: 5, fence: me }] }, { settleMs: 0 }).tick()).toMatchObject({ runs: 1, entriesReplaced: 2 });
    expect((await readAll(w, 't')).equals(Buffer.concat(w.written.get('t')!.slice(9)))).toBe(true);
  });
});

describe('compaction under a byte rate (--objects-compact-bytes-per-second)', () => {
  /**
   * A fake clock for the byte rate: time moves only when it sleeps, by what was asked, after the
   * current macrotask (so a request granted at t is sent at t). The schedule is then the same however
   * slowly etcd and the disk answer.
   */
  function fakeClock(): ByteRateClock & { t: number } {
    const c = {
      t: 0,
      now: () => c.t,
      sleep: (ms: number, signal: AbortSignal) =>
        new Promise<void>((resolve, reject) =>
          setImmediate(() => {
            if (signal.aborted) return reject(signal.reason);
            c.t += ms;
            resolve();
          }),
        ),
    };
    return c;
  }

  /** `w.store` with every GET and PUT recorded: its bytes and the fake time it was sent at. */
  function recorded(w: World, clock: ByteRateClock): { store: ObjectStore; sent: Array<{ op: 'get' | 'put'; at: number; bytes: number }> } {
    const sent: Array<{ op: 'get' | 'put'; at: number; bytes: number }> = [];
    const store = around(w.store, {
      // A whole GET (a small group object, read once for all its streams) counts what it returned.
      get: async (k, r) => {
        const at = clock.now();
        const body = await w.store.get(k, r);
        sent.push({ op: 'get', at, bytes: body.length });
        return body;
      },
      put: (k, b, o) => {
        sent.push({ op: 'put', at: clock.now(), bytes: Buffer.isBuffer(b) ? b.length : (b as readonly Buffer[]).reduce((n, x) => n + x.length, 0) });
        return w.store.put(k, b, o);
      },
    });
    return { store, sent };
  }

  /** The most bytes sent in any window (t - 1 s, t] (the maximum is at a window ending at a request). */
  const busiestSecond = (sent: ReadonlyArray<{ at: number; bytes: number }>): number =>
    Math.max(...sent.map((g) => sent.filter((x) => x.at > g.at - 1000 && x.at <= g.at).reduce((n, x) => n + x.bytes, 0)));

  afterEach(() => jest.restoreAllMocks());

  it('compacts N bytes at a bound of N/2 a second: every byte read and written asks the bound first, and no second holds more than N/2', async () => {
    const w = world();
    await create(w, ['paced']);
    for (let i = 0; i < 40; i++) await group(w, ['paced']);
    const entries = await w.ledger.entries('paced');
    // N: the bytes of every entry but the newest (never rewritten), read once and written once.
    const n = entries.slice(0, -1).reduce((x, e) => x + e.len, 0);
    const bound = Math.floor(n / 2);
    const clock = fakeClock();
    const { store, sent } = recorded(w, clock);
    const takes = jest.spyOn(ByteRate.prototype, 'take');
    // smallBytes 1 KiB: a compacted run is large, so the tick rewrites each entry once.
    const compactor = new Compactor({ kv: etcd.link, keys: w.ledger.keys, store, placed: () => [{ name: 'paced', streamId: 31, fence: me }], clock }, { settleMs: 0, smallBytes: 1024, bytesPerSecond: bound });
    const t = await compactor.tick();
    // Runs are at most half the bound (a quarter of N), so a run's GETs and PUT fit one second.
    expect(t).toMatchObject({ entriesReplaced: 39, bytes: n, fenced: 0 });
    expect(t.runs).toBeGreaterThanOrEqual(4);
    expect((await readAll(w, 'paced')).equals(Buffer.concat(w.written.get('paced')!))).toBe(true);

    // Every request asked for exactly its bytes: the takes are the requests, size for size.
    const sizes = (xs: number[]): number[] => [...xs].sort((a, b) => a - b);
    expect(sizes(takes.mock.calls.map(([bytes]) => bytes))).toEqual(sizes(sent.map((x) => x.bytes)));
    expect(sent.filter((x) => x.op === 'get').reduce((x, g) => x + g.bytes, 0)).toBe(n);
    expect(sent.filter((x) => x.op === 'put').reduce((x, g) => x + g.bytes, 0)).toBe(n);
    // The schedule: never more than the bound in any second; 2N = 4 × the bound takes at least
    // 3 s past the first request, and (a request waits only for room) no more than twice that.
    expect(busiestSecond(sent)).toBeLessThanOrEqual(bound);
    const end = Math.max(...sent.map((x) => x.at));
    expect(end).toBeGreaterThanOrEqual(3000);
    expect(end).toBeLessThanOrEqual(9 * 1010);
    // Time moved only while compaction waited for the bound, and the stats say so.
    expect(compactor.stats()).toEqual({ readBytes: n, writtenBytes: n, throttledMs: clock.t });
  });

  it('stop() ends a tick waiting for the bound at once; the run it was making is not written', async () => {
    const w = world();
    await create(w, ['halt']);
    for (let i = 0; i < 20; i++) await group(w, ['halt']);
    const entries = await w.ledger.entries('halt');
    // A clock that never moves: the first second's bytes go, then the next request waits for good.
    let waiting!: () => void;
    const reachedWait = new Promise<void>((r) => (waiting = r));
    const clock: ByteRateClock = {
      now: () => 0,
      sleep: (_ms, signal) => {
        waiting();
        return new Promise<void>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
      },
    };
    const n = entries.slice(0, -1).reduce((x, e) => x + e.len, 0);
    // Runs of half the bound: the first run's GETs and PUT fill the second, the second run waits.
    const compactor = new Compactor({ kv: etcd.link, keys: w.ledger.keys, store: w.store, placed: () => [{ name: 'halt', streamId: 32, fence: me }], clock }, { settleMs: 0, smallBytes: 1024, bytesPerSecond: Math.ceil(n / 2) });
    const ticking = compactor.tick();
    await reachedWait;
    await compactor.stop();
    const t = await ticking;
    expect(t).toMatchObject({ runs: 1, fenced: 0 });
    expect((await storeKeys(w)).filter((k) => k.startsWith('c/'))).toHaveLength(1);
    expect(await w.ledger.entries('halt')).toHaveLength(entries.length - t.entriesReplaced + 1);
    expect((await readAll(w, 'halt')).equals(Buffer.concat(w.written.get('halt')!))).toBe(true);
  });
});

describe('the reaper', () => {
  it('keeps a group object while any entry its reference marker names points into it, and reaps it once the last lets go', async () => {
    const w = world();
    await create(w, ['a', 'b', 'c']);
    const g0 = await group(w, ['a', 'b', 'c']);
    const g1 = await group(w, ['a', 'b', 'c']);
    const keys = w.ledger.keys;
    // One marker per object, naming the three streams' entries; no r/<object>/<stream> key.
    expect((await etcd.link.rangePrefix(keys.refs(g0), 5_000)).kvs.map((kv) => [kv.key, JSON.parse(kv.value.toString()) as unknown])).toEqual([
      [keys.referenceMarker(g0), ['a', 'b', 'c'].map((s) => keys.markedEntry(s, me.epoch, 0))],
    ]);
    expect((await w.ledger.entries('a'))[0]).toMatchObject({ o: g0, m: 1 });
    const { compare } = await takeMaintenance(w, 1);
    const reaper = reaperOf(w, () => compare);
    // a's part of g0 trimmed away, then b deleted: c's entry still points into g0.
    expect(await w.ledger.trim('a', me, 3)).toBe(true);
    expect(await w.ledger.deleteStream('b', me)).toBe(true);
    expect(await reaper.tick()).toMatchObject({ destroyed: 0, deleted: 0 });
    // c's entry compacted into a c/ object under the same key: nothing points into g0 any more.
    const compactor = new Compactor({ kv: etcd.link, keys, store: w.store, placed: () => [{ name: 'c', streamId: 3, fence: me }] }, { settleMs: 0 });
    expect(await compactor.tick()).toMatchObject({ runs: 0 });
    await group(w, ['c']); // c's newest entry is never rewritten: a third group makes g1's small part of it compactable, and g0's
    expect(await compactor.tick()).toMatchObject({ runs: 1, entriesReplaced: 2 });
    // Until the reaper takes it, the marker is a key under r/<g0>/: what a reaper of a build
    // before the markers looks for, so such a reaper keeps the object.
    expect(await etcd.link.countPrefix(keys.refs(g0), 5_000)).toBe(1);
    expect(await reaper.tick()).toMatchObject({ destroyed: 1, deleted: 1 });
    expect(await storeKeys(w)).not.toContain(g0);
    // g1: a's entry still points into it.
    expect(await storeKeys(w)).toContain(g1);
    expect(await etcd.link.countPrefix(keys.refs(g0), 5_000)).toBe(0);
    await expectLiveIntact(w, [
      { name: 'a', fromFrame: 3 },
      { name: 'c', fromFrame: 0 },
    ]);
  });

  it('reads a live marked object again only after liveRecheckMs, and then one entry: the one that held it last time', async () => {
    const w = world();
    await create(w, ['p', 'q', 'r']);
    for (let i = 0; i < 20; i++) await group(w, ['p', 'q', 'r'], 1, 50);
    const { compare } = await takeMaintenance(w, 1);
    let gets = 0;
    const kv: LedgerKv = { ...countedLink().counted, readMany: (reads, ms) => ((gets += reads.length), etcd.link.readMany(reads, ms)) };
    const reaper = new Reaper({ kv, keys: w.ledger.keys, store: w.store, holder: () => compare }, { runTailPinMs: 0, deadGraceMs: 0, orphanAgeMs: 0, orphanSweepMs: 60_000, liveRecheckMs: 15_000 });
    const t0 = Date.now();
    expect(await reaper.tick(t0)).toMatchObject({ destroyed: 0 });
    expect(gets).toBe(20); // p's entry of each: live
    // p trimmed past all but its newest entry. Within liveRecheckMs nothing is read again.
    expect(await w.ledger.trim('p', me, 19)).toBe(true);
    gets = 0;
    expect(await reaper.tick(t0 + 5_000)).toMatchObject({ destroyed: 0 });
    expect(gets).toBe(0);
    // After it, p's entry first: gone for 19 of them, whose q's and r's are read then.
    expect(await reaper.tick(t0 + 16_000)).toMatchObject({ destroyed: 0 });
    expect(gets).toBe(20 + 19 * 2);
    gets = 0;
    // A pass that changed nothing is made again once etcd has moved: any write will do.
    await etcd.link.txnOnce([], [{ put: 'unrelated-to-the-ledger', value: Buffer.from('x') }], []);
    expect(await reaper.tick(t0 + 32_000)).toMatchObject({ destroyed: 0 });
    expect(gets).toBe(20); // the one that held each last time
  });

  it('goes round the o/ records again only once etcd, or the clock, has moved past a pass that found nothing to do', async () => {
    const w = world();
    await create(w, ['u', 'v', 'w']);
    const g0 = await group(w, ['u', 'v']);
    const g1 = await group(w, ['w']);
    for (const s of ['u', 'v']) expect(await w.ledger.deleteStream(s, me)).toBe(true);
    const { compare } = await takeMaintenance(w, 1);
    const keys = w.ledger.keys;
    const { counted } = countedLink();
    let passes = 0; // pages of o/ records read by a pass (not by an orphan sweep's scans of o/c/, o/g/ and o/p/)
    const kv: LedgerKv = { ...counted, rangePage: (from, prefix, ...rest) => (prefix === keys.objects && passes++, counted.rangePage(from, prefix, ...rest)) };
    const reaper = new Reaper({ kv, keys, store: w.store, holder: () => compare }, { runTailPinMs: 0, deadGraceMs: 10_000, orphanAgeMs: 0, orphanSweepMs: 3_600_000, liveRecheckMs: 15_000 });
    const t0 = Date.now();
    // g0 has nothing referring to it but is within its grace: the pass leaves it for the clock.
    expect(await reaper.tick(t0)).toMatchObject({ destroyed: 0 });
    expect(passes).toBe(1);
    // Nothing in etcd changed and the grace has not run out: no pass.
    expect(await reaper.tick(t0 + 5_000)).toMatchObject({ destroyed: 0 });
    expect(passes).toBe(1);
    // It ran out (etcd unchanged still): g0 goes; g1 is live (w's entry points into it).
    expect(await reaper.tick(t0 + 10_500)).toMatchObject({ destroyed: 1, deleted: 1 });
    expect(passes).toBe(2);
    // That tick's marking moved etcd: one more pass, which finds nothing to do and nothing left for time.
    expect(await reaper.tick(t0 + 10_600)).toMatchObject({ destroyed: 0 });
    expect(passes).toBe(3);
    for (const later of [10_700, 60_000, 600_000]) expect(await reaper.tick(t0 + later)).toMatchObject({ destroyed: 0 });
    expect(passes).toBe(3);
    // w deleted: etcd moved, and g1 goes at the next tick.
    expect(await w.ledger.deleteStream('w', me)).toBe(true);
    expect(await reaper.tick(t0 + 600_100)).toMatchObject({ destroyed: 1, deleted: 1 });
    expect(await storeKeys(w)).not.toContain(g1);
    expect(await storeKeys(w)).not.toContain(g0);
    // A later holding goes round at once.
    let holder: HolderCompare | null = null;
    const again = new Reaper({ kv, keys, store: w.store, holder: () => holder }, { deadGraceMs: 0, orphanSweepMs: 3_600_000 });
    passes = 0;
    holder = compare;
    await again.tick(t0 + 600_200);
    await again.tick(t0 + 600_300);
    expect(passes).toBe(1);
    holder = null;
    await again.tick(t0 + 600_400);
    holder = compare;
    await again.tick(t0 + 600_500);
    expect(passes).toBe(2);
  });

  it('keeps a marked group object that another commit (a tail recovery) refers to by r/<object>/<stream>, until that reference goes too', async () => {
    const w = world();
    await create(w, ['m1', 'm2', 'late']);
    const g = await group(w, ['m1', 'm2']);
    await group(w, ['m1', 'm2']);
    // A tail recovery records the late stream's part of g under its own fence: an entry and r/<g>/late.
    const { fenced } = await w.ledger.commit(g, 600, [{ stream: 'late', fence: me, counter: 0, off: 0, len: 600, from: 0, to: 3, meta: { meta: { name: 'late' }, startSeq: 0, sealed: false } }]);
    expect(fenced).toEqual([]);
    for (const s of ['m1', 'm2']) expect(await w.ledger.deleteStream(s, me)).toBe(true);
    const { compare } = await takeMaintenance(w, 1);
    const reaper = reaperOf(w, () => compare);
    expect(await reaper.tick()).toMatchObject({ destroyed: 1 }); // the second group only
    expect(await storeKeys(w)).toContain(g);
    expect(await w.ledger.deleteStream('late', me)).toBe(true);
    expect(await reaper.tick()).toMatchObject({ destroyed: 1 });
    expect(await storeKeys(w)).toEqual([]);
  });

  it('keeps a group object whose reference marker is not a list of entries', async () => {
    const w = world();
    await create(w, ['d', 'e']);
    const g = await group(w, ['d', 'e']);
    await group(w, ['d', 'e']);
    for (const s of ['d', 'e']) expect(await w.ledger.trim(s, me, 3)).toBe(true);
    await etcd.link.txnOnce([], [{ put: w.ledger.keys.referenceMarker(g), value: Buffer.from('{damaged') }], []);
    const { compare } = await takeMaintenance(w, 1);
    expect(await reaperOf(w, () => compare).tick()).toMatchObject({ destroyed: 0 });
    expect(await storeKeys(w)).toContain(g);
  });

  it('after trims and a delete reaps exactly the dead objects, only while it holds the lease', async () => {
    const w = world();
    await create(w, ['x', 'y/1', 'z', 'solo']);
    const shared: string[] = [];
    const solo: string[] = [];
    for (let i = 0; i < 10; i++) shared.push(await group(w, ['x', 'y/1', 'z']));
    for (let i = 0; i < 5; i++) solo.push(await group(w, ['solo']));
    // Trim x, y/1, z past their first 5 groups (3 frames each) and delete solo.
    for (const s of ['x', 'y/1', 'z']) expect(await w.ledger.trim(s, me, 15)).toBe(true);
    expect(await w.ledger.deleteStream('solo', me)).toBe(true);
    const census = new ObjectCensus(etcd.link, w.ledger.keys, { ttlMs: 0 });
    expect(await census.counts()).toEqual({ objectCount: 15, destroyedObjectBacklog: 0 });

    // Not the holder: nothing.
    expect(await reaperOf(w, () => null).tick()).toMatchObject({ holder: false, destroyed: 0, deleted: 0, orphans: 0 });
    // Believes it holds the lease, but the key is not (or no longer) its own: its compare fails.
    const stale: HolderCompare = { key: `${w.prefix}/k/maintenance`, modRevision: 1 };
    expect(await reaperOf(w, () => stale).tick()).toMatchObject({ destroyed: 0, deleted: 0, deposed: true });
    expect((await storeKeys(w)).sort()).toEqual([...shared, ...solo].sort());
    expect(await census.counts()).toEqual({ objectCount: 15, destroyedObjectBacklog: 0 });

    const { compare } = await takeMaintenance(w, 1);
    const t = await reaperOf(w, () => compare).tick();
    expect(t).toMatchObject({ holder: true, destroyed: 10, deleted: 10, orphans: 0, deposed: false });
    expect((await storeKeys(w)).sort()).toEqual(shared.slice(5).sort());
    await expectLiveIntact(w, ['x', 'y/1', 'z'].map((name) => ({ name, fromFrame: 15 })));
    expect(await census.counts()).toEqual({ objectCount: 5, destroyedObjectBacklog: 0 });
    // Nothing more is dead.
    expect(await reaperOf(w, () => compare).tick()).toMatchObject({ destroyed: 0, deleted: 0 });
  });

  it('reaps many dead objects among live ones in one tick, page by page, up to pagesPerTick pages', async () => {
    const w = world();
    await create(w, ['many', 'live']);
    const dead: string[] = [];
    const live: string[] = [];
    // Interleaved: every page of o/ records holds both kinds.
    for (let i = 0; i < 90; i++) (i % 3 === 2 ? live : dead).push(await group(w, [i % 3 === 2 ? 'live' : 'many']));
    expect(await w.ledger.deleteStream('many', me)).toBe(true);
    const census = new ObjectCensus(etcd.link, w.ledger.keys, { ttlMs: 0 });
    const { compare } = await takeMaintenance(w, 1);
    const reaper = (pagesPerTick: number): Reaper =>
      new Reaper({ kv: etcd.link, keys: w.ledger.keys, store: w.store, holder: () => compare }, { runTailPinMs: 0, deadGraceMs: 0, orphanAgeMs: 0, orphanSweepMs: 60_000, perTick: 20, pagesPerTick });
    // Two pages of 20 records: the dead among the first 40.
    const first = await reaper(2).tick();
    expect(first).toMatchObject({ holder: true, deposed: false });
    expect(first.destroyed).toBe(dead.filter((k) => [...dead, ...live].sort().indexOf(k) < 40).length);
    expect(first.deleted).toBe(first.destroyed);
    // The next tick goes on from the cursor and finishes them.
    const second = await reaper(8).tick();
    expect(first.destroyed + second.destroyed).toBe(60);
    expect(first.deleted + second.deleted).toBe(60);
    expect((await storeKeys(w)).sort()).toEqual(live.sort());
    expect(await census.counts()).toEqual({ objectCount: 30, destroyedObjectBacklog: 0 });
    await expectLiveIntact(w, [{ name: 'live', fromFrame: 0 }]);
  });

  it.each([
    [false, 'two that mark them (63 a txn)', 4],
    [true, 'three that mark them and their reference markers (42 a txn)', 5],
  ])('deletes 100 dead objects (markers: %s) with few transactions: %s, two that remove their d/ records (64 a txn)', async (markers, _what, txns) => {
    const w = world();
    await create(w, ['gone', 'also']);
    for (let i = 0; i < 100; i++) await group(w, ['gone', 'also'], 3, 200, 1, markers);
    expect(await w.ledger.deleteStream('gone', me)).toBe(true);
    expect(await w.ledger.deleteStream('also', me)).toBe(true);
    const { compare } = await takeMaintenance(w, 1);
    const { calls, counted } = countedLink();
    const reaper = new Reaper({ kv: counted, keys: w.ledger.keys, store: w.store, holder: () => compare }, { runTailPinMs: 0, deadGraceMs: 0, orphanAgeMs: 0, orphanSweepMs: 60_000 });
    expect(await reaper.tick()).toMatchObject({ holder: true, destroyed: 100, deleted: 100, deposed: false });
    // Marks 40 a txn and d/ removals 8 a txn (the reaper before) made 3 + 13 of them here.
    expect(calls.txnOnce).toBe(txns);
    // A marker's entries are read 128 an etcd call: each object's first, then the others of those
    // whose first let go; and once, the dead objects' writer's run marks (run-tails.ts).
    expect(calls.readMany).toBe(markers ? 3 : 1);
    expect(await etcd.link.countPrefix(w.ledger.keys.references, 5_000)).toBe(0);
    expect(await storeKeys(w)).toEqual([]);
    const census = new ObjectCensus(etcd.link, w.ledger.keys, { ttlMs: 0 });
    expect(await census.counts()).toEqual({ objectCount: 0, destroyedObjectBacklog: 0 });
  });

  it('reads past the rest of a run after its first record too young to reap, and reaps the old ones of the next run', async () => {
    const w = world();
    await create(w, ['a', 'b', 'c']);
    // Run g/1/1/0/: five old objects, then twelve young ones; run g/2/1/0/: five old ones.
    const oldA = [];
    const oldC = [];
    for (let i = 0; i < 5; i++) oldA.push(await group(w, ['a']));
    for (let i = 0; i < 5; i++) oldC.push(await group(w, ['c'], 3, 200, 2));
    await new Promise((r) => setTimeout(r, 50));
    const cut = Date.now();
    const young = [];
    for (let i = 0; i < 12; i++) young.push(await group(w, ['b']));
    for (const s of ['a', 'b', 'c']) expect(await w.ledger.deleteStream(s, me)).toBe(true);
    const { compare } = await takeMaintenance(w, 1);
    let pages = 0;
    const kv = {
      rangePage: (...a: Parameters<EtcdLink['rangePage']>) => {
        if (a[1] === w.ledger.keys.objects) pages++;
        return etcd.link.rangePage(...a);
      },
      countPrefix: (p: string, ms: number) => etcd.link.countPrefix(p, ms),
      get: (k: string, ms: number) => etcd.link.get(k, ms),
      readMany: (...a: Parameters<EtcdLink['readMany']>) => etcd.link.readMany(...a),
      txnOnce: (...a: Parameters<EtcdLink['txnOnce']>) => etcd.link.txnOnce(...a),
    };
    const reaper = new Reaper({ kv, keys: w.ledger.keys, store: w.store, holder: () => compare }, { runTailPinMs: 0, deadGraceMs: 10_000, orphanSweepMs: 600_000, perTick: 4 });
    // Everything made before the cut is older than the grace, the young run is not.
    const t = await reaper.tick(cut + 10_000 - 25);
    expect(t).toMatchObject({ destroyed: 10, deleted: 10, deposed: false });
    expect((await storeKeys(w)).sort()).toEqual(young.sort());
    // Pages of 4 o/ records: a0–a3; a4 and the first young ones (the rest of run 1 skipped); c0–c3; c4.
    // Reading every record would have taken 6 pages.
    expect(pages).toBe(4);
    // Once old enough, the young run is reaped too.
    expect(await reaper.tick(Date.now() + 10_000)).toMatchObject({ destroyed: 12, deleted: 12 });
    expect(await storeKeys(w)).toEqual([]);
  });

  it('a holder that loses its lease mid-reap deletes nothing more; the next holder drains the backlog', async () => {
    const w = world();
    await create(w, ['big', 'keep']);
    const big: string[] = [];
    const keep: string[] = [];
    for (let i = 0; i < 40; i++) big.push(await group(w, ['big'], 2, 2000));
    for (let i = 0; i < 5; i++) keep.push(await group(w, ['keep']));
    expect(await w.ledger.deleteStream('big', me)).toBe(true);

    const a = await takeMaintenance(w, 1);
    // A's view of the store: the first delete it makes is where its lease is revoked (a stalled
    // holder whose lease expired); every delete it makes is counted.
    let aDeletes = 0;
    const aDeleted = new Set<string>();
    let revoked = false;
    const aStore = around(w.store, {
      delete: async (key) => {
        if (!revoked) {
          revoked = true;
          await etcd.link.revokeLease(a.lease, 5_000);
        }
        aDeletes++;
        aDeleted.add(key);
        await w.store.delete(key);
      },
    });
    const reaperA = reaperOf(w, () => a.compare, aStore);
    const t = await reaperA.tick();
    expect(t).toMatchObject({ holder: true, destroyed: 40, deleted: 0, deposed: true });
    // At most the batch under way when the lease went (64 deletes before the transaction that
    // finds it gone; here all 40), every one of a dead object.
    expect(aDeletes).toBeGreaterThan(0);
    expect(aDeletes).toBeLessThanOrEqual(64);
    for (const k of aDeleted) expect(big).toContain(k);
    const census = new ObjectCensus(etcd.link, w.ledger.keys, { ttlMs: 0 });
    expect(await census.counts()).toEqual({ objectCount: 5, destroyedObjectBacklog: 40 });
    // A keeps believing it holds the lease: it deletes nothing more.
    const before = aDeletes;
    const again = await reaperA.tick();
    expect(again).toMatchObject({ destroyed: 0, deleted: 0, deposed: true });
    expect(aDeletes).toBe(before);
    expect(await census.counts()).toEqual({ objectCount: 5, destroyedObjectBacklog: 40 });

    // B takes the lease and finishes A's d/ records.
    const b = await takeMaintenance(w, 2);
    expect(await reaperOf(w, () => b.compare).tick()).toMatchObject({ destroyed: 0, deleted: 40, deposed: false });
    expect(await census.counts()).toEqual({ objectCount: 5, destroyedObjectBacklog: 0 });
    expect((await storeKeys(w)).sort()).toEqual(keep.sort());
    await expectLiveIntact(w, [{ name: 'keep', fromFrame: 0 }]);
  });

  it('frees the compacted object of a stream deleted while it was being compacted', async () => {
    const w = world();
    await create(w, ['gone']);
    for (let i = 0; i < 5; i++) await group(w, ['gone']);
    // The delete reads the entries, then waits at its first transaction until the compaction committed.
    const { gated, reachedGate, release } = gatedLink();
    const deleting = new Ledger(gated, w.prefix).deleteStream('gone', me);
    await reachedGate;
    const compactor = new Compactor({ kv: etcd.link, keys: w.ledger.keys, store: w.store, placed: () => [{ name: 'gone', streamId: 8, fence: me }] }, { settleMs: 0 });
    expect(await compactor.tick()).toMatchObject({ runs: 1, entriesReplaced: 4 });
    release();
    expect(await deleting).toBe(true);
    expect(await w.ledger.entries('gone')).toEqual([]);
    // The compacted object's reference outlived the delete; the reaper drops it, then the object.
    const { compare } = await takeMaintenance(w, 1);
    const reaper = reaperOf(w, () => compare);
    const census = new ObjectCensus(etcd.link, w.ledger.keys, { ttlMs: 0 });
    for (let i = 0; i < 3 && (await census.counts()).objectCount > 0; i++) await reaper.tick();
    expect(await census.counts()).toEqual({ objectCount: 0, destroyedObjectBacklog: 0 });
    expect(await storeKeys(w)).toEqual([]);
  });

  it('checks live compacted objects against one read of the fences a pass, not two reads each; a stream deleted later is freed at the next pass', async () => {
    const w = world();
    const names = Array.from({ length: 24 }, (_, i) => `live-${i}`);
    await create(w, names);
    for (let i = 0; i < 3; i++) await group(w, names, 1, 50);
    const placed = names.map((name, i) => ({ name, streamId: 100 + i, fence: me }));
    // One stream at a time: each run in an object of its own (24 live compacted objects).
    const compactor = new Compactor({ kv: etcd.link, keys: w.ledger.keys, store: w.store, placed: () => placed }, { settleMs: 0, streamsInParallel: 1 });
    expect(await compactor.tick()).toMatchObject({ runs: 24 });
    const { compare } = await takeMaintenance(w, 1);
    const { calls, counted } = countedLink();
    const reaper = new Reaper({ kv: counted, keys: w.ledger.keys, store: w.store, holder: () => compare }, { runTailPinMs: 0, deadGraceMs: 0, orphanAgeMs: 60_000, orphanSweepMs: 60_000 });
    const before = { ...calls };
    // The first tick reaps the group objects the runs freed: the first two (each stream's newest entry stays).
    expect(await reaper.tick()).toMatchObject({ destroyed: 2, deleted: 2 });
    const second = { ...calls };
    expect(await reaper.tick()).toMatchObject({ destroyed: 0, deleted: 0 });
    // 24 live compacted objects and a live group object: the o/ page, its references, the d/ page — no read per object.
    expect(calls.get - second.get).toBe(0);
    expect(calls.rangePage - second.rangePage).toBeLessThanOrEqual(4);
    expect(calls.txnOnce - second.txnOnce).toBe(0);
    expect(second.get - before.get).toBeLessThan(names.length);

    // A stream deleted while it was being compacted (the fences were read while it had one): the
    // compacted object's reference outlives the delete, and both it and the stream's other
    // objects are freed at the next passes; the other streams' objects stay.
    for (let i = 0; i < 4; i++) await group(w, ['live-5'], 1, 50);
    const { gated, reachedGate, release } = gatedLink();
    const deleting = new Ledger(gated, w.prefix).deleteStream('live-5', me);
    await reachedGate;
    const alone = new Compactor({ kv: etcd.link, keys: w.ledger.keys, store: w.store, placed: () => [placed[5]!] }, { settleMs: 0 });
    expect(await alone.tick()).toMatchObject({ runs: 1 });
    release();
    expect(await deleting).toBe(true);
    const census = new ObjectCensus(etcd.link, w.ledger.keys, { ttlMs: 0 });
    for (let i = 0; i < 4 && (await census.counts()).objectCount > 24; i++) await reaper.tick();
    // 23 compacted objects and the group object that holds the other streams' newest entries.
    expect(await census.counts()).toEqual({ objectCount: 24, destroyedObjectBacklog: 0 });
    await expectLiveIntact(w, names.filter((n) => n !== 'live-5').map((name) => ({ name, fromFrame: 0 })));
  });

  it('keeps an unrecorded object until it has been seen without a record for orphanAgeMs', async () => {
    const w = world();
    await create(w, ['o']);
    const live = await group(w, ['o']);
    await w.store.put('g/9/9/0/000000000000', Buffer.from('a put whose commit never happened'));
    await recordedUpTo(w, 'g/9/9/0/', 0);
    const { compare } = await takeMaintenance(w, 1);
    const reaper = new Reaper({ kv: etcd.link, keys: w.ledger.keys, store: w.store, holder: () => compare }, { runTailPinMs: 0, deadGraceMs: 0, orphanAgeMs: 60_000, orphanSweepMs: 0 });
    const now = Date.now();
    expect((await reaper.tick(now)).orphans).toBe(0);
    expect((await reaper.tick(now + 30_000)).orphans).toBe(0);
    expect((await storeKeys(w)).sort()).toEqual(['g/9/9/0/000000000000', live].sort());
    expect((await reaper.tick(now + 60_000)).orphans).toBe(1);
    expect(await storeKeys(w)).toEqual([live]);
  });

  // A sweep that listed the whole store every 20 s cost LIST requests and etcd reads in proportion
  // to everything stored (a million objects: a thousand LISTs a sweep).
  it('looks at a bounded number of store keys per orphan sweep, resuming where the last one stopped, and still finds every orphan', async () => {
    const w = world();
    await create(w, ['o']);
    const live = await group(w, ['o']);
    const orphans = ['c/77/0000000001.000000000001', ...Array.from({ length: 12 }, (_, i) => `g/9/9/0/${String(i).padStart(12, '0')}`)];
    for (const k of orphans) await w.store.put(k, Buffer.from('a put whose commit never happened'));
    await recordedUpTo(w, 'g/9/9/0/', 11);
    let listed = 0;
    const counting: ObjectStore = {
      ...around(w.store, {}),
      list: async function* (p, after) {
        for await (const o of w.store.list(p, after)) {
          listed++;
          yield o;
        }
      },
    };
    const { compare } = await takeMaintenance(w, 1);
    const reaper = new Reaper({ kv: etcd.link, keys: w.ledger.keys, store: counting, holder: () => compare }, { runTailPinMs: 0, deadGraceMs: 0, orphanAgeMs: 60_000, orphanSweepMs: 0, orphanSweepKeys: 4 });
    const now = Date.now();
    // 14 keys, 4 a sweep: four sweeps go through the store once. None is old enough yet.
    for (let i = 0; i < 4; i++) {
      listed = 0;
      expect((await reaper.tick(now + i)).orphans).toBe(0);
      expect(listed).toBeLessThanOrEqual(5); // 4 looked at, and the one that showed there was more
      expect(listed).toBeGreaterThan(0);
    }
    expect((await storeKeys(w)).length).toBe(14);
    // The second time through, a minute later: each orphan seen again is deleted, the live object never.
    let deleted = 0;
    for (let i = 0; i < 4; i++) {
      listed = 0;
      deleted += (await reaper.tick(now + 60_000 + i)).orphans;
      expect(listed).toBeLessThanOrEqual(5);
    }
    expect(deleted).toBe(13);
    expect(await storeKeys(w)).toEqual([live]);
  });

  it('never takes a fence marker for an orphan (a small unrecorded group object is one)', async () => {
    const w = world();
    const { compare } = await takeMaintenance(w, 1);
    await w.store.put('g/9/9/0/000000000001', fenceMarker({ nodeId: 2, epoch: 3 }), { ifAbsent: true });
    await w.store.put('g/9/9/0/000000000002', Buffer.concat([Buffer.alloc(20, 1), groupTrailer([{ stream: 's', off: 0, len: 20, from: 0, to: 1, early: true }])]));
    await w.store.put('g/9/9/0/000000000003', Buffer.from('tiny and not a group object'));
    await recordedUpTo(w, 'g/9/9/0/', 3);
    const reaper = new Reaper({ kv: etcd.link, keys: w.ledger.keys, store: w.store, holder: () => compare }, { runTailPinMs: 0, deadGraceMs: 0, orphanAgeMs: 60_000, orphanSweepMs: 0 });
    const now = Date.now();
    expect((await reaper.tick(now)).orphans).toBe(0);
    expect((await reaper.tick(now + 60_000)).orphans).toBe(2);
    expect(await storeKeys(w)).toEqual(['g/9/9/0/000000000001']);
    expect((await reaper.tick(now + 120_000)).orphans).toBe(0);
    expect(await storeKeys(w)).toEqual(['g/9/9/0/000000000001']);
  });
});
