/**
 * A moved stream's opener in the records format records its many pending parts by ledger txns
 * sent at once, planned first (src/objects/recovery-plan.ts), against a real etcd (one Debian
 * etcd-server member) and a `file:` store: every part recorded, in order; the plan gone after;
 * a recovery cut short after its plan (a hole in the entries) is finished by the next opener, and
 * the offline check counts the plan's entries; and
 * the objects the opener records keep their records-format mark, so the reaper still waits for the
 * writer's index cursor while another stream's pending record names them; and the opens of one
 * failover read a writer's pending records' values once (src/objects/record-cache.ts).
 */
import { type Fence, type PlacedStream, type RecoveryPlan, checkObjectLedger, recoverTail } from '../../src/objects';
import { CompactedCounter } from '../../src/objects/compaction';
import { Indexer } from '../../src/objects/indexer';
import { Ledger } from '../../src/objects/ledger';
import { etcdForFile } from '../helpers/etcd-for-file';
import { A, B, WRITER, g, group, read, reaperOf, recordsWriter } from './records-fixture';

const etcd = etcdForFile();
const C: Fence = { nodeId: 3, epoch: 3 };
/** Parts of one stream pending: three txns of a plan (40 entries a txn). */
const PARTS = 100;

it('records more pending parts than one txn holds by txns sent at once, all of them in order, and drops its plan', async () => {
  const w = await recordsWriter(etcd.link, 'plan');
  for (let i = 0; i < PARTS; i++) await group(w, ['b']);
  await w.ledger.takeFence('b', B, { from: A });
  await expect(recoverTail(w.ledger, w.store, 'b', B, undefined, { own: null })).resolves.toMatchObject({ recorded: PARTS });
  const entries = await w.ledger.entries('b');
  expect(entries.map((e) => [e.epoch, e.counter, e.from])).toEqual(Array.from({ length: PARTS }, (_, k) => [B.epoch, k, k]));
  expect(await read(w, 'b')).toEqual(Buffer.concat(w.written.get('b')!));
  await expect(w.ledger.recoveryPlans('b')).resolves.toEqual([]);
  await expect(etcd.link.rangePrefix(w.ledger.keys.recoveryTokens('b'), 2000)).resolves.toMatchObject({ kvs: [] });
});

it('a recovery cut short after its plan leaves a hole in the entries, which the stream\'s next opener fills from the plan before anything else', async () => {
  const w = await recordsWriter(etcd.link, 'plan');
  for (let i = 0; i < PARTS; i++) await group(w, ['b']);
  await w.ledger.takeFence('b', B, { from: A });
  // B's opener: its plan's later txns land, its first does not (they go at once, in any order), and it dies.
  class CutShort extends Ledger {
    override async finishRecoveryPlan(stream: string, fence: Fence, plan: RecoveryPlan, pending: boolean): Promise<boolean> {
      await super.finishRecoveryPlan(stream, fence, { ...plan, entries: plan.entries.slice(40) }, pending);
      await this.writeRecoveryPlan(stream, fence, plan); // the plan stays: the opener never got that far
      throw new Error('the opener died');
    }
  }
  const cut = new CutShort(etcd.link, w.ledger.keys.root.slice(0, -'.objects/'.length));
  await expect(recoverTail(cut, w.store, 'b', B, undefined, { own: null })).rejects.toThrow('the opener died');
  expect((await w.ledger.entries('b')).map((e) => e.from)).toEqual(Array.from({ length: PARTS - 40 }, (_, k) => k + 40));
  await expect(w.ledger.recoveryPlans('b')).resolves.toMatchObject([{ epoch: B.epoch, entries: expect.any(Array) }]);
  // Only the plan holds the parts of the hole now (as it does for parts a tail walk found, which no record names).
  await etcd.link.txnOnce([], [{ deletePrefix: w.ledger.keys.partRecords(WRITER) }], []);
  // The offline check counts the plan's entries, not a hole.
  await expect(checkObjectLedger(etcd.link, w.ledger.keys, w.store, { streams: ['b'] })).resolves.toMatchObject({ damaged: [], entries: PARTS });
  // The next opener finishes B's plan (its entries under B's epoch), then finds nothing more pending.
  await w.ledger.takeFence('b', C, { from: B });
  await expect(recoverTail(w.ledger, w.store, 'b', C, undefined, { own: null })).resolves.toMatchObject({ recorded: 0 });
  expect((await w.ledger.entries('b')).map((e) => [e.epoch, e.from])).toEqual(Array.from({ length: PARTS }, (_, k) => [B.epoch, k]));
  expect(await read(w, 'b')).toEqual(Buffer.concat(w.written.get('b')!));
  await expect(w.ledger.recoveryPlans('b')).resolves.toEqual([]);
});

it('the objects an opener records keep the records format\'s mark: the reaper waits for the writer\'s cursor, which another stream\'s pending parts hold', async () => {
  const w = await recordsWriter(etcd.link, 'plan');
  // b's parts and a's share objects: planned (many) and one txn (few) both.
  for (let i = 0; i < PARTS; i++) await group(w, i >= PARTS - 5 ? ['a', 'b', 'c'] : ['a', 'b']);
  await w.ledger.takeFence('b', B, { from: A });
  await w.ledger.takeFence('c', B, { from: A });
  await expect(recoverTail(w.ledger, w.store, 'b', B, undefined, { own: null })).resolves.toMatchObject({ recorded: PARTS });
  await expect(recoverTail(w.ledger, w.store, 'c', B, undefined, { own: null })).resolves.toMatchObject({ recorded: 5 });
  // b and c go (as compaction's rewrite would let go of those objects): nothing refers to them but a's pending records.
  expect(await w.ledger.deleteStream('b', B)).toBe(true);
  expect(await w.ledger.deleteStream('c', B)).toBe(true);
  const reaper = await reaperOf(etcd.link, w);
  await expect(reaper.tick()).resolves.toMatchObject({ destroyed: 0, deleted: 0 });
  for (const n of [0, PARTS - 6, PARTS - 1]) await expect(w.store.get(g(n))).resolves.toBeInstanceOf(Buffer);
  // a's parts are indexed from those objects, every frame; then the objects go.
  const placed: PlacedStream[] = [{ name: 'a', streamId: 1, fence: A }];
  const x = new Indexer({ kv: etcd.link, keys: w.ledger.keys, store: w.store, placed: () => placed, writers: () => [WRITER], counter: new CompactedCounter() }, { settleMs: 0 });
  await expect(x.tick()).resolves.toMatchObject({ records: PARTS, stranded: 0 });
  expect(await read(w, 'a')).toEqual(Buffer.concat(w.written.get('a')!));
  await expect(reaper.tick()).resolves.toMatchObject({ destroyed: PARTS });
});

it('the many opens of one failover read the writer\'s pending records once: later opens read their keys, and the values of records written since', async () => {
  const w = await recordsWriter(etcd.link, 'plan');
  const streams = ['a', 'b', 'c', 'd'];
  for (let i = 0; i < 20; i++) await group(w, streams);
  const ledger = new Ledger(etcd.link, w.ledger.keys.root.slice(0, -'.objects/'.length));
  const valuesRead: string[] = [];
  const range = etcd.link.rangePrefix.bind(etcd.link);
  const spy = jest.spyOn(etcd.link, 'rangePrefix').mockImplementation(async (prefix, deadlineMs, options) => {
    const r = await range(prefix, deadlineMs, options);
    if (prefix === ledger.keys.partRecords(WRITER)) for (const kv of r.kvs) valuesRead.push(kv.key);
    return r;
  });
  try {
    await expect(ledger.pendingOf('a', WRITER)).resolves.toMatchObject({ pending: Array.from({ length: 20 }, (_, k) => expect.objectContaining({ from: k })) });
    expect(valuesRead).toHaveLength(20);
    valuesRead.length = 0;
    await expect(ledger.pendingOf('b', WRITER)).resolves.toMatchObject({ pending: Array.from({ length: 20 }, (_, k) => expect.objectContaining({ stream: 'b', from: k })) });
    expect(valuesRead).toEqual([]);
    // Two more groups: only their records' values are read.
    for (let i = 0; i < 2; i++) await group(w, streams);
    await expect(ledger.pendingOf('c', WRITER)).resolves.toMatchObject({ pending: Array.from({ length: 22 }, (_, k) => expect.objectContaining({ stream: 'c', from: k })) });
    expect(valuesRead).toHaveLength(2);
    // Indexed since (records gone, entries there): what the entries hold is not pending, from the keys alone.
    const placed: PlacedStream[] = streams.map((name, k) => ({ name, streamId: k + 1, fence: A }));
    await new Indexer({ kv: etcd.link, keys: w.ledger.keys, store: w.store, placed: () => placed, writers: () => [WRITER], counter: new CompactedCounter() }, { settleMs: 0 }).tick();
    valuesRead.length = 0;
    await expect(ledger.pendingOf('d', WRITER)).resolves.toMatchObject({ pending: [], entries: [expect.objectContaining({ from: 0, to: 22 })] });
    expect(valuesRead).toEqual([]);
  } finally {
    spy.mockRestore();
  }
});
