/**
 * Bringing a shard back: load the catalog and chunk index as of the last checkpoint from
 * RocksDB, then replay the segment log from the checkpoint to its end. Replay stops at the
 * first frame that is not whole and valid. At the end of the newest segment, with no valid
 * frame after it, that is a torn tail (the crash interrupted a write that was never
 * acknowledged) and the file is cut there. Anywhere else (an older segment, or valid frames
 * after the bad one) it is damage to acknowledged data, and the shard refuses to start rather
 * than silently drop what follows; `svc repair` quarantines it (docs/storage.md).
 *
 * Before replaying, every segment the index refers to must exist: a missing one is never
 * re-created empty (its index entries would then point into new data).
 */
import * as path from 'node:path';
import { readBatchHeader } from '../../util/record-batch';
import { CHECKPOINT_KEY, type Checkpoint, STREAM_PREFIX, decodeCheckpoint, decodeStream, encodeStream, putChunk, streamKey } from './catalog-codec';
import { type CarriedCatalog, applyCarried, collectCarried, decodeCatalog } from './catalog-carry';
import { type ChunkIndex } from './chunk-index';
import { FrameType } from './frame';
import { scanFrames } from './log-scan';
import { type KvOp, type KvStore } from './kv-store';
import { DEFAULT_MAX_PRODUCERS, type SealProducer, cloneProducers, decodeProducers, recordBatchProducer, recordProducer } from './producers';
import { type SegmentLog } from './segment-log';
import { type StoredMeta, patchMeta, readMeta } from './stream-meta';
import { type StreamState, addChunk, newStreamState } from './stream-state';

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
  /** The checkpoint's applied-change count plus the catalog frames replayed after it (appliedIndex). */
  appliedChanges: number;
}

export function recoverShard(store: KvStore, index: ChunkIndex, log: SegmentLog, maxChunkBytes: number, maxProducers = DEFAULT_MAX_PRODUCERS): RecoveredShard {
  const streams = new Map<number, StreamState>();
  const byName = new Map<string, StreamState>();
  const cpEntry = store.scan(CHECKPOINT_KEY)[0];
  const cp: Checkpoint = cpEntry === undefined ? { segId: 0, pos: 0, nextStreamId: 1 } : decodeCheckpoint(cpEntry[1]);
  let nextStreamId = cp.nextStreamId;

  for (const [k, v] of store.scan(STREAM_PREFIX)) {
    const d = decodeStream(k, v);
    const s = newStreamState(d.id, readMeta(d.meta));
    s.closed = s.closing = d.closed;
    s.nextSeq = s.assignedSeq = d.nextSeq;
    s.startSeq = d.startSeq;
    s.lastTs = d.lastTs;
    s.lastAccessMs = d.lastAccessMs ?? d.meta.createdAtMs;
    s.durableProducers = decodeProducers(d.producers);
    s.durable = true;
    // Only the last chunk is loaded (appends merge into it); the rest stays in the store.
    const tail = index.loadTail(d.id);
    if (tail !== null) {
      s.recent.push(tail);
      // Appends do not rewrite the catalog entry (stream-writes.ts): the checkpointed chunks may
      // end past its seq and timestamp, and they are as complete as the checkpoint.
      if (tail.lastSeq + 1 > s.nextSeq) s.nextSeq = s.assignedSeq = tail.lastSeq + 1;
      s.lastTs = Math.max(s.lastTs, tail.maxTs);
      s.lastAccessMs = Math.max(s.lastAccessMs, tail.maxTs);
    }
    streams.set(d.id, s);
    // An import's staging stream has no name until published (stream-import.ts).
    if (!s.meta.importing) byName.set(d.meta.name, s);
  }
  checkReferencedSegments(log, cp, index);

  // No checkpoint: the index is rebuilt from the segments alone. Streams whose CREATE frame was
  // reaped are known from the catalog carried forward (catalog-carry.ts), created before replay.
  const carried: CarriedCatalog | null = cpEntry === undefined ? collectCarried(log) : null;
  if (carried !== null) {
    nextStreamId = Math.max(nextStreamId, carried.nextStreamId);
    for (const c of carried.first.values()) {
      if (isDead(c.id)) continue;
      const s = newStreamState(c.id, readMeta(c.meta));
      // Data from the carried start on is indexed as replay meets it; the carried frame itself lifts the tail.
      s.startSeq = s.nextSeq = s.assignedSeq = c.startSeq;
      s.durable = true;
      streams.set(c.id, s);
      if (!s.meta.importing) byName.set(c.meta.name, s);
    }
  }

  const touched = new Set<StreamState>();
  const ops: KvOp[] = [];
  let replayedFrames = 0;
  let truncatedBytes = 0;
  let appliedChanges = cp.appliedChanges ?? 0;
  const segments = log.segments.filter((s) => s >= cp.segId);
  for (let i = 0; i < segments.length; i++) {
    const segId = segments[i]!;
    const from = segId === cp.segId ? cp.pos : 0;
    const size = log.segmentSize(segId);
    if (from >= size) continue;
    const buf = log.read(segId, from, size - from);
    const scan = scanFrames(
      buf,
      (f) => {
        replayedFrames++;
        if (f.type !== FrameType.Data && f.type !== FrameType.Pad) appliedChanges++;
        nextStreamId = Math.max(nextStreamId, f.streamId + 1);
        applyFrame(f.type, f.streamId, f.payload, segId, from + f.pos, f.size);
      },
      true,
    );
    const bad = scan.damage[0];
    if (bad !== undefined) {
      const at = from + bad.pos;
      if (i !== segments.length - 1 || !bad.torn) {
        const after = i !== segments.length - 1 ? 'newer segments follow it' : `a valid frame follows it at byte ${from + bad.end}`;
        throw new Error(
          `${log.describe(segId)}: the frame at byte ${at} is damaged (${bad.reason}) and ${after}; refusing to start, which would drop acknowledged data. ` +
            `Run \`svc check --data-dir ${dataDirOf(log.describe(segId))}\` to list the damage, then \`svc repair\` with the same flag to quarantine the damaged frames (the rest is kept), or restore the file from a backup.`,
        );
      }
      truncatedBytes = buf.length - bad.pos;
      log.truncateTail(segId, at);
    }
  }
  // Appends are checked against the accepted producers; after recovery accepted = durable.
  for (const s of streams.values()) s.producers = cloneProducers(s.durableProducers);
  for (const s of touched) {
    if (!streams.has(s.id)) continue;
    ops.push({ type: 'put', key: streamKey(s.id), value: encodeStream(s) });
    for (const c of s.recent) putChunk(ops, s.id, c);
  }
  return { streams, byName, nextStreamId, replayedFrames, truncatedBytes, ops, appliedChanges };

  /** A rebuild knows from the newest carried live list that this stream was deleted. */
  function isDead(id: number): boolean {
    const live = carried?.live ?? null;
    return live !== null && id < live.below && !live.ids.has(id);
  }

  function applyFrame(type: FrameType, id: number, payload: Buffer, segId: number, pos: number, size: number): void {
    if (type === FrameType.Catalog) {
      const carriedHere = decodeCatalog(payload);
      for (const c of carriedHere.streams) {
        const s = streams.get(c.id);
        if (s === undefined) continue; // deleted since (or, replaying from a checkpoint, before it)
        touched.add(s);
        if (applyCarried(s, c, maxProducers, carriedHere.seqFloor === true)) index.dropWhile(s, (ch) => ch.lastSeq < s.startSeq);
      }
      return;
    }
    if (type === FrameType.Create) {
      if (streams.has(id) || isDead(id)) return;
      const s = newStreamState(id, readMeta(JSON.parse(payload.toString()) as StoredMeta));
      s.durable = true;
      streams.set(id, s);
      touched.add(s);
      const prev = byName.get(s.meta.name);
      if (!s.meta.importing && (prev === undefined || prev.id < id)) byName.set(s.meta.name, s);
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
        // An imported stream may start beyond its last record (stream-writes.ts, trim).
        s.nextSeq = s.assignedSeq = Math.max(s.nextSeq, s.startSeq);
        index.dropWhile(s, (c) => c.lastSeq < s.startSeq);
        return;
      case FrameType.Seal:
        s.closed = s.closing = true;
        if (payload.length > 0) {
          const sp = JSON.parse(payload.toString()) as SealProducer;
          recordProducer(s.durableProducers, sp.key, sp.epoch, sp.ack, maxProducers);
        }
        return;
      case FrameType.Config: {
        const importing = s.meta.importing;
        s.meta = patchMeta(s.meta, JSON.parse(payload.toString()) as Partial<StoredMeta>);
        // An import published: the name is the imported stream's (the replaced copy's DELETE came before).
        if (importing && !s.meta.importing) byName.set(s.meta.name, s);
        return;
      }
    }
  }
}

/**
 * Every segment the index refers to (the checkpoint's, every chunk's) must be on disk: a missing
 * one was deleted or lost outside the node, and writing on would re-create it empty under the
 * index's old entries. The remedy is named in the message (docs/storage.md).
 */
function checkReferencedSegments(log: SegmentLog, cp: { segId: number; pos: number }, index: ChunkIndex): void {
  const present = new Set(log.segments);
  const missing = new Set<number>();
  if (cp.pos > 0 && !present.has(cp.segId)) missing.add(cp.segId);
  for (const segId of index.referencedSegments()) if (!present.has(segId)) missing.add(segId);
  if (cp.pos > 0 && present.has(cp.segId) && log.segmentSize(cp.segId) < cp.pos) {
    throw new Error(
      `${log.describe(cp.segId)} is ${log.segmentSize(cp.segId)} bytes but the index says ${cp.pos} bytes of it were written and synced: the file was cut outside the node. ` +
        `Restore it from a backup, or run \`svc repair --data-dir ${dataDirOf(log.describe(cp.segId))}\` to rebuild the index from the segments as they are (records after the cut are lost).`,
    );
  }
  if (missing.size === 0) return;
  const files = [...missing].sort((a, b) => a - b).map((id) => log.describe(id));
  throw new Error(
    `segment file${files.length > 1 ? 's' : ''} ${files.join(', ')} ${files.length > 1 ? 'are' : 'is'} missing but the index refers to ${files.length > 1 ? 'them' : 'it'}; refusing to start (writing on would put new data under old index entries). ` +
      `Restore the file from a backup, or run \`svc repair --data-dir ${dataDirOf(files[0]!)}\` to rebuild the index from the segments that remain (the records of a missing segment are lost).`,
  );
}

/** `<dataDir>/shards/<k>/log/<file>` → `<dataDir>` (for the remedy in messages). */
function dataDirOf(segmentFile: string): string {
  return path.resolve(segmentFile, '..', '..', '..', '..');
}
