/**
 * The writer's commit token (ledger.ts, CommitToken) against a real etcd: a commit txn whose
 * answer is lost after etcd applied it, and which the ledger sends again, is found landed — it
 * puts nothing a second time over what changed in between (an entry compaction replaced, a
 * stream's new owner), and what it recorded is told apart from what it cannot know.
 */
import { randomBytes } from 'node:crypto';
import { type EtcdLink } from '../../src/actors';
import { type CommitToken, Ledger, type StreamRecord, groupObjectKey, openObjectStore, recoverTail } from '../../src/objects';
import { etcdForFile } from '../helpers/etcd-for-file';
import { tempDir } from '../helpers/node-process';
import { groupOf } from './group-fixture';

const etcd = etcdForFile();
const WRITER = 'g/1/1/0/';
const me = { nodeId: 1, epoch: 1 };
const meta = { meta: {}, startSeq: 0, sealed: false };
const g = (n: number): string => groupObjectKey(1, 1, 0, n);

/**
 * A link whose txns with a success branch reach etcd and whose answer is then lost, for those
 * `lose` picks (by count, from 1); `between` runs after such a txn landed and before the loss is
 * reported (what another writer does meanwhile). `'unsent'`: the txn fails without reaching etcd.
 */
function lossyLink(lose: (n: number) => boolean | 'unsent', between: () => Promise<void> = async () => undefined): { link: EtcdLink; sent: () => number } {
  let n = 0;
  const real = etcd.link;
  const link = new Proxy(real, {
    get(target, prop) {
      if (prop === 'txnOnce') {
        return async (...args: Parameters<EtcdLink['txnOnce']>) => {
          const how = args[1].length > 0 ? lose(++n) : false;
          if (how === 'unsent') throw new Error('etcd did not answer');
          const r = await target.txnOnce(...args);
          if (how) {
            await between();
            throw new Error('the answer was lost');
          }
          return r;
        };
      }
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { link, sent: () => n };
}

const record = (stream: string, n: number, counter: number, from: number, extra: Partial<StreamRecord> = {}): StreamRecord => ({
  stream,
  fence: me,
  entries: [{ o: g(n), counter, off: 0, len: 10, from, to: from + 1 }],
  ...extra,
});

async function setup(lose: (n: number) => boolean | 'unsent', between?: (ledger: Ledger) => Promise<void>): Promise<{ ledger: Ledger; token: CommitToken; plain: Ledger }> {
  const prefix = `token/${randomBytes(6).toString('hex')}`;
  const plain = new Ledger(etcd.link, prefix);
  const { link } = lossyLink(lose, () => between?.(plain) ?? Promise.resolve());
  const ledger = new Ledger(link, prefix, { deadlineMs: 5_000 });
  return { ledger, token: await ledger.commitToken(WRITER), plain };
}

describe('the writer\'s commit token', () => {
  it('a commit whose answer was lost, sent again after compaction replaced its entry, leaves the compacted entry alone and counts as recorded', async () => {
    const compacted = JSON.stringify({ o: 'c/1/0000000001.000000000000', off: 0, len: 20, from: 0, to: 2 });
    // The first commit's txn lands; before its answer is lost, compaction rewrites the entry under the same key.
    const { ledger, token, plain } = await setup(
      (n) => n === 2,
      async (l) => {
        await etcd.link.txnOnce([], [{ put: l.keys.entry('s', 1, 1), value: Buffer.from(compacted) }], []);
      },
    );
    await expect(ledger.commitObjects(new Map([[g(0), 10]]), [record('s', 0, 0, 0, { create: true, meta })], undefined, { markers: true, token })).resolves.toEqual({ fenced: [] });
    await expect(ledger.commitObjects(new Map([[g(1), 10]]), [record('s', 1, 1, 1)], undefined, { markers: true, token })).resolves.toEqual({ fenced: [] });
    const entries = await plain.entries('s');
    expect(entries.map((e) => [e.counter, e.o])).toEqual([
      [0, g(0)],
      [1, 'c/1/0000000001.000000000000'],
    ]);
    // The token names the commit's last txn, and the writer knows its revision: the next commit goes through at once.
    const kv = await etcd.link.get(token.key, 2_000);
    expect(kv.kv?.value.toString()).toBe(`s/${'0000000001'}.${'000000000001'}#0`);
    expect(token.rev).toBe(kv.kv?.modRevision);
    await expect(ledger.commitObjects(new Map([[g(2), 10]]), [record('s', 2, 2, 2)], undefined, { markers: true, token })).resolves.toEqual({ fenced: [] });
    expect((await plain.entries('s')).map((e) => e.counter)).toEqual([0, 1, 2]);
  });

  it('without the token the same retry puts the old entry back over the compacted one (what the token prevents)', async () => {
    const compacted = JSON.stringify({ o: 'c/1/0000000001.000000000000', off: 0, len: 20, from: 0, to: 2 });
    const { ledger, plain } = await setup(
      (n) => n === 2,
      async (l) => {
        await etcd.link.txnOnce([], [{ put: l.keys.entry('s', 1, 1), value: Buffer.from(compacted) }], []);
      },
    );
    await ledger.commitObjects(new Map([[g(0), 10]]), [record('s', 0, 0, 0, { create: true, meta })], undefined, { markers: true });
    await ledger.commitObjects(new Map([[g(1), 10]]), [record('s', 1, 1, 1)], undefined, { markers: true });
    expect((await plain.entries('s')).map((e) => e.o)).toEqual([g(0), g(1)]);
  });

  it('a stream fenced after the lost answer: recorded when its entry is there, unknown when its new owner removed it, fenced when it never was', async () => {
    const other = { nodeId: 2, epoch: 2 };
    const { ledger, token, plain } = await setup(
      (n) => n === 2,
      async (l) => {
        // Both move to node 2; b's new owner drops the entry (a trim, or its compaction under its own key).
        for (const s of ['a', 'b']) await l.takeFence(s, other, { from: me });
        await etcd.link.txnOnce([], [{ delete: l.keys.entry('b', 1, 1) }], []);
      },
    );
    await expect(ledger.commitObjects(new Map([[g(0), 10]]), ['a', 'b', 'c'].map((s) => record(s, 0, 0, 0, { create: true, meta })), undefined, { markers: true, token })).resolves.toEqual({ fenced: [] });
    await plain.takeFence('c', other, { from: me });
    await expect(ledger.commitObjects(new Map([[g(1), 10]]), ['a', 'b'].map((s) => record(s, 1, 1, 1)), undefined, { markers: true, token })).resolves.toEqual({ fenced: [], unknown: ['b'] });
    // c was fenced before: a commit that never lands for it says so.
    await expect(ledger.commitObjects(new Map([[g(2), 10]]), [record('c', 2, 1, 1)], undefined, { markers: true, token })).resolves.toEqual({ fenced: ['c'] });
    expect((await plain.entries('a')).map((e) => e.counter)).toEqual([0, 1]);
    expect((await plain.entries('c')).map((e) => e.counter)).toEqual([0]);
  });

  it('a commit of several txns called again after it gave up: the txns that landed are not sent again', async () => {
    const names = Array.from({ length: 95 }, (_, i) => `t${String(i).padStart(3, '0')}`);
    // Three txns a commit (40, 40 and 15 streams). The second commit's first txn is answered; every
    // answer from its second on is lost until the deadline passes: the call fails after two of its txns landed.
    let failing = true;
    const { ledger, token, plain } = await setup((n) => failing && n >= 5);
    await expect(ledger.commitObjects(new Map([[g(0), 10]]), names.map((s) => record(s, 0, 0, 0, { create: true, meta })), undefined, { markers: true, token })).resolves.toEqual({ fenced: [] });
    const second = ledger.commitObjects(new Map([[g(1), 10]]), names.map((s) => record(s, 1, 1, 1)), undefined, { markers: true, token });
    await expect(second).rejects.toThrow(/did not answer/);
    failing = false;
    // Compaction rewrites an entry of each txn that landed; the commit, called again, must undo neither.
    const compacted = JSON.stringify({ o: 'c/1/0000000001.000000000000', off: 0, len: 20, from: 0, to: 2 });
    for (const s of ['t000', 't050']) await etcd.link.txnOnce([], [{ put: plain.keys.entry(s, 1, 1), value: Buffer.from(compacted) }], []);
    await expect(ledger.commitObjects(new Map([[g(1), 10]]), names.map((s) => record(s, 1, 1, 1)), undefined, { markers: true, token })).resolves.toEqual({ fenced: [] });
    for (const s of ['t000', 't050']) expect((await plain.entries(s)).map((e) => e.o)).toEqual([g(0), 'c/1/0000000001.000000000000']);
    for (const s of ['t001', 't079', 't080', 't094']) expect((await plain.entries(s)).map((e) => e.o)).toEqual([g(0), g(1)]);
    expect((await etcd.link.get(token.key, 2_000)).kv?.value.toString()).toMatch(/#2$/);
  }, 20_000);

  it('a tail recovery\'s commit whose answer was lost is not put again over compaction\'s entry, and its token goes when it is done', async () => {
    const compacted = JSON.stringify({ o: 'c/1/0000000002.000000000000', off: 0, len: 20, from: 1, to: 3 });
    const B = { nodeId: 2, epoch: 2 };
    // The second txn with writes is the recovery's commit (the first its tail walk record): lost after compaction rewrote its entry.
    let n = 0;
    const { ledger, plain } = await setup(
      () => ++n === 2,
      async (l) => {
        await etcd.link.txnOnce([], [{ put: l.keys.entry('s', 2, 0), value: Buffer.from(compacted) }], []);
      },
    );
    const store = openObjectStore(`file:${tempDir('token-tail-')}`);
    await store.put(g(1), groupOf([{ stream: 's', from: 0, to: 1, early: false }]), { ifAbsent: true });
    await plain.commitObjects(new Map([[g(1), 1]]), [{ stream: 's', fence: me, create: true, position: g(1), entries: [{ o: g(1), counter: 0, off: 0, len: 10, from: 0, to: 1 }] }]);
    await store.put(g(2), groupOf([{ stream: 's', from: 1, to: 3, early: true }]), { ifAbsent: true });
    await plain.takeFence('s', B, { from: me });
    await expect(recoverTail(ledger, store, 's', B)).resolves.toMatchObject({ recorded: 1 });
    expect((await plain.entries('s')).map((e) => [e.epoch, e.counter, e.o])).toEqual([
      [1, 0, g(1)],
      [2, 0, 'c/1/0000000002.000000000000'],
    ]);
    expect((await etcd.link.rangePrefix(plain.keys.recoveryTokens('s'), 2_000)).kvs).toEqual([]);
    await store.close();
  });

  it('a commit of several txns that gave up before its second reached etcd goes on after its first, with the streams the first left out', async () => {
    const names = Array.from({ length: 95 }, (_, i) => `v${String(i).padStart(3, '0')}`);
    // Commit 1: txns 1-3. Commit 2: its first txn, refused for v010's fence (4), then sent without it and
    // answered (5); from its second txn on, etcd answers nothing until the deadline.
    let failing = true;
    const { ledger, token, plain } = await setup((n) => (failing && n >= 6 ? 'unsent' : false));
    await expect(ledger.commitObjects(new Map([[g(0), 10]]), names.map((s) => record(s, 0, 0, 0, { create: true, meta })), undefined, { markers: true, token })).resolves.toEqual({ fenced: [] });
    await plain.takeFence('v010', { nodeId: 2, epoch: 2 }, { from: me });
    const second = () => ledger.commitObjects(new Map([[g(1), 10]]), names.map((s) => record(s, 1, 1, 1)), undefined, { markers: true, token });
    await expect(second()).rejects.toThrow(/did not answer/);
    failing = false;
    // Compaction rewrites an entry the answered txn wrote: sent again, that txn would put it back.
    const compacted = JSON.stringify({ o: 'c/1/0000000001.000000000000', off: 0, len: 20, from: 0, to: 2 });
    await etcd.link.txnOnce([], [{ put: plain.keys.entry('v000', 1, 1), value: Buffer.from(compacted) }], []);
    await expect(second()).resolves.toEqual({ fenced: ['v010'] });
    expect((await plain.entries('v000')).map((e) => e.o)).toEqual([g(0), 'c/1/0000000001.000000000000']);
    for (const s of ['v001', 'v039', 'v040', 'v094']) expect((await plain.entries(s)).map((e) => e.o)).toEqual([g(0), g(1)]);
    expect((await plain.entries('v010')).map((e) => e.o)).toEqual([g(0)]);
    expect(token.progress).toBeNull();
  }, 20_000);
});
