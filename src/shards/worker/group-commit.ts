/**
 * Group commit for one shard's log: frames accepted while the previous write is in flight
 * are written together, with one write and one fdatasync, and the replies waiting on them run
 * only after that. Groups are applied strictly in the order they were started.
 *
 *   enqueue(frames) ─┐
 *   whenDurable(…) ──┴─▶ pending group ──flush()──▶ SegmentLog.write (write + fdatasync)
 *                                                         │
 *                         onDurable per frame ◀───────────┤ (in order)
 *                         hooks.applied(end) ◀────────────┤
 *                         replies ◀───────────────────────┤
 *                         hooks.afterReplies(group) ◀─────┘
 */
import { SvcError } from '../../errors';
import { type Location, type SegmentLog } from './segment-log';
import { type StreamState } from './stream-state';
import { COMMIT_FRAME_BOUNDS, COMMIT_SECONDS_BOUNDS, type CommitStats, newCommitStats, observeBucket } from '../commit-stats';

export type Reply<T> = (err: SvcError | null, result?: T) => void;

interface PendingFrame {
  buf: Buffer;
  onDurable: ((loc: Location) => void) | null;
  /**
   * This node's own bookkeeping, not a change of the stream (an import's frames, whose data is
   * already recorded where it came from, and a drop): kept out of anything shared beyond the
   * local log (docs/storage.md, "Imported streams").
   */
  local: boolean;
}

export interface Group {
  /** Frames per stream, in acceptance order; streams side by side so each stream's data is contiguous. */
  frames: Map<StreamState, PendingFrame[]>;
  /** Run after the group is durable, with the error when it could not be written. */
  replies: Array<(err: SvcError | null) => void>;
}

const newGroup = (): Group => ({ frames: new Map(), replies: [] });

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

  constructor(log: SegmentLog, hooks: GroupCommitHooks) {
    this.#log = log;
    this.#hooks = hooks;
  }

  /** The write error that stopped this log, if any: after one, the tail on disk is unknown. */
  get failed(): Error | null {
    return this.#failed;
  }

  /** Nothing accepted is waiting to be written or applied. */
  get idle(): boolean {
    return this.#inFlight === 0 && this.#pending.frames.size === 0;
  }

  enqueue(s: StreamState, buf: Buffer, onDurable: ((loc: Location) => void) | null, local = false): void {
    let list = this.#pending.frames.get(s);
    if (list === undefined) this.#pending.frames.set(s, (list = []));
    list.push({ buf, onDurable, local });
    this.#pendingBytes += buf.length;
  }

  /** Reply once the current group is durable. */
  whenDurable<T>(reply: Reply<T>, result: () => T): void {
    this.#pending.replies.push((err) => (err === null ? reply(null, result()) : reply(err)));
  }

  /** Reply at once when nothing is in flight, otherwise after what is in flight is durable. */
  afterDurable<T>(reply: Reply<T>, result: () => T): void {
    if (this.idle) reply(null, result());
    else this.whenDurable(reply, result);
  }

  /** Start writing whatever was accepted (called once per batch of requests from the gateway). */
  flush(): void {
    if (this.#inFlight >= MAX_IN_FLIGHT || this.#failed !== null) return;
    if (this.#inFlight > 0 && this.#pendingBytes < SECOND_GROUP_MIN_BYTES) return;
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
    const start = this.#log.tail;
    const t0 = performance.now();
    const write = order.length === 0 ? Promise.resolve({ locations: [] as Location[], end: this.#log.tail }) : this.#log.write(order.map((f) => f.buf));
    this.#applied = Promise.all([this.#applied, write]).then(
      ([, w]) => {
        this.#inFlight--;
        if (this.#failed !== null) throw this.#failed;
        if (order.length > 0) {
          observeBucket(this.stats.seconds, COMMIT_SECONDS_BOUNDS, (performance.now() - t0) / 1000);
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
        this.flush();
      },
      (err: Error) => {
        this.#inFlight--;
        // The group's bytes may be partly on disk (a full disk takes what fits): cut them, so a
        // request answered 503 is not found after recovery, and the space goes back.
        if (this.#failed === null && order.length > 0) this.#cutBack(start);
        this.#fail(err, g.replies);
        throw err;
      },
    );
    // Each group reports its own outcome above; the chain only orders them.
    this.#applied.catch(() => undefined);
    this.flush();
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
