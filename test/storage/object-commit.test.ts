/**
 * Objects mode's replicator (object-commit.ts) against a real `file:` object store, with the
 * ledger stubbed (the ledger itself is tested against etcd in test/objects/ledger.test.ts, tail
 * recovery in test/objects/tail-recovery.test.ts): the group object holds the group's frames, each
 * stream's contiguous, then its part table, and the entries name their byte ranges and data seqs;
 * a shard worker started again in the same node start begins above a gap holding a fence marker;
 * a group of a stream whose place in the writer is recorded is acknowledged once its object is
 * durable and recorded behind, several groups per ledger commit, the ledger's lag bounded; a
 * writer that meets a fence marker acknowledges nothing from there and goes again under a fresh
 * key, recorded before it is acknowledged (moved when the fence moved); several groups at their
 * PUTs at once (paced by the PUT time), answered by the store out of order, are acknowledged,
 * recorded and applied in group order, each record once.
 */
import { type Ledger, type PutOptions, type RecordedThrough, type StreamRecord, type TailWalk, fenceMarker, openObjectStore, readGroupObject } from '../../src/objects';
import { encodeFrame } from '../../src/shards/worker/frame';
import { type Group, GroupCommit } from '../../src/shards/worker/group-commit';
import { SegmentLog, segmentFileName } from '../../src/shards/worker/segment-log';
import { ObjectCommit, type ObjectCommitOptions } from '../../src/shards/worker/object-commit';
import { readMeta } from '../../src/shards/worker/stream-meta';
import { type StreamLedgerState, newStreamState } from '../../src/shards/worker/stream-state';
import { encodeRecordBatch } from '../../src/util/record-batch';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from '../helpers/node-process';

interface Sent {
  objects: ReadonlyMap<string, number>;
  streams: StreamRecord[];
  through: RecordedThrough | undefined;
}

function stubLedger(): { ledger: Ledger; commits: Sent[] } {
  const commits: Sent[] = [];
  const ledger = {
    commitToken: async () => ({ key: 'k/w', rev: 0 }),
    commitObjects: async (objects: ReadonlyMap<string, number>, streams: StreamRecord[], through?: RecordedThrough) => (commits.push({ objects, streams, through }), { fenced: [] }),
  } as unknown as Ledger;
  return { ledger, commits };
}

/** A ledger whose every commit waits for the test: go() applies it, go({moved: true}) refuses every stream in it as fenced. */
function gatedLedger(walks: TailWalk[] = []): { ledger: Ledger; sent: Array<Sent & { go: (o?: { moved?: boolean; fenced?: string[] }) => void }> } {
  const sent: Array<Sent & { go: (o?: { moved?: boolean; fenced?: string[] }) => void }> = [];
  const ledger = {
    tailWalks: async () => walks,
    commitToken: async () => ({ key: 'k/w', rev: 0 }),
    commitObjects: async (objects: ReadonlyMap<string, number>, streams: StreamRecord[], through?: RecordedThrough) => {
      const o = await new Promise<{ moved?: boolean; fenced?: string[] } | undefined>((go) => sent.push({ objects, streams, through, go }));
      return { fenced: o?.moved === true ? streams.map((x) => x.stream) : (o?.fenced ?? []) };
    },
    fence: async () => ({ nodeId: 2, epoch: 2 }),
  } as unknown as Ledger;
  return { ledger, sent };
}

const meta = (name: string) => readMeta({ name, contentType: 'text/plain', ttlSeconds: null, expiresAtMs: null, createdAtMs: 1 });
const data = (id: number, base: number, n: number): Buffer => encodeFrame(1, id, encodeRecordBatch({ baseOffset: base, baseTimestamp: 1, records: Array.from({ length: n }, (_, i) => ({ key: null, value: Buffer.from(`v${base + i}`), headers: null })) }));
const placedNot = (counter = 0): StreamLedgerState => ({ fence: { nodeId: 3, epoch: 1 }, counter, meta: { meta: {}, startSeq: 0, sealed: false }, moved: null, placedIn: null });

describe('objects mode replicator', () => {
  it('commits the writes of a copy imported at one epoch only under that epoch: this node\'s newer fence (a later open of the stream here) counts as moved', async () => {
    const store = openObjectStore(`file:${tempDir('oc-epoch-')}`);
    const recovered: number[] = [];
    const commits: Sent[] = [];
    const at = { fence: { nodeId: 3, epoch: 4 } };
    const ledger = {
      fence: async () => at.fence,
      position: async () => null,
      entries: async () => [],
      meta: async () => null,
      tailWalks: async () => [],
      recoveryPlans: async () => [],
      recordTailWalk: async () => (recovered.push(1), true),
      commitToken: async () => ({ key: 'k/w', rev: 0 }),
    commitObjects: async (objects: ReadonlyMap<string, number>, streams: StreamRecord[], through?: RecordedThrough) => (commits.push({ objects, streams, through }), { fenced: [] }),
    } as unknown as Ledger;
    const oc = new ObjectCommit({ store, ledger, nodeId: 3, nodeEpoch: 9, shardId: 1 });
    await oc.start();
    const group = (s: ReturnType<typeof newStreamState>, base: number): Group => ({ frames: new Map([[s, [{ buf: data(1, base, 1), onDurable: null, s, local: false }]]]), replies: [], replyStreams: [] });
    // Imported at epoch 2; the fence is this node's at epoch 4 (the stream moved away and back): moved.
    const old = newStreamState(1, meta('/a'));
    old.openedEpoch = 2;
    await expect(oc.replicate(group(old, 7))).resolves.toEqual(new Map([[old, { kind: 'moved', nodeId: 3 }]]));
    expect(commits).toHaveLength(0);
    // The copy imported at epoch 4 goes on under it.
    const now = newStreamState(2, meta('/a'));
    now.openedEpoch = 4;
    await expect(oc.replicate(group(now, 5))).resolves.toEqual(new Map());
    expect(commits.map((c) => c.streams.map((x) => [x.stream, x.fence]))).toEqual([[['/a', { nodeId: 3, epoch: 4 }]]]);
    await store.close();
  });

  it('sends its commit token with every commit, and answers a stream the ledger reports of unknown outcome (fenced since a commit that landed unanswered) as unknown, not moved', async () => {
    const store = openObjectStore(`file:${tempDir('oc-unknown-')}`);
    const tokens: unknown[] = [];
    const token = { key: 'k/g/3/9/1/', rev: 0 };
    const ledger = {
      commitToken: async () => token,
      commitObjects: async (_o: unknown, streams: StreamRecord[], _t: unknown, options: { token?: unknown }) => {
        tokens.push(options.token);
        return { fenced: [], unknown: streams.map((x) => x.stream).filter((x) => x === '/b') };
      },
      fence: async () => ({ nodeId: 2, epoch: 2 }),
    } as unknown as Ledger;
    const oc = new ObjectCommit({ store, ledger, nodeId: 3, nodeEpoch: 9, shardId: 1 });
    await oc.start();
    const a = newStreamState(1, meta('/a'));
    const b = newStreamState(2, meta('/b'));
    a.ledger = placedNot();
    b.ledger = placedNot();
    const frames = (s: typeof a, id: number) => [{ buf: data(id, 0, 1), onDurable: null, s, local: false }];
    const g: Group = { frames: new Map([[a, frames(a, 1)], [b, frames(b, 2)]]), replies: [], replyStreams: [] };
    await expect(oc.replicate(g)).resolves.toEqual(new Map([[b, { kind: 'unknown' }]]));
    expect(tokens).toEqual([token]);
    // It moved: what the stream sends next is refused as moved, with its holder.
    expect(b.ledger.moved).toEqual({ nodeId: 2 });
    expect(a.ledger.moved).toBeNull();
    await store.close();
  });

  it('with two copies of one stream in a commit (the old one from before it moved away and back), refuses the copy the ledger refused, not both', async () => {
    const store = openObjectStore(`file:${tempDir('oc-twice-')}`);
    const sent: StreamRecord[][] = [];
    const ledger = {
      commitToken: async () => ({ key: 'k/w', rev: 0 }),
      // As the ledger answers: the stream named once whichever of its records was refused.
      commitObjects: async (_o: unknown, streams: StreamRecord[]) => (sent.push(streams), { fenced: streams.filter((x) => x.fence.epoch !== 4).map((x) => x.stream) }),
      fence: async () => ({ nodeId: 3, epoch: 4 }),
    } as unknown as Ledger;
    const oc = new ObjectCommit({ store, ledger, nodeId: 3, nodeEpoch: 9, shardId: 1 });
    await oc.start();
    const old = newStreamState(1, meta('/a'));
    const now = newStreamState(2, meta('/a'));
    old.ledger = { ...placedNot(), fence: { nodeId: 3, epoch: 2 } };
    now.ledger = { ...placedNot(), fence: { nodeId: 3, epoch: 4 } };
    const frames = (s: typeof old, id: number) => [{ buf: data(id, 0, 1), onDurable: null, s, local: false }];
    const g: Group = { frames: new Map([[old, frames(old, 1)], [now, frames(now, 2)]]), replies: [], replyStreams: [] };
    await expect(oc.replicate(g)).resolves.toEqual(new Map([[old, { kind: 'moved', nodeId: 3 }]]));
    expect(sent.map((c) => c.map((x) => x.fence.epoch))).toEqual([[2, 4]]);
    expect(old.ledger.moved).toEqual({ nodeId: 3 });
    expect(now.ledger.moved).toBeNull();
    await store.close();
  });

  it('puts one object per group and records each stream\'s byte range and seqs', async () => {
    const store = openObjectStore(`file:${tempDir('oc-')}`);
    const { ledger, commits } = stubLedger();
    const oc = new ObjectCommit({ store, ledger, nodeId: 3, nodeEpoch: 9, shardId: 1 });
    await oc.start();
    const a = newStreamState(1, meta('/a'));
    const b = newStreamState(2, meta('/b'));
    // An existing stream this thread committed for before (its fence known).
    b.ledger = placedNot();
    const fa = [encodeFrame(2, 1, Buffer.from(JSON.stringify({ name: '/a' }))), data(1, 0, 2)];
    const fb = [data(2, 0, 3)];
    const g: Group = { frames: new Map([[a, fa.map((buf) => ({ buf, onDurable: null, s: a, local: false }))], [b, fb.map((buf) => ({ buf, onDurable: null, s: b, local: false }))]]), replies: [], replyStreams: [] };
    await expect(oc.replicate(g)).resolves.toEqual(new Map());
    expect(commits).toHaveLength(1);
    const c = commits[0]!;
    // The first key of a run sits above a gap (key 0 holds a fence marker: no earlier run's groups go past it).
    const key = 'g/3/9/1/000000000001';
    expect(readGroupObject(await store.get('g/3/9/1/000000000000')).kind).toBe('marker');
    expect([...c.objects.keys()]).toEqual([key]);
    const obj = await store.get(key);
    const frames = Buffer.concat([...fa, ...fb]);
    expect(obj.subarray(0, frames.length).equals(frames)).toBe(true);
    const lenA = fa[0]!.length + fa[1]!.length;
    // The part table after the frames names each stream's range; neither part was acknowledged before its record.
    expect(readGroupObject(obj)).toEqual({ kind: 'group', parts: [
      { stream: '/a', off: 0, len: lenA, from: 0, to: 2, early: false },
      { stream: '/b', off: lenA, len: fb[0]!.length, from: 0, to: 3, early: false },
    ] });
    expect(c.objects.get(key)).toBe(obj.length);
    expect(c.streams.map((x) => [x.stream, x.entries.map((e) => [e.o, e.off, e.len, e.from, e.to, e.counter]), x.create === true, x.fence, x.meta !== undefined, x.position])).toEqual([
      ['/a', [[key, 0, lenA, 0, 2, 0]], true, { nodeId: 3, epoch: 1 }, true, key],
      ['/b', [[key, lenA, fb[0]!.length, 0, 3, 0]], false, { nodeId: 3, epoch: 1 }, false, key],
    ]);
    expect(c.through).toEqual({ writer: 'g/3/9/1/', from: 1, n: 1 });
    await store.close();
  });

  it('continues above a gap holding a fence marker after the group objects of an earlier run of the same shard in the same node start', async () => {
    const dir = tempDir('oc-restart-');
    const store = openObjectStore(`file:${dir}`);
    await store.put('g/3/9/1/000000000000', Buffer.from('x'));
    await store.put('g/3/9/1/000000000007', Buffer.from('y'));
    await store.put('g/3/9/2/000000000042', Buffer.from('other shard'));
    const { ledger, commits } = stubLedger();
    const oc = new ObjectCommit({ store, ledger, nodeId: 3, nodeEpoch: 9, shardId: 1 });
    await oc.start();
    const s = newStreamState(1, meta('/a'));
    s.ledger = placedNot(5);
    await oc.replicate({ frames: new Map([[s, [{ buf: data(1, 0, 1), onDurable: null, s, local: false }]]]), replies: [], replyStreams: [] });
    expect(readGroupObject(await store.get('g/3/9/1/000000000008')).kind).toBe('marker');
    expect([...commits[0]!.objects.keys()]).toEqual(['g/3/9/1/000000000009']);
    expect(commits[0]!.streams[0]!.entries[0]!.counter).toBe(5);
    expect((await store.get('g/3/9/1/000000000007')).toString()).toBe('y');
    await store.close();
  });

  it('builds a group\'s m/ record on the groups laid out before it, answered or not (a seal, then a config change)', async () => {
    const store = openObjectStore(`file:${tempDir('oc-meta-')}`);
    const { ledger, commits } = stubLedger();
    const oc = new ObjectCommit({ store, ledger, nodeId: 3, nodeEpoch: 9, shardId: 1 });
    await oc.start();
    const s = newStreamState(1, meta('/m'));
    s.ledger = placedNot();
    const group = (buf: Buffer): Group => ({ frames: new Map([[s, [{ buf, onDurable: null, s, local: false }]]]), replies: [], replyStreams: [] });
    // Both laid out before either is answered.
    const sealed = oc.replicate(group(encodeFrame(5, 1, null)));
    const configured = oc.replicate(group(encodeFrame(6, 1, Buffer.from(JSON.stringify({ ttlSeconds: 60 })))));
    await Promise.all([sealed, configured]);
    const metas = commits.flatMap((c) => c.streams.map((x) => x.meta));
    expect(metas.length).toBeGreaterThan(0);
    expect(metas.every((m) => m?.sealed === true)).toBe(true);
    expect(JSON.stringify(metas[metas.length - 1])).toContain('"ttlSeconds":60');
    await store.close();
  });

  async function pipeline(dir: string, ledger: Ledger, options: Partial<ObjectCommitOptions> = {}, lose?: (key: string) => boolean, createOnly = true) {
    const store = openObjectStore(`file:${path.join(dir, 'objects')}`);
    fs.mkdirSync(path.join(dir, 'objects'));
    // The store's PUTs are held until the test lets each go; `lose` drops the answer of a put that was done.
    // `stored`: the put went through to the store (its caller hears of it within the same microtasks).
    const puts: Array<{ key: string; go: () => void; stored: Promise<void> }> = [];
    let gating = false; // the run's fence marker at start() goes through
    const gated = {
      createOnly,
      put: async (key: string, body: Buffer | readonly Buffer[], o?: PutOptions) => {
        let stored: () => void = () => undefined;
        if (gating) await new Promise<void>((go) => puts.push({ key, go, stored: new Promise<void>((r) => (stored = r)) }));
        await store.put(key, body, o).finally(stored);
        if (lose?.(key) === true) throw Object.assign(new Error('the answer was lost'), { code: 'Unreachable' });
      },
      get: (key: string) => store.get(key),
      list: (prefix: string) => store.list(prefix),
    };
    const oc = new ObjectCommit({ store: gated, ledger, nodeId: 1, nodeEpoch: 1, shardId: 0, retryMs: 5, ...options });
    await oc.start();
    gating = true;
    const log = SegmentLog.open(path.join(dir, 'log'), 1 << 30);
    const gc = new GroupCommit(log, { failed: () => undefined, applied: () => undefined, afterReplies: () => undefined }, oc);
    const s = newStreamState(1, meta('/a'));
    s.ledger = { ...placedNot(), fence: { nodeId: 1, epoch: 1 } };
    const replies: Array<number | string> = [];
    let seq = 0;
    const append = (): void => {
      const n = seq++;
      gc.enqueue(s, data(1, n, 1), null);
      gc.whenDurable((err) => replies.push(err === null ? n : `${n}:${err.outcome?.kind ?? err.code}`), () => n, s);
      gc.flush();
    };
    return { dir, store, puts, oc, gc, append, replies, s, log: path.join(dir, 'log', segmentFileName(0)) };
  }

  // What must happen is waited for (the store's file I/O), what must not is looked for after a pause.
  const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 30));
  const until = async (what: () => boolean): Promise<void> => {
    for (let i = 0; i < 500 && !what(); i++) await settle();
    expect(what()).toBe(true);
  };
  const key = (n: number): string => `g/1/1/0/${String(n).padStart(12, '0')}`;

  /** Append one record and let its PUT go; the stream's place is then recorded by the first one (late). */
  async function placed(p: Awaited<ReturnType<typeof pipeline>>, sent: ReturnType<typeof gatedLedger>['sent']): Promise<void> {
    p.append();
    await until(() => p.puts.length === 1);
    p.puts[0]!.go();
    await until(() => sent.length === 1);
    expect(p.replies).toEqual([]); // late: answered once recorded
    expect(sent[0]!.streams[0]!.position).toBe(key(1));
    sent[0]!.go();
    await until(() => p.replies.length === 1);
  }

  it('acknowledges a placed stream\'s groups once their objects are durable, and records them behind, several in one commit', async () => {
    const { ledger, sent } = gatedLedger();
    const p = await pipeline(tempDir('oc-early-'), ledger, { recordWindowMs: 60_000, recordBatch: 8 });
    await placed(p, sent);
    // Eight more groups, one at a time: each is answered once its PUT is done, none recorded yet.
    for (let i = 1; i <= 8; i++) {
      p.append();
      await until(() => p.puts.length === i + 1);
      p.puts[i]!.go();
      await until(() => p.replies.length === i + 1);
    }
    expect(p.replies).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    // The eighth early group sends the commit (recordBatch), and it records all eight.
    await until(() => sent.length === 2);
    expect([...sent[1]!.objects.keys()]).toEqual([2, 3, 4, 5, 6, 7, 8, 9].map(key));
    expect(sent[1]!.streams.map((x) => [x.stream, x.entries.map((e) => e.counter), x.position])).toEqual([['/a', [1, 2, 3, 4, 5, 6, 7, 8], undefined]]);
    expect(sent[1]!.through).toEqual({ writer: 'g/1/1/0/', from: 1, n: 9 });
    // The part tables say so: acknowledged before they were recorded.
    expect(readGroupObject(await p.store.get(key(2)))).toMatchObject({ parts: [{ stream: '/a', from: 1, to: 2, early: true }] });
    expect(readGroupObject(await p.store.get(key(1)))).toMatchObject({ parts: [{ stream: '/a', from: 0, to: 1, early: false }] });
    sent[1]!.go();
    await p.gc.drain();
    expect(fs.readFileSync(p.log).equals(Buffer.concat(Array.from({ length: 9 }, (_, i) => data(1, i, 1))))).toBe(true);
  });

  it('pipelines early groups: several PUTs in flight at once, answered out of order, are acknowledged, recorded and applied in group order, each record once', async () => {
    const { ledger, sent } = gatedLedger();
    const p = await pipeline(tempDir('oc-pipe-'), ledger, { maxBeforeCommit: 4, minSpacingMs: 0, recordWindowMs: 50, recordBatch: 4 });
    await placed(p, sent);
    // Four groups go to their PUTs while none of them is durable (the later two paced by the PUT
    // time seen so far); none is answered.
    for (let i = 1; i <= 4; i++) {
      p.append();
      await until(() => p.puts.length === i + 1);
    }
    // A fifth waits: four are at their PUTs already.
    p.append();
    await settle();
    expect(p.puts).toHaveLength(5);
    // The store answers the last first: nothing is acknowledged before the group ahead of it.
    for (const i of [4, 3, 2]) {
      p.puts[i]!.go();
      await settle();
      expect(p.replies).toEqual([0]);
    }
    p.puts[1]!.go();
    await until(() => p.replies.length === 5);
    // The fifth started once a PUT was done; it is answered after the four.
    await until(() => p.puts.length === 6);
    p.puts[5]!.go();
    await until(() => p.replies.length === 6);
    expect(p.replies).toEqual([0, 1, 2, 3, 4, 5]);
    // Recorded behind in group order: one entry per group, the seqs contiguous, none twice.
    await until(() => sent.length >= 2);
    sent[1]!.go();
    for (let i = 2; sent.slice(1).reduce((n, c) => n + c.objects.size, 0) < 5; i++) {
      await until(() => sent.length === i + 1);
      sent[i]!.go();
    }
    const entries = sent.slice(1).flatMap((c) => c.streams.flatMap((x) => x.entries));
    expect(entries.map((e) => [e.o, e.counter, e.from, e.to])).toEqual([1, 2, 3, 4, 5].map((i) => [key(i + 1), i, i, i + 1]));
    await p.gc.drain();
    // Applied to the local log in order, each record once.
    expect(fs.readFileSync(p.log).equals(Buffer.concat(Array.from({ length: 6 }, (_, i) => data(1, i, 1))))).toBe(true);
  });

  it('keeps up to maxBeforeCommit groups at their PUTs at once, those beyond two started at least the spacing apart', async () => {
    const { ledger, sent } = gatedLedger();
    const p = await pipeline(tempDir('oc-pipe-paced-'), ledger, { maxBeforeCommit: 8, minSpacingMs: 1000, stallMs: 60_000 });
    await placed(p, sent);
    // Held PUTs: two groups start at once; the third waits out the spacing (here 1 s, above the smoothed PUT time ÷ 8).
    p.append();
    p.append();
    await until(() => p.puts.length === 3);
    const t0 = Date.now();
    p.append();
    await settle();
    expect(p.puts).toHaveLength(3);
    await until(() => p.puts.length === 4);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(700);
    for (let i = 5; i <= 9; i++) {
      p.append();
      await until(() => p.puts.length === i);
    }
    // The ninth: eight at their PUTs already (looked for after more than the spacing).
    p.append();
    await new Promise((r) => setTimeout(r, 1300));
    expect(p.puts).toHaveLength(9);
    for (let i = 1; i <= 8; i++) p.puts[i]!.go();
    await until(() => p.puts.length === 10);
    p.puts[9]!.go();
    await until(() => p.replies.length === 10);
    expect(p.replies).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (let i = 1; sent.slice(1).reduce((n, c) => n + c.objects.size, 0) < 9; i++) {
      await until(() => sent.length === i + 1);
      sent[i]!.go();
    }
    await p.gc.drain();
  });

  it('pipelines late groups (a store without create-only puts): PUTs answered out of order are recorded one ledger commit at a time in group order, and answered after their record', async () => {
    const { ledger, sent } = gatedLedger();
    const p = await pipeline(tempDir('oc-pipe-late-'), ledger, { maxBeforeCommit: 4, minSpacingMs: 0 }, undefined, false);
    for (let i = 0; i < 4; i++) {
      p.append();
      await until(() => p.puts.length === i + 1);
    }
    // The third and fourth are durable first: no ledger commit goes before the first's.
    p.puts[3]!.go();
    p.puts[2]!.go();
    await settle();
    expect(sent).toHaveLength(0);
    p.puts[1]!.go();
    await settle();
    expect(sent).toHaveLength(0);
    p.puts[0]!.go();
    // The first commit records the first group (or every group durable by then), in group order.
    const recorded: Array<[string, number]> = [];
    for (let i = 0; recorded.length < 4; i++) {
      await until(() => sent.length === i + 1);
      expect(p.replies).toHaveLength(recorded.length);
      for (const c of sent[i]!.streams) for (const e of c.entries) recorded.push([e.o, e.from]);
      sent[i]!.go();
      await until(() => p.replies.length === recorded.length);
    }
    const k0 = (n: number): string => `g/1/1/0/${String(n).padStart(12, '0')}`;
    expect(recorded).toEqual([0, 1, 2, 3].map((i) => [k0(i), i]));
    expect(p.replies).toEqual([0, 1, 2, 3]);
    await p.gc.drain();
    expect(fs.readFileSync(p.log).equals(Buffer.concat(Array.from({ length: 4 }, (_, i) => data(1, i, 1))))).toBe(true);
  });

  it('answers no more early groups while the ledger lags by maxUnrecorded, and goes on once it records them', async () => {
    const { ledger, sent } = gatedLedger();
    const p = await pipeline(tempDir('oc-lag-'), ledger, { maxUnrecorded: 2, recordWindowMs: 50 });
    await placed(p, sent);
    for (let i = 1; i <= 3; i++) {
      p.append();
      await until(() => p.puts.length === i + 1);
      p.puts[i]!.go();
      await settle();
    }
    await until(() => sent.length === 2); // the window passed: the commit went, and is not answered
    await settle();
    expect(p.replies).toEqual([0, 1, 2]); // the third early group waits for the ledger
    sent[1]!.go();
    await until(() => p.replies.length === 4);
    expect(p.replies).toEqual([0, 1, 2, 3]);
    // The window may have closed before or after the later groups were queued: what the second
    // commit did not record goes in the commits after it, until all three early groups are.
    for (let recorded = sent[1]!.objects.size, i = 2; recorded < 3; i++) {
      await until(() => sent.length === i + 1);
      recorded += sent[i]!.objects.size;
      sent[i]!.go();
    }
    expect(sent.slice(1).flatMap((c) => [...c.objects.keys()])).toEqual([2, 3, 4].map(key));
    await p.gc.drain();
  });

  it('acknowledges nothing from a fence marker on: the group goes again under a fresh key, late, answered moved when its fence moved', async () => {
    for (const moved of [true, false]) {
      const { ledger, sent } = gatedLedger();
      const p = await pipeline(tempDir('oc-fenced-'), ledger, { recordWindowMs: 20 });
      await placed(p, sent);
      // Another node opened the stream and its tail recovery fenced this writer's next key.
      await p.store.put(key(2), fenceMarker({ nodeId: 2, epoch: 2 }), { ifAbsent: true });
      p.append();
      await until(() => p.puts.length === 2);
      // Taken: the group is not answered; a new run begins above a gap (a marker at key 3), and the
      // group goes again under key 4.
      p.puts[1]!.go();
      await until(() => p.puts.length === 4);
      expect(p.puts.slice(2).map((x) => x.key)).toEqual([key(3), key(4)]);
      p.puts[2]!.go();
      await settle();
      expect(p.replies).toEqual([0]);
      p.puts[3]!.go();
      await until(() => sent.length === 2);
      expect(readGroupObject(await p.store.get(key(4)))).toMatchObject({ parts: [{ stream: '/a', from: 1, to: 2, early: false }] });
      expect(readGroupObject(await p.store.get(key(2))).kind).toBe('marker');
      expect(readGroupObject(await p.store.get(key(3))).kind).toBe('marker');
      expect([...sent[1]!.objects.keys()]).toEqual([key(4)]);
      expect(sent[1]!.streams[0]!.position).toBe(key(4));
      expect(sent[1]!.through).toEqual({ writer: 'g/1/1/0/', from: 4, n: 4 });
      await settle();
      expect(p.replies).toEqual([0]);
      if (moved) {
        sent[1]!.go({ moved: true });
        await p.gc.drain();
        expect(p.replies).toEqual([0, '1:moved']);
        expect(fs.readFileSync(p.log).equals(data(1, 0, 1))).toBe(true); // nothing of it written locally
        continue;
      }
      sent[1]!.go();
      await until(() => p.replies.length === 2);
      expect(p.replies).toEqual([0, 1]);
      // Its place recorded again in the writer: the next group is early again.
      p.append();
      await until(() => p.puts.length === 5);
      p.puts[4]!.go();
      await until(() => p.replies.length === 3); // its commit is not answered (gated): answered early
      await until(() => sent.length === 3);
      expect(sent[2]!.streams[0]!.position).toBeUndefined();
      sent[2]!.go();
      await p.gc.drain();
    }
  });

  it('begins a new run above a gap holding a fence marker once a commit finds a stream fenced, and places every stream again', async () => {
    const { ledger, sent } = gatedLedger();
    const p = await pipeline(tempDir('oc-newrun-'), ledger, { recordWindowMs: 20 });
    await placed(p, sent);
    p.append(); // early, key 2
    await until(() => p.puts.length === 2);
    p.puts[1]!.go();
    await until(() => p.replies.length === 2 && sent.length === 2);
    // The stream moved before this commit: it is refused, the run ends at key 3 (a marker), the next starts at 4.
    sent[1]!.go({ fenced: ['/a'] });
    await until(() => p.puts.length === 3);
    expect(p.puts[2]!.key).toBe(key(3));
    p.puts[2]!.go();
    await until(() => fs.existsSync(path.join(p.dir, 'objects', ...key(3).split('/'))));
    expect(readGroupObject(await p.store.get(key(3))).kind).toBe('marker');
    // Another stream of the shard goes on, placed again in the new run: its group is late.
    const b = newStreamState(2, meta('/b'));
    b.ledger = { ...placedNot(), fence: { nodeId: 1, epoch: 1 }, placedIn: 0 };
    p.gc.enqueue(b, data(2, 0, 1), null);
    p.gc.whenDurable((err) => p.replies.push(err === null ? 'b' : `b:${err.code}`), () => 0, b);
    p.gc.flush();
    await until(() => p.puts.length === 4);
    expect(p.puts[3]!.key).toBe(key(4));
    p.puts[3]!.go();
    await until(() => sent.length === 3);
    expect(sent[2]!.streams.map((x) => [x.stream, x.position])).toEqual([['/b', key(4)]]);
    expect(sent[2]!.through).toEqual({ writer: 'g/1/1/0/', from: 4, n: 4 });
    await settle();
    expect(p.replies).toEqual([0, 1]);
    sent[2]!.go();
    await until(() => p.replies.length === 3);
    expect(p.replies).toEqual([0, 1, 'b']);
    await p.gc.drain();
  });

  it('answers a fenced stream\'s append whose early object was written before the writer switched as the new owner\'s tail walk says: acknowledged when it took the object, moved when it did not, unknown when it says nothing', async () => {
    const walk = (end: number): TailWalk => ({ epoch: 2, w: 'g/1/1/0/', after: 1, end, at: 0 });
    for (const [walks, answer] of [[[walk(5)], 2], [[walk(4)], '2:moved'], [[], '2:storage_unavailable']] as const) {
      const { ledger, sent } = gatedLedger([...walks]);
      const p = await pipeline(tempDir('oc-taken-'), ledger, { recordWindowMs: 20, takenWaitMs: 300 });
      await placed(p, sent);
      p.append(); // early, key 2: answered, its commit held
      await until(() => p.puts.length === 2);
      p.puts[1]!.go();
      await until(() => p.replies.length === 2 && sent.length === 2);
      // A late group of another stream (key 3), then an early one of /a (key 4): durable, its answer waits behind the late one's.
      const b = newStreamState(2, meta('/b'));
      b.ledger = { ...placedNot(), fence: { nodeId: 1, epoch: 1 } };
      p.gc.enqueue(b, data(2, 0, 1), null);
      p.gc.whenDurable((err) => p.replies.push(err === null ? 'b' : `b:${err.code}`), () => 0, b);
      p.gc.flush();
      p.append();
      await until(() => p.puts.length === 4);
      expect(p.puts.slice(2).map((x) => x.key)).toEqual([key(3), key(4)]);
      p.puts[2]!.go();
      p.puts[3]!.go();
      // Both durable before the fence is answered (a put that ends after the switch goes again, as the next test shows).
      await Promise.all([p.puts[2]!.stored, p.puts[3]!.stored]);
      await settle();
      // /a moved: the commit of key 2 is refused, a new run begins (a marker at key 5), and the
      // group of key 4, written before the switch, goes again at key 6, late.
      sent[1]!.go({ fenced: ['/a'] });
      await until(() => sent.length === 3);
      sent[2]!.go();
      await until(() => p.puts.length === 6);
      expect(p.puts.slice(4).map((x) => x.key)).toEqual([key(5), key(6)]);
      p.puts[4]!.go();
      p.puts[5]!.go();
      // /a is fenced: no commit for it; the walk decides. Walked up to 5: key 4 was taken over.
      await until(() => p.replies.length === 4);
      expect(p.replies).toEqual([0, 1, 'b', answer]);
      await p.gc.drain();
    }
  });

  it('a create-only put whose answer was lost finds its own object when sent again, and goes on', async () => {
    const { ledger, sent } = gatedLedger();
    let lost = false;
    const p = await pipeline(tempDir('oc-lost-'), ledger, { recordWindowMs: 20 }, (k) => k === key(2) && !lost && (lost = true));
    await placed(p, sent);
    p.append();
    await until(() => p.puts.length === 2);
    p.puts[1]!.go(); // written, its answer lost: sent again, the key is taken — by this very object
    await until(() => p.puts.length === 3);
    expect(p.puts[2]!.key).toBe(key(2));
    p.puts[2]!.go();
    await until(() => p.replies.length === 2);
    expect(p.replies).toEqual([0, 1]);
    await until(() => sent.length === 2);
    expect([...sent[1]!.objects.keys()]).toEqual([key(2)]);
    sent[1]!.go();
    await p.gc.drain();
  });
});
