/**
 * The ledger's records format (src/objects/part-records.ts) against a real etcd (one Debian
 * etcd-server member) and a `file:` store: a writer's commit puts one part record per txn naming
 * its streams' parts (a stream fenced away is left out of it), a txn whose answer was lost is found
 * landed by its token and the record tells which streams it recorded, and a stream's opener finds
 * the parts recorded and not indexed (after the writer's index cursor) and the stranded ones,
 * less what its entries hold, and records them under its own fence.
 */
import { randomBytes } from 'node:crypto';
import { type EtcdLink } from '../../src/actors';
import { type Fence, Ledger, type StreamRecord, groupObjectKey, openObjectStore, recoverTail } from '../../src/objects';
import { decodeCursor, decodePartRecord, encodeCursor, encodePartRecord, recordName, uncovered } from '../../src/objects/part-records';
import { etcdForFile } from '../helpers/etcd-for-file';
import { tempDir } from '../helpers/node-process';
import { groupOf } from './group-fixture';

const etcd = etcdForFile();
const WRITER = 'g/1/1/0/';
const A: Fence = { nodeId: 1, epoch: 1 };
const B: Fence = { nodeId: 2, epoch: 2 };
const meta = { meta: {}, startSeq: 0, sealed: false };
const g = (n: number): string => groupObjectKey(1, 1, 0, n);

const rec = (stream: string, n: number, counter: number, from: number, extra: Partial<StreamRecord> = {}): StreamRecord => ({
  stream,
  fence: A,
  entries: [{ o: g(n), counter, off: counter * 10, len: 10, from, to: from + 1 }],
  ...extra,
});

/** A link whose `lose`-picked txns (with a success branch, counted from 1) reach etcd and lose their answer. */
function lossy(lose: (n: number) => boolean): EtcdLink {
  let n = 0;
  return new Proxy(etcd.link, {
    get(target, prop) {
      if (prop === 'txnOnce') {
        return async (...args: Parameters<EtcdLink['txnOnce']>) => {
          const lost = args[1].length > 0 && lose(++n);
          const r = await target.txnOnce(...args);
          if (lost) throw new Error('the answer was lost');
          return r;
        };
      }
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

const fresh = (link: EtcdLink = etcd.link): { ledger: Ledger; plain: Ledger } => {
  const prefix = `records/${randomBytes(6).toString('hex')}`;
  return { ledger: new Ledger(link, prefix, { deadlineMs: 5_000 }), plain: new Ledger(etcd.link, prefix) };
};

async function records(l: Ledger): Promise<Array<{ name: string; streams: string[] }>> {
  const prefix = l.keys.partRecords(WRITER);
  const r = await etcd.link.rangePrefix(prefix, 2000);
  return r.kvs.map((kv) => ({ name: kv.key.slice(prefix.length), streams: decodePartRecord(kv.value).map((p) => p.stream) }));
}

describe('part records', () => {
  it('round-trip, and a value that is not one is an error', () => {
    const parts = [{ stream: 'a/b', epoch: 3, counter: 7, o: g(9), off: 10, len: 20, from: 5, to: 9, size: 100 }];
    expect(decodePartRecord(encodePartRecord(parts))).toEqual(parts);
    expect(() => decodePartRecord('[["a",1,2,"o",0,1,5,4,0]]')).toThrow(/is not a part/);
    expect(() => decodePartRecord('{}')).toThrow(/not a list/);
    expect(decodeCursor(null)).toEqual({ q: '', o: 0 });
    expect(decodeCursor(encodeCursor({ q: recordName(4, 1), o: 5 }))).toEqual({ q: '000000000004.0001', o: 5 });
    expect(recordName(12, 3) < recordName(13, 0)).toBe(true);
  });

  it('uncovered: what no entry holds, once, in seq order; a part straddling an entry is damage', () => {
    const held = [{ from: 0, to: 4 }];
    const parts = [{ from: 6, to: 8 }, { from: 2, to: 3 }, { from: 4, to: 6 }, { from: 6, to: 8 }];
    expect(uncovered(parts, held)).toEqual([{ from: 4, to: 6 }, { from: 6, to: 8 }]);
    expect(() => uncovered([{ from: 3, to: 5 }], held)).toThrow(/overlaps/);
  });
});

describe('the ledger in the records format', () => {
  it('puts one record per txn naming its streams\' parts, with no entry or reference, and leaves a fenced stream out', async () => {
    const { ledger } = fresh();
    const token = await ledger.commitToken(WRITER);
    const first = await ledger.commitObjects(new Map([[g(0), 100]]), [rec('x', 0, 0, 0, { create: true, meta, position: g(0) }), rec('y', 0, 0, 0, { create: true, meta, position: g(0) })], undefined, { token, records: { writer: WRITER, firstObject: 0 } });
    expect(first).toEqual({ fenced: [] });
    await ledger.takeFence('y', B, { from: A });
    const second = await ledger.commitObjects(new Map([[g(1), 100]]), [rec('x', 1, 1, 1), rec('y', 1, 1, 1)], undefined, { token, records: { writer: WRITER, firstObject: 1 } });
    expect(second).toEqual({ fenced: ['y'] });
    expect(await records(ledger)).toEqual([
      { name: recordName(0, 0), streams: ['x', 'y'] },
      { name: recordName(1, 0), streams: ['x'] },
    ]);
    await expect(ledger.entries('x')).resolves.toEqual([]);
    const refs = await etcd.link.rangePrefix(`${ledger.keys.root}r/`, 2000);
    expect(refs.kvs).toEqual([]);
    const o = await etcd.link.rangePrefix(ledger.keys.objects, 2000);
    expect(o.kvs.map((kv) => JSON.parse(kv.value.toString()) as unknown)).toEqual([expect.objectContaining({ bytes: 100, q: 1 }), expect.objectContaining({ bytes: 100, q: 1 })]);
    await expect(ledger.position('x')).resolves.toBe(g(0));
    // Without the writer's token there is no records format.
    await expect(ledger.commitObjects(new Map([[g(2), 1]]), [rec('x', 2, 2, 2)], undefined, { records: { writer: WRITER, firstObject: 2 } })).rejects.toThrow(/token/);
  });

  it('a txn whose answer was lost is found landed; its record says which streams it recorded', async () => {
    // Txn 3 (the second commit) lands and loses its answer; meanwhile nothing changes: both streams recorded.
    const { ledger, plain } = fresh(lossy((n) => n === 2));
    const token = await ledger.commitToken(WRITER);
    await ledger.commitObjects(new Map([[g(0), 10]]), [rec('x', 0, 0, 0, { create: true, meta, position: g(0) }), rec('y', 0, 0, 0, { create: true, meta, position: g(0) })], undefined, { token, records: { writer: WRITER, firstObject: 0 } });
    await expect(ledger.commitObjects(new Map([[g(1), 10]]), [rec('x', 1, 1, 1), rec('y', 1, 1, 1)], undefined, { token, records: { writer: WRITER, firstObject: 1 } })).resolves.toEqual({ fenced: [] });
    expect(await records(plain)).toEqual([
      { name: recordName(0, 0), streams: ['x', 'y'] },
      { name: recordName(1, 0), streams: ['x', 'y'] },
    ]);
  });

  it('a landed txn whose stream was fenced since still counts it recorded, and one the record leaves out as fenced', async () => {
    const prefix = `records/${randomBytes(6).toString('hex')}`;
    const plain = new Ledger(etcd.link, prefix);
    let n = 0;
    // The second commit's txn lands (y already fenced: left out of it); before its answer is lost, x is fenced too.
    const link = new Proxy(etcd.link, {
      get(target, prop) {
        if (prop === 'txnOnce') {
          return async (...args: Parameters<EtcdLink['txnOnce']>) => {
            const lost = args[1].length > 0 && ++n === 3;
            const r = await target.txnOnce(...args);
            if (lost && r.succeeded) {
              await plain.takeFence('x', B, { from: A });
              throw new Error('the answer was lost');
            }
            return r;
          };
        }
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const ledger = new Ledger(link, prefix, { deadlineMs: 5_000 });
    const token = await ledger.commitToken(WRITER);
    await ledger.commitObjects(new Map([[g(0), 10]]), [rec('x', 0, 0, 0, { create: true, meta, position: g(0) }), rec('y', 0, 0, 0, { create: true, meta, position: g(0) })], undefined, { token, records: { writer: WRITER, firstObject: 0 } });
    await plain.takeFence('y', B, { from: A });
    // Txn 2 fails on y's fence (nothing written), txn 3 (without y) lands and its answer is lost.
    await expect(ledger.commitObjects(new Map([[g(1), 10]]), [rec('x', 1, 1, 1), rec('y', 1, 1, 1)], undefined, { token, records: { writer: WRITER, firstObject: 1 } })).resolves.toEqual({ fenced: ['y'] });
    expect(await records(plain)).toEqual([
      { name: recordName(0, 0), streams: ['x', 'y'] },
      { name: recordName(1, 0), streams: ['x'] },
    ]);
  });

  it('a stream\'s opener finds its parts after the writer\'s index cursor and its stranded ones, less its entries, and records them under its fence', async () => {
    const { ledger } = fresh();
    const store = openObjectStore(`file:${tempDir('records-')}`);
    const token = await ledger.commitToken(WRITER);
    // Writer A records s in groups 0..3 (t beside it in 1); s of seqs 0..4.
    for (let n = 0; n < 4; n++) {
      const streams = [rec('s', n, n, n, n === 0 ? { create: true, meta, position: g(0) } : {})];
      if (n === 1) streams.push(rec('t', n, 0, 0, { create: true, meta, position: g(1) }));
      await store.put(g(n), groupOf(streams.map((c) => ({ stream: c.stream, from: c.entries[0]!.from, to: c.entries[0]!.to, early: false }))), { ifAbsent: true });
      await ledger.commitObjects(new Map([[g(n), 30]]), streams, undefined, { token, records: { writer: WRITER, firstObject: n } });
    }
    // The indexer took records 0 and 1: s's seqs 0..2 as one compacted entry, the cursor past record 1.
    const c = 'c/1/0000000001.000000000000';
    await etcd.link.txnOnce(
      [],
      [
        { put: ledger.keys.entry('s', 1, 0), value: Buffer.from(JSON.stringify({ o: c, off: 0, len: 20, from: 0, to: 2 })) },
        { put: ledger.keys.indexCursor(WRITER), value: encodeCursor({ q: recordName(1, 0), o: 2 }) },
      ],
      [],
    );
    // Record 2 was stranded (s fenced away before its indexer came to it) and then indexed again: it is in u/ and q/ both.
    await etcd.link.txnOnce([], [{ put: ledger.keys.strandedPart('s', 1, 2), value: Buffer.from(JSON.stringify({ o: g(2), off: 20, len: 10, from: 2, to: 3, size: 30 })) }], []);
    await ledger.takeFence('s', B, { from: A });
    await expect(ledger.pendingOf('s', WRITER)).resolves.toMatchObject({
      entries: [expect.objectContaining({ o: c, from: 0, to: 2 })],
      pending: [expect.objectContaining({ o: g(2), from: 2, to: 3 }), expect.objectContaining({ o: g(3), from: 3, to: 4 })],
    });
    // The opener's recovery records them (with references: they point into A's group objects).
    const tail = await recoverTail(ledger, store, 's', B, undefined, { own: null });
    expect(tail.recorded).toBe(2);
    const stored = await ledger.entries('s');
    expect(stored.map((e) => [e.epoch, e.counter, e.o, e.from, e.to])).toEqual([
      [1, 0, c, 0, 2],
      [2, 0, g(2), 2, 3],
      [2, 1, g(3), 3, 4],
    ]);
    expect(tail.entries?.map((e) => [e.o, e.from, e.to])).toEqual(stored.map((e) => [e.o, e.from, e.to]));
    const refs = await etcd.link.rangePrefix(`${ledger.keys.root}r/`, 2000);
    expect(refs.kvs.map((kv) => kv.key.slice(ledger.keys.root.length))).toEqual([`r/${g(2)}/s`, `r/${g(3)}/s`]);
    // The stranded copy it recorded is gone.
    await expect(etcd.link.rangePrefix(ledger.keys.strandedParts('s'), 2000)).resolves.toMatchObject({ kvs: [] });
  });
});
