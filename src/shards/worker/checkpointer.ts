/**
 * A shard's checkpoint: the catalog entries and chunk index entries changed since the last one,
 * written to RocksDB with the log position they are complete up to (catalog-codec.ts).
 *
 *   applied group ──▶ dirty streams, dirty chunks, index ops ──(≤ CHECKPOINT_EVERY_MS, or sooner
 *                                                             at CHECKPOINT_MAX_OPS; one shard of
 *                                                             the worker per turn)──▶ one store write
 *
 * Checkpoints are batched: a RocksDB write per group commit cost more worker CPU than the
 * append itself. The log is the write-ahead log, so a later checkpoint only means a longer
 * replay after a crash (at most CHECKPOINT_EVERY_MS of log), never lost data.
 *
 * It also keeps the shard's count of applied metadata changes (its part of appliedIndex), which
 * the checkpoint stores.
 */
import { CHECKPOINT_KEY, encodeCheckpoint, encodeStream, putChunk, streamKey } from './catalog-codec';
import { type KvOp, type KvStore } from './kv-store';
import { type Location } from './segment-log';
import { type Chunk, type StreamState } from './stream-state';

/**
 * Longest time the RocksDB checkpoint lags the applied log: a crash replays at most this much log
 * and loses at most this much of TTL renewals, which are not logged. Short, so that each batch is
 * small: a checkpoint holds the worker's appends back while it runs, and appends do not rewrite
 * catalog entries (stream-writes.ts), so batching longer saves little (measured at 1 s: the same
 * W2 rate, p99 of 8 connections 7.6 ms against 2.7).
 */
export const CHECKPOINT_EVERY_MS = 100;
/**
 * Index writes that trigger a checkpoint before its time. A checkpoint is one synchronous RocksDB
 * batch on the worker's thread (~1.3 µs a write), which holds back every append of the worker
 * while it runs: 1,024 bounds that to a few ms. (At 4,096 and a 1 s interval W2's p99 was 65 ms.)
 */
const CHECKPOINT_MAX_OPS = 1024;

/** What a checkpoint records besides the dirty entries: asked when it is written. */
export interface CheckpointSource {
  /** End of the log as far as groups have been applied. */
  durableEnd(): Location;
  /**
   * Make every log byte written so far durable (fdatasync, on this thread) before the checkpoint
   * refers to it: groups of `async` streams are applied once written, not synced (group-commit.ts),
   * and an index that pointed past the synced log could outlive the bytes after a power loss. It
   * is also what bounds how long an `async` append stays unsynced: CHECKPOINT_EVERY_MS after its
   * group (docs/storage.md, "Durability classes").
   */
  syncLog?(): void;
  nextStreamId(): number;
  stream(id: number): StreamState | undefined;
  /** False after a storage failure: a timed checkpoint is skipped then. */
  healthy(): boolean;
}

export class Checkpointer {
  readonly #store: KvStore;
  readonly #source: CheckpointSource;
  #kvOps: KvOp[];
  readonly #dirty = new Set<StreamState>();
  /** Chunks changed since the last checkpoint, with their stream id. */
  readonly #dirtyChunks = new Map<Chunk, number>();
  #timer: NodeJS.Timeout | null = null;
  /** Metadata-relevant changes applied (the shard's part of appliedIndex; kept in the checkpoint). */
  appliedChanges: number;

  /** `ops`: index writes recovery left to do; `appliedChanges`: the count recovery reached. */
  constructor(store: KvStore, source: CheckpointSource, ops: KvOp[], appliedChanges: number) {
    this.#store = store;
    this.#source = source;
    this.#kvOps = ops;
    this.appliedChanges = appliedChanges;
  }

  /** The stream's catalog entry is written with the next checkpoint. */
  streamChanged(s: StreamState): void {
    this.#dirty.add(s);
  }

  /** A chunk added or changed (a merged chunk is the same object appended to many times: written once). */
  chunkChanged(c: Chunk, streamId: number): void {
    this.#dirtyChunks.set(c, streamId);
  }

  /** A deleted stream: its catalog entry goes with the next checkpoint instead of being written. */
  streamDeleted(s: StreamState): void {
    this.#dirty.delete(s);
    this.#kvOps.push({ type: 'del', key: streamKey(s.id) });
  }

  /** Chunks dropped from a stream's index must not be written back by a pending put. */
  forgetDropped(s: StreamState): void {
    for (const [c, sid] of this.#dirtyChunks) if (sid === s.id && !s.recent.includes(c)) this.#dirtyChunks.delete(c);
  }

  /** Checkpoint within CHECKPOINT_EVERY_MS (in the next turns when CHECKPOINT_MAX_OPS are waiting). */
  soon(): void {
    if (this.#timer === null) {
      // appliedIndex counts each checkpoint when it is decided, so the figure is final when the
      // change that caused it is acknowledged (the write itself follows within CHECKPOINT_EVERY_MS).
      this.appliedChanges++;
      this.#timer = setTimeout(() => Checkpointer.#enqueue(this), CHECKPOINT_EVERY_MS);
      this.#timer.unref();
    }
    if (this.#kvOps.length + this.#dirtyChunks.size >= CHECKPOINT_MAX_OPS) Checkpointer.#enqueue(this);
  }

  /**
   * Checkpoints that are due, written one per event-loop turn of the worker. The shards of a
   * worker take their first change in the same turn, so their timers fire in the same turn too,
   * and under appends spread evenly they reach CHECKPOINT_MAX_OPS together: written at once, their
   * batches held every append of the worker back for all of them.
   */
  static readonly #due = new Set<Checkpointer>();
  static #draining = false;

  static #enqueue(c: Checkpointer): void {
    Checkpointer.#due.add(c);
    if (Checkpointer.#draining) return;
    Checkpointer.#draining = true;
    setImmediate(Checkpointer.#drain);
  }

  static readonly #drain = (): void => {
    const [c] = Checkpointer.#due;
    try {
      if (c !== undefined) {
        Checkpointer.#due.delete(c);
        c.#writeDue();
      }
    } finally {
      if (Checkpointer.#due.size > 0) setImmediate(Checkpointer.#drain);
      else Checkpointer.#draining = false;
    }
  };

  /** The checkpoint decided, unless one was written since (a sync write). */
  #writeDue(): void {
    if (this.#timer === null) return;
    if (this.#source.healthy()) this.write(false);
    else this.#timer = null;
  }

  /** Write the checkpoint now (`sync`: durable before it returns, as the reaper and close need). */
  write(sync: boolean): void {
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    /** Streams whose recent chunks are all stored after this write: they keep only their last. */
    const stored = new Set<StreamState>();
    /** The R entries this write adds (noted on their streams once written). */
    const indexed: Array<[StreamState, number]> = [];
    for (const [c, sid] of this.#dirtyChunks) {
      // The stream's R entry of the segment goes with its first chunk there only (catalog-codec.ts).
      const s = this.#source.stream(sid);
      const inSegment = s !== undefined && s.indexedSegId === c.segId;
      putChunk(this.#kvOps, sid, c, inSegment);
      if (s === undefined) continue;
      if (!inSegment) {
        s.indexedSegId = c.segId;
        indexed.push([s, c.segId]);
      }
      stored.add(s);
    }
    this.#dirtyChunks.clear();
    for (const s of this.#dirty) this.#kvOps.push({ type: 'put', key: streamKey(s.id), value: encodeStream(s) });
    this.#dirty.clear();
    this.#source.syncLog?.();
    const end = this.#source.durableEnd();
    this.#kvOps.push({ type: 'put', key: CHECKPOINT_KEY, value: encodeCheckpoint({ segId: end.segId, pos: end.pos, nextStreamId: this.#source.nextStreamId(), appliedChanges: this.appliedChanges }) });
    const ops = this.#kvOps;
    this.#kvOps = [];
    try {
      this.#store.write(ops, sync);
    } catch (err) {
      // Not written: the next checkpoint writes those R entries again.
      for (const [st, segId] of indexed) if (st.indexedSegId === segId) st.indexedSegId = -1;
      throw err;
    }
    for (const s of stored) if (s.recent.length > 1) s.recent = s.recent.slice(-1);
  }
}
