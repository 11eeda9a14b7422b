/**
 * The records format's indexer (src/objects/indexer.ts) against a real etcd (one Debian
 * etcd-server member) and a `file:` store: a writer's settled records become one entry per stream
 * and run in one compacted object with the same frames, the cursor moves past them and they go;
 * a stream fenced away is stranded (u/, with a reference to its object) and its opener records it;
 * a damaged part is never copied; nothing is taken before it settles.
 */
import { type PlacedStream, recoverTail } from '../../src/objects';
import { CompactedCounter } from '../../src/objects/compaction';
import { Indexer, ownWriters } from '../../src/objects/indexer';
import { type LedgerKv } from '../../src/objects/maintenance-ledger';
import { decodeCursor, recordName } from '../../src/objects/part-records';
import { etcdForFile } from '../helpers/etcd-for-file';
import { A, B, WRITER, type Writer, g, group, read, reaperOf, recordsWriter } from './records-fixture';

const etcd = etcdForFile();
const setup = (): Promise<Writer> => recordsWriter(etcd.link, 'indexer');

const counter = new CompactedCounter();
const indexer = (w: Writer, placed: () => PlacedStream[], settleMs = 0): Indexer =>
  new Indexer({ kv: etcd.link, keys: w.ledger.keys, store: w.store, placed, writers: () => [WRITER], counter }, { settleMs });


it('indexes settled records into one entry per stream and run, in one compacted object, and moves the cursor past them', async () => {
  const w = await setup();
  for (let i = 0; i < 5; i++) await group(w, ['a', 'b', i % 2 === 0 ? 'c' : 'b']);
  const placed = ['a', 'b', 'c'].map((name, k): PlacedStream => ({ name, streamId: k + 1, fence: A }));
  // Not settled yet: nothing taken; and a later tick reads only the records written since.
  let fetched = 0;
  const kv: LedgerKv = {
    get: (...a) => etcd.link.get(...a),
    readMany: (...a) => etcd.link.readMany(...a),
    txnOnce: (...a) => etcd.link.txnOnce(...a),
    countPrefix: (...a) => etcd.link.countPrefix(...a),
    rangePage: async (...a) => {
      const r = await etcd.link.rangePage(...a);
      fetched += r.kvs.length;
      return r;
    },
  };
  const x = new Indexer({ kv, keys: w.ledger.keys, store: w.store, placed: () => placed, writers: () => [WRITER], counter }, { settleMs: 60_000 });
  await expect(x.tick()).resolves.toMatchObject({ records: 0 });
  expect(fetched).toBe(5);
  await expect(x.tick()).resolves.toMatchObject({ records: 0 });
  expect(fetched).toBe(5);
  const t = await indexer(w, () => placed).tick();
  expect(t).toMatchObject({ records: 5, entries: 3, stranded: 0 });
  for (const s of ['a', 'b', 'c']) {
    const entries = await w.ledger.entries(s);
    expect(entries).toHaveLength(1);
    expect(entries[0]!.o).toMatch(/^c\/1\//);
    expect(await read(w, s)).toEqual(Buffer.concat(w.written.get(s)!));
  }
  const cursor = decodeCursor((await etcd.link.get(w.ledger.keys.indexCursor(WRITER), 2000)).kv!.value);
  expect(cursor).toEqual({ q: recordName(4, 0), o: 5 });
  expect((await etcd.link.rangePrefix(w.ledger.keys.partRecords(WRITER), 2000)).kvs).toEqual([]);
  // More records: the next tick takes only those.
  await group(w, ['a']);
  await expect(indexer(w, () => placed).tick()).resolves.toMatchObject({ records: 1, entries: 1 });
  expect(await read(w, 'a')).toEqual(Buffer.concat(w.written.get('a')!));
});

it('strands a stream fenced away, which its opener records, and drops a deleted stream\'s parts', async () => {
  const w = await setup();
  for (let i = 0; i < 3; i++) await group(w, ['a', 'b', 'd']);
  await w.ledger.takeFence('b', B, { from: A });
  expect(await w.ledger.deleteStream('d', A)).toBe(true);
  // The placement the indexer sees still has b (the move reached etcd first).
  const placed = ['a', 'b'].map((name, k): PlacedStream => ({ name, streamId: k + 1, fence: A }));
  await expect(indexer(w, () => placed).tick()).resolves.toMatchObject({ records: 3, entries: 1, stranded: 3 });
  expect(await w.ledger.entries('b')).toEqual([]);
  const u = await etcd.link.rangePrefix(w.ledger.keys.strandedParts('b'), 2000);
  expect(u.kvs).toHaveLength(3);
  await expect(etcd.link.rangePrefix(w.ledger.keys.strandedParts('d'), 2000)).resolves.toMatchObject({ kvs: [] });
  // b's opener records them, and their u/ copies go.
  const tail = await recoverTail(w.ledger, w.store, 'b', B, undefined, { own: null });
  expect(tail.recorded).toBe(3);
  expect(await read(w, 'b')).toEqual(Buffer.concat(w.written.get('b')!));
  await expect(etcd.link.rangePrefix(w.ledger.keys.strandedParts('b'), 2000)).resolves.toMatchObject({ kvs: [] });
  // The objects stay referenced by b's entries.
  const refs = await etcd.link.rangePrefix(`${w.ledger.keys.root}r/g/`, 2000);
  expect(refs.kvs.map((kv) => kv.key.slice(w.ledger.keys.root.length))).toEqual([0, 1, 2].map((n) => `r/${g(n)}/b`));
});

it('never copies a damaged part: it is stranded, and the stream\'s other parts are indexed', async () => {
  const w = await setup();
  for (let i = 0; i < 3; i++) await group(w, ['a']);
  // Flip a byte of the middle group's frame.
  const body = await w.store.get(g(1));
  body[body.length - 1] = body[body.length - 1]! ^ 0xff;
  await w.store.delete(g(1));
  await w.store.put(g(1), body);
  const placed: PlacedStream[] = [{ name: 'a', streamId: 1, fence: A }];
  await expect(indexer(w, () => placed).tick()).resolves.toMatchObject({ records: 3, entries: 2, stranded: 1 });
  const entries = await w.ledger.entries('a');
  expect(entries.map((e) => [e.from, e.to])).toEqual([
    [0, 1],
    [2, 3],
  ]);
  const u = await etcd.link.rangePrefix(w.ledger.keys.strandedParts('a'), 2000);
  expect(u.kvs.map((kv) => JSON.parse(kv.value.toString()) as unknown)).toEqual([expect.objectContaining({ o: g(1), from: 1, to: 2 })]);
});

it('the reaper keeps the records format\'s group objects until the writer\'s index cursor is past them, then reaps them', async () => {
  const w = await setup();
  for (let i = 0; i < 3; i++) await group(w, ['a', 'b']);
  const reaper = await reaperOf(etcd.link, w);
  // No entry or reference names them: only the cursor keeps them.
  await expect(reaper.tick()).resolves.toMatchObject({ destroyed: 0 });
  for (let n = 0; n < 3; n++) await expect(w.store.get(g(n))).resolves.toBeInstanceOf(Buffer);
  const placed = ['a', 'b'].map((name, k): PlacedStream => ({ name, streamId: k + 1, fence: A }));
  await expect(indexer(w, () => placed).tick()).resolves.toMatchObject({ records: 3, entries: 2 });
  // Past the cursor now, their frames in the compacted object: reaped; the compacted object stays.
  await expect(reaper.tick()).resolves.toMatchObject({ destroyed: 3, deleted: 3 });
  for (let n = 0; n < 3; n++) await expect(w.store.get(g(n))).rejects.toMatchObject({ code: 'NoSuchKey' });
  for (const s of ['a', 'b']) expect(await read(w, s)).toEqual(Buffer.concat(w.written.get(s)!));
});

it('finds a node\'s writers by their records, and strands every part of a writer of an earlier start', async () => {
  const w = await setup();
  for (let i = 0; i < 2; i++) await group(w, ['a', 'b']);
  // A second writer of the same start, and one of the next start (its streams' parts recorded under the same fence).
  const token = await w.ledger.commitToken('g/1/1/3/');
  await w.ledger.commitObjects(new Map([['g/1/1/3/000000000000', 10]]), [{ stream: 'a', fence: A, entries: [{ o: 'g/1/1/3/000000000000', counter: 9, off: 0, len: 0, from: 2, to: 2 }] }], undefined, { token, records: { writer: 'g/1/1/3/', firstObject: 0 } });
  const next = await w.ledger.commitToken('g/1/2/0/');
  await w.ledger.commitObjects(new Map([['g/1/2/0/000000000000', 10]]), [{ stream: 'a', fence: A, entries: [{ o: 'g/1/2/0/000000000000', counter: 10, off: 0, len: 0, from: 2, to: 2 }] }], undefined, { token: next, records: { writer: 'g/1/2/0/', firstObject: 0 } });
  await expect(ownWriters(etcd.link, w.ledger.keys, 'g/1/')).resolves.toEqual(['g/1/1/0/', 'g/1/1/3/', 'g/1/2/0/']);
  await expect(ownWriters(etcd.link, w.ledger.keys, 'g/1/2/')).resolves.toEqual(['g/1/2/0/']);
  await expect(ownWriters(etcd.link, w.ledger.keys, 'g/2/')).resolves.toEqual([]);
  // The node's second start: the first start's writer is retired, its parts stranded without waiting to settle.
  const placed: PlacedStream[] = [{ name: 'a', streamId: 1, fence: A }];
  const x = new Indexer(
    { kv: etcd.link, keys: w.ledger.keys, store: w.store, placed: () => placed, writers: () => ['g/1/2/0/'], retired: () => [WRITER], counter },
    { settleMs: 60_000 },
  );
  await expect(x.tick()).resolves.toMatchObject({ records: 2, entries: 0, stranded: 4 });
  expect((await etcd.link.rangePrefix(w.ledger.keys.partRecords(WRITER), 2000)).kvs).toEqual([]);
  expect(decodeCursor((await etcd.link.get(w.ledger.keys.indexCursor(WRITER), 2000)).kv!.value)).toEqual({ q: recordName(1, 0), o: 2 });
  for (const s of ['a', 'b']) await expect(etcd.link.rangePrefix(w.ledger.keys.strandedParts(s), 2000)).resolves.toMatchObject({ kvs: [expect.anything(), expect.anything()] });
  // The current start's record waits to settle.
  expect((await etcd.link.rangePrefix(w.ledger.keys.partRecords('g/1/2/0/'), 2000)).kvs).toHaveLength(1);
});

it('strands only what the stream\'s entries do not hold: parts its opener recorded already leave no copy behind', async () => {
  const w = await setup();
  for (let i = 0; i < 3; i++) await group(w, ['a', 'b']);
  // b moved and its opener recorded the writer's pending parts; then the writer's node is gone,
  // and the lease holder takes its records (retired: everything stranded but what entries hold).
  await w.ledger.takeFence('b', B, { from: A });
  await expect(recoverTail(w.ledger, w.store, 'b', B, undefined, { own: null })).resolves.toMatchObject({ recorded: 3 });
  const x = new Indexer({ kv: etcd.link, keys: w.ledger.keys, store: w.store, placed: () => [], writers: () => [], retired: () => [WRITER], counter }, { settleMs: 60_000 });
  await expect(x.tick()).resolves.toMatchObject({ records: 3, entries: 0, stranded: 3 });
  await expect(etcd.link.rangePrefix(w.ledger.keys.strandedParts('b'), 2000)).resolves.toMatchObject({ kvs: [] });
  expect((await etcd.link.rangePrefix(w.ledger.keys.strandedParts('a'), 2000)).kvs).toHaveLength(3);
  expect((await etcd.link.rangePrefix(w.ledger.keys.partRecords(WRITER), 2000)).kvs).toEqual([]);
  expect(await read(w, 'b')).toEqual(Buffer.concat(w.written.get('b')!));
});

it('drops a part trimmed after it was recorded and before it was indexed: it gets no entry, which nothing would remove', async () => {
  const w = await setup();
  for (let i = 0; i < 3; i++) await group(w, ['a']);
  // The trim came when no entry was there to remove (ledger.ts trim: m/ gets the start).
  expect(await w.ledger.trim('a', A, 2)).toBe(true);
  const placed: PlacedStream[] = [{ name: 'a', streamId: 1, fence: A }];
  await expect(indexer(w, () => placed).tick()).resolves.toMatchObject({ records: 3, entries: 1, stranded: 0 });
  expect((await w.ledger.entries('a')).map((e) => [e.from, e.to])).toEqual([[2, 3]]);
  expect(await read(w, 'a')).toEqual(w.written.get('a')![2]);
});

it('takes nothing of a stream deleted and created again for the new one: its parts are older than the new m/', async () => {
  const w = await setup();
  for (let i = 0; i < 3; i++) await group(w, ['a', 'b']);
  expect(await w.ledger.deleteStream('a', A)).toBe(true);
  // Created again under the same name, at epoch 1 again: its parts have the names the old one's had.
  w.written.delete('a');
  await group(w, ['a']);
  const placed = ['a', 'b'].map((name, k): PlacedStream => ({ name, streamId: k + 1, fence: A }));
  // An opener of the new stream sees only its part; so does the indexer.
  const { pending } = await w.ledger.pendingOf('a', WRITER);
  expect(pending.map((p) => [p.o, p.from, p.to])).toEqual([[g(3), 0, 1]]);
  await expect(indexer(w, () => placed).tick()).resolves.toMatchObject({ records: 4, stranded: 0 });
  expect((await w.ledger.entries('a')).map((e) => [e.from, e.to])).toEqual([[0, 1]]);
  expect(await read(w, 'a')).toEqual(Buffer.concat(w.written.get('a')!));
  expect(await read(w, 'b')).toEqual(Buffer.concat(w.written.get('b')!));
});

it('indexes a part of inPlaceBytes or more where it is: its entry names its group object, which its reference keeps from the reaper', async () => {
  const w = await setup();
  // Frames of 40 + seq bytes (and a header): the first is copied, the two after it are indexed in place.
  for (let i = 0; i < 3; i++) await group(w, ['a']);
  const size = (n: number): number => w.written.get('a')![n]!.length;
  const placed: PlacedStream[] = [{ name: 'a', streamId: 1, fence: A }];
  const x = new Indexer({ kv: etcd.link, keys: w.ledger.keys, store: w.store, placed: () => placed, writers: () => [WRITER], counter }, { settleMs: 0, inPlaceBytes: size(1) });
  await expect(x.tick()).resolves.toMatchObject({ records: 3, entries: 3, stranded: 0, bytes: size(0) });
  const entries = await w.ledger.entries('a');
  expect(entries.map((e) => [e.o.startsWith('c/') ? 'c/' : e.o, e.from, e.to])).toEqual([
    ['c/', 0, 1],
    [g(1), 1, 2],
    [g(2), 2, 3],
  ]);
  expect(await read(w, 'a')).toEqual(Buffer.concat(w.written.get('a')!));
  const refs = await etcd.link.rangePrefix(`${w.ledger.keys.root}r/g/`, 2000);
  expect(refs.kvs.map((kv) => kv.key.slice(w.ledger.keys.root.length))).toEqual([`r/${g(1)}/a`, `r/${g(2)}/a`]);
  // The copied part's group object goes; those its entries name stay.
  await expect((await reaperOf(etcd.link, w)).tick()).resolves.toMatchObject({ destroyed: 1, deleted: 1 });
  await expect(w.store.get(g(0))).rejects.toMatchObject({ code: 'NoSuchKey' });
  expect(await read(w, 'a')).toEqual(Buffer.concat(w.written.get('a')!));
});
