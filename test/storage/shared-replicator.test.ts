/**
 * One replicator for a worker's shards (shared-replicator.ts), against a real `file:` object store
 * with the ledger stubbed (object-commit.test.ts tests the replicator it wraps): the groups two
 * shards start in one turn go as one group object and one ledger record; a shard's second group
 * of the same turn goes in the next object, after its first; a stream refused as fenced is refused
 * to its own shard only; and under the flush window the shards' groups keep starting together.
 */
import { type Ledger, type RecordedThrough, type StreamRecord, openObjectStore, readGroupObject } from '../../src/objects';
import { encodeFrame } from '../../src/shards/worker/frame';
import { type Group, GroupCommit } from '../../src/shards/worker/group-commit';
import { ObjectCommit } from '../../src/shards/worker/object-commit';
import { SegmentLog } from '../../src/shards/worker/segment-log';
import { SharedReplicator } from '../../src/shards/worker/shared-replicator';
import { readMeta } from '../../src/shards/worker/stream-meta';
import { type StreamState, newStreamState } from '../../src/shards/worker/stream-state';
import { encodeRecordBatch } from '../../src/util/record-batch';
import * as path from 'node:path';
import { tempDir } from '../helpers/node-process';

interface Sent {
  objects: ReadonlyMap<string, number>;
  streams: StreamRecord[];
  through: RecordedThrough | undefined;
}

/** A ledger that records every commit and refuses the streams named in `fenced` as moved. */
function stubLedger(fenced: Set<string> = new Set()): { ledger: Ledger; commits: Sent[] } {
  const commits: Sent[] = [];
  const ledger = {
    commitToken: async () => ({ key: 'k/w', rev: 0 }),
    commitObjects: async (objects: ReadonlyMap<string, number>, streams: StreamRecord[], through?: RecordedThrough) => {
      commits.push({ objects, streams, through });
      return { fenced: streams.map((x) => x.stream).filter((x) => fenced.has(x)) };
    },
    fence: async () => ({ nodeId: 2, epoch: 2 }),
    tailWalks: async () => [],
    recoveryPlans: async () => [],
  } as unknown as Ledger;
  return { ledger, commits };
}

const meta = (name: string) => readMeta({ name, contentType: 'text/plain', ttlSeconds: null, expiresAtMs: null, createdAtMs: 1 });
const data = (id: number, base: number, n: number): Buffer => encodeFrame(1, id, encodeRecordBatch({ baseOffset: base, baseTimestamp: 1, records: Array.from({ length: n }, (_, i) => ({ key: null, value: Buffer.from(`v${base + i}`), headers: null })) }));
const group = (s: StreamState, ...bufs: Buffer[]): Group => ({ frames: new Map([[s, bufs.map((buf) => ({ buf, onDurable: null, s, local: false }))]]), replies: [], replyStreams: [] });

/** A stream this writer has committed for before, at fence epoch 1 (its place not recorded: its groups wait for their record). */
function stream(id: number, name: string): StreamState {
  const s = newStreamState(id, meta(name));
  s.ledger = { fence: { nodeId: 3, epoch: 1 }, counter: 0, meta: { meta: {}, startSeq: 0, sealed: false }, moved: null, placedIn: null };
  return s;
}

async function writer(options: { fenced?: Set<string>; flushMs?: number } = {}) {
  const dir = tempDir('shared-rep-');
  const store = openObjectStore(`file:${tempDir('shared-rep-objects-')}`);
  const { ledger, commits } = stubLedger(options.fenced);
  const oc = new ObjectCommit({ store, ledger, nodeId: 3, nodeEpoch: 9, shardId: 4, flushMs: options.flushMs ?? 0 });
  await oc.start();
  const shared = new SharedReplicator(oc);
  /** The group objects written, in key order, each as the streams of its part table. */
  const objects = async (): Promise<string[][]> => {
    const out: string[][] = [];
    for await (const o of store.list('g/3/9/4/')) {
      const g = readGroupObject(await store.get(o.key));
      if (g.kind === 'group') out.push(g.parts.map((p) => p.stream));
    }
    return out;
  };
  return { dir, store, commits, shared, objects };
}

describe('a replicator shared by a worker\'s shards', () => {
  it('puts the groups two shards start in one turn in one object, and each shard\'s log gets its own frames', async () => {
    const w = await writer();
    const shards = ['a', 'b'].map((n, i) => {
      const log = SegmentLog.open(path.join(w.dir, `log-${n}`), 1 << 30);
      const gc = new GroupCommit(log, { failed: () => undefined, applied: () => undefined, afterReplies: () => undefined }, w.shared);
      return { log, gc, s: stream(i + 1, `/${n}`), from: log.tail.pos };
    });
    const replies: string[] = [];
    for (const { gc, s } of shards) {
      gc.enqueue(s, data(s.id, 0, 2), null);
      gc.whenDurable((err) => replies.push(err === null ? s.meta.name : `${s.meta.name}:${err.code}`), () => 0, s);
      gc.flush();
    }
    await new Promise((r) => setTimeout(r, 50));
    for (let i = 0; i < 100 && replies.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    expect(replies.sort()).toEqual(['/a', '/b']);
    expect(await w.objects()).toEqual([['/a', '/b']]);
    expect(w.commits).toHaveLength(1);
    expect(w.commits[0]!.streams.map((x) => [x.stream, x.entries.map((e) => [e.from, e.to])])).toEqual([['/a', [[0, 2]]], ['/b', [[0, 2]]]]);
    // Each shard's local log holds its own stream's frame only.
    for (const { log, s, from } of shards) {
      expect(log.tail.pos - from).toBe(data(s.id, 0, 2).length);
      log.close();
    }
    await w.store.close();
  });

  it('puts a shard\'s second group of the turn in the next object, after its first, and answers each in order', async () => {
    const w = await writer();
    const a = stream(1, '/a');
    const b = stream(2, '/b');
    const order: string[] = [];
    const track = (p: Promise<unknown>, what: string) => p.then(() => order.push(what));
    await Promise.all([
      track(w.shared.replicate(group(a, data(1, 0, 1))), 'a1'),
      track(w.shared.replicate(group(b, data(2, 0, 1))), 'b1'),
      track(w.shared.replicate(group(a, data(1, 1, 3))), 'a2'),
    ]);
    expect(await w.objects()).toEqual([['/a', '/b'], ['/a']]);
    expect(order).toEqual(['a1', 'b1', 'a2']);
    const entries = w.commits.flatMap((c) => c.streams.filter((x) => x.stream === '/a').flatMap((x) => x.entries.map((e) => [e.from, e.to])));
    expect(entries).toEqual([[0, 1], [1, 4]]);
    await w.store.close();
  });

  it('refuses a fenced stream\'s writes to its own shard only', async () => {
    const w = await writer({ fenced: new Set(['/b']) });
    const a = stream(1, '/a');
    const b = stream(2, '/b');
    const [ra, rb] = await Promise.all([w.shared.replicate(group(a, data(1, 0, 1))), w.shared.replicate(group(b, data(2, 0, 1)))]);
    // Both hear the join's refusals; the fenced stream is b's, which a's shard does not hold.
    expect(ra.has(a)).toBe(false);
    expect(rb.get(b)).toEqual({ kind: 'moved', nodeId: 2 });
    await w.store.close();
  });

  it('gives the shards one flush window: groups that wait for it start together, in one object', async () => {
    // A window long enough for the first group's PUT and commit on a busy machine: the next groups
    // must find it over and their shards free (one group in flight per shard), else the shard that
    // is free when the window ends starts alone.
    const w = await writer({ flushMs: 2_000 });
    const shards = ['a', 'b'].map((n, i) => {
      const log = SegmentLog.open(path.join(w.dir, `log-${n}`), 1 << 30);
      const gc = new GroupCommit(log, { failed: () => undefined, applied: () => undefined, afterReplies: () => undefined }, w.shared);
      return { log, gc, s: stream(i + 1, `/${n}`), seq: 0 };
    });
    let answered = 0;
    const append = (k: number): void => {
      const sh = shards[k]!;
      sh.gc.enqueue(sh.s, data(sh.s.id, sh.seq++, 1), null);
      sh.gc.whenDurable(() => answered++, () => 0, sh.s);
      sh.gc.flush();
    };
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
    // The first append starts at once, alone, and opens the window; the next ones, to either
    // shard, made once it is durable, wait for the window's end and go together.
    const t0 = Date.now();
    append(0);
    for (let i = 0; i < 200 && answered < 1; i++) await pause(5);
    expect(answered).toBe(1);
    expect(Date.now() - t0).toBeLessThan(1_500);
    append(0);
    await pause(5);
    append(1);
    for (let i = 0; i < 300 && answered < 3; i++) await pause(20);
    expect(answered).toBe(3);
    expect(await w.objects()).toEqual([['/a'], ['/a', '/b']]);
    for (const sh of shards) sh.log.close();
    await w.store.close();
  });
});
