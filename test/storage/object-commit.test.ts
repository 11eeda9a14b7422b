/**
 * Objects mode's replicator (object-commit.ts) against a real `file:` object store, with the
 * ledger stubbed (the ledger itself is tested against etcd in test/objects/ledger.test.ts): the
 * group object holds the group's frames, each stream's contiguous, and the entries name their
 * byte ranges and data seqs; a shard worker started again in the same node start continues after
 * the group objects already written, never writing a key twice; with group commit, the next
 * group's PUT runs beside the previous group's ledger commit, and no third group starts meanwhile.
 */
import { type Ledger, type StreamCommit, openObjectStore } from '../../src/objects';
import { encodeFrame } from '../../src/shards/worker/frame';
import { type Group, GroupCommit } from '../../src/shards/worker/group-commit';
import { SegmentLog, segmentFileName } from '../../src/shards/worker/segment-log';
import { ObjectCommit } from '../../src/shards/worker/object-commit';
import { readMeta } from '../../src/shards/worker/stream-meta';
import { newStreamState } from '../../src/shards/worker/stream-state';
import { encodeRecordBatch } from '../../src/util/record-batch';
import * as fs from 'node:fs';
import * as path from 'node:path';
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

  it('starts the next group when the one in flight reaches its ledger commit, not before, and never a third beside them', async () => {
    const dir = tempDir('oc-pipeline-');
    const store = openObjectStore(`file:${path.join(dir, 'objects')}`);
    fs.mkdirSync(path.join(dir, 'objects'));
    // The store's PUTs and the ledger's commits are held until the test lets each go.
    const puts: Array<{ key: string; go: () => void }> = [];
    const gated = {
      put: async (key: string, body: Buffer | readonly Buffer[]) => {
        await new Promise<void>((go) => puts.push({ key, go }));
        await store.put(key, body, { fresh: true });
      },
      list: (prefix: string) => store.list(prefix),
    };
    const commits: Array<{ key: string; go: () => void }> = [];
    const ledger = { commit: async (key: string) => (await new Promise<void>((go) => commits.push({ key, go })), { fenced: [] }) } as unknown as Ledger;
    const oc = new ObjectCommit({ store: gated, ledger, nodeId: 1, nodeEpoch: 1, shardId: 0 });
    await oc.start();
    const log = SegmentLog.open(path.join(dir, 'log'), 1 << 30);
    const gc = new GroupCommit(log, { failed: () => undefined, applied: () => undefined, afterReplies: () => undefined }, oc);
    const s = newStreamState(1, meta('/a'));
    s.ledger = { fence: { nodeId: 1, epoch: 1 }, counter: 0, meta: { meta: {}, startSeq: 0, sealed: false }, moved: null };
    const replies: number[] = [];
    let seq = 0;
    const append = (): void => {
      const n = seq++;
      gc.enqueue(s, data(1, n, 1), null);
      gc.whenDurable(() => replies.push(n), () => n, s);
      gc.flush();
    };
    // What must happen is waited for (the store's file I/O), what must not is looked for after a pause.
    const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 30));
    const until = async (what: () => boolean): Promise<void> => {
      for (let i = 0; i < 500 && !what(); i++) await settle();
    };

    append(); // group A: its PUT starts
    await settle();
    append(); // waits: A is before its commit
    await settle();
    expect([puts.length, commits.length]).toEqual([1, 0]);
    puts[0]!.go(); // A's PUT done: A's commit begins, and group B (append 1) starts beside it
    await until(() => puts.length === 2);
    expect([puts.length, commits.length]).toEqual([2, 1]);
    append(); // waits: B is before its commit
    await settle();
    expect(puts.length).toBe(2);
    puts[1]!.go(); // B's PUT done, but B's commit waits for A's (group order): still no third group
    await settle();
    await settle();
    expect([puts.length, commits.length, replies]).toEqual([2, 1, []]);
    commits[0]!.go(); // A committed: A answered; B's commit begins, and C starts
    await until(() => puts.length === 3 && replies.length === 1);
    expect([puts.length, commits.length, replies]).toEqual([3, 2, [0]]);
    puts[2]!.go();
    commits[1]!.go();
    await until(() => commits.length === 3);
    commits[2]!.go();
    await gc.drain();
    expect(replies).toEqual([0, 1, 2]);
    expect(commits.map((c) => c.key)).toEqual(['g/1/1/0/000000000000', 'g/1/1/0/000000000001', 'g/1/1/0/000000000002']);
    // Written locally in group order.
    expect(fs.readFileSync(path.join(dir, 'log', segmentFileName(0))).equals(Buffer.concat([data(1, 0, 1), data(1, 1, 1), data(1, 2, 1)]))).toBe(true);
    await store.close();
  });
});
