/**
 * How a shard's catalog and chunk index are laid out in its RocksDB database.
 *
 *   C                          checkpoint: log position up to which everything below is complete
 *   S <id u32>                 stream catalog entry (JSON), with its idempotent producers; rewritten
 *                              when they or the stream's config, seal or start change, not per
 *                              append: its nextSeq and lastTs lag the stream's last K entry, which
 *                              recovery reads too
 *   K <id u32> <baseSeq u64>   chunk index entry (binary)
 *   R <seg u32> <id u32>       some chunk of the stream lies in the segment (empty value): a
 *                              segment no R entry names holds no live data and may be reaped.
 *                              Written with the stream's first chunk in the segment, deleted with
 *                              its last (a stream's chunks lie in segments in seq order)
 *   R <seg u32> <id u32> <baseSeq u64>   the same per chunk, as index version 2 wrote them: a
 *                              store at version 2 keeps them until their chunk goes
 *   V                          index layout version (2: with per-chunk R entries; 3: per stream and segment)
 *
 * The chunk index lives here, not in memory: a shard holds only each stream's newest chunks and a
 * bounded cache of pages read from it (chunk-index.ts).
 *
 * Nothing here is written with sync: the segment log is the only write-ahead log. After a crash the
 * shard replays the log from the checkpoint, so a checkpoint that lags (or a RocksDB write lost in
 * power failure, which keeps a prefix) costs replay time, never data.
 */
import { type KvOp } from './kv-store';
import { type StoredProducer, encodeProducers } from './producers';
import { type StoredMeta, storedMeta } from './stream-meta';
import { type Chunk, type StreamState } from './stream-state';

export const CHECKPOINT_KEY = Buffer.from('C');
export const STREAM_PREFIX = Buffer.from('S');
export const CHUNK_PREFIX = Buffer.from('K');
export const SEGMENT_CHUNK_PREFIX = Buffer.from('R');
export const INDEX_VERSION_KEY = Buffer.from('V');
/**
 * Version 2 added R entries per chunk; 3 has one per stream and segment (half the writes when every
 * append is a chunk of its own: perf W2). A store without V (or at 1) gets them built once when
 * opened, at 3; a store at 2 goes on at 2, its chunks' R entries deleted with them, new ones per
 * stream and segment.
 */
export const INDEX_VERSION = 3;
/** The index version whose R entries were per chunk. */
export const PER_CHUNK_R_VERSION = 2;

export interface Checkpoint {
  segId: number;
  pos: number;
  nextStreamId: number;
  /** Metadata-relevant changes applied by the shard up to here (appliedIndex; absent in checkpoints written before it: 0). */
  appliedChanges?: number;
}

export function encodeCheckpoint(c: Checkpoint): Buffer {
  const b = Buffer.allocUnsafe(24);
  b.writeUInt32BE(c.segId, 0);
  b.writeDoubleBE(c.pos, 4);
  b.writeUInt32BE(c.nextStreamId, 12);
  b.writeDoubleBE(c.appliedChanges ?? 0, 16);
  return b;
}

export function decodeCheckpoint(b: Buffer): Checkpoint {
  return { segId: b.readUInt32BE(0), pos: b.readDoubleBE(4), nextStreamId: b.readUInt32BE(12), appliedChanges: b.length >= 24 ? b.readDoubleBE(16) : 0 };
}

export function streamKey(id: number): Buffer {
  const k = Buffer.allocUnsafe(5);
  k[0] = STREAM_PREFIX[0]!;
  k.writeUInt32BE(id, 1);
  return k;
}

interface StoredStream {
  /** Stored form: normalised by the reader (stream-meta.ts readMeta). */
  meta: StoredMeta;
  closed: boolean;
  nextSeq: number;
  startSeq: number;
  lastTs: number;
  /** Last access renewing an idle TTL (absent in catalogs written before it). */
  lastAccessMs?: number;
  /** Idempotent producers as of `nextSeq` (absent when none): replay from the checkpoint continues from them. */
  producers?: StoredProducer[];
}

export function encodeStream(s: StreamState): Buffer {
  const v: StoredStream = { meta: storedMeta(s.meta), closed: s.closed, nextSeq: s.nextSeq, startSeq: s.startSeq, lastTs: s.lastTs };
  if (s.meta.idleTtlSeconds !== null) v.lastAccessMs = s.lastAccessMs;
  if (s.durableProducers.size > 0) v.producers = encodeProducers(s.durableProducers);
  return Buffer.from(JSON.stringify(v));
}

export function decodeStream(key: Buffer, value: Buffer): { id: number } & StoredStream {
  return { id: key.readUInt32BE(1), ...(JSON.parse(value.toString()) as StoredStream) };
}

export function chunkKey(streamId: number, baseSeq: number): Buffer {
  const k = Buffer.allocUnsafe(13);
  k[0] = CHUNK_PREFIX[0]!;
  k.writeUInt32BE(streamId, 1);
  // Big-endian u64 so keys sort by seq.
  k.writeUInt32BE(Math.floor(baseSeq / 0x100000000), 5);
  k.writeUInt32BE(baseSeq >>> 0, 9);
  return k;
}

export function encodeChunk(c: Chunk): Buffer {
  const b = Buffer.allocUnsafe(36);
  b.writeUInt32BE(c.segId, 0);
  b.writeDoubleBE(c.pos, 4);
  b.writeUInt32BE(c.len, 12);
  b.writeDoubleBE(c.lastSeq, 16);
  b.writeDoubleBE(c.maxTs, 24);
  b.writeUInt32BE(0, 32);
  return b;
}

/** Numbers a chunk takes packed (decodeChunkInto): baseSeq, lastSeq, segId, pos, len, maxTs. */
export const CHUNK_FIELDS = 6;

/** A chunk entry decoded into `out` from `at`, in CHUNK_FIELDS' order (chunk-index.ts's packed pages). */
export function decodeChunkInto(key: Buffer, value: Buffer, out: Float64Array, at: number): void {
  out[at] = key.readUInt32BE(5) * 0x100000000 + key.readUInt32BE(9);
  out[at + 1] = value.readDoubleBE(16);
  out[at + 2] = value.readUInt32BE(0);
  out[at + 3] = value.readDoubleBE(4);
  out[at + 4] = value.readUInt32BE(12);
  out[at + 5] = value.readDoubleBE(24);
}

/** The chunk packed at `at` of `d` (decodeChunkInto's order). */
export function packedChunk(d: Float64Array, at: number): Chunk {
  return { baseSeq: d[at]!, lastSeq: d[at + 1]!, segId: d[at + 2]!, pos: d[at + 3]!, len: d[at + 4]!, maxTs: d[at + 5]! };
}

const unpacked = new Float64Array(CHUNK_FIELDS);

export function decodeChunk(key: Buffer, value: Buffer): { streamId: number; chunk: Chunk } {
  decodeChunkInto(key, value, unpacked, 0);
  return { streamId: key.readUInt32BE(1), chunk: packedChunk(unpacked, 0) };
}

/** The first key of stream `streamId`'s chunk entries, and the first key after them. */
export const streamChunksStart = (streamId: number): Buffer => chunkKey(streamId, 0);
export const streamChunksEnd = (streamId: number): Buffer => chunkKey(streamId + 1, 0);

/** The R entry of (segment, stream). */
export function segmentStreamKey(segId: number, streamId: number): Buffer {
  const k = Buffer.allocUnsafe(9);
  k[0] = SEGMENT_CHUNK_PREFIX[0]!;
  k.writeUInt32BE(segId, 1);
  k.writeUInt32BE(streamId, 5);
  return k;
}

/** A chunk's R entry as index version 2 wrote it. */
function segmentChunkKey(segId: number, streamId: number, baseSeq: number): Buffer {
  const k = Buffer.allocUnsafe(17);
  k[0] = SEGMENT_CHUNK_PREFIX[0]!;
  k.writeUInt32BE(segId, 1);
  k.writeUInt32BE(streamId, 5);
  k.writeUInt32BE(Math.floor(baseSeq / 0x100000000), 9);
  k.writeUInt32BE(baseSeq >>> 0, 13);
  return k;
}

/** Every R key of segment `segId` starts with this. */
export function segmentPrefix(segId: number): Buffer {
  const k = Buffer.allocUnsafe(5);
  k[0] = SEGMENT_CHUNK_PREFIX[0]!;
  k.writeUInt32BE(segId, 1);
  return k;
}

const EMPTY = Buffer.alloc(0);

/**
 * Write a chunk's K entry, and the R entry of its stream and segment unless `inSegment` says the
 * stream has one there already (the caller's note of what it wrote: StreamState.indexedSegId).
 */
export function putChunk(ops: KvOp[], streamId: number, c: Chunk, inSegment = false): void {
  ops.push({ type: 'put', key: chunkKey(streamId, c.baseSeq), value: encodeChunk(c) });
  if (!inSegment) ops.push({ type: 'put', key: segmentStreamKey(c.segId, streamId), value: EMPTY });
}

/** Delete a chunk's K entry (and its own R entry in a store at index version 2). The stream's R entry of the segment is the caller's. */
export function delChunk(ops: KvOp[], streamId: number, c: Chunk, perChunkR: boolean): void {
  ops.push({ type: 'del', key: chunkKey(streamId, c.baseSeq) });
  if (perChunkR) ops.push({ type: 'del', key: segmentChunkKey(c.segId, streamId, c.baseSeq) });
}
