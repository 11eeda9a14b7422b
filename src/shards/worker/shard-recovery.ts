/**
 * Bringing a shard back: load the catalog and chunk index as of the last checkpoint from
 * RocksDB, then replay the segment log from the checkpoint to its end. Replay stops at the
 * first frame that is not whole and valid; in the newest segment that is a torn tail (the
 * crash interrupted a write that was never acknowledged) and the file is cut there. In an
 * older segment it is corruption of acknowledged data, and the shard refuses to start
 * rather than silently drop what follows.
 */
import { readBatchHeader } from '../../util/record-batch';
import { CHECKPOINT_KEY, STREAM_PREFIX, decodeCheckpoint, decodeStream, encodeStream, putChunk, streamKey } from './catalog-codec';
import { type ChunkIndex } from './chunk-index';
import { FrameType, parseFrame } from './frame';
import { type KvOp, type KvStore } from './kv-store';
import { DEFAULT_MAX_PRODUCERS, type SealProducer, cloneProducers, decodeProducers, recordBatchProducer, recordProducer } from './producers';
import { type SegmentLog } from './segment-log';
import { type StreamMeta, type StreamState, addChunk, newStreamState } from './stream-state';

export interface RecoveredShard {
  streams: Map<number, StreamState>;
  byName: Map<string, StreamState>;
  nextStreamId: number;
  /** Frames replayed from the log beyond the checkpoint. */
  replayedFrames: number;
  /** Bytes cut from a torn tail, or 0. */
  truncatedBytes: number;
  /** Index writes that bring RocksDB up to the replayed state. */
  ops: KvOp[];
}

export function recoverShard(store: KvStore, index: ChunkIndex, log: SegmentLog, maxChunkBytes: number, maxProducers = DEFAULT_MAX_PRODUCERS): RecoveredShard {
  const streams = new Map<number, StreamState>();
  const byName = new Map<string, StreamState>();
  const cpEntry = store.scan(CHECKPOINT_KEY)[0];
  const cp = cpEntry === undefined ? { segId: 0, pos: 0, nextStreamId: 1 } : decodeCheckpoint(cpEntry[1]);
  let nextStreamId = cp.nextStreamId;

  for (const [k, v] of store.scan(STREAM_PREFIX)) {
    const d = decodeStream(k, v);
    const s = newStreamState(d.id, d.meta);
    s.closed = s.closing = d.closed;
    s.nextSeq = s.assignedSeq = d.nextSeq;
    s.startSeq = d.startSeq;
    s.lastTs = d.lastTs;
    s.lastAccessMs = d.lastAccessMs ?? d.meta.createdAtMs;
    s.durableProducers = decodeProducers(d.producers);
    s.durable = true;
    // Only the last chunk is loaded (appends merge into it); the rest stays in the store.
    const tail = index.loadTail(d.id);
    if (tail !== null) s.recent.push(tail);
    streams.set(d.id, s);
    byName.set(d.meta.name, s);
  }

  const touched = new Set<StreamState>();
  const ops: KvOp[] = [];
  let replayedFrames = 0;
  let truncatedBytes = 0;
  const segments = log.segments.filter((s) => s >= cp.segId);
  for (let i = 0; i < segments.length; i++) {
    const segId = segments[i]!;
    const from = segId === cp.segId ? cp.pos : 0;
    const size = log.segmentSize(segId);
    if (from >= size) continue;
    const buf = log.read(segId, from, size - from);
    let off = 0;
    while (off < buf.length) {
      const f = parseFrame(buf, off, true);
      if (f === null) break;
      const pos = from + off;
      off += f.size;
      replayedFrames++;
      nextStreamId = Math.max(nextStreamId, f.streamId + 1);
      applyFrame(f.type, f.streamId, f.payload, segId, pos, f.size);
    }
    if (off < buf.length) {
      if (i !== segments.length - 1) {
        throw new Error(`segment ${segId} is corrupt at byte ${from + off} and newer segments exist; refusing to drop acknowledged data`);
      }
      truncatedBytes = buf.length - off;
      log.truncateTail(segId, from + off);
    }
  }
  // Appends are checked against the accepted producers; after recovery accepted = durable.
  for (const s of streams.values()) s.producers = cloneProducers(s.durableProducers);
  for (const s of touched) {
    if (!streams.has(s.id)) continue;
    ops.push({ type: 'put', key: streamKey(s.id), value: encodeStream(s) });
    for (const c of s.recent) putChunk(ops, s.id, c);
  }
  return { streams, byName, nextStreamId, replayedFrames, truncatedBytes, ops };

  function applyFrame(type: FrameType, id: number, payload: Buffer, segId: number, pos: number, size: number): void {
    if (type === FrameType.Create) {
      if (streams.has(id)) return;
      const s = newStreamState(id, JSON.parse(payload.toString()) as StreamMeta);
      s.durable = true;
      streams.set(id, s);
      touched.add(s);
      const prev = byName.get(s.meta.name);
      if (prev === undefined || prev.id < id) byName.set(s.meta.name, s);
      return;
    }
    const s = streams.get(id);
    if (s === undefined) return; // a deleted stream's frames are inert
    touched.add(s);
    switch (type) {
      case FrameType.Data: {
        const h = readBatchHeader(payload, 0);
        const last = h.baseOffset + h.lastOffsetDelta;
        if (last < s.nextSeq) return; // already in the index
        addChunk(s, { baseSeq: h.baseOffset, lastSeq: last, segId, pos, len: size, maxTs: h.maxTimestamp }, maxChunkBytes);
        s.nextSeq = s.assignedSeq = last + 1;
        s.lastTs = Math.max(s.lastTs, h.maxTimestamp);
        s.lastAccessMs = Math.max(s.lastAccessMs, h.maxTimestamp);
        // Producer state lives in the batch headers: the checkpointed table plus these frames is the state at the crash.
        recordBatchProducer(s.durableProducers, h, h.baseOffset, maxProducers);
        return;
      }
      case FrameType.Delete:
        streams.delete(id);
        ops.push({ type: 'del', key: streamKey(id) });
        index.dropWhile(s, () => true);
        if (byName.get(s.meta.name) === s) byName.delete(s.meta.name);
        return;
      case FrameType.Trim:
        s.startSeq = Math.max(s.startSeq, payload.readDoubleBE(0));
        index.dropWhile(s, (c) => c.lastSeq < s.startSeq);
        return;
      case FrameType.Seal:
        s.closed = s.closing = true;
        if (payload.length > 0) {
          const sp = JSON.parse(payload.toString()) as SealProducer;
          recordProducer(s.durableProducers, sp.key, sp.epoch, sp.ack, maxProducers);
        }
        return;
      case FrameType.Config:
        s.meta = { ...s.meta, ...(JSON.parse(payload.toString()) as Partial<StreamMeta>) };
        return;
    }
  }
}
