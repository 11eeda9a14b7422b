/**
 * Retention: a stream with a TTL drops records older than the TTL; a stream with an absolute
 * expiry is removed when it passes. Records expire per batch (a batch goes once its newest
 * record is older than the TTL; an HTTP append is one batch stamped with one time), the way
 * Kafka's retention works per segment, only finer.
 *
 * TTL expiry writes nothing to the log: it is derived from the record timestamps, so after a
 * restart the next sweep reaches the same start again.
 */
import { readBatchHeader } from '../../util/record-batch';
import { FRAME_HEADER, FrameType } from './frame';
import { type SegmentLog } from './segment-log';
import { type StreamState, isExpired } from './stream-state';

/** Bytes of frame and batch header to read to learn a batch's seqs and timestamps. */
const BATCH_PEEK = FRAME_HEADER + 61;

export interface SweepResult {
  /** Streams past their absolute expiry: the shard deletes them. */
  expiredStreams: StreamState[];
  /** Streams whose start moved, with the index keys (chunk base seqs) that no longer exist. */
  trimmed: Map<StreamState, number[]>;
}

export function sweepExpired(log: SegmentLog, streams: Iterable<StreamState>, now: number): SweepResult {
  const expiredStreams: StreamState[] = [];
  const trimmed = new Map<StreamState, number[]>();
  for (const s of streams) {
    if (s.deleted || !s.durable) continue;
    if (isExpired(s, now)) {
      expiredStreams.push(s);
      continue;
    }
    if (s.meta.ttlSeconds === null) continue;
    const dropped = expireOlderThan(log, s, now - s.meta.ttlSeconds * 1000);
    if (dropped.length > 0) trimmed.set(s, dropped);
  }
  return { expiredStreams, trimmed };
}

function expireOlderThan(log: SegmentLog, s: StreamState, cutoff: number): number[] {
  const dropped: number[] = [];
  for (let c = s.chunks[0]; c !== undefined && c.maxTs < cutoff; c = s.chunks[0]) {
    s.chunks.shift();
    dropped.push(c.baseSeq);
    s.startSeq = Math.max(s.startSeq, c.lastSeq + 1);
  }
  const first = s.chunks[0];
  if (first === undefined) {
    // Everything expired: the stream is empty from its tail on.
    if (s.startSeq < s.nextSeq && dropped.length > 0) s.startSeq = s.nextSeq;
    return dropped;
  }
  // Walk the first chunk batch by batch, reading only headers.
  let pos = first.pos;
  const end = first.pos + first.len;
  let start = first.baseSeq;
  while (pos < end) {
    const peek = log.read(first.segId, pos, Math.min(BATCH_PEEK, end - pos));
    const size = 8 + peek.readUInt32BE(0);
    // A PAD frame (a damaged frame quarantined by `svc repair`) holds no records: step over it.
    if (peek[8] !== FrameType.Data) {
      pos += size;
      continue;
    }
    const h = readBatchHeader(peek.subarray(FRAME_HEADER), 0);
    if (h.maxTimestamp >= cutoff) break;
    start = h.baseOffset + h.lastOffsetDelta + 1;
    pos += size;
  }
  if (pos > first.pos) {
    dropped.push(first.baseSeq);
    first.len -= pos - first.pos;
    first.pos = pos;
    first.baseSeq = start;
    s.startSeq = Math.max(s.startSeq, start);
  }
  return dropped;
}
