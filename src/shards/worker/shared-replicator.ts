/**
 * One replicator for all the shards of a worker thread (objects mode): the groups its shards start
 * in one event-loop turn go to the object store as one group object — one PUT, one part table, one
 * place in the ledger commit — as the commit barrier makes them durable together in single-node
 * mode (commit-barrier.ts). Streams hash to 8 shards by default and a small machine runs them all
 * on one worker: appends spread over many streams then made one object per shard and flush window,
 * about 3 frames each against some 20 for one stream, and each object costs a PUT, its syncs and
 * its ledger `o/` record (perf/RESULTS.md, "Objects mode: a store with S3's latency").
 *
 *   shard k's GroupCommit ──replicate(g)──▶ the turn's batch (the first one starts the flush window)
 *   end of the turn (setImmediate) ──▶ groups joined, in batch order, while no stream repeats
 *       (a shard's next group of the same turn starts the next join, after it)
 *       ──▶ ObjectCommit.replicate(joined), one after another (they settle in that order)
 *       ──▶ every group of a join answered with the join's refusals (each shard looks up its own streams)
 *
 * The shards share one flush window (--objects-flush-ms, flushWait()): a group that may start while
 * a batch gathers joins it, and the others wait out the window from the last batch's start, so
 * under load the shards' groups start in the same turn and join; a lone append still starts at once.
 */
import { type CommitStats } from '../commit-stats';
import { type Group, type PendingFrame, type Refusal, type Replicator } from './group-commit';
import { type ObjectCommit } from './object-commit';
import { type StreamState } from './stream-state';

type Refusals = ReadonlyMap<StreamState, Refusal>;

interface Member {
  g: Group;
  resolve(r: Refusals): void;
  reject(err: unknown): void;
}

export class SharedReplicator implements Replicator {
  readonly #inner: ObjectCommit;
  #batch: Member[] = [];
  #lastStart = -Infinity;
  #reported = false;
  /** The group commits' wake-ups (GroupCommit.flush): called at the end of the shared flush window. */
  readonly #listeners: Array<() => void> = [];
  #windowTimer: NodeJS.Timeout | null = null;

  constructor(inner: ObjectCommit) {
    this.#inner = inner;
  }

  get maxInFlight(): number {
    return this.#inner.maxInFlight;
  }

  get overlapMinBytes(): number {
    return this.#inner.overlapMinBytes;
  }

  get stallMs(): number {
    return this.#inner.stallMs;
  }

  get flushMs(): number {
    return this.#inner.flushMs;
  }

  /**
   * One flush window for every shard: a group joins the batch gathering in this turn, else waits
   * out flushMs from the last batch's start. One timer ends the window for all of them (their own
   * timers, set a little apart, could fire in different turns and split the object again).
   */
  flushWait(): number {
    if (this.#batch.length > 0) return 0;
    const wait = this.#lastStart + this.#inner.flushMs - performance.now();
    if (wait > 0 && this.#windowTimer === null) {
      this.#windowTimer = setTimeout(() => {
        this.#windowTimer = null;
        for (const l of this.#listeners) l();
      }, Math.ceil(wait));
    }
    return wait;
  }

  readyForNext(): boolean {
    return this.#inner.readyForNext();
  }

  onReady(listener: () => void): void {
    this.#listeners.push(listener);
    this.#inner.onReady(listener);
  }

  /** The ledger's times go into the first shard's figures only: the node's metrics sum the shards. */
  report(stats: CommitStats): void {
    if (this.#reported) return;
    this.#reported = true;
    this.#inner.report(stats);
  }

  expired(s: StreamState): void {
    this.#inner.expired(s);
  }

  producersReplayed(s: StreamState, bytes: number): void {
    this.#inner.producersReplayed(s, bytes);
  }

  replicate(g: Group): Promise<Refusals> {
    return new Promise<Refusals>((resolve, reject) => {
      if (this.#batch.length === 0) {
        this.#lastStart = performance.now();
        setImmediate(() => this.#run());
      }
      this.#batch.push({ g, resolve, reject });
    });
  }

  #run(): void {
    const batch = this.#batch;
    this.#batch = [];
    for (let i = 0; i < batch.length; ) {
      const members: Member[] = [];
      const frames = new Map<StreamState, PendingFrame[]>();
      for (; i < batch.length; i++) {
        const m = batch[i]!;
        if (members.length > 0 && [...m.g.frames.keys()].some((s) => frames.has(s))) break;
        for (const [s, list] of m.g.frames) frames.set(s, list);
        members.push(m);
      }
      const joined: Group = members.length === 1 ? members[0]!.g : { frames, replies: [], replyStreams: [] };
      let done: Promise<Refusals>;
      try {
        done = this.#inner.replicate(joined);
      } catch (err) {
        done = Promise.reject(err);
      }
      done.then(
        (r) => members.forEach((m) => m.resolve(r)),
        (err: unknown) => members.forEach((m) => m.reject(err)),
      );
    }
  }
}
