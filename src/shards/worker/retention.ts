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
import { type ChunkIndex } from './chunk-index';
import { FRAME_HEADER, FrameType } from './frame';
import { type SegmentLog } from './segment-log';
import { type Chunk, type StreamState, isExpired } from './stream-state';

/** Bytes of frame and batch header to read to learn a batch's seqs and timestamps. */
const BATCH_PEEK = FRAME_HEADER + 61;

export interface SweepResult {
  /** Streams past their absolute expiry: the shard deletes them. */
  expiredStreams: StreamState[];
  /** Streams whose start moved (their dropped index entries are already deleted). */
  trimmed: Set<StreamState>;
}

export function sweepExpired(log: SegmentLog, index: ChunkIndex, streams: Iterable<StreamState>, now: number): SweepResult {
  const expiredStreams: StreamState[] = [];
  const trimmed = new Set<StreamState>();
  for (const s of streams) {
    if (s.deleted || !s.durable) continue;
    if (isExpired(s, now)) {
      expiredStreams.push(s);
      continue;
    }
    if (s.meta.ttlSeconds === null) continue;
    if (expireOlderThan(log, index, s, now - s.meta.ttlSeconds * 1000)) trimmed.add(s);
  }
  return { expiredStreams, trimmed };
}

function expireOlderThan(log: SegmentLog, index: ChunkIndex, s: StreamState, cutoff: number): boolean {
  // Most sweeps drop nothing: look at the first chunk before touching the store's entries.
  const head = index.first(s);
  if (head === null || head.maxTs >= cutoff) return head === null ? false : cutHead(log, index, s, head, cutoff);
  let dropped = false;
  const first = index.dropWhile(s, (c) => {
    if (c.maxTs >= cutoff) return false;
    dropped = true;
    s.startSeq = Math.max(s.startSeq, c.lastSeq + 1);
    return true;
  });
  if (first === null) {
    // Everything expired: the stream is empty from its tail on.
    if (s.startSeq < s.nextSeq && dropped) s.startSeq = s.nextSeq;
    return dropped;
  }
  return cutHead(log, index, s, first, cutoff) || dropped;
}

/** Walk the first chunk batch by batch, reading only headers, and cut the expired batches off its front. */
function cutHead(log: SegmentLog, index: ChunkIndex, s: StreamState, first: Chunk, cutoff: number): boolean {
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
  if (pos === first.pos) return false;
  const before = { ...first };
  // A recent chunk is changed in place (appends may still merge into it); a stored one is replaced.
  const after = s.recent.includes(first) ? first : { ...first };
  after.len -= pos - first.pos;
  after.pos = pos;
  after.baseSeq = start;
  index.replaceHead(s, before, after);
  s.startSeq = Math.max(s.startSeq, start);
  return true;
}
