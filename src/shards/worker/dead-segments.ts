/**
 * Finding and deleting a shard's dead segments (ARCHITECTURE.md, "Storage"): a sealed segment
 * whose data trim, expiry and delete made all dead is marked destroyed, and the reaper deletes it
 * after a synced checkpoint. A segment holding catalog frames (create, config, seal, trim,
 * delete) goes only after a CATALOG frame carrying the live streams' state is durable at the
 * tail (catalog-carry.ts), so the index can always be rebuilt from the segments alone.
 *
 *   trim / expiry / delete ──▶ changed() ──▶ find (maintenance): not named by the index?
 *        ├─ data only ─────────────────────────────▶ destroyed ──▶ reap(): synced checkpoint, delete
 *        └─ holds catalog frames ──▶ CATALOG frame ──(durable)──▶ carried ──▶ destroyed
 *
 * Which segments hold catalog frames is known from their writes (catalog-marks.ts); a segment
 * written before this start is scanned, a bounded number of bytes per maintenance.
 */
import { encodeCatalogFrames } from './catalog-carry';
import { CatalogMarks } from './catalog-marks';
import { type Checkpointer } from './checkpointer';
import { type ChunkIndex } from './chunk-index';
import { type GroupCommit } from './group-commit';
import { type SegmentLog } from './segment-log';
import { readMeta, type StreamMeta } from './stream-meta';
import { type StreamState, newStreamState } from './stream-state';

/** What the segment bookkeeping asks of its shard. */
export interface DeadSegmentsContext {
  log: SegmentLog;
  index: ChunkIndex;
  commit: GroupCommit;
  checkpointer: Checkpointer;
  /** Log position applied so far: only segments wholly behind it are considered. */
  durableEnd(): { segId: number };
  streams(): Iterable<StreamState>;
  nextStreamId(): number;
  /** A stream's meta as of accepted changes (what a CATALOG frame carries). */
  metaOf(s: StreamState): StreamMeta;
}

/** Bytes of segments written before this start read per maintenance, to find their catalog frames. */
const SCAN_BUDGET = 8 << 20;

export class DeadSegments {
  readonly #x: DeadSegmentsContext;
  readonly #marks: CatalogMarks;
  /** Sealed segments whose data is all dead, waiting for the reaper. */
  readonly #destroyed = new Set<number>();
  /** Sealed segments whose catalog frames (if any) are carried forward: they may be destroyed. */
  readonly #carried = new Set<number>();
  #carrying = false;
  #checkNeeded = true;
  /** Group-commit key of the shard's own frames (CATALOG): not a stream. */
  readonly #shardFrames = newStreamState(0, readMeta({ name: '', contentType: '', ttlSeconds: null, expiresAtMs: null, createdAtMs: 0 }));

  constructor(x: DeadSegmentsContext) {
    this.#x = x;
    this.#marks = new CatalogMarks();
    x.log.onWrite = (segId, pos, bufs) => this.#marks.written(segId, pos, bufs);
  }

  /** Segments marked destroyed and not reaped yet (destroyedObjectBacklog). */
  get backlog(): number {
    return this.#destroyed.size;
  }

  /** Data died (trim, expiry, delete) or a carry finished: look again at the next maintenance. */
  changed(): void {
    this.#checkNeeded = true;
  }

  /** Maintenance: mark the segments found dead since the last look. */
  maintain(): void {
    if (this.#checkNeeded) this.#find();
  }

  /** Delete the destroyed segments; returns how many. */
  reap(): number {
    const x = this.#x;
    if (this.#destroyed.size === 0 || x.commit.failed !== null) return 0;
    x.checkpointer.appliedChanges += this.#destroyed.size;
    // The checkpoint must be durable past these segments before they go: replay never needs them then.
    x.checkpointer.write(true);
    let n = 0;
    for (const segId of this.#destroyed) {
      x.log.deleteSegment(segId);
      this.#marks.forget(segId);
      n++;
    }
    this.#destroyed.clear();
    return n;
  }

  #find(): void {
    const x = this.#x;
    this.#checkNeeded = false;
    // The store must hold every applied chunk before it is asked which segments are named.
    x.checkpointer.write(false);
    const carry: number[] = [];
    const carryIds = new Set<number>();
    const end = x.durableEnd();
    const budget = { bytes: SCAN_BUDGET };
    // Only segments wholly behind the applied end: a newer one may hold frames still in flight, not yet indexed.
    for (const segId of x.log.sealedSegments()) {
      if (segId >= end.segId || this.#destroyed.has(segId) || x.index.segmentInUse(segId)) continue;
      // A segment holding catalog frames goes only after they are carried forward (catalog-carry.ts).
      if (!this.#carried.has(segId)) {
        const ids = this.#marks.idsIn(x.log, segId, budget);
        if (ids === undefined) {
          // Still being scanned: looked at again at the next maintenance.
          this.#checkNeeded = true;
          continue;
        }
        if (ids !== null) {
          carry.push(segId);
          for (const id of ids) carryIds.add(id);
          continue;
        }
        this.#carried.add(segId);
      }
      this.#destroyed.add(segId);
    }
    if (carry.length > 0) this.#carryCatalog(carry, carryIds);
  }

  /**
   * Write the catalog of `ids` (the live ones) and the live id list at the tail; once durable,
   * the segments may go. Frames accepted earlier may land before or after it in the log: it
   * carries the accepted meta (a CONFIG frame after it sets the same fields again) and the
   * durable start, tail and seal, which replay only ever moves forward (applyCarried).
   */
  #carryCatalog(segs: number[], ids: Set<number>): void {
    const x = this.#x;
    if (this.#carrying) {
      this.#checkNeeded = true;
      return;
    }
    const streams: StreamState[] = [];
    const liveIds: number[] = [];
    for (const s of x.streams()) {
      // A stream whose delete is accepted is left out: its DELETE frame is in this group or an earlier one.
      if (s.deleted) continue;
      // One whose create is not durable yet is live: its CREATE frame precedes this one in the log.
      liveIds.push(s.id);
      if (s.durable && ids.has(s.id)) streams.push({ ...s, meta: x.metaOf(s) });
    }
    this.#carrying = true;
    const frames = encodeCatalogFrames(streams, liveIds, x.nextStreamId());
    frames.forEach((f, i) =>
      x.commit.enqueue(this.#shardFrames, f, i < frames.length - 1 ? null : () => {
        this.#carrying = false;
        x.checkpointer.appliedChanges++;
        for (const segId of segs) this.#carried.add(segId);
        this.#checkNeeded = true;
      }),
    );
    x.commit.flush();
  }
}
