/**
 * Which stream ids the catalog frames of each segment name (catalog-carry.ts), known without
 * reading the segment when it dies.
 *
 * Before, the dead-segment finder read every dead segment whole, on the shard worker, to learn
 * whether it held CREATE, CONFIG, SEAL, TRIM, DELETE or CATALOG frames. A stream of 512 MiB
 * moving away from a node (objects mode drops its local copy) made eight 64 MiB segments dead at
 * once, and the worker spent 1–1.7 s in one synchronous read of them: every request of its
 * shards waited, a transfer's open among them (test/cluster/move-size.test.ts).
 *
 *   SegmentLog.write ──onWrite(segId, pos, bufs)──▶ written(): frame headers walked at layout,
 *                                                   ids of the catalog frames kept per segment
 *   segment written from its first byte by this process ──▶ known: idsIn() answers at once
 *   any other (present at open) ──▶ unknown: idsIn() scans it in steps, reading at most the budget's
 *                               bytes (headers only; a CATALOG frame's payload is read), so a
 *                               maintenance tick never holds the worker for a whole segment
 */
import { FRAME_HEADER, FrameType, LAST_TYPE } from './frame';
import { decodeCatalog } from './catalog-carry';
import { type SegmentLog } from './segment-log';

/** Bytes read per step of a scan. */
const BLOCK = 1 << 20;

/** Bytes a caller lets scans read (shared by the calls of one maintenance; spent as they read). */
export interface ScanBudget {
  bytes: number;
}

/** An unfinished scan: the next frame's position and the ids found so far. */
interface Scan {
  pos: number;
  ids: Set<number>;
}

export class CatalogMarks {
  /** Segments whose every frame was seen: the ids their catalog frames name (empty: none). */
  readonly #known = new Map<number, Set<number>>();
  readonly #scans = new Map<number, Scan>();

  /** Buffers laid out at `pos` of `segId` (whole frames each): their catalog frames are noted. */
  written(segId: number, pos: number, bufs: readonly Buffer[]): void {
    let ids = this.#known.get(segId);
    if (ids === undefined) {
      // A segment this process did not write from its start stays unknown (scanned when it dies).
      if (pos !== 0) return;
      ids = new Set();
      this.#known.set(segId, ids);
    }
    for (const b of bufs) {
      if (!noteFrames(b, ids)) {
        // Not whole frames (never expected): the segment is read when it dies, as before.
        this.#known.delete(segId);
        return;
      }
    }
  }

  /**
   * The ids the catalog frames of sealed segment `segId` name (null: it holds none), or
   * `undefined` when a scan of it is under way and the budget is spent: ask again at the next
   * maintenance.
   */
  idsIn(log: SegmentLog, segId: number, budget: ScanBudget): Set<number> | null | undefined {
    let ids = this.#known.get(segId);
    if (ids === undefined) {
      ids = this.#scan(log, segId, budget);
      if (ids === undefined) return undefined;
    }
    return ids.size === 0 ? null : ids;
  }

  /** A deleted segment is forgotten. */
  forget(segId: number): void {
    this.#known.delete(segId);
    this.#scans.delete(segId);
  }

  #scan(log: SegmentLog, segId: number, budget: ScanBudget): Set<number> | undefined {
    let sc = this.#scans.get(segId);
    if (sc === undefined) {
      sc = { pos: 0, ids: new Set() };
      this.#scans.set(segId, sc);
    }
    const size = log.segmentSize(segId);
    while (sc.pos < size) {
      if (budget.bytes <= 0) return undefined;
      const buf = log.read(segId, sc.pos, Math.min(BLOCK, size - sc.pos));
      budget.bytes -= buf.length;
      const step = walk(buf, sc.ids);
      if (step.kind === 'end') {
        // Unreadable from here: the rest is skipped (recovery and `svc check` report it).
        sc.pos = size;
      } else if (step.kind === 'catalog') {
        // A CATALOG frame running past the block: read whole.
        const whole = log.read(segId, sc.pos + step.off, step.size);
        budget.bytes -= whole.length;
        if (whole.length < step.size || !noteFrames(whole, sc.ids)) sc.pos = size;
        else sc.pos += step.off + step.size;
      } else if (step.next === 0) {
        // Less than a frame header left: a torn end.
        sc.pos = size;
      } else sc.pos += step.next;
    }
    this.#scans.delete(segId);
    this.#known.set(segId, sc.ids);
    return sc.ids;
  }
}

/** Note the catalog frames of `buf` (whole frames); false when it is not whole frames. */
function noteFrames(buf: Buffer, ids: Set<number>): boolean {
  const step = walk(buf, ids);
  return step.kind === 'next' && step.next === buf.length;
}

type Step =
  /** Frames walked up to `next` (from the start of the buffer; past its end when a data frame runs on). */
  | { kind: 'next'; next: number }
  /** A CATALOG frame at `off`, `size` bytes, runs past the buffer. */
  | { kind: 'catalog'; off: number; size: number }
  /** Not a frame at some point: nothing after it is readable. */
  | { kind: 'end' };

/** Walk the frame headers of `buf` from 0, adding the ids of catalog frames to `ids`. */
function walk(buf: Buffer, ids: Set<number>): Step {
  let off = 0;
  while (off + FRAME_HEADER <= buf.length) {
    const len = buf.readUInt32BE(off);
    const type = buf[off + 8]!;
    if (len < 5 || type < FrameType.Data || type > LAST_TYPE) return { kind: 'end' };
    const end = off + 8 + len;
    if (type === FrameType.Catalog) {
      if (end > buf.length) return { kind: 'catalog', off, size: end - off };
      try {
        for (const c of decodeCatalog(buf.subarray(off + FRAME_HEADER, end)).streams) ids.add(c.id);
      } catch {
        return { kind: 'end' };
      }
    } else if (type !== FrameType.Data && type !== FrameType.Pad) ids.add(buf.readUInt32BE(off + 9));
    off = end;
  }
  return { kind: 'next', next: off };
}
