/**
 * Objects mode's replicator for group commit (docs/cluster.md, "Objects mode: where data lives"):
 * a group is acknowledged only once its bytes are durable in the object store and one etcd txn
 * recorded each stream's entry under the stream's fence.
 *
 *   group ──▶ object PUT g/<node>/<nodeEpoch>/<shard>/<n>  (the group's frames, concatenated;
 *   (frames      │                                          PUTs of consecutive groups overlap)
 *    per stream) ▼
 *            ledger.commit: i/ + r/ (+ m/) per stream       (sent in group order, each once the one
 *                │                                          before is sent; compare f/<stream>; carrying
 *                │                                          the stream's entries still unanswered)
 *                ▼  fenced streams ──▶ `moved` (never acknowledged, never applied)
 *            answered in group order ──▶ GroupCommit: local segment write without fdatasync ──▶ apply ──▶ replies
 *
 * The object holds the frames exactly as the segment log does (frame.ts), each stream's frames
 * contiguous (group-commit.ts groups them per stream), so an entry is one byte range.
 * Ledger commits of consecutive groups are in flight side by side. A group's txn also carries
 * the entries of its streams from earlier groups not answered yet, so whichever txn etcd applies
 * first records them all: a stream's entries never have a gap, whatever order the txns arrive in
 * (goroutines of one etcd member do reorder them). A group with a create or an `m/` change is
 * answered before the next group's txn is sent, so a txn never repeats a key. A group that must
 * first read the ledger (a stream this thread has not committed for) or that deletes a stream is
 * committed alone.
 * A store or etcd that does not answer is tried again until it does (the same object key and the
 * same ledger keys: both writes are idempotent); meanwhile GroupCommit answers the group's
 * requests storage_unavailable after `stallMs` and refuses new writes.
 */
import { readBatchHeader } from '../../util/record-batch';
import { type CarriedEntry, type Fence, type Ledger, type LedgerMeta, type PutOptions, type StreamCommit, groupObjectKey } from '../../objects';
import { COMMIT_SECONDS_BOUNDS, type CommitStats, observeBucket } from '../commit-stats';
import { FRAME_HEADER, FrameType } from './frame';
import { type Group, type Replicator } from './group-commit';
import { type StoredMeta, patchMeta, readMeta, storedMeta } from './stream-meta';
import { type StreamLedgerState, type StreamState } from './stream-state';

/** What objects mode needs of the object store (src/objects ObjectStore): a durable PUT, and a listing at start. */
export interface ObjectPut {
  put(key: string, body: Buffer | readonly Buffer[], options?: PutOptions): Promise<void>;
  list(prefix: string): AsyncIterable<{ key: string }>;
  /** The next group object keys, announced so the store can ready them (file: created ahead). */
  prepare?(keys: readonly string[]): void;
}

export interface ObjectCommitOptions {
  store: ObjectPut;
  ledger: Ledger;
  nodeId: number;
  /** This start of the node: group object keys never repeat across starts. */
  nodeEpoch: number;
  shardId: number;
  /** Groups in flight at once; default 4. */
  maxInFlight?: number;
  /** Groups whose ledger commit has not been sent, at once (their PUTs overlap); default 2. */
  maxBeforeCommit?: number;
  /** Replies of a group not durable after this long are answered storage_unavailable (ms); default 5 s. */
  stallMs?: number;
  /** A group starts while another is before its ledger commit only from this size on (bytes); default 64 KiB. */
  overlapMinBytes?: number;
  /** > 0: each group gathers for up to this long before its PUT (--objects-flush-ms); default 0. */
  flushMs?: number;
  /** Pause between tries of a store or ledger write that failed (ms); default 200. */
  retryMs?: number;
}

/** One stream's part of a group: its byte range in the object and what its frames change. */
interface Part {
  s: StreamState;
  off: number;
  len: number;
  from: number;
  to: number;
  /** The CREATE frame is in the group: the fence is taken create-only, epoch 1. */
  created: boolean;
  /** The DELETE frame is in the group: the stream leaves the ledger. */
  deleted: boolean;
  /** A TRIM frame is in the group: entries below the new start leave the ledger after the commit. */
  trimmed: boolean;
  /** The `m/` record after the group, when a frame changed it. */
  meta: LedgerMeta | null;
}

/** A group whose ledger commit is sent and not answered; `plain`: no create and no `m/` in it (its entries may be carried). */
interface Unanswered {
  key: string;
  bytes: number;
  commits: StreamCommit[];
  plain: boolean;
}

/** Keys announced to the store ahead, per batch, and how few may remain before the next batch. */
const PREPARE_BATCH = 8;
const PREPARE_LOW = 2;

/** Group object keys are new (start() continues above the shard's listed keys) and read only once the ledger names them. */
const FRESH: PutOptions = { fresh: true };

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class ObjectCommit implements Replicator {
  readonly maxInFlight: number;
  readonly stallMs: number;
  readonly flushMs: number;
  readonly overlapMinBytes: number;
  readonly #o: ObjectCommitOptions;
  readonly #retryMs: number;
  /** Group objects written by this shard in this node start. */
  #counter = 0;
  /** Group object keys below this counter were announced to the store (prepare). */
  #preparedTo = 0;
  /** The newest group's whole commit, settled: a group is answered after the one before it (group order). */
  #lastCommit: Promise<unknown> = Promise.resolve();
  /** The newest group's ledger commit is sent (its entries' counters are taken), or it is done: the next may be sent. */
  #lastSent: Promise<void> = Promise.resolve();
  #closed = false;
  /** Groups handed to replicate() whose ledger commit has not been sent. */
  #beforeCommit = 0;
  readonly #maxBeforeCommit: number;
  readonly #readyListeners: Array<() => void> = [];
  /** Per stream, the data seq after the frames handed to replicate() so far (an entry without data is [seq, seq)). */
  readonly #seqs = new WeakMap<StreamState, number>();
  /** Per stream, the `m/` record after the frames handed to replicate() so far, when they changed it. */
  readonly #metas = new WeakMap<StreamState, LedgerMeta>();
  /** Groups whose ledger commit was sent and not answered yet, in group order: later commits carry their entries. */
  readonly #unanswered: Unanswered[] = [];
  /** The group commit's figures (report()): each ledger transaction's time goes into `ledger`. */
  #stats: CommitStats | null = null;

  constructor(o: ObjectCommitOptions) {
    this.#o = o;
    this.maxInFlight = o.maxInFlight ?? 4;
    this.#maxBeforeCommit = o.maxBeforeCommit ?? 2;
    this.stallMs = o.stallMs ?? 5000; // 5 s
    this.#retryMs = o.retryMs ?? 200;
    this.flushMs = o.flushMs ?? 0;
    // Small groups in flight side by side cost a PUT and a ledger txn each (~100 µs of CPU and a
    // round trip): small appends gather behind the group in flight instead; large ones overlap.
    this.overlapMinBytes = o.overlapMinBytes ?? 64 << 10;
  }

  /**
   * Before the first group: continue after the group objects this shard already wrote in this
   * node start. A shard worker restarted after a storage failure runs in the same node epoch, and
   * a group object key must never be written twice (entries point into the first one).
   */
  async start(): Promise<void> {
    const prefix = groupObjectKey(this.#o.nodeId, this.#o.nodeEpoch, this.#o.shardId, 0).replace(/\d+$/, '');
    let last = -1;
    try {
      for await (const o of this.#o.store.list(prefix)) {
        const n = Number(o.key.slice(prefix.length));
        if (Number.isInteger(n)) last = Math.max(last, n);
      }
    } catch {
      // The store does not answer now: start far above anything this start can have written
      // (one object per group; the keys stay unique, if no longer of one width).
      last = Date.now();
    }
    this.#counter = Math.max(this.#counter, last + 1);
    this.#preparedTo = this.#counter;
    this.#prepareAhead();
  }

  /** Keep the next keys announced to the store, a batch at a time (file: one directory sync per batch). */
  #prepareAhead(): void {
    if (this.#o.store.prepare === undefined || this.#preparedTo - this.#counter > PREPARE_LOW) return;
    const from = Math.max(this.#preparedTo, this.#counter);
    const keys = Array.from({ length: PREPARE_BATCH }, (_, i) => groupObjectKey(this.#o.nodeId, this.#o.nodeEpoch, this.#o.shardId, from + i));
    this.#preparedTo = from + PREPARE_BATCH;
    this.#o.store.prepare(keys);
  }

  /**
   * True when fewer than maxBeforeCommit groups are before their ledger commit (PUT running, or
   * waiting for the previous group's commit to be sent): a new group may start now whatever its
   * size, its PUT beside the others. Commits are sent without waiting for the answers before
   * them, so a group's wait is about one PUT and one ledger round trip; more groups before
   * their commit would split the clients into smaller groups, each costing a PUT and a txn.
   */
  readyForNext(): boolean {
    return this.#beforeCommit < this.#maxBeforeCommit;
  }

  onReady(listener: () => void): void {
    this.#readyListeners.push(listener);
  }

  report(stats: CommitStats): void {
    this.#stats = stats;
  }

  /** Stop retrying: groups still waiting fail (the shard is closing). */
  close(): void {
    this.#closed = true;
  }

  /** TTL expiry moved the stream's start: `m/` gets it and the entries wholly below it go (behind the writes, best effort). */
  expired(s: StreamState): void {
    const l = s.ledger;
    if (l === undefined || l.moved !== null || s.startSeq <= l.meta.startSeq) return;
    const startSeq = s.startSeq;
    l.meta = { ...l.meta, startSeq };
    // After the commits already started, so a later m/ of theirs does not undo it.
    this.#lastCommit = this.#lastCommit.then(() => this.#o.ledger.trim(s.meta.name, l.fence, startSeq)).catch(() => undefined);
  }

  replicate(g: Group): Promise<ReadonlyMap<StreamState, number | null>> {
    const key = groupObjectKey(this.#o.nodeId, this.#o.nodeEpoch, this.#o.shardId, this.#counter++);
    this.#prepareAhead();
    // Laid out now, synchronously: the group's frames and the streams' seqs are fixed.
    const body: Buffer[] = [];
    const parts: Part[] = [];
    let off = 0;
    for (const [s, all] of g.frames) {
      // An import's frames and a drop are this node's own bookkeeping: their data is recorded already.
      const frames = all.filter((f) => !f.local);
      if (frames.length === 0) continue;
      const p = this.#part(s, off);
      for (const f of frames) {
        body.push(f.buf);
        off += f.buf.length;
        this.#inspect(p, f.buf);
      }
      p.len = off - p.off;
      this.#seqs.set(s, p.to);
      if (p.meta !== null) this.#metas.set(s, p.meta);
      parts.push(p);
    }
    const put = body.length === 0 ? Promise.resolve() : this.#retrying(() => this.#o.store.put(key, body, FRESH));
    this.#beforeCommit++;
    const committing = (): void => {
      if (this.#beforeCommit-- === this.#maxBeforeCommit) for (const l of this.#readyListeners) l();
    };
    const before = { sent: this.#lastSent, done: this.#lastCommit };
    let sent!: () => void;
    this.#lastSent = new Promise<void>((r) => (sent = r));
    const done = Promise.all([put, before.sent]).then(
      () => {
        committing();
        return this.#commit(key, off, parts, sent, before.done);
      },
      (err: unknown) => {
        committing();
        sent();
        throw err;
      },
    );
    this.#lastCommit = done.catch(() => undefined);
    return done;
  }

  #part(s: StreamState, off: number): Part {
    // No earlier group of this thread touched the stream: everything before is applied.
    const seq = this.#seqs.get(s) ?? s.nextSeq;
    return { s, off, len: 0, from: seq, to: seq, created: false, deleted: false, trimmed: false, meta: null };
  }

  /** What one frame changes in the stream's entry and `m/` record. */
  #inspect(p: Part, buf: Buffer): void {
    const type = buf[8] as FrameType;
    const payload = (): Buffer => buf.subarray(FRAME_HEADER);
    // The record after the groups before this one, committed or not yet.
    const base = (): LedgerMeta => p.meta ?? this.#metas.get(p.s) ?? p.s.ledger?.meta ?? initialMeta(p.s);
    switch (type) {
      case FrameType.Data: {
        const h = readBatchHeader(buf, FRAME_HEADER);
        if (p.from === p.to) p.from = h.baseOffset;
        p.to = h.baseOffset + h.lastOffsetDelta + 1;
        break;
      }
      case FrameType.Create:
        p.created = true;
        p.meta = { meta: JSON.parse(payload().toString()) as Record<string, unknown>, startSeq: p.from, sealed: false };
        break;
      case FrameType.Config: {
        const m = base();
        p.meta = { ...m, meta: { ...storedMeta(patchMeta(readMeta(m.meta as unknown as StoredMeta), JSON.parse(payload().toString()) as Partial<StoredMeta>)) } };
        break;
      }
      case FrameType.Seal:
        p.meta = { ...base(), sealed: true };
        break;
      case FrameType.Trim:
        p.trimmed = true;
        p.meta = { ...base(), startSeq: Math.max(base().startSeq, payload().readDoubleBE(0)) };
        break;
      case FrameType.Delete:
        p.deleted = true;
        break;
      default:
        break;
    }
  }

  /**
   * The ledger commit of one group: sent once the previous group's is sent (`sent()` lets the next
   * one go), answered after the previous group's (`before`). A group that must read the ledger
   * first or that deletes a stream waits until the previous group is answered, and the next one
   * waits until it is answered.
   */
  async #commit(key: string, bytes: number, parts: Part[], sent: () => void, before: Promise<unknown>): Promise<ReadonlyMap<StreamState, number | null>> {
    const alone = parts.some((p) => p.s.ledger?.moved == null && ((p.deleted && !p.created) || (!p.created && p.s.ledger === undefined)));
    try {
      if (alone) await before;
      return await this.#record(key, bytes, parts, alone ? () => undefined : sent, before);
    } finally {
      sent();
    }
  }

  async #record(key: string, bytes: number, parts: Part[], sent: () => void, before: Promise<unknown>): Promise<ReadonlyMap<StreamState, number | null>> {
    const fenced = new Map<StreamState, number | null>();
    const commits: StreamCommit[] = [];
    const committed: Part[] = [];
    const deletes: Part[] = [];
    for (const p of parts) {
      const moved = p.s.ledger?.moved ?? null;
      if (moved !== null) {
        fenced.set(p.s, moved.nodeId);
        continue;
      }
      // A stream created and deleted within one group never reached the ledger.
      if (p.deleted && p.created) continue;
      if (!p.created && p.s.ledger === undefined) {
        const moved = await this.#retrying(() => this.#resolve(p.s));
        if (moved !== null) {
          fenced.set(p.s, moved.nodeId);
          continue;
        }
      }
      if (p.deleted) {
        deletes.push(p);
        continue;
      }
      const l = (p.s.ledger ??= { fence: { nodeId: this.#o.nodeId, epoch: 1 }, counter: 0, meta: p.meta ?? initialMeta(p.s), moved: null });
      commits.push({ stream: p.s.meta.name, fence: l.fence, counter: l.counter++, off: p.off, len: p.len, from: p.from, to: p.to, ...(p.meta !== null ? { meta: p.meta } : {}), ...(p.created ? { create: true } : {}) });
      committed.push(p);
    }
    if (commits.length > 0) {
      // An unanswered group with a create or an m/ change: this commit waits for its answer
      // (carried entries never repeat a key of this txn).
      if (this.#unanswered.some((u) => !u.plain)) await before;
      const streams = new Set(commits.map((c) => c.stream));
      const carried: CarriedEntry[] = this.#unanswered.flatMap((u) => u.commits.filter((c) => streams.has(c.stream)).map((commit) => ({ objectKey: u.key, bytes: u.bytes, commit })));
      const mine: Unanswered = { key, bytes, commits, plain: commits.every((c) => c.create !== true && c.meta === undefined) };
      this.#unanswered.push(mine);
      let r: { fenced: string[] };
      try {
        const t0 = performance.now();
        const sending = this.#retrying(() => this.#o.ledger.commit(key, bytes, commits, carried));
        sent();
        r = await sending;
        if (this.#stats !== null) observeBucket(this.#stats.ledger, COMMIT_SECONDS_BOUNDS, (performance.now() - t0) / 1000);
        await before;
      } finally {
        this.#unanswered.splice(this.#unanswered.indexOf(mine), 1);
      }
      const refused = new Set(r.fenced);
      for (const p of committed) {
        const l = p.s.ledger!;
        if (refused.has(p.s.meta.name)) {
          fenced.set(p.s, await this.#holder(p.s.meta.name));
          l.moved = { nodeId: fenced.get(p.s) ?? null };
          continue;
        }
        if (p.meta !== null) {
          l.meta = p.meta;
          // A trim's old entries leave the ledger behind the group (not on the write path).
          if (p.trimmed) void this.#o.ledger.trim(p.s.meta.name, l.fence, p.meta.startSeq).catch(() => undefined);
        }
      }
    } else {
      sent();
      await before;
    }
    for (const p of deletes) {
      const l = p.s.ledger!;
      if (!(await this.#retrying(() => this.#o.ledger.deleteStream(p.s.meta.name, l.fence)))) {
        l.moved = { nodeId: await this.#holder(p.s.meta.name) };
        fenced.set(p.s, l.moved.nodeId);
      }
    }
    return fenced;
  }

  /**
   * A stream this thread has not committed for yet (the node or its shard worker restarted):
   * its fence is read back. Ours: go on in that epoch after its last entry; absent (a stream from
   * before objects mode): taken create-only, epoch 1; another node's: moved.
   */
  async #resolve(s: StreamState): Promise<{ nodeId: number | null } | null> {
    const name = s.meta.name;
    let fence = await this.#o.ledger.fence(name);
    if (fence === null) {
      const mine: Fence = { nodeId: this.#o.nodeId, epoch: 1 };
      const t = await this.#o.ledger.takeFence(name, mine, { create: true });
      if (t.ok) fence = mine;
      else return { nodeId: t.current?.nodeId ?? null };
    }
    if (fence.nodeId !== this.#o.nodeId) return { nodeId: fence.nodeId };
    const entries = await this.#o.ledger.entries(name);
    let counter = 0;
    for (const e of entries) if (e.epoch === fence.epoch) counter = Math.max(counter, e.counter + 1);
    const state: StreamLedgerState = { fence, counter, meta: (await this.#o.ledger.meta(name)) ?? initialMeta(s), moved: null };
    s.ledger = state;
    return null;
  }

  /** The node holding a stream's fence now (best effort: null when unknown). */
  async #holder(stream: string): Promise<number | null> {
    try {
      return (await this.#o.ledger.fence(stream))?.nodeId ?? null;
    } catch {
      return null;
    }
  }

  /** Run an idempotent write until it succeeds (the stores were unreachable) or the shard closes. */
  async #retrying<T>(f: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await f();
      } catch (err) {
        if (this.#closed) throw err;
      }
      await sleep(this.#retryMs);
    }
  }
}

/** The `m/` record of a stream as this node holds it. */
function initialMeta(s: StreamState): LedgerMeta {
  return { meta: storedMeta(s.meta) as unknown as Record<string, unknown>, startSeq: s.startSeq, sealed: s.closed };
}
