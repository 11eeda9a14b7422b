/**
 * Group commit for one shard's log: frames accepted while the previous write is in flight
 * are written together, with one write and one fdatasync, and the replies waiting on them run
 * only after that. Groups are applied strictly in the order they were started.
 *
 *   enqueue(frames) ─┐
 *   whenDurable(…) ──┴─▶ pending group ──flush()──▶ writer: the worker's commit barrier
 *                                                   (commit-barrier.ts: the log's write, and one
 *                                                   fdatasync shared with the worker's other
 *                                                   shards of the turn), or SegmentLog.write
 *                                                         │
 *                         onDurable per frame ◀───────────┤ (in order)
 *                         hooks.applied(end) ◀────────────┤
 *                         replies ◀───────────────────────┤
 *                         hooks.afterReplies(group) ◀─────┘
 *
 * Durability classes (docs/storage.md, "Durability classes"): a group whose every frame and reply
 * is of an `async` stream (hooks.asyncStream) is written without fdatasync and applied and answered
 * once written; its segments are remembered as unsynced. They are synced by the next group of a
 * `sync` stream, which then makes its own bytes durable with the segments' fdatasync rather than
 * through the sync journal (a journal record after unsynced bytes could be replayed behind a hole),
 * or by the shard's next checkpoint (syncWritten, within CHECKPOINT_EVERY_MS), whichever comes first.
 *
 * With a Replicator (objects mode, object-commit.ts) a group is first made durable elsewhere —
 * object PUT, then the fenced ledger commit, in group order — and only then written to the local
 * log, without fdatasync (the log is a cache there). Frames of streams the replicator reports
 * fenced are neither written nor applied, and their replies get the outcome `moved`.
 */
import { SvcError } from '../../errors';
import { type Location, type SegmentLog } from './segment-log';
import { type LogWrite, type LogWriter } from './commit-barrier';
import { type StreamState } from './stream-state';
import { COMMIT_FRAME_BOUNDS, COMMIT_SECONDS_BOUNDS, type CommitStats, newCommitStats, observeBucket } from '../commit-stats';

export type Reply<T> = (err: SvcError | null, result?: T) => void;

export interface PendingFrame {
  buf: Buffer;
  onDurable: ((loc: Location) => void) | null;
  /** The stream the frame belongs to. */
  s: StreamState;
  /**
   * This node's own bookkeeping, not a change of the stream (an import's frames, whose data is
   * already recorded where it came from, and a drop): kept out of anything shared beyond the
   * local log (docs/storage.md, "Imported streams").
   */
  local: boolean;
  /**
   * Called once the frame is written, synced and applied, when nothing reads its bytes any more
   * (never for a group that failed), or null: a frame built in a buffer the gateway thread gave
   * up hands the buffer back for reuse (stream-writes.ts), and its views are empty from then on.
   */
  release?: (() => void) | null;
}

export interface Group {
  /** Frames per stream, in acceptance order; streams side by side so each stream's data is contiguous. */
  frames: Map<StreamState, PendingFrame[]>;
  /** Run after the group is durable, with the error when it could not be written. */
  replies: Array<(err: SvcError | null) => void>;
  /** The stream each reply is about (null: none), side by side with `replies`: a fenced stream's replies get `moved`. */
  replyStreams: Array<StreamState | null>;
}

/**
 * Why a stream's writes in a group are not stored here: the stream moved (to that node, when
 * known), and they are not stored anywhere; or whether the new owner took them over could not be
 * learnt in time, so their outcome is unknown.
 */
export type Refusal = { kind: 'moved'; nodeId: number | null } | { kind: 'unknown' };

const newGroup = (): Group => ({ frames: new Map(), replies: [], replyStreams: [] });

/**
 * Makes a group durable beyond this node before it is written locally and applied (objects
 * mode: object-commit.ts). `replicate` calls resolve in the order they were made.
 */
export interface Replicator {
  /** Groups in flight at once (their object PUTs overlap; ledger commits stay in group order). */
  readonly maxInFlight: number;
  /** A group starts while others are in flight only when it holds at least this many bytes, or when readyForNext() (else it gathers). */
  readonly overlapMinBytes: number;
  /** A group may start beside those in flight whatever its size (objects mode: none is before its ledger commit). */
  readyForNext(): boolean;
  /** Called when readyForNext() may have turned true. */
  onReady(listener: () => void): void;
  /**
   * Resolves once the group is durable, with the streams whose writes were refused (fenced:
   * moved to another node, and the node now holding each, when known; or of unknown outcome).
   * Keeps trying while the stores are unreachable; rejects only when it can never succeed (closed).
   */
  replicate(g: Group): Promise<ReadonlyMap<StreamState, Refusal>>;
  /** A group not durable after this long has its replies answered storage_unavailable (ms). */
  readonly stallMs: number;
  /** > 0: a group starts up to this long after its first change, to gather a bigger object (ms; --objects-flush-ms). */
  readonly flushMs: number;
  /**
   * How long a group that could start now waits for its flush window (ms; ≤ 0: none), for a
   * replicator shared by several group commits (shared-replicator.ts): their windows are one, and
   * its end calls the onReady listeners, so their groups start together; absent: each group
   * commit counts flushMs from its own last start, on its own timer.
   */
  flushWait?(): number;
  /** TTL expiry moved the stream's start (no TRIM frame is logged for it): its ledger follows. */
  expired?(s: StreamState): void;
  /** The group commit's figures, where the replicator adds its own (objects mode: the ledger transactions' times). */
  report?(stats: CommitStats): void;
  /** An adopted stream's producers were replayed from `bytes` of its entries (objects mode: due for a snapshot). */
  producersReplayed?(s: StreamState, bytes: number): void;
}

const NOTHING_FENCED: ReadonlyMap<StreamState, Refusal> = new Map();

/** Where a group's frames went: a location per frame, in order, and the log's end after them. */
interface Written {
  locations: Location[];
  end: Location;
}

/** The frames' bytes, in order (a loop: see #flushNow on callbacks made per group). */
function buffersOf(frames: readonly PendingFrame[]): Buffer[] {
  const out: Buffer[] = [];
  for (const f of frames) out.push(f.buf);
  return out;
}

/** A group from its start to its answer (#flushNow). */
interface GroupRun {
  g: Group;
  /** Its frames in write order (objects mode: less those of fenced streams, once replicated). */
  order: PendingFrame[];
  /** Where its bytes begin in the log, once known: what a failed write is cut back to. */
  start: Location | null;
  /** When it started (performance.now()). */
  t0: number;
  /** Objects mode: its streams another node took meanwhile, refused instead of answered. */
  fenced: ReadonlyMap<StreamState, Refusal>;
}

/**
 * Groups whose write + fdatasync may run at once. Two in flight shorten the wait of a request
 * that arrives during an fdatasync, but they double the number of fdatasyncs, and on the
 * machines measured here (virtualised disks) each costs 0.1–0.9 ms of CPU: with 64 clients one
 * group in flight gave 13–15k durable appends/s against 10–13k with two (perf/micro/shard-append.js
 * and wrk, same run). So a second group starts only when the one waiting is large
 * (SECOND_GROUP_MIN_BYTES): then the disk's write time, not the fdatasync, dominates, and writing
 * it while the first group syncs keeps the disk busy (large Kafka produce batches; the segment
 * log alone writes 1 MB groups 1.2–1.5× faster with two in flight, perf/micro/segment-log-write.js).
 */
const MAX_IN_FLIGHT = 2;
/** A group waiting behind one in flight starts at once when it holds at least this many bytes. */
const SECOND_GROUP_MIN_BYTES = 1 << 20;

export interface GroupCommitHooks {
  /** A group could not be written or applied: the log takes no more writes (the shard's thread stops). */
  failed(err: Error): void;
  /** A group's frames are durable and applied; `end` is the log position it reaches. Runs before its replies. */
  applied(end: Location): void;
  /** After a group's replies (tail events for live readers). */
  afterReplies(g: Group): void;
  /** The stream's appends are acknowledged once written, before fdatasync (durability class `async`); absent: none is. */
  asyncStream?(s: StreamState): boolean;
}

export class GroupCommit {
  readonly #log: SegmentLog;
  readonly #hooks: GroupCommitHooks;
  #pending: Group = newGroup();
  /** Bytes of the frames in #pending. */
  #pendingBytes = 0;
  /** Groups written but not yet applied. */
  #inFlight = 0;
  /** Completion of the newest group in flight: groups are applied strictly in order. */
  #applied: Promise<void> = Promise.resolve();
  #failed: Error | null = null;
  #idleWaiters: Array<() => void> = [];
  /** Group sizes and write + fdatasync times, read by the stats call (commit-stats.ts). */
  readonly stats: CommitStats = newCommitStats();

  readonly #replicator: Replicator | null;
  /** Writes a group and makes it durable: the worker's commit barrier (commit-barrier.ts), or the log's own write + fdatasync. */
  readonly #writer: LogWriter;
  /** Groups past the replicator's stallMs and not yet durable: writes are refused meanwhile. */
  #stalled = 0;
  /** Segments holding bytes of `async` groups not yet synced. */
  readonly #unsynced = new Set<number>();
  /** One of them is a new file whose directory entry is not yet synced. */
  #unsyncedNewFile = false;
  /** `async` groups whose write is still under way. */
  #asyncWriting = 0;
  /** The newest group's write (settled either way): a sync group after async ones syncs only once they are written. */
  #lastWrite: Promise<unknown> = Promise.resolve();

  constructor(log: SegmentLog, hooks: GroupCommitHooks, replicator: Replicator | null = null, writer?: (stats: CommitStats) => LogWriter) {
    this.#log = log;
    this.#hooks = hooks;
    this.#replicator = replicator;
    this.#writer =
      writer?.(this.stats) ??
      ((bufs) =>
        log.write(bufs).then((w) => {
          this.stats.syncs++;
          return w;
        }));
    replicator?.onReady(() => this.flush());
    replicator?.report?.(this.stats);
  }

  #flushTimer: NodeJS.Timeout | null = null;
  /** When the last group started (performance.now()): the flush window counts from it. */
  #lastStart = -Infinity;

  /** Objects mode: a group has waited longer than the replicator's stallMs for the stores (new writes are refused). */
  get stalled(): boolean {
    return this.#stalled > 0;
  }

  /** The write error that stopped this log, if any: after one, the tail on disk is unknown. */
  get failed(): Error | null {
    return this.#failed;
  }

  /** Nothing accepted is waiting to be written or applied. */
  get idle(): boolean {
    return this.#inFlight === 0 && this.#pending.frames.size === 0;
  }

  enqueue(s: StreamState, buf: Buffer, onDurable: ((loc: Location) => void) | null, local = false, release: (() => void) | null = null): void {
    let list = this.#pending.frames.get(s);
    if (list === undefined) this.#pending.frames.set(s, (list = []));
    list.push({ buf, onDurable, s, local, release });
    this.#pendingBytes += buf.length;
  }

  /** Reply once the current group is durable; `s`: the stream the reply is about (refused as `moved` when it is fenced). */
  whenDurable<T>(reply: Reply<T>, result: () => T, s: StreamState | null = null): void {
    this.#pending.replies.push((err) => (err === null ? reply(null, result()) : reply(err)));
    this.#pending.replyStreams.push(s);
  }

  /** Reply at once when nothing is in flight, otherwise after what is in flight is durable. */
  afterDurable<T>(reply: Reply<T>, result: () => T, s: StreamState | null = null): void {
    if (this.idle) reply(null, result());
    else this.whenDurable(reply, result, s);
  }

  /** Start writing whatever was accepted (called once per batch of requests from the gateway). */
  flush(): void {
    const flushMs = this.#replicator?.flushMs ?? 0;
    if (flushMs > 0) {
      // --objects-flush-ms: groups start at most once per flushMs. A group after a quiet spell
      // starts at once (a lone append waits for nothing); under load each gathers what arrives
      // until flushMs after the previous one started, so a shard writes at most 1000 / flushMs
      // objects (and ledger entries) a second however its appends arrive.
      if (this.#flushTimer !== null) return;
      const shared = this.#replicator?.flushWait?.();
      const wait = shared ?? this.#lastStart + flushMs - performance.now();
      if (wait > 0) {
        // A shared window's end wakes every group commit at once (onReady), so their groups join.
        if (shared !== undefined) return;
        this.#flushTimer = setTimeout(() => {
          this.#flushTimer = null;
          this.#flushNow();
        }, wait);
        return;
      }
    }
    this.#flushNow();
  }

  #flushNow(): void {
    if (this.#inFlight >= (this.#replicator?.maxInFlight ?? MAX_IN_FLIGHT) || this.#failed !== null) return;
    // A group waiting behind one in flight starts only when it is large (objects mode: the
    // replicator says how large), or, in objects mode, once the one in flight is at its ledger commit.
    if (this.#inFlight > 0 && this.#pendingBytes < (this.#replicator?.overlapMinBytes ?? SECOND_GROUP_MIN_BYTES) && this.#replicator?.readyForNext() !== true) return;
    const g = this.#pending;
    if (g.frames.size === 0 && g.replies.length === 0) {
      if (this.#inFlight === 0) this.#notifyIdle();
      return;
    }
    this.#pending = newGroup();
    this.#pendingBytes = 0;
    this.#inFlight++;
    const order: PendingFrame[] = [];
    for (const frames of g.frames.values()) for (const f of frames) order.push(f);
    // Positions are assigned now, synchronously, so overlapping groups never collide.
    const t0 = performance.now();
    this.#lastStart = t0;
    const run: GroupRun = { g, order, start: this.#log.tail, t0, fenced: NOTHING_FENCED };
    let write: Promise<Written>;
    if (this.#replicator === null) {
      write = order.length === 0 ? Promise.resolve({ locations: [] as Location[], end: this.#log.tail }) : this.#write(g, buffersOf(order));
    } else {
      // Objects mode: durable in the object store and the ledger first; the local write follows
      // (in group order, as the replicator resolves), without fdatasync.
      run.start = null;
      const stall = this.#watchStall(g, this.#replicator.stallMs);
      write = this.#replicator.replicate(g).then((f) => this.#replicated(run, f, stall));
    }
    // The callbacks made per group are one line each; their bodies are methods: V8 keeps a
    // callback's optimized code only while one of its closures lives, and compiled the bodies
    // written inline again after every full collection (perf/README.md, "Objects mode").
    this.#applied = Promise.all([this.#applied, write]).then(
      (done) => this.#settled(run, done[1]),
      (err: Error) => this.#failedGroup(run, err),
    );
    // Each group reports its own outcome above; the chain only orders them.
    this.#applied.catch(() => undefined);
    this.#flushNow();
  }

  /** Objects mode: the group is durable in the store and the ledger (`fenced`: its streams another node took); its frames written locally, without fdatasync. */
  #replicated(run: GroupRun, fenced: ReadonlyMap<StreamState, Refusal>, stall: () => void): Promise<Written> | Written {
    stall();
    run.fenced = fenced;
    if (fenced.size > 0) run.order = run.order.filter((x) => !fenced.has(x.s));
    run.start = this.#log.tail;
    return run.order.length === 0 ? { locations: [], end: this.#log.tail } : this.#log.write(buffersOf(run.order), { sync: false });
  }

  /** A group written (and synced, or durable in the store): applied, then answered, in group order. */
  #settled(run: GroupRun, w: Written): void {
    const { g, order } = run;
    this.#inFlight--;
    if (this.#failed !== null) throw this.#failed;
    if (run.fenced.size > 0) this.#refuseFenced(g, run.fenced);
    if (order.length > 0) {
      observeBucket(this.stats.seconds, COMMIT_SECONDS_BOUNDS, (performance.now() - run.t0) / 1000);
      observeBucket(this.stats.frames, COMMIT_FRAME_BOUNDS, order.length);
    }
    try {
      for (let i = 0; i < order.length; i++) order[i]!.onDurable?.(w.locations[i]!);
      this.#hooks.applied(w.end);
    } catch (err) {
      // Durable but not applied (an index write failed): answered as failed, recovered from the log by the next thread.
      this.#fail(err as Error, g.replies);
      throw err;
    }
    for (const r of g.replies) r(null);
    this.#hooks.afterReplies(g);
    // Written, synced and applied: nothing reads the frames any more. (A failed group's are
    // not handed back: part of its write may still be under way when it is refused.)
    releaseFrames(g);
    this.flush();
  }

  /** A group whose write, sync or replication failed: its bytes cut back, its requests refused. */
  #failedGroup(run: GroupRun, err: Error): never {
    this.#inFlight--;
    // The group's bytes may be partly on disk (a full disk takes what fits): cut them, so a
    // request answered 503 is not found after recovery, and the space goes back.
    if (this.#failed === null && run.order.length > 0 && run.start !== null) this.#cutBack(run.start);
    this.#fail(err, run.g.replies);
    throw err;
  }

  /**
   * A group's write by its durability class: `async` groups written only; a `sync` group through
   * the writer (the commit barrier), or, while `async` bytes before it are unsynced, written and
   * then synced with them by the segments' own fdatasync (the log's durable bytes stay a prefix).
   */
  #write(g: Group, bufs: Buffer[]): Promise<LogWrite> {
    let write: Promise<LogWrite>;
    if (this.#isAsync(g)) {
      this.#asyncWriting++;
      write = this.#log.write(bufs, { sync: false }).then(
        (w) => {
          this.#asyncWriting--;
          this.#noteUnsynced(w);
          return w;
        },
        (err: Error) => {
          this.#asyncWriting--;
          throw err;
        },
      );
    } else if (this.#unsynced.size > 0 || this.#asyncWriting > 0) {
      const before = this.#lastWrite;
      write = this.#log.write(bufs, { sync: false }).then(async (w) => {
        await before;
        this.#noteUnsynced(w);
        await this.#syncUnsynced();
        this.stats.syncs++;
        return w;
      });
    } else {
      write = this.#writer(bufs);
    }
    this.#lastWrite = write.catch(() => undefined);
    return write;
  }

  /** Every frame and every reply of the group is of an `async` stream. */
  #isAsync(g: Group): boolean {
    const isAsync = this.#hooks.asyncStream;
    if (isAsync === undefined) return false;
    for (const s of g.frames.keys()) if (!isAsync(s)) return false;
    for (const s of g.replyStreams) if (s === null || !isAsync(s)) return false;
    return true;
  }

  #noteUnsynced(w: LogWrite): void {
    for (const l of w.locations) {
      this.#unsynced.add(l.segId);
      if (l.pos === 0) this.#unsyncedNewFile = true;
    }
  }

  async #syncUnsynced(): Promise<void> {
    const segs = [...this.#unsynced];
    const dir = this.#unsyncedNewFile;
    this.#unsynced.clear();
    this.#unsyncedNewFile = false;
    await this.#log.sync(segs);
    if (dir) this.#log.syncDirectory();
  }

  /** `async` bytes written and not yet synced (the checkpoint syncs them first: syncWritten). */
  get unsynced(): boolean {
    return this.#unsynced.size > 0;
  }

  /**
   * fdatasync, on this thread, every segment holding `async` bytes written so far (the shard's
   * checkpoint, before it refers to them). A failure stops the log like a failed group.
   */
  syncWritten(): void {
    if (this.#unsynced.size === 0) return;
    const segs = [...this.#unsynced];
    const dir = this.#unsyncedNewFile;
    this.#unsynced.clear();
    this.#unsyncedNewFile = false;
    try {
      this.#log.syncNow(segs);
      if (dir) this.#log.syncDirectory();
      this.stats.syncs++;
    } catch (err) {
      this.#fail(err as Error, []);
      throw err;
    }
  }

  /**
   * Objects mode: when the group is not durable within `ms` (etcd or the object store
   * unreachable), answer its replies and those of the group waiting behind it
   * storage_unavailable now — their outcome is unknown, as after a timeout — and refuse new
   * writes until it is durable. The group itself goes on and is applied once the stores answer.
   * Returns the function that stops the watch.
   */
  #watchStall(g: Group, ms: number): () => void {
    let stalled = false;
    const timer = setTimeout(() => {
      stalled = true;
      this.#stalled++;
      const e = SvcError.refused({ kind: 'maybe_written' }, `the object store or the ledger did not answer within ${ms} ms; the write may still be stored: retry it as the same write`);
      for (const grp of [g, this.#pending]) {
        const replies = grp.replies;
        grp.replies = replies.map(() => () => undefined);
        for (const r of replies) r(e);
      }
    }, ms);
    return () => {
      clearTimeout(timer);
      if (stalled) this.#stalled--;
    };
  }

  /** Replies about fenced streams are answered `moved`, or storage_unavailable when their outcome is unknown (and will not be answered again). */
  #refuseFenced(g: Group, fenced: ReadonlyMap<StreamState, Refusal>): void {
    for (let i = 0; i < g.replies.length; i++) {
      const s = g.replyStreams[i];
      const why = s === null || s === undefined ? undefined : fenced.get(s);
      if (why === undefined) continue;
      const r = g.replies[i]!;
      g.replies[i] = () => undefined;
      r(
        why.kind === 'moved'
          ? SvcError.refused({ kind: 'moved', nodeId: why.nodeId }, `stream ${s!.meta.name} moved to another node`)
          : new SvcError('storage_unavailable', `stream ${s!.meta.name} moved to another node, and whether this write was stored before the move is unknown`),
      );
    }
  }

  /** The log's tail is now unknown: stop taking writes, answer everything waiting, tell the shard. */
  #fail(err: Error, replies: Array<(err: SvcError | null) => void>): void {
    const first = this.#failed === null;
    this.#failed ??= err;
    const e = new SvcError('storage_unavailable', `storage write failed: ${this.#failed.message}`, (err as NodeJS.ErrnoException).code === 'ENOSPC' ? { reason: 'disk_full' } : undefined);
    for (const r of replies) r(e);
    const rest = this.#pending;
    this.#pending = newGroup();
    this.#pendingBytes = 0;
    for (const r of rest.replies) r(e);
    this.#notifyIdle();
    if (first) this.#hooks.failed(err);
  }

  /** Cut the log back to where a failed group began (best effort: recovery also cuts a torn tail). */
  #cutBack(start: Location): void {
    const tail = this.#log.tail;
    try {
      for (let seg = tail.segId; seg > start.segId; seg--) this.#log.truncateTail(seg, 0);
      this.#log.truncateTail(start.segId, start.pos);
    } catch {
      // The disk refused even that; the next start cuts the torn tail.
    }
  }

  /** Resolves when everything accepted so far has been written and applied (or the log failed). */
  async drain(): Promise<void> {
    this.flush();
    while (this.#failed === null && (this.#inFlight > 0 || this.#pending.frames.size > 0 || this.#pending.replies.length > 0)) {
      await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
      this.flush();
    }
  }

  #notifyIdle(): void {
    const w = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const f of w) f();
  }
}

/** The group's frames are no longer used: hand back the buffers they were built in. */
function releaseFrames(g: Group): void {
  for (const frames of g.frames.values()) {
    for (const f of frames) {
      const release = f.release;
      if (release === undefined || release === null) continue;
      f.release = null;
      release();
    }
  }
}
