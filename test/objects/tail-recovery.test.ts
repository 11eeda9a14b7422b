/**
 * Tail recovery (src/objects/tail-recovery.ts) against a real etcd (one Debian etcd-server member)
 * and a `file:` object store: the groups a writer acknowledged before the ledger recorded them
 * are found from the stream's place (w/), its newest entry in that writer and the writer's h/
 * mark, walking the writer's objects up to the first gap, which gets a fence marker the writer
 * can no longer take; only parts acknowledged early are taken; what it walked is recorded (t/)
 * for the old owner; a seq gap or a damaged object in the run is an error, never recorded.
 */
import { randomBytes } from 'node:crypto';
import { type Fence, Ledger, type ObjectStore, Reaper, fenceMarker, groupObjectKey, openObjectStore, readGroupObject, recoverTail } from '../../src/objects';
import { etcdForFile } from '../helpers/etcd-for-file';
import { tempDir } from '../helpers/node-process';
import { groupOf } from './group-fixture';

const etcd = etcdForFile();

const A: Fence = { nodeId: 1, epoch: 1 };
const B: Fence = { nodeId: 2, epoch: 2 };
const g = (n: number): string => groupObjectKey(1, 1, 0, n);
const WRITER = 'g/1/1/0/';

async function setup(): Promise<{ ledger: Ledger; store: ObjectStore }> {
  const ledger = new Ledger(etcd.link, `tail/${randomBytes(6).toString('hex')}`);
  const store = openObjectStore(`file:${tempDir('tail-')}`);
  // Stream s created by writer A in group 1, which recorded its place there.
  await store.put(g(1), groupOf([{ stream: 's', from: 0, to: 1, early: false }]), { ifAbsent: true });
  await ledger.commitObjects(new Map([[g(1), 1]]), [{ stream: 's', fence: A, create: true, position: g(1), entries: [{ o: g(1), counter: 0, off: 0, len: 10, from: 0, to: 1 }] }]);
  return { ledger, store };
}

it('records the early groups of the stream up to the first gap, which it fences with a marker', async () => {
  const { ledger, store } = await setup();
  await store.put(g(2), groupOf([{ stream: 's', from: 1, to: 3, early: true }]), { ifAbsent: true });
  await store.put(g(3), groupOf([{ stream: 't', from: 0, to: 5, early: true }]), { ifAbsent: true });
  await store.put(g(4), groupOf([{ stream: 't', from: 5, to: 6, early: true }, { stream: 's', from: 3, to: 4, early: true }]), { ifAbsent: true });
  // Beyond the gap at 5: the writer never acknowledged it (5 was not durable).
  await store.put(g(6), groupOf([{ stream: 's', from: 4, to: 5, early: true }]), { ifAbsent: true });
  await ledger.takeFence('s', B, { from: A });
  const tail = await recoverTail(ledger, store, 's', B);
  expect(tail).toMatchObject({ read: 3, recorded: 2 });
  const stored = await ledger.entries('s');
  expect(stored.map((e) => [e.epoch, e.counter, e.o, e.off, e.from, e.to])).toEqual([
    [1, 0, g(1), 0, 0, 1],
    [2, 0, g(2), 0, 1, 3],
    [2, 1, g(4), 10, 3, 4],
  ]);
  // The entries it hands back (a move's open adopts them instead of reading them again) are the ledger's.
  expect(tail.entries?.map((e) => ({ ...e, key: undefined }))).toEqual(stored.map((e) => ({ ...e, key: undefined })));
  await expect(ledger.objectCount()).resolves.toBe(3);
  // What it walked is recorded under its fence: the writer's numbers after 1 up to the marker at 5.
  expect(await ledger.tailWalks('s')).toEqual([{ epoch: 2, w: WRITER, after: 1, end: 5, at: expect.any(Number) }]);
  // The gap holds a marker now: the writer's own put of that name fails.
  expect(readGroupObject(await store.get(g(5)))).toMatchObject({ kind: 'marker', by: B });
  await expect(store.put(g(5), groupOf([{ stream: 's', from: 4, to: 5, early: true }]), { ifAbsent: true })).rejects.toMatchObject({ code: 'PreconditionFailed' });
  // Again (an open tried again): it starts after the newest entry in the writer and stops at the marker.
  const again = await recoverTail(ledger, store, 's', B);
  expect(again).toMatchObject({ read: 1, recorded: 0 });
  expect(await ledger.entries('s')).toHaveLength(3);
  expect(again.entries?.map((e) => ({ ...e, key: undefined }))).toEqual(stored.map((e) => ({ ...e, key: undefined })));
  // The first walk of the epoch stays what the epoch's recovery took; a delete takes the walks along.
  expect((await ledger.tailWalks('s')).map((w) => [w.after, w.end])).toEqual([[1, 5]]);
  await expect(ledger.deleteStream('s', B)).resolves.toBe(true);
  await expect(ledger.tailWalks('s')).resolves.toEqual([]);
  await store.close();
});

it('starts after the writer\'s h/ mark when it speaks for the run the stream\'s place is in, and skips parts acknowledged only once recorded', async () => {
  const { ledger, store } = await setup();
  // Groups 2 and 3 are recorded (h/ says so; 3 holds nothing of s), 4 holds a late part of s that
  // was never recorded (its writer never acknowledged it), 5 an early part after it.
  await store.put(g(2), groupOf([{ stream: 's', from: 1, to: 2, early: true }]), { ifAbsent: true });
  await ledger.commitObjects(new Map([[g(2), 1]]), [{ stream: 's', fence: A, entries: [{ o: g(2), counter: 1, off: 0, len: 10, from: 1, to: 2 }] }], { writer: WRITER, from: 1, n: 3 });
  await store.put(g(3), groupOf([{ stream: 't', from: 0, to: 1, early: true }]), { ifAbsent: true });
  await store.put(g(4), groupOf([{ stream: 's', from: 2, to: 3, early: false }]), { ifAbsent: true });
  await ledger.takeFence('s', B, { from: A });
  // Reads 4 (skipped: late) and finds 5 absent: marker. Nothing recorded.
  await expect(recoverTail(ledger, store, 's', B)).resolves.toMatchObject({ read: 1, recorded: 0 });
  expect(readGroupObject(await store.get(g(5))).kind).toBe('marker');
  // A mark of a later run (it began above a gap after this run) does not speak for s's place: the
  // walk starts from its own run's mark again, and stops at the marker it left.
  await etcd.link.txnOnce([], [{ put: ledger.keys.recorded(WRITER, 9), value: Buffer.from('20') }], []);
  await expect(ledger.recordedThrough(WRITER, 10)).resolves.toEqual({ writer: WRITER, from: 9, n: 20 });
  await expect(ledger.recordedThrough(WRITER, 3)).resolves.toEqual({ writer: WRITER, from: 1, n: 3 });
  await expect(recoverTail(ledger, store, 's', B)).resolves.toMatchObject({ read: 2, recorded: 0 });
  await store.close();
});

it('refuses a run whose seqs do not continue the recorded entries, or that holds a damaged object, and records nothing', async () => {
  const { ledger, store } = await setup();
  await store.put(g(2), groupOf([{ stream: 's', from: 5, to: 6, early: true }]), { ifAbsent: true });
  await ledger.takeFence('s', B, { from: A });
  await expect(recoverTail(ledger, store, 's', B)).rejects.toThrow(/holds seqs 5\.\.6, the stream's recorded entries end at 1/);
  expect(await ledger.entries('s')).toHaveLength(1);

  const other = await setup();
  await other.store.put(g(2), Buffer.from('not a group object at all'), { ifAbsent: true });
  await other.ledger.takeFence('s', B, { from: A });
  await expect(recoverTail(other.ledger, other.store, 's', B)).rejects.toThrow(/recovering s: object g\/1\/1\/0\/000000000002: group object trailer/);
  expect(await other.ledger.entries('s')).toHaveLength(1);
  await store.close();
  await other.store.close();
});

it('refuses to record under a fence that moved on meanwhile', async () => {
  const { ledger, store } = await setup();
  await store.put(g(2), groupOf([{ stream: 's', from: 1, to: 2, early: true }]), { ifAbsent: true });
  await ledger.takeFence('s', { nodeId: 3, epoch: 3 }, { from: A });
  await expect(recoverTail(ledger, store, 's', B)).rejects.toThrow(/fence moved on/);
  expect(await ledger.entries('s')).toHaveLength(1);
  await store.close();
});

it('has nothing to do without a place in a writer, or with a store that cannot put create-only', async () => {
  const { ledger, store } = await setup();
  await expect(recoverTail(ledger, store, 'never-written', B)).resolves.toMatchObject({ read: 0, recorded: 0 });
  await store.put(g(2), groupOf([{ stream: 's', from: 1, to: 2, early: true }]), { ifAbsent: true });
  const plain = { createOnly: false, get: store.get.bind(store), put: store.put.bind(store) };
  await expect(recoverTail(ledger, plain, 's', A)).resolves.toMatchObject({ read: 0, recorded: 0 });
  // A marker is told apart from a group object, and junk from both.
  expect(readGroupObject(fenceMarker(B))).toMatchObject({ kind: 'marker', by: B });
  expect(() => readGroupObject(Buffer.from('x'))).toThrow(/too short/);
  await store.close();
});

/**
 * A run cut short by a fence: groups 2..4 of writer A went early, 2 holding parts of s and t, 3 of
 * t alone, 4 of s alone; s is fenced before A records them. A's commit records t (2 and 3) and
 * leaves s out (4 stays an orphan); its h/ mark stays at 1. Then t's entries go (compacted,
 * trimmed or deleted: here deleted). Nothing refers to 2, 3 or 4 any more, yet s's tail walk
 * needs all three: a gap at 2 or 3 ends it before s's acknowledged parts.
 */
async function cutRun(runTailPinMs: number): Promise<{ ledger: Ledger; store: ObjectStore; reaper: Reaper; reaped: { destroyed: number; deleted: number; orphans: number } }> {
  const { ledger, store } = await setup();
  expect((await ledger.takeFence('t', A, { create: true })).ok).toBe(true);
  // The run from 1 recorded its groups up to 1 (setup's).
  await etcd.link.txnOnce([], [{ put: ledger.keys.recorded(WRITER, 1), value: Buffer.from('1') }], []);
  await store.put(g(2), groupOf([{ stream: 's', from: 1, to: 2, early: true }, { stream: 't', from: 0, to: 1, early: true }]), { ifAbsent: true });
  await store.put(g(3), groupOf([{ stream: 't', from: 1, to: 2, early: true }]), { ifAbsent: true });
  await store.put(g(4), groupOf([{ stream: 's', from: 2, to: 3, early: true }]), { ifAbsent: true });
  await ledger.takeFence('s', B, { from: A });
  const r = await ledger.commitObjects(
    new Map([[g(2), 20], [g(3), 10], [g(4), 10]]),
    [
      { stream: 's', fence: A, entries: [{ o: g(2), counter: 1, off: 0, len: 10, from: 1, to: 2 }, { o: g(4), counter: 2, off: 0, len: 10, from: 2, to: 3 }] },
      { stream: 't', fence: A, entries: [{ o: g(2), counter: 0, off: 10, len: 10, from: 0, to: 1 }, { o: g(3), counter: 1, off: 0, len: 10, from: 1, to: 2 }] },
    ],
    { writer: WRITER, from: 1, n: 4 },
    { markers: true },
  );
  expect(r.fenced).toEqual(['s']);
  await expect(ledger.recordedThrough(WRITER, 2)).resolves.toEqual({ writer: WRITER, from: 1, n: 1 });
  await expect(ledger.deleteStream('t', A)).resolves.toBe(true);
  // The maintenance lease, held.
  const key = `${ledger.keys.root}maintenance-${randomBytes(3).toString('hex')}`;
  const held = await etcd.link.txnOnce([], [{ put: key, value: Buffer.from('1') }], []);
  const reaper = new Reaper({ kv: etcd.link, keys: ledger.keys, store, holder: () => ({ key, modRevision: held.revision }) }, { runTailPinMs, deadGraceMs: 0, orphanAgeMs: 0, orphanSweepMs: 0, liveRecheckMs: 0 });
  const reaped = await ticks(reaper, 2);
  return { ledger, store, reaper, reaped };
}

async function ticks(reaper: Reaper, n: number): Promise<{ destroyed: number; deleted: number; orphans: number }> {
  const reaped = { destroyed: 0, deleted: 0, orphans: 0 };
  for (let i = 0; i < n; i++) {
    const t = await reaper.tick();
    reaped.destroyed += t.destroyed;
    reaped.deleted += t.deleted;
    reaped.orphans += t.orphans;
  }
  return reaped;
}

/** s's walk reads 2, 3 and 4 and records its parts in 2 and 4: seqs 1..3 after the setup's 0..1. */
async function expectWalkFindsAll(ledger: Ledger, store: ObjectStore): Promise<void> {
  await expect(recoverTail(ledger, store, 's', B)).resolves.toMatchObject({ read: 3, recorded: 2 });
  expect((await ledger.entries('s')).map((e) => [e.o, e.from, e.to])).toEqual([
    [g(1), 0, 1],
    [g(2), 1, 2],
    [g(4), 2, 3],
  ]);
}

it('finds every object of a run cut short by a fence though nothing refers to them: the reaper keeps a run\'s objects above its h/ mark', async () => {
  const { ledger, store, reaped } = await cutRun(60_000);
  expect(reaped).toEqual({ destroyed: 0, deleted: 0, orphans: 0 });
  await expectWalkFindsAll(ledger, store);
  await store.close();
});

it('keeps an old tail for as long as a walk still needs it, and lets it go once the walk has been', async () => {
  // Every object as old as the pin (0 ms): what keeps them is what their part tables say. Before,
  // the pin ended there: the reaper took 2 and 3 for dead and 4 for an orphan, the walk found 2
  // gone, fenced it and stopped, and s's acknowledged seqs 1..3 were lost.
  const { ledger, store, reaper, reaped } = await cutRun(0);
  expect(reaped).toEqual({ destroyed: 0, deleted: 0, orphans: 0 });
  await expectWalkFindsAll(ledger, store);
  // s's records now reach its early parts (2 and 4 are its entries' objects now), t is gone: 3,
  // t's alone, is no walk's any more and goes; the walk's fence marker (5) stays.
  expect(await ticks(reaper, 2)).toEqual({ destroyed: 1, deleted: 1, orphans: 0 });
  await expect(store.get(g(3))).rejects.toMatchObject({ code: 'NoSuchKey' });
  for (const n of [2, 4, 5]) await expect(store.get(g(n))).resolves.toBeInstanceOf(Buffer);
  await store.close();
});
