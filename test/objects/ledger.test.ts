/**
 * The object ledger against a real etcd (one Debian etcd-server member): fences taken
 * create-only and by compare-and-set, group commits under the fence (a moved fence refuses the
 * stream and only it), several group objects in one commit with the stream's place (w/) and the
 * writer's recorded mark (h/), entries in order, delete and trim with their references, and the
 * 40-streams-per-txn split.
 */
import { randomBytes } from 'node:crypto';
import { Ledger, type StreamCommit, groupObjectKey, producerObjectKey } from '../../src/objects';
import { etcdForFile } from '../helpers/etcd-for-file';

const etcd = etcdForFile();

const fresh = (): { ledger: Ledger; prefix: string } => {
  const prefix = `ledger/${randomBytes(6).toString('hex')}`;
  return { ledger: new Ledger(etcd.link, prefix), prefix };
};
const me = { nodeId: 1, epoch: 1 };
const commitOf = (stream: string, counter: number, from: number, to: number, extra: Partial<StreamCommit> = {}): StreamCommit => ({ stream, fence: me, counter, off: counter * 100, len: 100, from, to, ...extra });

describe('the object ledger', () => {
  it('takes a fence create-only once, then only from the value it holds', async () => {
    const { ledger } = fresh();
    await expect(ledger.takeFence('a/b', me, { create: true })).resolves.toEqual({ ok: true, current: me });
    // Create-only again (another node creating the same name) fails and names the holder.
    await expect(ledger.takeFence('a/b', { nodeId: 2, epoch: 1 }, { create: true })).resolves.toEqual({ ok: false, current: me });
    // A move from a value the fence no longer holds fails; from the held one succeeds.
    await expect(ledger.takeFence('a/b', { nodeId: 2, epoch: 3 }, { from: { nodeId: 1, epoch: 2 } })).resolves.toMatchObject({ ok: false });
    await expect(ledger.takeFence('a/b', { nodeId: 2, epoch: 2 }, { from: me })).resolves.toEqual({ ok: true, current: { nodeId: 2, epoch: 2 } });
    await expect(ledger.fence('a/b')).resolves.toEqual({ nodeId: 2, epoch: 2 });
    await expect(ledger.fence('a')).resolves.toBeNull();
  });

  it('records a group under each stream\'s fence and refuses only the fenced stream', async () => {
    const { ledger, prefix } = fresh();
    const obj = groupObjectKey(1, 7, 3, 0);
    expect(obj).toBe('g/1/7/3/000000000000');
    // Creates take the fence in the commit itself.
    const meta = { meta: { name: 'x' }, startSeq: 0, sealed: false };
    await expect(ledger.commit(obj, 300, [commitOf('x', 0, 0, 5, { create: true, meta }), commitOf('y', 0, 0, 0, { create: true })])).resolves.toEqual({ fenced: [] });
    await expect(ledger.fence('x')).resolves.toEqual(me);
    // Another node takes y: the next group records x and refuses y.
    await ledger.takeFence('y', { nodeId: 2, epoch: 2 }, { from: me });
    const obj2 = groupObjectKey(1, 7, 3, 1);
    await expect(ledger.commit(obj2, 200, [commitOf('x', 1, 5, 9), commitOf('y', 1, 0, 4)])).resolves.toEqual({ fenced: ['y'] });
    const xs = await ledger.entries('x');
    expect(xs.map((e) => [e.epoch, e.counter, e.o, e.from, e.to])).toEqual([
      [1, 0, obj, 0, 5],
      [1, 1, obj2, 5, 9],
    ]);
    expect((await ledger.entries('y')).map((e) => e.o)).toEqual([obj]);
    await expect(ledger.meta('x')).resolves.toEqual(meta);
    // o/ records and references, read as etcd holds them.
    const o = await etcd.link.rangePrefix(`${prefix}.objects/o/`, 2000);
    expect(o.kvs.map((kv) => kv.key)).toEqual([`${prefix}.objects/o/${obj}`, `${prefix}.objects/o/${obj2}`]);
    expect(JSON.parse(o.kvs[0]!.value.toString())).toMatchObject({ bytes: 300 });
    const r = await etcd.link.rangePrefix(`${prefix}.objects/r/${obj2}/`, 2000);
    expect(r.kvs.map((kv) => kv.key)).toEqual([`${prefix}.objects/r/${obj2}/x`]);
    await expect(ledger.objectCount()).resolves.toBe(2);
    await expect(ledger.destroyedObjectBacklog()).resolves.toBe(0);
  });

  it('repeats a commit idempotently (a retry after a lost answer), creates included', async () => {
    const { ledger } = fresh();
    const c = [commitOf('s', 0, 0, 3, { create: true })];
    await ledger.commit('g/1/1/0/000000000000', 10, c);
    await expect(ledger.commit('g/1/1/0/000000000000', 10, c)).resolves.toEqual({ fenced: [] });
    expect(await ledger.entries('s')).toHaveLength(1);
  });

  it('splits a group of many streams into txns of at most 40 streams', async () => {
    const { ledger } = fresh();
    const names = Array.from({ length: 95 }, (_, i) => `t${String(i).padStart(3, '0')}`);
    const meta = { meta: {}, startSeq: 0, sealed: false };
    await expect(ledger.commit('g/1/1/0/000000000000', 1, names.map((n) => commitOf(n, 0, 0, 1, { create: true, meta })))).resolves.toEqual({ fenced: [] });
    // One of them moved: the rest of its txn still commits.
    await ledger.takeFence('t050', { nodeId: 9, epoch: 2 }, { from: me });
    await expect(ledger.commit('g/1/1/0/000000000001', 1, names.map((n) => commitOf(n, 1, 1, 2)))).resolves.toEqual({ fenced: ['t050'] });
    expect(await ledger.entries('t049')).toHaveLength(2);
    expect(await ledger.entries('t050')).toHaveLength(1);
  });

  it('with markers, names every entry of a group object spread over several txns in its one reference marker, and writes no r/<object>/<stream>', async () => {
    const { ledger } = fresh();
    const names = Array.from({ length: 95 }, (_, i) => `u${String(i).padStart(3, '0')}`);
    const meta = { meta: {}, startSeq: 0, sealed: false };
    const g0 = groupObjectKey(1, 1, 0, 0);
    await expect(ledger.commit(g0, 1, names.map((n) => commitOf(n, 0, 0, 1, { create: true, meta })), { markers: true })).resolves.toEqual({ fenced: [] });
    // A stream fenced meanwhile: its entry is named and never written; the others' are.
    await ledger.takeFence('u050', { nodeId: 9, epoch: 2 }, { from: me });
    const g1 = groupObjectKey(1, 1, 0, 1);
    await expect(ledger.commit(g1, 1, names.map((n) => commitOf(n, 1, 1, 2)), { markers: true })).resolves.toEqual({ fenced: ['u050'] });
    for (const [g, counter] of [[g0, 0], [g1, 1]] as const) {
      const refs = (await etcd.link.rangePrefix(ledger.keys.refs(g), 5_000)).kvs;
      expect(refs.map((kv) => kv.key)).toEqual([ledger.keys.referenceMarker(g)]);
      expect(JSON.parse(refs[0]!.value.toString())).toEqual(names.map((n) => ledger.keys.markedEntry(n, 1, counter)));
    }
    expect((await ledger.entries('u049')).map((e) => [e.o, e.m])).toEqual([
      [g0, 1],
      [g1, 1],
    ]);
    expect(await ledger.entries('u050')).toHaveLength(1);
    // Deleted and trimmed without r/ keys to remove.
    expect(await ledger.deleteStream('u049', me)).toBe(true);
    expect(await ledger.entries('u049')).toEqual([]);
  });

  it('records several group objects in one commit: each stream\'s entries in one txn, w/ where given, h/ only when every stream is recorded', async () => {
    const { ledger, prefix } = fresh();
    const g = (n: number): string => groupObjectKey(1, 1, 0, n);
    const at = (n: number, counter: number, from: number, to: number) => ({ o: g(n), counter, off: 0, len: 1, from, to });
    await ledger.commit(g(0), 1, [commitOf('p', 0, 0, 1, { create: true }), commitOf('q', 0, 0, 1, { create: true })]);
    await expect(ledger.recordedThrough('g/1/1/0/', 3)).resolves.toBeNull();
    const objects = new Map([[g(1), 1], [g(2), 1]]);
    await expect(ledger.commitObjects(objects, [{ stream: 'p', fence: me, entries: [at(1, 1, 1, 2), at(2, 2, 2, 3)], position: g(2) }, { stream: 'q', fence: me, entries: [at(1, 1, 1, 2)] }], { writer: 'g/1/1/0/', from: 0, n: 2 })).resolves.toEqual({ fenced: [] });
    expect((await ledger.entries('p')).map((e) => [e.counter, e.o, e.from, e.to])).toEqual([[0, g(0), 0, 1], [1, g(1), 1, 2], [2, g(2), 2, 3]]);
    expect((await ledger.entries('q')).map((e) => [e.counter, e.o])).toEqual([[0, g(0)], [1, g(1)]]);
    await expect(ledger.position('p')).resolves.toBe(g(2));
    await expect(ledger.position('q')).resolves.toBeNull();
    await expect(ledger.recordedThrough('g/1/1/0/', 3)).resolves.toEqual({ writer: 'g/1/1/0/', from: 0, n: 2 });
    await expect(ledger.objectCount()).resolves.toBe(3);
    const refs = await etcd.link.rangePrefix(`${prefix}.objects/r/${g(2)}/`, 2000);
    expect(refs.kvs.map((kv) => kv.key)).toEqual([`${prefix}.objects/r/${g(2)}/p`]);
    // q moves: p's entries are recorded without it, and h/ stays where it was (q's are not recorded).
    await ledger.takeFence('q', { nodeId: 2, epoch: 2 }, { from: me });
    const later = new Map([[g(3), 1], [g(4), 1]]);
    const both = [{ stream: 'p', fence: me, entries: [at(3, 3, 3, 4), at(4, 4, 4, 5)] }, { stream: 'q', fence: me, entries: [at(3, 2, 2, 3)] }];
    await expect(ledger.commitObjects(later, both, { writer: 'g/1/1/0/', from: 0, n: 4 })).resolves.toEqual({ fenced: ['q'] });
    expect((await ledger.entries('p')).map((e) => e.counter)).toEqual([0, 1, 2, 3, 4]);
    expect((await ledger.entries('q')).map((e) => e.counter)).toEqual([0, 1]);
    await expect(ledger.recordedThrough('g/1/1/0/', 3)).resolves.toEqual({ writer: 'g/1/1/0/', from: 0, n: 2 });
    // Sent again (an answer lost): p's entries are there already, so p is committed, not fenced.
    await ledger.takeFence('p', { nodeId: 2, epoch: 2 }, { from: me });
    await expect(ledger.commitObjects(later, [both[0]!])).resolves.toEqual({ fenced: [] });
    // A new entry after the move is refused.
    await expect(ledger.commitObjects(new Map([[g(5), 1]]), [{ stream: 'p', fence: me, entries: [at(5, 5, 5, 6)] }])).resolves.toEqual({ fenced: ['p'] });
    expect((await ledger.entries('p')).map((e) => e.counter)).toEqual([0, 1, 2, 3, 4]);
    // Deleting the stream takes its place with it.
    await expect(ledger.deleteStream('p', { nodeId: 2, epoch: 2 })).resolves.toBe(true);
    await expect(ledger.position('p')).resolves.toBeNull();
  });

  it('refuses a commit of more group objects than one txn may name', async () => {
    const { ledger } = fresh();
    const objects = new Map(Array.from({ length: 33 }, (_, i) => [groupObjectKey(1, 1, 0, i), 1]));
    await expect(ledger.commitObjects(objects, [])).rejects.toThrow(/at most 32/);
  });

  it('deletes a stream under its fence: entries, references, meta and fence', async () => {
    const { ledger, prefix } = fresh();
    for (let i = 0; i < 70; i++) await ledger.commit(groupObjectKey(1, 1, 0, i), 100, [commitOf('gone', i, i, i + 1, { create: i === 0, meta: { meta: {}, startSeq: 0, sealed: false } }), commitOf('kept', i, i, i + 1, { create: i === 0 })]);
    // A deposed owner cannot delete.
    await expect(ledger.deleteStream('gone', { nodeId: 1, epoch: 0 })).resolves.toBe(false);
    await expect(ledger.deleteStream('gone', me)).resolves.toBe(true);
    await expect(ledger.entries('gone')).resolves.toEqual([]);
    await expect(ledger.meta('gone')).resolves.toBeNull();
    await expect(ledger.fence('gone')).resolves.toBeNull();
    const refs = await etcd.link.rangePrefix(`${prefix}.objects/r/`, 2000);
    expect(refs.kvs.every((kv) => kv.key.endsWith('/kept'))).toBe(true);
    expect(refs.kvs).toHaveLength(70);
    // The name is free: a new create takes epoch 1 again.
    await expect(ledger.takeFence('gone', me, { create: true })).resolves.toMatchObject({ ok: true });
  });

  it('names a producer snapshot under the fence: inline or an object held by its o/ and r/ records, the replaced object let go, all of it gone with the stream', async () => {
    const { ledger, prefix } = fresh();
    const root = `${prefix}.objects/`;
    await ledger.commit(groupObjectKey(1, 1, 0, 0), 100, [commitOf('s', 0, 0, 10, { create: true, meta: { meta: {}, startSeq: 0, sealed: false } })]);
    await expect(ledger.producerSnapshot('s')).resolves.toBeNull();
    // A fence this node does not hold records nothing.
    await expect(ledger.recordProducerSnapshot('s', { nodeId: 2, epoch: 1 }, { seq: 10, producers: [] })).resolves.toBe(false);
    await expect(ledger.producerSnapshot('s')).resolves.toBeNull();
    await expect(ledger.recordProducerSnapshot('s', me, { seq: 10, producers: [['k', 1, 3, []]] })).resolves.toBe(true);
    await expect(ledger.producerSnapshot('s')).resolves.toEqual({ seq: 10, producers: [['k', 1, 3, []]] });
    // An object snapshot: o/ and the stream's reference in the same txn.
    const first = producerObjectKey(1, 1, 0, 0);
    expect(first).toBe('p/1/1/0/000000000000');
    await expect(ledger.recordProducerSnapshot('s', me, { seq: 20, o: first, bytes: 9000 })).resolves.toBe(true);
    expect((await etcd.link.get(`${root}o/${first}`, 2000)).kv).not.toBeNull();
    expect((await etcd.link.get(`${root}r/${first}/s`, 2000)).kv).not.toBeNull();
    // Its successor takes the name; the first object's reference goes (the reaper deletes it).
    const second = producerObjectKey(1, 1, 0, 1);
    await expect(ledger.recordProducerSnapshot('s', me, { seq: 30, o: second, bytes: 9000 })).resolves.toBe(true);
    expect((await etcd.link.get(`${root}r/${first}/s`, 2000)).kv).toBeNull();
    expect((await etcd.link.get(`${root}r/${second}/s`, 2000)).kv).not.toBeNull();
    // An older one (a slow writer) does not replace a newer one.
    await expect(ledger.recordProducerSnapshot('s', me, { seq: 25, producers: [] })).resolves.toBe(true);
    await expect(ledger.producerSnapshot('s')).resolves.toEqual({ seq: 30, o: second, bytes: 9000 });
    // Moved away: refused.
    await ledger.takeFence('s', { nodeId: 2, epoch: 2 }, { from: me });
    await expect(ledger.recordProducerSnapshot('s', me, { seq: 40, producers: [] })).resolves.toBe(false);
    // Deleted with the stream, its reference too: a stream created again under the name has none.
    await expect(ledger.deleteStream('s', { nodeId: 2, epoch: 2 })).resolves.toBe(true);
    await expect(ledger.producerSnapshot('s')).resolves.toBeNull();
    expect((await etcd.link.get(`${root}r/${second}/s`, 2000)).kv).toBeNull();
  });

  it('trims: entries wholly below the start go with their references, m/ gets the start', async () => {
    const { ledger, prefix } = fresh();
    await ledger.commit('g/1/1/0/000000000000', 1, [commitOf('s', 0, 0, 10, { create: true, meta: { meta: { name: 's' }, startSeq: 0, sealed: false } })]);
    await ledger.commit('g/1/1/0/000000000001', 1, [commitOf('s', 1, 10, 20)]);
    await ledger.commit('g/1/1/0/000000000002', 1, [commitOf('s', 2, 20, 30)]);
    await expect(ledger.trim('s', { nodeId: 3, epoch: 1 }, 25)).resolves.toBe(false);
    await expect(ledger.trim('s', me, 25)).resolves.toBe(true);
    expect((await ledger.entries('s')).map((e) => e.from)).toEqual([20]);
    await expect(ledger.meta('s')).resolves.toEqual({ meta: { name: 's' }, startSeq: 25, sealed: false });
    const refs = await etcd.link.rangePrefix(`${prefix}.objects/r/`, 2000);
    expect(refs.kvs.map((kv) => kv.key)).toEqual([`${prefix}.objects/r/g/1/1/0/000000000002/s`]);
    // Past the end: the newest entry stays all the same (tail recovery starts from it; readers skip it).
    await expect(ledger.trim('s', me, 40)).resolves.toBe(true);
    expect((await ledger.entries('s')).map((e) => e.from)).toEqual([20]);
    await expect(ledger.meta('s')).resolves.toMatchObject({ startSeq: 40 });
  });

  it('trims without undoing an m/ a group commit wrote between the trim\'s read and its write', async () => {
    const { ledger, prefix } = fresh();
    const meta = { meta: { name: 's' }, startSeq: 0, sealed: false };
    await ledger.commit('g/1/1/0/000000000000', 1, [commitOf('s', 0, 0, 10, { create: true, meta })]);
    await ledger.commit('g/1/1/0/000000000001', 1, [commitOf('s', 1, 10, 20)]);
    // The trim reads m/; right after, a group commit seals the stream (its m/ already holds the new start).
    let raced = false;
    const racing = new Proxy(etcd.link, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (prop !== 'get') return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        return async (key: string, ms: number) => {
          const r = await target.get(key, ms);
          if (!raced && key.endsWith('/m/s')) {
            raced = true;
            await ledger.commit('g/1/1/0/000000000002', 1, [commitOf('s', 2, 20, 21, { meta: { ...meta, startSeq: 15, sealed: true } })]);
          }
          return r;
        };
      },
    });
    const trimming = new Ledger(racing, prefix);
    await expect(trimming.trim('s', me, 15)).resolves.toBe(true);
    expect(raced).toBe(true);
    await expect(ledger.meta('s')).resolves.toEqual({ ...meta, startSeq: 15, sealed: true });
    expect((await ledger.entries('s')).map((e) => e.counter)).toEqual([1, 2]);
  });

  it('keeps stream names holding a slash apart from their prefixes', async () => {
    const { ledger } = fresh();
    await ledger.commit('g/1/1/0/000000000000', 1, [commitOf('a', 0, 0, 1, { create: true }), commitOf('a/b', 0, 0, 2, { create: true })]);
    expect((await ledger.entries('a')).map((e) => e.to)).toEqual([1]);
    expect((await ledger.entries('a/b')).map((e) => e.to)).toEqual([2]);
  });
});

describe('the cluster\'s ledger format', () => {
  it('is written once by the first node, from what it wants or else records; a ledger from before the key says which by its keys', async () => {
    const fresh = new Ledger(etcd.link, `fmt/${randomBytes(6).toString('hex')}`);
    await expect(fresh.clusterFormat('cluster')).resolves.toEqual({ format: 'records', written: true });
    await expect(fresh.clusterFormat('entries')).resolves.toEqual({ format: 'records', written: false });
    const chosen = new Ledger(etcd.link, `fmt/${randomBytes(6).toString('hex')}`);
    await expect(chosen.clusterFormat('entries')).resolves.toEqual({ format: 'entries', written: true });
    // Before the key: streams without part records are the entries format's, part records the records format's.
    const old = new Ledger(etcd.link, `fmt/${randomBytes(6).toString('hex')}`);
    expect((await old.takeFence('s', { nodeId: 1, epoch: 1 }, { create: true })).ok).toBe(true);
    await expect(old.clusterFormat('cluster')).resolves.toEqual({ format: 'entries', written: true });
    const oldRecords = new Ledger(etcd.link, `fmt/${randomBytes(6).toString('hex')}`);
    await etcd.link.txnOnce([], [{ put: oldRecords.keys.indexCursor('g/1/1/0/'), value: Buffer.from('{}') }], []);
    await expect(oldRecords.clusterFormat('entries')).resolves.toEqual({ format: 'records', written: true });
  });
});
