/**
 * Objects mode's replicator for group commit (docs/cluster.md, "Objects mode: where data lives"):
 * a group is acknowledged only once its bytes are durable in the object store and an etcd txn
 * recorded each stream's entry under the stream's fence.
 *
 *   group (of one shard, or of a worker's shards in one turn: shared-replicator.ts)
 *         ──▶ object PUT g/<node>/<nodeEpoch>/<worker>/<n>  (the group's frames, concatenated;
 *   (frames      │                                          up to --objects-puts-in-flight groups at
 *    per stream) │                                          their PUTs, beyond two started ≥ PUT time ÷ n apart)
 *                ▼  the store may answer them in any order
 *            ready, in group order ──▶ queue
 *                                        │  one ledger commit at a time: it records every group
 *                                        ▼  ready when it is sent (≤ 32), one txn per ≤ 40 streams
 *            ledger.commitObjects: o/ per object (and one reference marker r/<o>/ for an object of several streams); i/ per stream and object, m/ once; compare f/<stream>
 *                │
 *                ▼  fenced streams ──▶ `moved` (never acknowledged, never applied)
 *            answered in group order ──▶ GroupCommit: local segment write without fdatasync ──▶ apply ──▶ replies
 *
 * The object holds the frames exactly as the segment log does (frame.ts), each stream's frames
 * contiguous (group-commit.ts groups them per stream), so an entry is one byte range.
 * The PUTs pipeline: on a store that answers in tens of milliseconds one group at its PUT at a
 * time would cap a shard at a few dozen groups a second, and every append would wait for the PUT
 * before its own. Keys are numbered when a group starts, so the writer's numbers stay in group
 * order whatever order the store answers in; a group is settled (answered, queued for the ledger)
 * only after the one before it, so acknowledgements, ledger entries and local writes keep that
 * order, and tail recovery, which walks the writer's numbers in order, finds the same order too.
 * Ledger commits run one at a time, and each records all the groups whose objects became durable
 * while the one before was in flight: etcd's CPU per txn, not its round trip, is what bounds the
 * append rate on a busy machine (perf/README.md, "Objects mode"), so the txns are batched
 * rather than overlapped. One at a time also keeps a stream's entries in order without gaps. A
 * commit ends after a group that deletes a stream, so a later create of the name finds it gone.
 * A store or etcd that does not answer is tried again until it does (the same object key, and
 * the same ledger txns, which the writer's commit token keeps from landing twice: ledger.ts,
 * CommitToken); meanwhile GroupCommit answers the group's requests storage_unavailable after
 * `stallMs` and refuses new writes.
 */
import { batchOffsets } from '../../util/record-batch';
import {
  type CommitToken, type Fence, type Ledger, type LedgerMeta, OBJECTS_PER_COMMIT, type PutOptions, type RecordedThrough, type StreamRecord, fenceMarker, groupObjectKey, groupTrailer, recoverTail, sameFence,
} from '../../objects';
import { COMMIT_SECONDS_BOUNDS, type CommitStats, observeBucket } from '../commit-stats';
import { FRAME_HEADER, FrameType } from './frame';
import { type Group, type Refusal, type Replicator } from './group-commit';
import { ProducerSnapshotWriter } from './producer-snapshot-writer';
import { type WorkerLog } from './worker-log';
import { type StoredMeta, patchMeta, readMeta, storedMeta } from './stream-meta';
import { type StreamLedgerState, type StreamState, servedStart } from './stream-state';

/** What objects mode needs of the object store (src/objects ObjectStore). */
export interface ObjectPut {
  /** The store honours PutOptions.ifAbsent: groups may be acknowledged before the ledger records them. */
  readonly createOnly: boolean;
  put(key: string, body: Buffer | readonly Buffer[], options?: PutOptions): Promise<void>;
  get(key: string): Promise<Buffer>;
  list(prefix: string): AsyncIterable<{ key: string }>;
  /** The next group object keys, announced so the store can ready them (file: temporary files opened ahead). */
  prepare?(keys: readonly string[]): void;
}

export interface ObjectCommitOptions {
  store: ObjectPut;
  ledger: Ledger;
  nodeId: number;
  /** This start of the node: group object keys never repeat across starts. */
  nodeEpoch: number;
  /** Names the writer, `g/<node>/<nodeEpoch>/<shardId>/`: the first shard of the worker whose shards write through it. */
  shardId: number;
  /** Groups in flight at once (from their PUT until applied); default twice maxBeforeCommit. */
  maxInFlight?: number;
  /** Groups whose object is not durable yet, at once (their PUTs overlap; beyond 2 paced by the store's latency); default 2 (--objects-puts-in-flight). */
  maxBeforeCommit?: number;
  /** The least time between the starts of two groups beyond the first two at their PUTs (ms); default 2. */
  minSpacingMs?: number;
  /** Replies of a group not durable after this long are answered storage_unavailable (ms); default 5 s. */
  stallMs?: number;
  /** A group starts while another is before its object is durable only from this size on (bytes); default 64 KiB. */
  overlapMinBytes?: number;
  /** > 0: each group gathers for up to this long before its PUT (--objects-flush-ms); default 0. */
  flushMs?: number;
  /** Pause between tries of a store or ledger write that failed (ms); default 200. */
  retryMs?: number;
  /** Groups acknowledged and not yet recorded, at most (more wait before they are acknowledged); default 64. */
  maxUnrecorded?: number;
  /** A stream's producers are snapshotted each time its entries grew by this much (bytes); default 16 MiB. */
  snapshotEveryBytes?: number;
  /** Where a failed producer snapshot is told (the node's log, from a worker). */
  log?: WorkerLog;
  /** A ledger commit of early groups only waits up to this long for more to join it (ms); default 50. */
  recordWindowMs?: number;
  /** Early groups that send a ledger commit at once, without waiting out the window; default OBJECTS_PER_COMMIT (32). */
  recordBatch?: number;
  /** How long a moved stream's tail walk is waited for to answer an append whose early object it may have taken (ms); default 3 s. */
  takenWaitMs?: number;
  /** the `records` ledger format: each ledger txn puts one part record instead of entries (src/objects/part-records.ts). */
  records?: boolean;
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

/** A group handed to replicate(), from its layout to its answer. */
interface Pending {
  /** The frames, each stream's contiguous. */
  frames: Buffer[];
  parts: Part[];
  /**
   * Acknowledged once its object is durable, recorded behind (every part is plain data of a
   * stream whose place in this writer is recorded, with nothing of it waiting to be recorded);
   * otherwise acknowledged once recorded.
   */
  early: boolean;
  /** Its object key, and the writer switches when the key was taken (a key from before a switch is never used). */
  key: string;
  switches: number;
  /**
   * The key of its early object, when it was created before the writer switched (it then went
   * again under a fresh key, late): a stream fenced meanwhile may have had its part there taken
   * over by the tail recovery of the stream's new owner (#takenOver).
   */
  earlyKey: string | null;
  /** The object and its trailer: created (true), or its key was taken by a fence marker (false). */
  put: Promise<boolean>;
  bytes: number;
}

/** A group whose object is durable, waiting in group order for its ledger commit. */
interface Ready {
  p: Pending;
  /** Settles the group's answer (late groups; early ones were answered already). */
  resolve: ((fenced: ReadonlyMap<StreamState, Refusal>) => void) | null;
  reject: ((err: unknown) => void) | null;
}

/** One stream's entries in one ledger commit, and what recording them changes in its state. */
interface Recorded {
  rec: StreamRecord & { entries: Array<StreamRecord['entries'][number]> };
  /** The groups (indexes in the commit) holding frames of the stream. */
  groups: number[];
  trimmed: boolean;
  meta: LedgerMeta | null;
  /** The writer switches of the newest late group, when one is in the commit: the stream's place is recorded in that writer. */
  placedIn: number | null;
}

/** Keys announced to the store ahead, per batch, and how few may remain before the next batch. */
const PREPARE_BATCH = 8;
const PREPARE_LOW = 2;

/** Group object keys are new (start() continues above the writer's listed keys) and read only once the ledger names them. */
const FRESH: PutOptions = { fresh: true };
/** With a create-only store: of this writer and a fence marker, exactly one creates a name. */
const IF_ABSENT: PutOptions = { ifAbsent: true };
const NOTHING_FENCED: ReadonlyMap<StreamState, Refusal> = new Map();
/** How often an old owner looks for a moved stream's tail walk (ms). */
const TAKEN_POLL_MS = 20;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class ObjectCommit implements Replicator {
  readonly maxInFlight: number;
  readonly stallMs: number;
  readonly flushMs: number;
  readonly overlapMinBytes: number;
  readonly #o: ObjectCommitOptions;
  readonly #retryMs: number;
  readonly #maxUnrecorded: number;
  readonly #recordWindowMs: number;
  readonly #recordBatch: number;
  readonly #takenWaitMs: number;
  /** `g/<node>/<nodeEpoch>/<worker>/`: this writer's object keys. */
  readonly #writer: string;
  /** The writer's commit token (ledger.ts, CommitToken), read before its first commit. */
  #token: CommitToken | null = null;
  /** Group objects written by this writer (a shard worker) in this node start. */
  #counter = 0;
  /** This run's first number (start(): above a gap after an earlier run's objects). */
  #from = 0;
  /** Group object keys below this counter were announced to the store (prepare). */
  #preparedTo = 0;
  /** Times a create-only put found its key taken by a fence marker, or a run ended: keys taken before the last switch are never used. */
  #switches = 0;
  /** The newest group's answer, settled: a group is answered after the one before it (group order). */
  #lastCommit: Promise<unknown> = Promise.resolve();
  #closed = false;
  /** Groups handed to replicate() whose object is not durable yet. */
  #beforeCommit = 0;
  readonly #maxBeforeCommit: number;
  readonly #minSpacingMs: number;
  /** A trim keeps the stream's newest entry below its start in the entries format only (ledger.ts trim). */
  readonly #trimOptions: { keepNewest: boolean };
  /** A PUT's time, smoothed (ms): groups at their PUTs start about putMs ÷ maxBeforeCommit apart. */
  #putMs = 0;
  /** When the newest group started its PUT (performance.now()). */
  #lastStart = -Infinity;
  /** Wakes the group commit once the spacing since the newest group's start has passed. */
  #spacingTimer: NodeJS.Timeout | null = null;
  readonly #readyListeners: Array<() => void> = [];
  /** Per stream, the data seq after the frames handed to replicate() so far (an entry without data is [seq, seq)). */
  readonly #seqs = new WeakMap<StreamState, number>();
  /** Per stream, the `m/` record after the frames handed to replicate() so far, when they changed it. */
  readonly #metas = new WeakMap<StreamState, LedgerMeta>();
  /** Per stream, parts of late groups not recorded yet: while any, its groups stay late (tail recovery takes no early part after an unrecorded late one). */
  readonly #late = new WeakMap<StreamState, number>();
  /** Groups whose object is durable, in group order, not yet in a ledger commit. */
  readonly #queue: Ready[] = [];
  /** Early groups in #queue. */
  #unrecorded = 0;
  /** A ledger commit is in flight (one at a time). */
  #recording = false;
  #windowTimer: NodeJS.Timeout | null = null;
  /** Early groups waiting for #unrecorded to fall below maxUnrecorded before they are answered. */
  #lagWaiters: Array<() => void> = [];
  /** The group commit's figures (report()): each ledger transaction's time goes into `ledger`. */
  #stats: CommitStats | null = null;
  /** Producer snapshots of the streams whose entries it records (producer-snapshot-writer.ts). */
  readonly snapshots: ProducerSnapshotWriter;

  constructor(o: ObjectCommitOptions) {
    this.#o = o;
    this.#maxBeforeCommit = Math.max(1, o.maxBeforeCommit ?? 2);
    // Late groups wait for their ledger commit after their PUT, then for their local write: room
    // for them beside those at their PUTs.
    this.maxInFlight = o.maxInFlight ?? 2 * this.#maxBeforeCommit;
    this.#minSpacingMs = o.minSpacingMs ?? 2;
    this.#trimOptions = { keepNewest: o.records !== true };
    this.stallMs = o.stallMs ?? 5000; // 5 s
    this.#retryMs = o.retryMs ?? 200;
    this.flushMs = o.flushMs ?? 0;
    this.#maxUnrecorded = o.maxUnrecorded ?? 64;
    // Early groups are answered already: their commit waits to gather more, since etcd's CPU per
    // txn is mostly fixed (perf/README.md, "Objects mode": up to 32 groups a txn instead of 8
    // cut etcd's CPU per append by a quarter to a third, and the node's by 7–8%, under W1).
    this.#recordWindowMs = o.recordWindowMs ?? 50;
    this.#recordBatch = o.recordBatch ?? OBJECTS_PER_COMMIT;
    // Below the 5 s stall after which the group's replies are answered storage_unavailable anyway;
    // a new owner records its walk within milliseconds of taking the fence.
    this.#takenWaitMs = o.takenWaitMs ?? 3_000; // 3 s
    // Small groups in flight side by side cost a PUT each (~60 µs of CPU and a sync): small
    // appends gather behind the group in flight instead; large ones overlap.
    this.overlapMinBytes = o.overlapMinBytes ?? 64 << 10;
    this.#writer = groupObjectKey(o.nodeId, o.nodeEpoch, o.shardId, 0).replace(/\d+$/, '');
    this.snapshots = new ProducerSnapshotWriter({
      store: o.store,
      ledger: o.ledger,
      nodeId: o.nodeId,
      nodeEpoch: o.nodeEpoch,
      shardId: o.shardId,
      ...(o.snapshotEveryBytes !== undefined ? { everyBytes: o.snapshotEveryBytes } : {}),
      failed: (stream, err) =>
        o.log?.warn({ stream, shard: o.shardId, err: (err as Error).message }, 'writing a producer snapshot failed; it is tried again at the stream\'s next commit (until then a new owner replays more of the stream)'),
    });
  }

  /** An adopt replayed the producers from `bytes` of entries: a snapshot saves the next owner that. */
  producersReplayed(s: StreamState, bytes: number): void {
    this.snapshots.recorded(s, bytes);
  }

  /**
   * Before the first group: continue after the group objects this writer already wrote in this
   * node start. A shard worker restarted after a storage failure runs in the same node epoch, and
   * a group object key must never be written twice (entries point into the first one). With a
   * create-only store the run starts above a gap, filled with a fence marker: an earlier run's
   * groups end there, for tail recovery as for that run itself.
   */
  async start(): Promise<void> {
    let last = -1;
    try {
      for await (const o of this.#o.store.list(this.#writer)) {
        const n = Number(o.key.slice(this.#writer.length));
        if (Number.isInteger(n)) last = Math.max(last, n);
      }
    } catch {
      // The store does not answer now: start far above anything this start can have written
      // (one object per group; the keys stay unique, if no longer of one width).
      last = Date.now();
    }
    const gap = this.#o.store.createOnly ? 1 : 0;
    if (gap > 0) await this.#markGap(last + 1);
    this.#counter = Math.max(this.#counter, last + 1 + gap);
    this.#from = this.#counter;
    this.#preparedTo = this.#counter;
    this.#prepareAhead();
  }

  /**
   * A stream was fenced: this run's h/ mark must not move past groups of it the ledger does not
   * name (tail-recovery.ts), so a new run begins above a gap holding a fence marker (a walk from
   * the old run stops there), and every stream is placed again before its groups go early.
   */
  #newRun(): void {
    this.#switches++;
    void this.#markGap(this.#counter++);
    this.#from = this.#counter;
  }

  /** The gap below a run: a fence marker there ends the runs before it (best effort; a walk that finds it empty fills it). */
  #markGap(n: number): Promise<unknown> {
    return this.#o.store.put(this.#key(n), fenceMarker({ nodeId: this.#o.nodeId, epoch: 0 }), IF_ABSENT).catch(() => undefined);
  }

  #key(n: number): string {
    return groupObjectKey(this.#o.nodeId, this.#o.nodeEpoch, this.#o.shardId, n);
  }

  /** Keep the next keys announced to the store, a batch at a time. */
  #prepareAhead(): void {
    if (this.#o.store.prepare === undefined || this.#preparedTo - this.#counter > PREPARE_LOW) return;
    const from = Math.max(this.#preparedTo, this.#counter);
    const keys: string[] = [];
    for (let i = 0; i < PREPARE_BATCH; i++) keys.push(this.#key(from + i));
    this.#preparedTo = from + PREPARE_BATCH;
    this.#o.store.prepare(keys);
  }

  /**
   * True when a new group may start now whatever its size, its PUT beside the others: fewer than
   * two groups wait for their object to be durable, or fewer than maxBeforeCommit and the newest
   * started at least putMs ÷ maxBeforeCommit ago (and minSpacingMs). With 8 on a store that
   * answers in 50 ms, groups start every ~6 ms, each gathering what came meanwhile, and up to 8
   * are at their PUTs at once (the commit pipeline: docs/objects.md, "Latency"); on one that
   * answers in a millisecond, rarely more than two. Starting every group at once instead would split the
   * clients into one-record groups, each costing a PUT; one or two at a time makes every append
   * wait for the PUT before its own.
   */
  readyForNext(): boolean {
    if (this.#beforeCommit < Math.min(2, this.#maxBeforeCommit)) return true;
    if (this.#beforeCommit >= this.#maxBeforeCommit || this.#closed) return false;
    const wait = this.#lastStart + Math.max(this.#minSpacingMs, this.#putMs / this.#maxBeforeCommit) - performance.now();
    if (wait <= 0) return true;
    this.#spacingTimer ??= setTimeout(() => {
      this.#spacingTimer = null;
      this.#wake();
    }, Math.ceil(wait));
    return false;
  }

  #wake(): void {
    for (const l of this.#readyListeners) l();
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
    if (this.#spacingTimer !== null) clearTimeout(this.#spacingTimer);
    this.#spacingTimer = null;
    if (this.#windowTimer !== null) clearTimeout(this.#windowTimer);
    this.#windowTimer = null;
    const waiters = this.#lagWaiters;
    this.#lagWaiters = [];
    for (const w of waiters) w();
    // What is queued goes now (the retries give up once closed; a later run recovers the tail).
    if (!this.#recording && this.#queue.length > 0) this.#send();
  }

  /** TTL expiry moved the stream's start: `m/` gets it and the entries wholly below it go (behind the writes, best effort). */
  expired(s: StreamState): void {
    const l = s.ledger;
    if (l === undefined || l.moved !== null || servedStart(s) <= l.meta.startSeq) return;
    const startSeq = servedStart(s);
    l.meta = { ...l.meta, startSeq };
    // After the commits already started, so a later m/ of theirs does not undo it.
    this.#lastCommit = this.#lastCommit.then(() => this.#o.ledger.trim(s.meta.name, l.fence, startSeq, this.#trimOptions)).catch(() => undefined);
  }

  replicate(g: Group): Promise<ReadonlyMap<StreamState, Refusal>> {
    // Laid out now, synchronously: the group's frames and the streams' seqs are fixed.
    const frames: Buffer[] = [];
    const parts: Part[] = [];
    let off = 0;
    for (const [s, all] of g.frames) {
      // An import's frames and a drop are this node's own bookkeeping: their data is recorded already.
      const own = all.filter((f) => !f.local);
      if (own.length === 0) continue;
      const p = this.#part(s, off);
      for (const f of own) {
        frames.push(f.buf);
        off += f.buf.length;
        this.#inspect(p, f.buf);
      }
      p.len = off - p.off;
      this.#seqs.set(s, p.to);
      if (p.meta !== null) this.#metas.set(s, p.meta);
      parts.push(p);
    }
    if (parts.length === 0) {
      // Nothing to make durable: answered in group order.
      const done = this.#lastCommit.then(() => NOTHING_FENCED);
      this.#lastCommit = done;
      return done;
    }
    const early = this.#o.store.createOnly && parts.every((p) => this.#mayGoEarly(p));
    if (!early) this.#countLate(parts, 1);
    const p: Pending = { frames, parts, early, key: '', switches: 0, earlyKey: null, put: Promise.resolve(false), bytes: 0 };
    this.#beforeCommit++;
    const t0 = performance.now();
    this.#lastStart = t0;
    this.#assign(p);
    void p.put.then(
      () => this.#durable(t0),
      () => this.#durable(t0),
    );
    const done = this.#lastCommit.then(() => this.#settle(p));
    this.#lastCommit = done.catch(() => undefined);
    return done;
  }

  /** A part that may be acknowledged before it is recorded: plain data of a stream placed in this writer, nothing of it waiting. */
  #mayGoEarly(p: Part): boolean {
    const l = p.s.ledger;
    return !p.created && !p.deleted && !p.trimmed && p.meta === null && l !== undefined && l.moved === null && l.placedIn === this.#switches && (this.#late.get(p.s) ?? 0) === 0;
  }

  #countLate(parts: readonly Part[], by: 1 | -1): void {
    for (const p of parts) this.#late.set(p.s, (this.#late.get(p.s) ?? 0) + by);
  }

  #durable(t0: number): void {
    // The smoothed PUT time (a group's first try and its retries, as the pacing sees them).
    const ms = performance.now() - t0;
    this.#putMs = this.#putMs === 0 ? ms : 0.8 * this.#putMs + 0.2 * ms;
    this.#beforeCommit--;
    this.#wake();
  }

  /** Give the group the next object key and put it there, create-only when the store can. */
  #assign(p: Pending): void {
    p.key = this.#key(this.#counter++);
    p.switches = this.#switches;
    this.#prepareAhead();
    const trailer = groupTrailer(p.parts.map((x) => ({ stream: x.s.meta.name, off: x.off, len: x.len, from: x.from, to: x.to, early: p.early })));
    const body = [...p.frames, trailer];
    p.bytes = body.reduce((n, b) => n + b.length, 0);
    const key = p.key;
    p.put = this.#retrying(async () => {
      if (!this.#o.store.createOnly) {
        await this.#o.store.put(key, body, FRESH);
        return true;
      }
      try {
        await this.#o.store.put(key, body, IF_ABSENT);
        return true;
      } catch (err) {
        if ((err as { code?: string }).code !== 'PreconditionFailed') throw err;
      }
      // Taken: by a fence marker, or by this very put (an earlier try whose answer was lost).
      const there = await this.#o.store.get(key);
      return there.equals(Buffer.concat(body));
    });
  }

  /**
   * In group order: once the group's object is durable, answer it (early) and queue it for its
   * ledger commit, or queue it and answer it once recorded (late). A group whose key was taken by
   * a fence marker, or taken before the writer switched, goes again under a fresh key, late: from
   * the marker on, nothing of the old keys is acknowledged or recorded.
   */
  async #settle(p: Pending): Promise<ReadonlyMap<StreamState, Refusal>> {
    for (;;) {
      const created = await p.put;
      if (created && p.switches === this.#switches) break;
      // The first group to meet the marker: a new run. Its h/ mark must never pass a group of the
      // old run that a tail walk may still take (one created before the switch and not answered):
      // a walk's start, and so what it takes, then does not depend on when it reads h/.
      if (!created && p.switches === this.#switches) this.#newRun();
      if (p.early) {
        // Its early object stays where it is, and the new owner of a stream fenced meanwhile may
        // take it over: what the stream's tail walk took decides its answer (#takenOver).
        if (created) p.earlyKey = p.key;
        p.early = false;
        this.#countLate(p.parts, 1);
      }
      this.#assign(p);
    }
    if (!p.early) return new Promise((resolve, reject) => this.#enqueue({ p, resolve, reject }));
    this.#enqueue({ p, resolve: null, reject: null });
    // The ledger may fall only so far behind (etcd slow or away): then answers wait for it.
    while (this.#unrecorded > this.#maxUnrecorded && !this.#closed) await new Promise<void>((r) => this.#lagWaiters.push(r));
    return NOTHING_FENCED;
  }

  #enqueue(r: Ready): void {
    this.#queue.push(r);
    if (r.p.early) this.#unrecorded++;
    this.#pump();
  }

  /**
   * Send the next ledger commit when none is in flight: every group in the queue (≤ 32), ending
   * after the first that deletes a stream. A queue of early groups only waits up to
   * recordWindowMs for more (or until recordBatch of them): fewer, larger txns cost etcd less
   * CPU, and nobody waits for them.
   */
  #pump(): void {
    if (this.#recording || this.#queue.length === 0) return;
    let someoneWaits = false;
    for (const r of this.#queue) {
      if (r.resolve === null) continue;
      someoneWaits = true;
      break;
    }
    if (!someoneWaits && this.#queue.length < this.#recordBatch && !this.#closed) {
      this.#windowTimer ??= setTimeout(() => {
        this.#windowTimer = null;
        if (this.#recording || this.#queue.length === 0) return;
        this.#send();
      }, this.#recordWindowMs);
      return;
    }
    this.#send();
  }

  #send(): void {
    if (this.#windowTimer !== null) clearTimeout(this.#windowTimer);
    this.#windowTimer = null;
    let n = 0;
    while (n < this.#queue.length && n < OBJECTS_PER_COMMIT) if (this.#queue[n++]!.p.parts.some((p) => p.deleted && !p.created)) break;
    const batch = this.#queue.splice(0, n);
    this.#recording = true;
    this.#record(batch)
      .then(
        (fenced) => batch.forEach((r, i) => r.resolve?.(fenced[i]!)),
        (err: unknown) => batch.forEach((r) => r.reject?.(err)),
      )
      .finally(() => {
        for (const r of batch) {
          if (!r.p.early) this.#countLate(r.p.parts, -1);
          else this.#unrecorded--;
        }
        const waiters = this.#lagWaiters;
        this.#lagWaiters = [];
        for (const w of waiters) w();
        this.#recording = false;
        this.#pump();
      });
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
        const o = batchOffsets(buf, FRAME_HEADER);
        if (p.from === p.to) p.from = o.first;
        p.to = o.end;
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

  /** One ledger commit of the groups in `batch`; per group, the streams refused as fenced (late groups only: early ones were answered). */
  async #record(batch: readonly Ready[]): Promise<Array<Map<StreamState, Refusal>>> {
    const fenced = batch.map(() => new Map<StreamState, Refusal>());
    const recorded = new Map<StreamState, Recorded>();
    const objects = new Map<string, number>();
    const deletes: Array<{ group: number; p: Part }> = [];
    for (let i = 0; i < batch.length; i++) {
      const b = batch[i]!.p;
      for (const p of b.parts) {
        const moved = p.s.ledger?.moved ?? null;
        if (moved !== null) {
          fenced[i]!.set(p.s, { kind: 'moved', nodeId: moved.nodeId });
          continue;
        }
        // A stream created and deleted within one group never reached the ledger.
        if (p.deleted && p.created) continue;
        if (!p.created && p.s.ledger === undefined) {
          const moved = await this.#retrying(() => this.#resolve(p.s));
          if (moved !== null) {
            fenced[i]!.set(p.s, { kind: 'moved', nodeId: moved.nodeId });
            continue;
          }
        }
        if (p.deleted) {
          deletes.push({ group: i, p });
          continue;
        }
        const l = (p.s.ledger ??= { fence: { nodeId: this.#o.nodeId, epoch: 1 }, counter: 0, meta: p.meta ?? initialMeta(p.s), moved: null, placedIn: null });
        let r = recorded.get(p.s);
        if (r === undefined) recorded.set(p.s, (r = { rec: { stream: p.s.meta.name, fence: l.fence, entries: [] }, groups: [], trimmed: false, meta: null, placedIn: null }));
        if (p.created) r.rec.create = true;
        if (p.meta !== null) r.meta = r.rec.meta = p.meta;
        r.trimmed ||= p.trimmed;
        r.rec.entries.push({ o: b.key, counter: l.counter++, off: p.off, len: p.len, from: p.from, to: p.to });
        // The records format: an opener finds the stream's pending parts in the writer its place
        // names, whatever the store; a place is put once per writer run (not per group: that is a
        // put per stream and commit, what the format saves).
        const place = this.#o.records === true ? l.placedIn !== b.switches : this.#o.store.createOnly;
        if (!b.early && place) {
          // The stream's place in this writer: its groups after this one may go early.
          r.rec.position = b.key;
          r.placedIn = b.switches;
        }
        r.groups.push(i);
        objects.set(b.key, b.bytes);
      }
    }
    if (recorded.size > 0) {
      const t0 = performance.now();
      const last = batch[batch.length - 1]!.p.key;
      const through: RecordedThrough | undefined = this.#o.store.createOnly ? { writer: this.#writer, from: this.#from, n: Number(last.slice(this.#writer.length)) } : undefined;
      // Every group of the batch is recorded by this one call, all of its parts: its reference marker can name them all.
      // Sent again after an unanswered attempt, the commit finds out from its token that it landed (ledger.ts, CommitToken).
      const token = (this.#token ??= await this.#retrying(() => this.#o.ledger.commitToken(this.#writer)));
      const first = Number(batch[0]!.p.key.slice(this.#writer.length));
      const options = this.#o.records === true ? { token, records: { writer: this.#writer, firstObject: first } } : { markers: true, token };
      const r = await this.#retrying(() => this.#o.ledger.commitObjects(objects, [...recorded.values()].map((x) => x.rec), through, options));
      if (this.#stats !== null) observeBucket(this.#stats.ledger, COMMIT_SECONDS_BOUNDS, (performance.now() - t0) / 1000);
      const refused = new Set(r.fenced);
      // Fenced since a txn that landed unanswered: recorded or not, nobody can tell (ledger.ts, CommitResult).
      const doubtful = new Set(r.unknown ?? []);
      if ((refused.size > 0 || doubtful.size > 0) && this.#o.store.createOnly) this.#newRun();
      // Two copies of one stream in a commit (groups of its copy from before it moved away and
      // back, beside the new copy's): the ledger names the stream it refused, not the copy. The
      // copy whose fence the stream holds now was recorded; only the other was refused.
      const twice = refused.size > 0 ? namesTwice(recorded.keys()) : null;
      for (const [s, x] of recorded) {
        const l = s.ledger!;
        const refusedHere = refused.has(s.meta.name) && (twice?.has(s.meta.name) !== true || !(await this.#holdsFence(s.meta.name, l.fence)));
        if (refusedHere || doubtful.has(s.meta.name)) {
          l.moved = { nodeId: await this.#holder(s.meta.name) };
          const why: Refusal = doubtful.has(s.meta.name) ? { kind: 'unknown' } : { kind: 'moved', nodeId: l.moved.nodeId };
          for (const i of x.groups) fenced[i]!.set(s, why);
          continue;
        }
        if (x.placedIn !== null) l.placedIn = x.placedIn;
        this.snapshots.recorded(s, x.rec.entries.reduce((n, e) => n + e.len, 0));
        if (x.meta !== null) {
          l.meta = x.meta;
          // A trim's old entries leave the ledger behind the group (not on the write path).
          if (x.trimmed) void this.#o.ledger.trim(s.meta.name, l.fence, x.meta.startSeq, this.#trimOptions).catch(() => undefined);
        }
      }
    }
    for (const { group, p } of deletes) {
      const l = p.s.ledger!;
      if (!(await this.#retrying(() => this.#o.ledger.deleteStream(p.s.meta.name, l.fence)))) {
        l.moved = { nodeId: await this.#holder(p.s.meta.name) };
        fenced[group]!.set(p.s, { kind: 'moved', nodeId: l.moved.nodeId });
      }
    }
    // A fenced stream's part of a group whose early object was written before the writer
    // switched: the new owner's tail walk may have taken it there. It is then acknowledged (and
    // applied here, a copy about to be dropped), never answered `moved`, which would have the
    // client send it again.
    for (let i = 0; i < batch.length; i++) {
      const key = batch[i]!.p.earlyKey;
      if (key === null) continue;
      for (const [s, why] of fenced[i]!) {
        if (why.kind !== 'moved') continue;
        const taken = await this.#takenOver(s, key);
        if (taken === true) fenced[i]!.delete(s);
        else if (taken === null) fenced[i]!.set(s, { kind: 'unknown' });
      }
    }
    return fenced;
  }

  /**
   * Whether the tail recovery of the stream's new owner took its part of group object `key` (an
   * early object of this writer): the first tail walk recorded under a fence above ours says which
   * of this writer's numbers it walked (tail-recovery.ts); a walk later than that one starts at or
   * after where it ended, so nothing else can take it. Null when no walk is recorded within
   * takenWaitMs (the new owner is slow or gone): the outcome is unknown.
   */
  async #takenOver(s: StreamState, key: string): Promise<boolean | null> {
    const ours = s.ledger?.fence.epoch;
    if (ours === undefined) return false;
    const n = Number(key.slice(this.#writer.length));
    const until = Date.now() + this.#takenWaitMs;
    for (;;) {
      try {
        const walk = (await this.#o.ledger.tailWalks(s.meta.name)).find((w) => w.epoch > ours);
        if (walk !== undefined) return walk.w === this.#writer && walk.after < n && n < walk.end;
      } catch {
        // etcd did not answer: look again until the wait is over.
      }
      if (this.#closed || Date.now() >= until) return null;
      await sleep(TAKEN_POLL_MS);
    }
  }

  /**
   * A stream this thread has not committed for yet (the node or its shard worker restarted; a stream
   * imported after a move comes with the open's fence and counter instead, stream-import.ts): its
   * fence is read back. Ours: go on in that epoch after its last entry;
   * absent (a stream from before objects mode): taken create-only, epoch 1; another node's, or ours
   * at another epoch than this copy was imported at: moved. (A copy imported at epoch e whose
   * writes are still on their way when the stream moves away and comes back finds the fence
   * "<me>:e+2": the new open's, whose import replaces this copy; committing them there would put
   * seqs of the old copy after the ledger's.)
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
    if (fence.nodeId !== this.#o.nodeId || (s.openedEpoch !== undefined && fence.epoch !== s.openedEpoch)) return { nodeId: fence.nodeId };
    // Groups an earlier run of this writer acknowledged and did not record (it stopped): recorded now.
    await recoverTail(this.#o.ledger, this.#o.store, name, fence, undefined, this.#o.records === true ? { own: this.#writer } : null);
    // The records format: this writer's records its indexer has not taken yet name counters of this
    // epoch too (its entries will), read with the entries at one revision.
    const { entries, recorded } = this.#o.records === true ? await this.#o.ledger.pendingOf(name, this.#writer) : { entries: await this.#o.ledger.entries(name), recorded: [] };
    let counter = 0;
    for (const e of [...entries, ...recorded]) if (e.epoch === fence.epoch) counter = Math.max(counter, e.counter + 1);
    const state: StreamLedgerState = { fence, counter, meta: (await this.#o.ledger.meta(name)) ?? initialMeta(s), moved: null, placedIn: null };
    s.ledger = state;
    return null;
  }

  /** Whether the stream's fence is `fence` now (read until etcd answers). */
  async #holdsFence(stream: string, fence: Fence): Promise<boolean> {
    const cur = await this.#retrying(() => this.#o.ledger.fence(stream));
    return cur !== null && sameFence(cur, fence);
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

/** The `m/` record of a stream as this node holds it: an adopted stream starts at its served (remote) start, not its local one. */
function initialMeta(s: StreamState): LedgerMeta {
  return { meta: storedMeta(s.meta) as unknown as Record<string, unknown>, startSeq: servedStart(s), sealed: s.closed };
}

/** The stream names that two or more of `states` share (copies of one stream). */
function namesTwice(states: Iterable<StreamState>): Set<string> {
  const seen = new Set<string>();
  const out = new Set<string>();
  for (const s of states) {
    if (seen.has(s.meta.name)) out.add(s.meta.name);
    seen.add(s.meta.name);
  }
  return out;
}
