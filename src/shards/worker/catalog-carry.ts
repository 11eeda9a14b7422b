/**
 * Carrying the catalog forward, so that the index can always be rebuilt from the segments
 * alone (docs/storage.md, "Rebuilding the index").
 *
 * A stream's CREATE, CONFIG, SEAL and TRIM frames are what a rebuild needs to know it exists
 * and how; a DELETE frame is what keeps a deleted stream dead. They live in segments like any
 * frame, and the reaper deletes a segment once its *data* is dead. Before a segment holding
 * such frames goes, the shard writes a CATALOG frame (stream id 0) at the tail:
 *
 *   { nextStreamId, live: [every live stream id], streams: [state of each live stream whose
 *     catalog frames were in the doomed segments: meta, start, tail, sealed, producers] }
 *
 * and only once it is durable may the segment be deleted. `svc repair` writes one more kind,
 * marked `seqFloor`, before it moves an index aside: the index's states, applied on replay only
 * to raise each stream's next seq (a seq once acknowledged is never handed out again). A rebuild (no checkpoint in the
 * index) first collects these frames: streams they name are created up front (their data in
 * older segments is then indexed), and ids below `nextStreamId` missing from the newest `live`
 * list are dead whatever CREATE frames of theirs survive.
 */
import { FrameType, encodeFrame, parseFrame } from './frame';
import { type StoredProducer, decodeProducers, encodeProducers } from './producers';
import { type SegmentLog } from './segment-log';
import { type StoredMeta, readMeta, storedMeta } from './stream-meta';
import { type StreamState } from './stream-state';

/** One stream's state as carried. */
export interface CarriedStream {
  id: number;
  /** Stored form (stream-meta.ts). */
  meta: StoredMeta;
  startSeq: number;
  nextSeq: number;
  closed: boolean;
  lastTs: number;
  producers?: StoredProducer[];
}

export interface CatalogPayload {
  nextStreamId: number;
  /**
   * Written by `svc repair` before it moves an index aside (log-check.ts): the index's states,
   * there to keep each stream's next seq (a seq once acknowledged is never handed out again),
   * not to replace what replay found. Applied, its streams' tails only move up; their meta is
   * taken only for a stream that no surviving frame creates.
   */
  seqFloor?: true;
  /** Every live stream id when the frame was written (only in the last frame of a carry). */
  live?: number[];
  streams: CarriedStream[];
}

/** Streams per CATALOG frame: keeps each frame far below a segment. */
const STREAMS_PER_FRAME = 1000;

/** The CATALOG frames carrying `streams` (durable state) and the live id list. */
export function encodeCatalogFrames(streams: readonly StreamState[], liveIds: readonly number[], nextStreamId: number): Buffer[] {
  const carried: CarriedStream[] = streams.map((s) => {
    const c: CarriedStream = { id: s.id, meta: storedMeta(s.meta), startSeq: s.startSeq, nextSeq: s.nextSeq, closed: s.closed, lastTs: s.lastTs };
    if (s.durableProducers.size > 0) c.producers = encodeProducers(s.durableProducers);
    return c;
  });
  const frames: Buffer[] = [];
  for (let i = 0; i < carried.length || frames.length === 0; i += STREAMS_PER_FRAME) {
    const last = i + STREAMS_PER_FRAME >= carried.length;
    const payload: CatalogPayload = { nextStreamId, streams: carried.slice(i, i + STREAMS_PER_FRAME) };
    if (last) payload.live = [...liveIds];
    frames.push(encodeFrame(FrameType.Catalog, 0, Buffer.from(JSON.stringify(payload))));
  }
  return frames;
}

/** `svc repair`'s CATALOG frames keeping the index's next seqs (CatalogPayload.seqFloor); no live list: that stays the reaper's. */
export function encodeSeqFloorFrames(streams: readonly CarriedStream[], nextStreamId: number): Buffer[] {
  const frames: Buffer[] = [];
  for (let i = 0; i < streams.length; i += STREAMS_PER_FRAME) {
    const payload: CatalogPayload = { nextStreamId, seqFloor: true, streams: streams.slice(i, i + STREAMS_PER_FRAME) };
    frames.push(encodeFrame(FrameType.Catalog, 0, Buffer.from(JSON.stringify(payload))));
  }
  return frames;
}

export function decodeCatalog(payload: Buffer): CatalogPayload {
  return JSON.parse(payload.toString()) as CatalogPayload;
}

/** What a rebuild learns from every CATALOG frame before replaying (see the file comment). */
export interface CarriedCatalog {
  /** Live ids of the newest frame that lists them, with its nextStreamId; null when none. */
  live: { ids: Set<number>; below: number } | null;
  /** The earliest carried state of each stream: the stream is created from it before replay. */
  first: Map<number, CarriedStream>;
  nextStreamId: number;
}

export function collectCarried(log: SegmentLog): CarriedCatalog {
  const out: CarriedCatalog = { live: null, first: new Map(), nextStreamId: 1 };
  for (const segId of log.segments) {
    const buf = log.read(segId, 0, log.segmentSize(segId));
    for (let off = 0; off < buf.length; ) {
      const f = parseFrame(buf, off, true);
      if (f === null) break;
      off += f.size;
      if (f.type !== FrameType.Catalog) continue;
      const c = decodeCatalog(f.payload);
      out.nextStreamId = Math.max(out.nextStreamId, c.nextStreamId);
      if (c.live !== undefined) out.live = { ids: new Set(c.live), below: c.nextStreamId };
      for (const s of c.streams) if (!out.first.has(s.id)) out.first.set(s.id, s);
    }
  }
  return out;
}

/**
 * Apply a carried state to a replayed stream: never moves anything backwards. Returns whether its
 * start moved, so that the caller drops the chunks below it from the index.
 */
export function applyCarried(s: StreamState, c: CarriedStream, maxProducers: number, floorOnly = false): boolean {
  // A repair's floor (CatalogPayload.seqFloor) may be older than CONFIG frames replayed before it.
  if (!floorOnly) s.meta = readMeta(c.meta);
  s.nextSeq = s.assignedSeq = Math.max(s.nextSeq, c.nextSeq);
  s.closed = s.closing = s.closed || c.closed;
  s.lastTs = Math.max(s.lastTs, c.lastTs);
  for (const [key, p] of decodeProducers(c.producers)) if (!s.durableProducers.has(key) && s.durableProducers.size < maxProducers) s.durableProducers.set(key, p);
  if (c.startSeq <= s.startSeq) return false;
  s.startSeq = c.startSeq;
  return true;
}
