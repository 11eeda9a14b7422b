/**
 * How a shard's catalog and chunk index are laid out in its RocksDB database.
 *
 *   C                          checkpoint: log position up to which everything below is complete
 *   S <id u32>                 stream catalog entry (JSON), with its idempotent producers
 *   K <id u32> <baseSeq u64>   chunk index entry (binary)
 *
 * Nothing here is written with sync: the segment log is the only write-ahead log. After a crash the
 * shard replays the log from the checkpoint, so a checkpoint that lags (or a RocksDB write lost in
 * power failure, which keeps a prefix) costs replay time, never data.
 */
import { type KvOp } from './kv-store';
import { type StoredProducer, encodeProducers } from './producers';
import { type Chunk, type StreamMeta, type StreamState } from './stream-state';

export const CHECKPOINT_KEY = Buffer.from('C');
export const STREAM_PREFIX = Buffer.from('S');
export const CHUNK_PREFIX = Buffer.from('K');

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
  meta: StreamMeta;
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
  const v: StoredStream = { meta: s.meta, closed: s.closed, nextSeq: s.nextSeq, startSeq: s.startSeq, lastTs: s.lastTs };
  if (s.meta.idleTtlSeconds != null) v.lastAccessMs = s.lastAccessMs;
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

export function decodeChunk(key: Buffer, value: Buffer): { streamId: number; chunk: Chunk } {
  const baseSeq = key.readUInt32BE(5) * 0x100000000 + key.readUInt32BE(9);
  return {
    streamId: key.readUInt32BE(1),
    chunk: {
      baseSeq,
      segId: value.readUInt32BE(0),
      pos: value.readDoubleBE(4),
      len: value.readUInt32BE(12),
      lastSeq: value.readDoubleBE(16),
      maxTs: value.readDoubleBE(24),
    },
  };
}

export const putChunk = (streamId: number, c: Chunk): KvOp => ({ type: 'put', key: chunkKey(streamId, c.baseSeq), value: encodeChunk(c) });
export const delChunk = (streamId: number, baseSeq: number): KvOp => ({ type: 'del', key: chunkKey(streamId, baseSeq) });
