/**
 * The writes of a shard, once an operation passed its checks: each accepted change is a frame
 * enqueued for group commit, with what it changes in memory at once (seqs assigned, a seal or
 * delete accepted, the accepted meta) and its apply step, run when the frame is durable (the
 * durable tail, chunks, the durable producer table, the catalog entry to checkpoint).
 *
 *   accept: state the next check sees ──▶ frame ──▶ group commit ──(durable)──▶ apply: what readers see
 */
import { type BatchHeader, type RecordInput, encodeRecordBatch, readBatchHeader, setBaseOffset } from '../../util/record-batch';
import { type Checkpointer } from './checkpointer';
import { type ChunkIndex } from './chunk-index';
import { type DeadSegments } from './dead-segments';
import { FrameType, encodeDataFrame, encodeFrame, encodeTrimPayload } from './frame';
import { type GroupCommit } from './group-commit';
import { type SealProducer, cloneProducers, recordBatchProducer, recordProducer } from './producers';
import { type Location } from './segment-log';
import { type StreamCatalog } from './stream-catalog';
import { type MetaPatch, type StreamMeta, patchMeta, storedMeta } from './stream-meta';
import { type StreamState, addChunk } from './stream-state';

/** An HTTP producer's append as its batch header carries it. */
export interface BatchProducer {
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
}

export interface StreamWritesContext {
  commit: GroupCommit;
  checkpoints: Checkpointer;
  streams: StreamCatalog;
  index: ChunkIndex;
  deadSegments: DeadSegments;
  maxChunkBytes: number;
  maxProducers: number;
  now: () => number;
  /**
   * Hands a buffer the gateway thread gave up with an append (a Kafka request frame, framed in
   * place here) back to it for reuse, once its frame is written and applied; null: dropped.
   */
  returnBuffer: ((ab: ArrayBuffer) => void) | null;
}

export class StreamWrites {
  readonly #x: StreamWritesContext;

  constructor(x: StreamWritesContext) {
    this.#x = x;
  }

  /** A new stream (CREATE frame); it is visible to readers once durable (an import's once published). `local`: see GroupCommit.enqueue. */
  create(meta: StreamMeta, local = false): StreamState {
    const { commit, checkpoints, streams } = this.#x;
    const s = streams.add(meta);
    commit.enqueue(
      s,
      encodeFrame(FrameType.Create, s.id, Buffer.from(JSON.stringify(storedMeta(meta)))),
      () => {
        s.durable = true;
        checkpoints.appliedChanges++;
        checkpoints.streamChanged(s);
      },
      local,
    );
    return s;
  }

  /** Server time for an append, never behind the stream's previous one. */
  stamp(s: StreamState): number {
    const ts = Math.max(this.#x.now(), s.lastTs);
    s.lastTs = ts;
    return ts;
  }

  /** One batch; an idempotent producer's append carries the producer in the batch header (the log is its state). Returns its timestamp. */
  appendRecords(s: StreamState, records: RecordInput[], producer: BatchProducer | null = null): number {
    const ts = this.stamp(s);
    const batch = encodeRecordBatch(producer === null ? { baseOffset: s.assignedSeq, baseTimestamp: ts, records } : { baseOffset: s.assignedSeq, baseTimestamp: ts, records, ...producer });
    this.appendBatch(s, batch);
    return ts;
  }

  /**
   * A batch as checked, its CRC verified (or computed) on this thread (its base offset rewritten
   * to the stream's next seq). `inPlace`: the bytes before it in its buffer are free for the frame
   * header (encodeDataFrame).
   */
  appendBatch(s: StreamState, batch: Buffer, inPlace = false): void {
    setBaseOffset(batch, s.assignedSeq, 0);
    const frame = encodeDataFrame(s.id, batch, inPlace);
    const ab = frame.buffer;
    const back = this.#x.returnBuffer;
    // Framed in the gateway's buffer: it goes back once the frame is done with (a new 1 MB
    // buffer per request made the isolates collect their old generation every ~30 MB). Only a
    // buffer framed in place is the gateway's: a batch encoded here and its frame may both be
    // views of this thread's Buffer pool (64 KiB on Node 22 and later), which must never move.
    const release = inPlace && back !== null && ab === batch.buffer && ab instanceof ArrayBuffer ? () => back(ab) : null;
    this.#enqueueBatch(s, frame, readBatchHeader(batch, 0), false, release);
  }

  /**
   * An imported batch (stream-import.ts), stored as it is: its base offset is already its seq
   * (the first one may lie above the stream's start: the records below were trimmed where it
   * came from). The apply step is a replayed DATA frame's: chunk, tail, producer state.
   */
  importBatch(s: StreamState, batch: Buffer, h: BatchHeader): void {
    s.lastTs = Math.max(s.lastTs, h.maxTimestamp);
    // Checksummed whole: an imported batch's own CRC is not checked on this path.
    this.#enqueueBatch(s, encodeFrame(FrameType.Data, s.id, batch), h, true);
  }

  /**
   * The DATA frame of a batch (base offset already its first seq; `h` its header) for group
   * commit; once durable: chunk, tail, producer state. `local`: an import's, kept out of the object ledger.
   */
  #enqueueBatch(s: StreamState, frame: Buffer, h: BatchHeader, local: boolean, release: (() => void) | null = null): void {
    const { commit } = this.#x;
    const len = frame.length;
    s.assignedSeq = h.baseOffset + h.lastOffsetDelta + 1;
    // The callback made per append is one line; its body a method (V8 compiled a body written
    // inline again after every full collection: perf/README.md, "Objects mode").
    commit.enqueue(s, frame, (loc) => this.#applyData(s, h, len, loc), local, release);
  }

  /** A DATA frame is durable at `loc`: its chunk, the stream's tail and its producers. */
  #applyData(s: StreamState, h: BatchHeader, len: number, loc: Location): void {
    if (s.deleted) return;
    const { checkpoints, maxChunkBytes, maxProducers } = this.#x;
    const base = h.baseOffset;
    const last = base + h.lastOffsetDelta;
    const c = addChunk(s, { baseSeq: base, lastSeq: last, segId: loc.segId, pos: loc.pos, len, maxTs: h.maxTimestamp }, maxChunkBytes);
    checkpoints.chunkChanged(c, s.id);
    s.nextSeq = last + 1;
    // The catalog entry is rewritten only when the producers moved: the seq and timestamp an
    // append moves are in the stream's last chunk, which recovery reads back (shard-recovery.ts).
    // Rewriting it per append made appends spread over many streams pay one JSON entry each.
    if (recordBatchProducer(s.durableProducers, h, base, maxProducers)) checkpoints.streamChanged(s);
  }

  /** An import is complete: the staging stream takes its name (a CONFIG frame `{importing: false}`). */
  publish(s: StreamState): void {
    const { commit, checkpoints, streams } = this.#x;
    commit.enqueue(
      s,
      encodeFrame(FrameType.Config, s.id, Buffer.from(JSON.stringify({ importing: false }))),
      () => {
        if (s.deleted) return;
        s.meta = patchMeta(s.meta, { importing: false });
        // The move counts as an access: a sliding TTL (idleTtlSeconds) runs from here, not from the creation.
        s.lastAccessMs = Math.max(s.lastAccessMs, s.lastTs, this.#x.now());
        // Appends are checked against the accepted producers: after an import, accepted = durable.
        s.producers = cloneProducers(s.durableProducers);
        checkpoints.appliedChanges++;
        streams.name(s);
        checkpoints.streamChanged(s);
      },
      true,
    );
  }

  /** Seal; an idempotent producer's seal without records carries the producer in the frame. */
  seal(s: StreamState, producer: SealProducer | null = null, local = false): void {
    const { commit, checkpoints, maxProducers } = this.#x;
    s.closing = true;
    const payload = producer === null ? null : Buffer.from(JSON.stringify(producer));
    commit.enqueue(
      s,
      encodeFrame(FrameType.Seal, s.id, payload),
      () => {
        s.closed = true;
        checkpoints.appliedChanges++;
        if (producer !== null) recordProducer(s.durableProducers, producer.key, producer.epoch, producer.ack, maxProducers);
        checkpoints.streamChanged(s);
      },
      local,
    );
  }

  /** A config change: checks see `next` at once, s.meta once its CONFIG frame (the patch) is durable. */
  configure(s: StreamState, next: StreamMeta, patch: MetaPatch): void {
    const { commit, checkpoints, streams } = this.#x;
    streams.accept(s, next);
    commit.enqueue(s, encodeFrame(FrameType.Config, s.id, Buffer.from(JSON.stringify(patch))), () => {
      s.meta = patchMeta(s.meta, patch);
      checkpoints.appliedChanges++;
      streams.settle(s, next);
      checkpoints.streamChanged(s);
    });
  }

  /**
   * Move the start to `seq` (above the current start); the records below it die once durable.
   * An imported stream's start may lie beyond its last record (everything was trimmed where it came
   * from): its tail moves there too, as replay does (shard-recovery.ts).
   */
  trim(s: StreamState, seq: number, local = false): void {
    const { commit, checkpoints, index, deadSegments } = this.#x;
    if (seq > s.assignedSeq) s.assignedSeq = seq;
    commit.enqueue(
      s,
      encodeFrame(FrameType.Trim, s.id, encodeTrimPayload(seq)),
      () => {
        checkpoints.appliedChanges++;
        if (seq <= s.startSeq) return;
        s.startSeq = seq;
        if (seq > s.nextSeq) s.nextSeq = seq;
        index.dropWhile(s, (c) => c.lastSeq < seq);
        checkpoints.forgetDropped(s);
        checkpoints.streamChanged(s);
        deadSegments.changed();
      },
      local,
    );
  }

  /** Delete: the name is free at once; the data dies once the DELETE frame is durable. `local`: a drop or an abandoned import. */
  delete(s: StreamState, local = false): void {
    const { commit, checkpoints, streams, index, deadSegments } = this.#x;
    s.deleted = true;
    streams.unname(s);
    commit.enqueue(
      s,
      encodeFrame(FrameType.Delete, s.id, null),
      () => {
        streams.byId.delete(s.id);
        checkpoints.appliedChanges++;
        checkpoints.streamDeleted(s);
        index.dropWhile(s, () => true);
        checkpoints.forgetDropped(s);
        deadSegments.changed();
      },
      local,
    );
  }
}
