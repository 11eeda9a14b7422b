/**
 * Tail recovery (src/objects/tail-recovery.ts) against a real etcd (one Debian etcd-server member)
 * and a `file:` object store: the groups a writer acknowledged before the ledger recorded them
 * are found from the stream's place (w/), its newest entry in that writer and the writer's h/
 * mark, walking the writer's objects up to the first gap, which gets a fence marker the writer
 * can no longer take; only parts acknowledged early are taken; what it walked is recorded (t/)
 * for the old owner; a seq gap or a damaged object in the run is an error, never recorded.
 */
import { randomBytes } from 'node:crypto';
import { type Fence, Ledger, type ObjectStore, fenceMarker, groupObjectKey, openObjectStore, readGroupObject, recoverTail } from '../../src/objects';
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
