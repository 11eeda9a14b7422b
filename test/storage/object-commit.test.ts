/**
 * Objects mode's replicator (object-commit.ts) against a real `file:` object store, with the
 * ledger stubbed (the ledger itself is tested against etcd in test/objects/ledger.test.ts): the
 * group object holds the group's frames, each stream's contiguous, and the entries name their
 * byte ranges and data seqs; a shard worker started again in the same node start continues after
 * the group objects already written, never writing a key twice; with group commit, two groups'
 * PUTs run side by side, and a group's ledger commit is sent before the previous one is answered,
 * carrying the previous group's entries of its streams, so no order of arrival at etcd leaves a gap.
 */
import { type CarriedEntry, type Ledger, type StreamCommit, openObjectStore } from '../../src/objects';
import { encodeFrame } from '../../src/shards/worker/frame';
import { type Group, GroupCommit } from '../../src/shards/worker/group-commit';
import { SegmentLog, segmentFileName } from '../../src/shards/worker/segment-log';
import { ObjectCommit } from '../../src/shards/worker/object-commit';
import { readMeta } from '../../src/shards/worker/stream-meta';
import { type StreamState, newStreamState } from '../../src/shards/worker/stream-state';
import { encodeRecordBatch } from '../../src/util/record-batch';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from '../helpers/node-process';

function stubLedger(): { ledger: Ledger; commits: Array<{ key: string; bytes: number; commits: StreamCommit[] }> } {
  const commits: Array<{ key: string; bytes: number; commits: StreamCommit[] }> = [];
  const ledger = { commit: async (key: string, bytes: number, c: StreamCommit[]) => (commits.push({ key, bytes, commits: c }), { fenced: [], early: [] }) } as unknown as Ledger;
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

  it('builds a group\'s m/ record on the groups laid out before it, answered or not (a seal, then a config change)', async () => {
    const store = openObjectStore(`file:${tempDir('oc-meta-')}`);
    const { ledger, commits } = stubLedger();
    const oc = new ObjectCommit({ store, ledger, nodeId: 3, nodeEpoch: 9, shardId: 1 });
    await oc.start();
    const s = newStreamState(1, meta('/m'));
    s.ledger = { fence: { nodeId: 3, epoch: 1 }, counter: 0, meta: { meta: {}, startSeq: 0, sealed: false }, moved: null };
    const group = (buf: Buffer): Group => ({ frames: new Map([[s, [{ buf, onDurable: null, s, local: false }]]]), replies: [], replyStreams: [] });
    // Both laid out before either is answered.
    const sealed = oc.replicate(group(encodeFrame(5, 1, null)));
    const configured = oc.replicate(group(encodeFrame(6, 1, Buffer.from(JSON.stringify({ ttlSeconds: 60 })))));
    await Promise.all([sealed, configured]);
    expect(commits.map((c) => c.commits[0]!.meta?.sealed)).toEqual([true, true]);
    await store.close();
  });

  /**
   * A stub of the ledger that behaves as etcd does with carried entries: each commit is applied
   * when the test lets it go; applied under a fence that moved (`moved`), it records nothing, and
   * a stream counts as fenced unless its own entry is recorded already (the ledger's "landed" check).
   */
  function gatedLedger(): { ledger: Ledger; sent: Array<{ key: string; commits: StreamCommit[]; carried: CarriedEntry[]; go: (o?: { moved?: boolean }) => void }>; recorded: string[] } {
    const sent: Array<{ key: string; commits: StreamCommit[]; carried: CarriedEntry[]; go: (o?: { moved?: boolean }) => void }> = [];
    const recorded: string[] = [];
    const ledger = {
      commit: async (key: string, _bytes: number, commits: StreamCommit[], carried: CarriedEntry[] = []) => {
        const o = await new Promise<{ moved?: boolean } | undefined>((go) => sent.push({ key, commits, carried, go }));
        const entry = (c: StreamCommit): string => `${c.stream}#${c.counter}`;
        if (o?.moved === true) return { fenced: commits.filter((c) => !recorded.includes(entry(c))).map((c) => c.stream) };
        for (const c of [...carried.map((e) => e.commit), ...commits]) if (!recorded.includes(entry(c))) recorded.push(entry(c));
        return { fenced: [] };
      },
      fence: async () => ({ nodeId: 2, epoch: 2 }),
    } as unknown as Ledger;
    return { ledger, sent, recorded };
  }

  async function pipeline(dir: string, ledger: Ledger): Promise<{ puts: Array<{ key: string; go: () => void }>; oc: ObjectCommit; gc: GroupCommit; append: () => void; replies: Array<number | string>; s: StreamState }> {
    const store = openObjectStore(`file:${path.join(dir, 'objects')}`);
    fs.mkdirSync(path.join(dir, 'objects'));
    // The store's PUTs are held until the test lets each go.
    const puts: Array<{ key: string; go: () => void }> = [];
    const gated = {
      put: async (key: string, body: Buffer | readonly Buffer[]) => {
        await new Promise<void>((go) => puts.push({ key, go }));
        await store.put(key, body, { fresh: true });
      },
      list: (prefix: string) => store.list(prefix),
    };
    const oc = new ObjectCommit({ store: gated, ledger, nodeId: 1, nodeEpoch: 1, shardId: 0 });
    await oc.start();
    const log = SegmentLog.open(path.join(dir, 'log'), 1 << 30);
    const gc = new GroupCommit(log, { failed: () => undefined, applied: () => undefined, afterReplies: () => undefined }, oc);
    const s = newStreamState(1, meta('/a'));
    s.ledger = { fence: { nodeId: 1, epoch: 1 }, counter: 0, meta: { meta: {}, startSeq: 0, sealed: false }, moved: null };
    const replies: Array<number | string> = [];
    let seq = 0;
    const append = (): void => {
      const n = seq++;
      gc.enqueue(s, data(1, n, 1), null);
      gc.whenDurable((err) => replies.push(err === null ? n : `${n}:${err.outcome?.kind ?? err.code}`), () => n, s);
      gc.flush();
    };
    return { puts, oc, gc, append, replies, s };
  }

  // What must happen is waited for (the store's file I/O), what must not is looked for after a pause.
  const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 30));
  const until = async (what: () => boolean): Promise<void> => {
    for (let i = 0; i < 500 && !what(); i++) await settle();
  };

  it('sends the next group\'s ledger commit before the previous one is answered, carrying its entry, and answers in group order', async () => {
    const dir = tempDir('oc-pipeline-');
    const { ledger, sent, recorded } = gatedLedger();
    const { puts, gc, append, replies } = await pipeline(dir, ledger);

    append(); // group A: its PUT starts
    await settle();
    append(); // group B starts beside it (two groups may be before their commit)
    await settle();
    append(); // waits: two groups are before their commit
    await settle();
    expect([puts.length, sent.length]).toEqual([2, 0]);
    puts[1]!.go(); // B's PUT done first: its commit still waits for A's to be sent (group order)
    await settle();
    expect(sent.length).toBe(0);
    puts[0]!.go(); // A's commit is sent, then B's at once, and C starts
    await until(() => sent.length === 2 && puts.length === 3);
    expect([puts.length, sent.length]).toEqual([3, 2]);
    expect(sent.map((x) => [x.key, x.commits.map((c) => c.counter), x.carried.map((e) => [e.objectKey, e.commit.counter])])).toEqual([
      ['g/1/1/0/000000000000', [0], []],
      ['g/1/1/0/000000000001', [1], [['g/1/1/0/000000000000', 0]]], // sent while A's is unanswered: it carries A's entry
    ]);
    // etcd applies B's before A's: both entries are recorded at once, but nobody is answered before A.
    sent[1]!.go();
    await settle();
    expect([recorded, replies]).toEqual([['/a#0', '/a#1'], []]);
    sent[0]!.go(); // A's own txn (the same entry again): A, then B answered
    await until(() => replies.length === 2);
    expect(replies).toEqual([0, 1]);
    puts[2]!.go();
    await until(() => sent.length === 3);
    expect(sent[2]!.carried).toEqual([]); // nothing unanswered before C
    sent[2]!.go();
    await gc.drain();
    expect(replies).toEqual([0, 1, 2]);
    expect(recorded).toEqual(['/a#0', '/a#1', '/a#2']);
    expect(sent).toHaveLength(3);
    // Written locally in group order.
    expect(fs.readFileSync(path.join(dir, 'log', segmentFileName(0))).equals(Buffer.concat([data(1, 0, 1), data(1, 1, 1), data(1, 2, 1)]))).toBe(true);
  });

  it('answers moved every group whose entry was not recorded before the fence moved, and acknowledges one a later txn recorded', async () => {
    for (const bFirst of [false, true]) {
      const dir = tempDir('oc-pipeline-fenced-');
      const { ledger, sent, recorded } = gatedLedger();
      const { puts, gc, append, replies } = await pipeline(dir, ledger);
      append();
      await settle();
      append();
      await until(() => puts.length === 2);
      puts[0]!.go();
      puts[1]!.go();
      await until(() => sent.length === 2);
      if (bFirst) {
        // B (carrying A's entry) applied before the move, A after it: A's entry is there, so A is committed.
        sent[1]!.go();
        await settle();
        sent[0]!.go({ moved: true });
        await gc.drain();
        expect(replies).toEqual([0, 1]);
        expect(recorded).toEqual(['/a#0', '/a#1']);
      } else {
        // Both applied after the move: nothing recorded, both answered moved, nothing written locally.
        sent[1]!.go({ moved: true });
        await settle();
        sent[0]!.go({ moved: true });
        await gc.drain();
        expect(replies).toEqual(['0:moved', '1:moved']);
        expect(recorded).toEqual([]);
        const seg = path.join(dir, 'log', segmentFileName(0));
        expect(fs.existsSync(seg) ? fs.statSync(seg).size : 0).toBe(0);
      }
      expect(sent).toHaveLength(2);
    }
  });

  it('sends no commit beside an unanswered one holding a create or an m/ change', async () => {
    const dir = tempDir('oc-pipeline-meta-');
    const { ledger, sent } = gatedLedger();
    const { puts, gc, append, replies, s } = await pipeline(dir, ledger);
    gc.enqueue(s, encodeFrame(5, 1, null), null); // a seal: group A changes m/
    gc.whenDurable((err) => replies.push(err === null ? 'sealed' : String(err.code)), () => 0, s);
    gc.flush();
    await settle();
    append(); // group B
    await until(() => puts.length === 2);
    puts[0]!.go();
    puts[1]!.go();
    await until(() => sent.length === 1);
    await settle();
    expect(sent.length).toBe(1); // B waits for A's answer
    expect(sent[0]!.commits[0]!.meta?.sealed).toBe(true);
    sent[0]!.go();
    await until(() => sent.length === 2);
    expect(sent[1]!.carried).toEqual([]);
    sent[1]!.go();
    await gc.drain();
    expect(replies).toEqual(['sealed', 0]);
  });
});
