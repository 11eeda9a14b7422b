/**
 * What a shard keeps in memory for one stream: its catalog entry and its chunk index.
 *
 * A chunk is a contiguous byte range of one segment holding consecutive batches of the
 * stream (seqs baseSeq..lastSeq). Group commit writes each stream's frames of one flush
 * side by side, and a chunk that starts where the previous one ended is merged into it,
 * so a stream written alone is one chunk per segment and a read is one pread.
 */
import { type ProducerTable } from './producers';

export interface Chunk {
  baseSeq: number;
  lastSeq: number;
  segId: number;
  pos: number;
  len: number;
  /** Largest record timestamp in the chunk (unix ms): TTL expiry drops whole chunks by it. */
  maxTs: number;
}

export interface StreamMeta {
  name: string;
  contentType: string;
  ttlSeconds: number | null;
  expiresAtMs: number | null;
  createdAtMs: number;
  /** Bound schema name (Svc-Schema); absent or null when none. Optional: catalogs written before it lack it. */
  schema?: string | null;
  /** Validate appends against `schema` (Svc-Schema-Validate). */
  schemaValidate?: boolean;
  /** Kafka topic set explicitly (Svc-Kafka-Topic); absent or null means derived from the name. */
  kafkaTopic?: string | null;
}

export interface StreamState {
  /** Shard-local id, never reused. */
  readonly id: number;
  meta: StreamMeta;
  /** Seal accepted (possibly not yet durable): later appends are refused at once. */
  closing: boolean;
  /** Seal durable. */
  closed: boolean;
  /** Next seq to assign (includes appends not yet durable). */
  assignedSeq: number;
  /** Durable tail: what readers may see. */
  nextSeq: number;
  /** Trim point (durable). */
  startSeq: number;
  /** Last record timestamp handed out: timestamps never go backwards within a stream. */
  lastTs: number;
  chunks: Chunk[];
  /** The CREATE frame is durable. */
  durable: boolean;
  /** Deleted (possibly not yet durable); the name may already belong to a new stream. */
  deleted: boolean;
  /** Idempotent producers as of accepted appends: what appends are checked against. */
  producers: ProducerTable;
  /** Idempotent producers as of durable appends: what the catalog stores and replay rebuilds. */
  durableProducers: ProducerTable;
}

export function newStreamState(id: number, meta: StreamMeta): StreamState {
  return {
    id,
    meta,
    closing: false,
    closed: false,
    assignedSeq: 0,
    nextSeq: 0,
    startSeq: 0,
    lastTs: 0,
    chunks: [],
    durable: false,
    deleted: false,
    producers: new Map(),
    durableProducers: new Map(),
  };
}

/** Add a durable chunk, merging it into the previous one when the bytes are adjacent. Returns the chunk written. */
export function addChunk(s: StreamState, c: Chunk, maxChunkBytes: number): Chunk {
  const prev = s.chunks[s.chunks.length - 1];
  if (
    prev !== undefined &&
    prev.segId === c.segId &&
    prev.pos + prev.len === c.pos &&
    prev.lastSeq + 1 === c.baseSeq &&
    // Bounded so that a read starting mid-chunk walks at most this many bytes of frames.
    prev.len + c.len <= maxChunkBytes
  ) {
    prev.len += c.len;
    prev.lastSeq = c.lastSeq;
    prev.maxTs = Math.max(prev.maxTs, c.maxTs);
    return prev;
  }
  s.chunks.push(c);
  return c;
}

/** Index of the first chunk whose lastSeq >= seq (chunks.length when none). */
export function findChunk(chunks: readonly Chunk[], seq: number): number {
  let lo = 0;
  let hi = chunks.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (chunks[mid]!.lastSeq < seq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Drop chunks wholly below `seq`; returns the dropped ones (their index keys are deleted). */
export function dropChunksBelow(s: StreamState, seq: number): Chunk[] {
  const i = findChunk(s.chunks, seq);
  return i === 0 ? [] : s.chunks.splice(0, i);
}

export function isExpired(s: StreamState, now: number): boolean {
  return s.meta.expiresAtMs !== null && s.meta.expiresAtMs <= now;
}
