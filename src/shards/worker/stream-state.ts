/**
 * What a shard keeps in memory for one stream: its catalog entry and its newest chunks (the rest
 * of its chunk index is in the store: chunk-index.ts).
 *
 * A chunk is a contiguous byte range of one segment holding consecutive batches of the
 * stream (seqs baseSeq..lastSeq). Group commit writes each stream's frames of one flush
 * side by side, and a chunk that starts where the previous one ended is merged into it,
 * so a stream written alone is one chunk per segment and a read is one pread.
 */
import { type ProducerTable } from './producers';
import { type SvcError } from '../../errors';
import { type RemoteChunks } from './remote-chunks';
import { type StreamMeta } from './stream-meta';

export interface Chunk {
  baseSeq: number;
  lastSeq: number;
  segId: number;
  pos: number;
  len: number;
  /** Largest record timestamp in the chunk (unix ms): TTL expiry drops whole chunks by it. */
  maxTs: number;
}

export interface StreamState {
  /** Shard-local id, never reused. */
  readonly id: number;
  /** As of durable changes (normalised when read: stream-meta.ts). */
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
  /**
   * Last read or append (unix ms): renews `meta.idleTtlSeconds`. Kept with the checkpoint, not
   * logged: a crash can lose the renewals of the last checkpoint interval, never an append's.
   */
  lastAccessMs: number;
  /**
   * The stream's newest chunks, in seq order: every chunk added or changed since the last
   * checkpoint, and always the last chunk (appends merge into it). Older chunks are only in the
   * index store (chunk-index.ts), so this stays short whatever the stream holds.
   */
  recent: Chunk[];
  /**
   * The segment whose R entry for this stream (catalog-codec.ts) is written or in the batch being
   * written, or -1: a checkpoint writes it with the stream's first chunk there only. Reset when the
   * entry is deleted (chunk-index.ts dropWhile). Memory only: after a start the next chunk writes it again.
   */
  indexedSegId: number;
  /** The CREATE frame is durable. */
  durable: boolean;
  /** Deleted (possibly not yet durable); the name may already belong to a new stream. */
  deleted: boolean;
  /** Idempotent producers as of accepted appends: what appends are checked against. */
  producers: ProducerTable;
  /** Idempotent producers as of durable appends: what the catalog stores and replay rebuilds. */
  durableProducers: ProducerTable;
  /** Objects mode only (object-commit.ts): the stream's fence, entry counter and ledger record. */
  ledger?: StreamLedgerState;
  /**
   * Objects mode: the fence epoch this copy was imported at (a move or a restart's reopen), when
   * it was. Its writes are committed under that epoch only: a later open of the stream here takes
   * a newer fence for a new copy, and this one's writes then count as moved (object-commit.ts).
   */
  openedEpoch?: number;
  /**
   * Objects mode, a stream adopted without a copy (stream-import.ts, `adopt`): its records below
   * `chunks.end` are in the object store, not in the local log, whose start (`startSeq`) is that
   * end. Memory only: an adopt writes no remote state locally, and a restart adopts again from the
   * ledger (docs/objects.md, "How a read finds its object and byte range").
   */
  remote?: RemoteState;
}

/** An adopted stream's records in the object store. */
export interface RemoteState {
  /** The ledger entries holding seqs `[startSeq, chunks.end)`. */
  chunks: RemoteChunks;
  /** The stream's start as served (the ledger's), at or below the local start. */
  startSeq: number;
  /**
   * The producers are being replayed from the entries (AdoptParams.replayProducers): appends that
   * carry a producer wait here, in arrival order, and run once they are known; null when known.
   */
  producersPending?: Array<{ run(): void; fail(err: SvcError): void }> | null;
}

/** The stream's first seq as served: an adopted stream's remote start, else the local one. */
export function servedStart(s: StreamState): number {
  return s.remote === undefined ? s.startSeq : Math.min(s.remote.startSeq, s.startSeq);
}

/** A stream's place in the object ledger (docs/cluster.md, "Objects mode: where data lives"). */
export interface StreamLedgerState {
  /** The fence this node holds: its node id and the epoch of its open of the stream. */
  fence: { nodeId: number; epoch: number };
  /** Next entry counter within the fence's epoch (from 0 at each open). */
  counter: number;
  /** The `m/` record as last committed (`meta` is the stored form); a group changing it commits a new one. */
  meta: { meta: Record<string, unknown>; startSeq: number; sealed: boolean };
  /** The fence moved to another node: the stream takes no writes here (that node, when known). */
  moved: { nodeId: number | null } | null;
  /**
   * The writer switches (object-commit.ts) when the stream's place in this shard's writer was
   * last recorded (`w/<stream>`), or null: its groups may be acknowledged before they are
   * recorded only while this is the writer's current count.
   */
  placedIn: number | null;
}

export function newStreamState(id: number, meta: StreamMeta): StreamState {
  // A fork's own records start at its fork point.
  const base = meta.fork === null ? 0 : meta.fork.seq;
  return {
    id,
    meta,
    closing: false,
    closed: false,
    assignedSeq: base,
    nextSeq: base,
    startSeq: base,
    lastTs: 0,
    lastAccessMs: meta.createdAtMs,
    recent: [],
    indexedSegId: -1,
    durable: false,
    deleted: false,
    producers: new Map(),
    durableProducers: new Map(),
  };
}

/** Add a durable chunk, merging it into the previous one when the bytes are adjacent. Returns the chunk written. */
export function addChunk(s: StreamState, c: Chunk, maxChunkBytes: number): Chunk {
  const prev = s.recent[s.recent.length - 1];
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
  s.recent.push(c);
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

export function isExpired(s: StreamState, now: number): boolean {
  if (s.meta.expiresAtMs !== null && s.meta.expiresAtMs <= now) return true;
  const idle = s.meta.idleTtlSeconds;
  return idle !== null && s.lastAccessMs + idle * 1000 <= now;
}

/**
 * Deleted or expired while forks still read it: kept for them, invisible to everything else
 * (Durable Streams answers 410). Once the last fork lets go it is deleted.
 */
export function isGone(s: StreamState, now: number): boolean {
  if (s.meta.forkRefs === 0) return false;
  return s.meta.softDeleted || isExpired(s, now);
}
