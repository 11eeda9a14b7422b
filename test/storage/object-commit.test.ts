/**
 * Objects mode's replicator (object-commit.ts) against a real `file:` object store, with the
 * ledger stubbed (the ledger itself is tested against etcd in test/objects/ledger.test.ts): the
 * group object holds the group's frames, each stream's contiguous, and the entries name their
 * byte ranges and data seqs; a shard worker started again in the same node start continues after
 * the group objects already written, never writing a key twice.
 */
import { type Ledger, type StreamCommit, openObjectStore } from '../../src/objects';
import { encodeFrame } from '../../src/shards/worker/frame';
import { type Group } from '../../src/shards/worker/group-commit';
import { ObjectCommit } from '../../src/shards/worker/object-commit';
import { readMeta } from '../../src/shards/worker/stream-meta';
import { newStreamState } from '../../src/shards/worker/stream-state';
import { encodeRecordBatch } from '../../src/util/record-batch';
import { tempDir } from '../helpers/node-process';

function stubLedger(): { ledger: Ledger; commits: Array<{ key: string; bytes: number; commits: StreamCommit[] }> } {
  const commits: Array<{ key: string; bytes: number; commits: StreamCommit[] }> = [];
  const ledger = { commit: async (key: string, bytes: number, c: StreamCommit[]) => (commits.push({ key, bytes, commits: c }), { fenced: [] }) } as unknown as Ledger;
  return { ledger, commits };
}

const meta = (name: string) => readMeta({ name, contentType: 'text/plain', ttlSeconds: null, expiresAtMs: null, createdAtMs: 1 });
const data = (id: number, base: number, n: number): Buffer => encodeFrame(1, id, encodeRecordBatch({ baseOffset: base, baseTimestamp: 1, records: Array.from({ length: n }, (_, i) => ({ key: null, value: Buffer.from(`v${base + i}`), headers: null })) }));

describe('objects mode replicator', () => {
  it('puts one object per group and records each stream\'s byte range and seqs', async () => {
    const store = openObjectStore(`file:${tempDir('oc-')}`);
    const { ledger, commits } = stubLedger();
    const oc = new ObjectCommit({ store, ledger, nodeId: 3, nodeEpoch: 9, shardId: 1 });
    await oc.start();
    const a = newStreamState(1, meta('/a'));
    const b = newStreamState(2, meta('/b'));
    // An existing stream this thread committed for before (its fence known).
    b.ledger = { fence: { nodeId: 3, epoch: 1 }, counter: 0, meta: { meta: {}, startSeq: 0, sealed: false }, moved: null };
    const fa = [encodeFrame(2, 1, Buffer.from(JSON.stringify({ name: '/a' }))), data(1, 0, 2)];
    const fb = [data(2, 0, 3)];
    const g: Group = { frames: new Map([[a, fa.map((buf) => ({ buf, onDurable: null, s: a, local: false }))], [b, fb.map((buf) => ({ buf, onDurable: null, s: b, local: false }))]]), replies: [], replyStreams: [] };
    await expect(oc.replicate(g)).resolves.toEqual(new Map());
    expect(commits).toHaveLength(1);
    const c = commits[0]!;
    expect(c.key).toBe('g/3/9/1/000000000000');
    const obj = await store.get(c.key);
    expect(obj.equals(Buffer.concat([...fa, ...fb]))).toBe(true);
    const lenA = fa[0]!.length + fa[1]!.length;
    expect(c.commits.map((x) => [x.stream, x.off, x.len, x.from, x.to, x.counter, x.create === true, x.fence, x.meta !== undefined])).toEqual([
      ['/a', 0, lenA, 0, 2, 0, true, { nodeId: 3, epoch: 1 }, true],
      ['/b', lenA, fb[0]!.length, 0, 3, 0, false, { nodeId: 3, epoch: 1 }, false],
    ]);
    await store.close();
  });

  it('continues after the group objects of an earlier start of the same shard in the same node start', async () => {
    const dir = tempDir('oc-restart-');
    const store = openObjectStore(`file:${dir}`);
    await store.put('g/3/9/1/000000000000', Buffer.from('x'));
    await store.put('g/3/9/1/000000000007', Buffer.from('y'));
    await store.put('g/3/9/2/000000000042', Buffer.from('other shard'));
    const { ledger, commits } = stubLedger();
    const oc = new ObjectCommit({ store, ledger, nodeId: 3, nodeEpoch: 9, shardId: 1 });
    await oc.start();
    const s = newStreamState(1, meta('/a'));
    s.ledger = { fence: { nodeId: 3, epoch: 1 }, counter: 5, meta: { meta: {}, startSeq: 0, sealed: false }, moved: null };
    await oc.replicate({ frames: new Map([[s, [{ buf: data(1, 0, 1), onDurable: null, s, local: false }]]]), replies: [], replyStreams: [] });
    expect(commits[0]!.key).toBe('g/3/9/1/000000000008');
    expect(commits[0]!.commits[0]!.counter).toBe(5);
    expect((await store.get('g/3/9/1/000000000007')).toString()).toBe('y');
    await store.close();
  });
});
