/**
 * The object ledger against a real etcd (one Debian etcd-server member): fences taken
 * create-only and by compare-and-set, group commits under the fence (a moved fence refuses the
 * stream and only it), entries in order, delete and trim with their references, and the
 * 40-streams-per-txn split.
 */
import { randomBytes } from 'node:crypto';
import { EtcdLink } from '../../src/actors';
import { Ledger, type StreamCommit, groupObjectKey } from '../../src/objects';
import { EtcdCluster } from '../helpers/etcd-cluster';

let cluster: EtcdCluster;
let link: EtcdLink;
beforeAll(async () => {
  cluster = await EtcdCluster.start(1);
  link = new EtcdLink(cluster.endpoints);
}, 60_000);
afterAll(async () => {
  link?.close();
  await cluster?.stop();
});

const fresh = (): { ledger: Ledger; prefix: string } => {
  const prefix = `ledger/${randomBytes(6).toString('hex')}`;
  return { ledger: new Ledger(link, prefix), prefix };
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
    const o = await link.rangePrefix(`${prefix}.objects/o/`, 2000);
    expect(o.kvs.map((kv) => kv.key)).toEqual([`${prefix}.objects/o/${obj}`, `${prefix}.objects/o/${obj2}`]);
    expect(JSON.parse(o.kvs[0]!.value.toString())).toMatchObject({ bytes: 300 });
    const r = await link.rangePrefix(`${prefix}.objects/r/${obj2}/`, 2000);
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

  it('records the entries carried from earlier unanswered groups with the group\'s own, whichever txn etcd applies first', async () => {
    const { ledger, prefix } = fresh();
    const g = (n: number): string => groupObjectKey(1, 1, 0, n);
    await ledger.commit(g(0), 1, [commitOf('p', 0, 0, 1, { create: true }), commitOf('q', 0, 0, 1, { create: true })]);
    // Group 2's txn arrives before group 1's: it records p's entry of group 1 too; q is not in group 2, so q's is left to group 1.
    const p1 = commitOf('p', 1, 1, 2);
    const q1 = commitOf('q', 1, 1, 2);
    await expect(ledger.commit(g(2), 1, [commitOf('p', 2, 2, 3)], [{ objectKey: g(1), bytes: 1, commit: p1 }, { objectKey: g(1), bytes: 1, commit: q1 }])).resolves.toEqual({ fenced: [] });
    expect((await ledger.entries('p')).map((e) => [e.counter, e.o])).toEqual([[0, g(0)], [1, g(1)], [2, g(2)]]);
    expect((await ledger.entries('q')).map((e) => e.counter)).toEqual([0]);
    const refs = await link.rangePrefix(`${prefix}.objects/r/${g(1)}/`, 2000);
    expect(refs.kvs.map((kv) => kv.key)).toEqual([`${prefix}.objects/r/${g(1)}/p`]);
    await expect(ledger.objectCount()).resolves.toBe(3);
    // Group 1's own txn then lands its entries again (the same values) and q's.
    await expect(ledger.commit(g(1), 1, [p1, q1])).resolves.toEqual({ fenced: [] });
    expect((await ledger.entries('p')).map((e) => e.counter)).toEqual([0, 1, 2]);
    expect((await ledger.entries('q')).map((e) => e.counter)).toEqual([0, 1]);
    // Group 4 carries group 3's entry of p; then p moves. Group 3's own txn finds its entry recorded (by group 4's): committed, not fenced.
    const p3 = commitOf('p', 3, 3, 4);
    await expect(ledger.commit(g(4), 1, [commitOf('p', 4, 4, 5)], [{ objectKey: g(3), bytes: 1, commit: p3 }])).resolves.toEqual({ fenced: [] });
    await ledger.takeFence('p', { nodeId: 2, epoch: 2 }, { from: me });
    await expect(ledger.commit(g(3), 1, [p3])).resolves.toEqual({ fenced: [] });
    // After the move, a txn carrying an entry records neither: the stream is fenced, and its entries stay whole.
    await expect(ledger.commit(g(6), 1, [commitOf('p', 6, 6, 7)], [{ objectKey: g(5), bytes: 1, commit: commitOf('p', 5, 5, 6) }])).resolves.toEqual({ fenced: ['p'] });
    expect((await ledger.entries('p')).map((e) => e.counter)).toEqual([0, 1, 2, 3, 4]);
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
    const refs = await link.rangePrefix(`${prefix}.objects/r/`, 2000);
    expect(refs.kvs.every((kv) => kv.key.endsWith('/kept'))).toBe(true);
    expect(refs.kvs).toHaveLength(70);
    // The name is free: a new create takes epoch 1 again.
    await expect(ledger.takeFence('gone', me, { create: true })).resolves.toMatchObject({ ok: true });
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
    const refs = await link.rangePrefix(`${prefix}.objects/r/`, 2000);
    expect(refs.kvs.map((kv) => kv.key)).toEqual([`${prefix}.objects/r/g/1/1/0/000000000002/s`]);
  });

  it('trims without undoing an m/ a group commit wrote between the trim\'s read and its write', async () => {
    const { ledger, prefix } = fresh();
    const meta = { meta: { name: 's' }, startSeq: 0, sealed: false };
    await ledger.commit('g/1/1/0/000000000000', 1, [commitOf('s', 0, 0, 10, { create: true, meta })]);
    await ledger.commit('g/1/1/0/000000000001', 1, [commitOf('s', 1, 10, 20)]);
    // The trim reads m/; right after, a group commit seals the stream (its m/ already holds the new start).
    let raced = false;
    const racing = new Proxy(link, {
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
