/**
 * One shard: the streams hashed to it, their log and their index. Lives on a shard worker
 * thread; nothing else touches its files.
 *
 *   op ──▶ validate against in-memory state ──▶ frame ──▶ pending group
 *                                                           │ (one group in flight at a time)
 *                                                           ▼
 *                                  SegmentLog.write: one write + fdatasync per segment
 *                                                           │
 *                      apply effects (index, durable tail) ─┴─▶ checkpoint to RocksDB ─▶ replies
 *
 * Seqs are assigned when an append is accepted, so concurrent appends to one stream are
 * ordered by arrival; they become visible to readers and are acknowledged only after the
 * group holding them is durable.
 */
import { SvcError } from '../../errors';
import {
  ATTR_COMPRESSION_MASK,
  type RecordInput,
  RecordBatchError,
  type BatchStats,
  encodeRecordBatch,
  readBatchHeader,
  setBaseOffset,
  splitBatches,
} from '../../util/record-batch';
import { parseJsonBatch } from '../../util/json-batch';
import {
  type AppendParams,
  type BatchLimits,
  type AppendResult,
  type ConfigureParams,
  type CreateParams,
  type CreateResult,
  type DeleteResult,
  type HeadParams,
  type ListParams,
  type ListResult,
  type ReadParams,
  type ReadResult,
  type ShardStats,
  type StreamInfo,
  type TailEvent,
  type TrimParams,
} from '../types';
import { CHECKPOINT_KEY, encodeCheckpoint, encodeStream, putChunk, streamKey } from './catalog-codec';
import { ChunkIndex, DEFAULT_INDEX_CACHE_CHUNKS } from './chunk-index';
import { FrameType, encodeFrame, encodeTrimPayload } from './frame';
import { inflateBatch } from '../render/inflate-batch';
import { type KvOp, type KvStore } from './kv-store';
import { ACKS_KEPT, DEFAULT_MAX_PRODUCERS, type ProducerAck, type SealProducer, checkProducer, isHttpProducerId, isKafkaProducerId, lastSequenceOf, producerIdOf, recordBatchProducer, recordProducer } from './producers';
import { type Group, GroupCommit, type Reply } from './group-commit';
import { compareNames, mediaType } from '../names';
import { type Location, type SegmentLog } from './segment-log';
import { gather } from './shard-reader';
import { recoverShard } from './shard-recovery';
import { type Chunk, type StreamMeta, type StreamState, addChunk, isExpired, isGone, newStreamState } from './stream-state';
import { sweepExpired } from './retention';
import { catalogFramesIn, encodeCatalogFrames } from './catalog-carry';
import { type SchemaRegistry } from '../schema-registry';
import { createConfig, planConfig, validateRecords } from './stream-config';

export type { Reply };


export interface ShardOptions {
  shardId: number;
  /** Shards in the node; stream ids are made node-unique as localId * shardCount + shardId. */
  shardCount: number;
  maxChunkBytes: number;
  /** Chunk index entries kept in memory beyond each stream's newest ones (chunk-index.ts); default 16,384. */
  indexCacheChunks?: number;
  limits: BatchLimits;
  now?: () => number;
  /** Idempotent producers remembered per stream (least recently written evicted); default 10,000. */
  maxProducersPerStream?: number;
  /** Registered schemas of this thread: binding checks and append validation (stream-config.ts). */
  schemas?: SchemaRegistry;
  /** Receives the tail events of watched streams after each applied group (live reads; see watch()). */
  onTail?: (events: TailEvent[]) => void;
  /** First tail-event version: a shard reopened by a new thread continues above the old one's. */
  tailVersionBase?: number;
  /** A log or index write failed: the shard takes no more writes, its thread stops and is restarted (worker-main.ts). */
  onStorageFailure?: (err: Error) => void;
  /** The disk is full (space-guard.ts): creates and appends are refused, deletes and trims (which free space) accepted. */
  lowSpace?: () => boolean;
}


/** Longest time the RocksDB checkpoint lags the applied log. */
const CHECKPOINT_EVERY_MS = 100;
/** Index writes that trigger a checkpoint at once. */
const CHECKPOINT_MAX_OPS = 4096;

export class Shard {
  readonly #store: KvStore;
  readonly #index: ChunkIndex;
  readonly #log: SegmentLog;
  readonly #opts: ShardOptions;
  readonly #now: () => number;
  readonly #streams: Map<number, StreamState>;
  readonly #byName: Map<string, StreamState>;
  #nextStreamId: number;
  readonly #commit: GroupCommit;
  /** End of the log as far as groups have been applied: the checkpoint position. */
  #durableEnd: Location;
  #kvOps: KvOp[] = [];
  #dirty = new Set<StreamState>();
  #sortedNames: string[] | null = null;
  /** Sealed segments whose data is all dead, waiting for the reaper. */
  #destroyed = new Set<number>();
  /** Sealed segments whose catalog frames (if any) are carried forward: they may be destroyed. */
  #carried = new Set<number>();
  #carrying = false;
  /** Metadata-relevant changes applied (the shard's part of appliedIndex; kept in the checkpoint). */
  #appliedChanges = 0;
  /** Group-commit key of the shard's own frames (CATALOG): not a stream. */
  readonly #shardFrames = newStreamState(0, { name: '', contentType: '', ttlSeconds: null, expiresAtMs: null, createdAtMs: 0 });
  #deadCheckNeeded = true;
  #checkpointTimer: NodeJS.Timeout | null = null;
  /** Chunks changed since the last checkpoint, with their stream id. */
  #dirtyChunks = new Map<Chunk, number>();
  /** Stream names with live readers on the gateway thread: their tail moves are reported (onTail). */
  readonly #watched = new Set<string>();
  /** Orders tail events and watch replies, which reach the gateway by different paths. */
  #tailVersion = 0;
  /** Config changes accepted but not yet durable: appends are checked against these; `s.meta` stays the durable one. */
  #acceptedMeta = new Map<StreamState, StreamMeta>();

  constructor(store: KvStore, log: SegmentLog, opts: ShardOptions) {
    this.#store = store;
    this.#log = log;
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
    this.#index = new ChunkIndex(store, opts.indexCacheChunks ?? DEFAULT_INDEX_CACHE_CHUNKS);
    let r: ReturnType<typeof recoverShard>;
    try {
      r = recoverShard(store, this.#index, log, opts.maxChunkBytes, opts.maxProducersPerStream ?? DEFAULT_MAX_PRODUCERS);
    } catch (err) {
      // Startup refusals name the shard, the file and the remedy (docs/storage.md).
      throw new Error(`shard ${opts.shardId}: ${(err as Error).message}`, { cause: err });
    }
    this.#streams = r.streams;
    this.#byName = r.byName;
    this.#nextStreamId = r.nextStreamId;
    this.#kvOps = r.ops;
    this.#durableEnd = log.tail;
    this.#tailVersion = opts.tailVersionBase ?? 0;
    // A start that replayed frames beyond the checkpoint counts its own checkpoint (below): it makes up
    // for a checkpoint decided but not written before a crash, so appliedIndex is above its last
    // figure after a restart (docs/storage.md).
    this.#appliedChanges = r.appliedChanges + (r.replayedFrames > 0 ? 1 : 0);
    this.#commit = new GroupCommit(log, {
      failed: (err) => opts.onStorageFailure?.(err),
      applied: (end) => {
        this.#durableEnd = end;
        this.#checkpointSoon();
      },
      afterReplies: (g) => {
        if (this.#watched.size > 0) this.#emitTail(g);
      },
    });
    this.#checkpoint(false);
    // Replayed chunks are in the store now: only each stream's last one stays in memory.
    for (const s of this.#streams.values()) if (s.recent.length > 1) s.recent = s.recent.slice(-1);
    this.recovery = { replayedFrames: r.replayedFrames, truncatedBytes: r.truncatedBytes, streams: r.streams.size };
  }

  readonly recovery: { replayedFrames: number; truncatedBytes: number; streams: number };

  // ── operations ────────────────────────────────────────────────────────────

  create(p: CreateParams, reply: Reply<CreateResult>): void {
    if (this.#refuse(reply, true)) return;
    const existing = this.#lookup(p.name);
    if (existing !== null) {
      if (isGone(existing, this.#now())) return reply(new SvcError('conflict', `stream ${p.name} was deleted and is kept for its forks`, { gone: true }));
      if (mediaType(existing.meta.contentType) !== mediaType(p.contentType)) {
        return reply(new SvcError('conflict', `stream exists with content type ${existing.meta.contentType}`, { next_seq: existing.nextSeq }));
      }
      return this.#commit.afterDurable(reply, () => ({ created: false, info: this.#info(existing) }));
    }
    let meta: StreamMeta;
    try {
      meta = { name: p.name, contentType: p.contentType, ttlSeconds: p.ttlSeconds, expiresAtMs: p.expiresAtMs, createdAtMs: this.#now(), ...createConfig(p, this.#opts.schemas) };
      validateRecords(meta, this.#opts.schemas, p.records, []);
    } catch (err) {
      return reply(err as SvcError);
    }
    const s = newStreamState(this.#nextStreamId++, meta);
    this.#streams.set(s.id, s);
    this.#byName.set(p.name, s);
    this.#sortedNames = null;
    this.#commit.enqueue(s, encodeFrame(FrameType.Create, s.id, Buffer.from(JSON.stringify(meta))), () => {
      s.durable = true;
      this.#appliedChanges++;
      this.#dirty.add(s);
    });
    if (p.records.length > 0) this.#appendRecords(s, p.records);
    if (p.closed) this.#seal(s);
    this.#commit.whenDurable(reply, () => ({ created: true, info: this.#info(s) }));
  }

  append(p: AppendParams, reply: Reply<AppendResult>): void {
    if (this.#refuse(reply, true)) return;
    const s = this.#lookupLive(p.name);
    if (s === null) return reply(this.#missing(p.name));
    const d = p.payload;
    const hasData = d.kind === 'json' || (d.kind === 'records' ? d.records.length > 0 : d.body.length > 0);
    // Producer rules come first: a retry of an accepted append is acknowledged whatever happened
    // since (a seal, a moved tail). Checked at accept time, so one producer's appends are ordered
    // by arrival, and a retry of an append still in flight is answered once that one is durable.
    const producer = p.producer ?? null;
    let producerId: bigint | null = null;
    if (producer !== null) {
      if (d.kind === 'batches' || (!hasData && !p.close)) {
        return reply(new SvcError('bad_request', 'producer headers apply to appends of records (a single record or a JSON batch) and to a seal'));
      }
      producerId = producerIdOf(producer.id);
      const c = checkProducer(s.producers, producerId.toString(), producer.epoch, producer.seq);
      if (c.kind === 'error') return reply(c.error);
      if (c.kind === 'duplicate') {
        const ack = c.ack;
        const lastSeq = c.lastSeq;
        return this.#commit.afterDurable(reply, () => ({
          startSeq: ack?.start ?? -1,
          nextSeq: ack?.next ?? -1,
          timestamp: ack?.ts ?? -1,
          closed: s.closed,
          duplicate: true,
          producerLastSeq: lastSeq,
        }));
      }
    }
    if (s.closing) {
      // A seal-only request on a sealed stream is idempotent; anything carrying data is refused.
      if (!hasData && p.close) return this.#commit.afterDurable(reply, () => this.#appendResult(s, s.nextSeq, s.lastTs));
      // Spec "Append or trim": the 409 for a sealed stream carries the producer's expected and received sequence.
      const seqHeaders = producer === null ? {} : { 'header:svc-expected-seq': producer.seq, 'header:svc-received-seq': producer.seq };
      return reply(new SvcError('stream_closed', 'stream is sealed', { next_seq: s.assignedSeq, ...seqHeaders }));
    }
    if (p.contentType !== null && mediaType(p.contentType) !== mediaType(s.meta.contentType)) {
      return reply(new SvcError('conflict', `content type ${p.contentType} does not match the stream's ${s.meta.contentType}`));
    }
    const writerSeq = p.writerSeq ?? null;
    if (writerSeq !== null) {
      const last = this.#metaOf(s).writerSeq;
      // Durable Streams Stream-Seq: compared bytewise, must increase.
      if (last !== undefined && Buffer.compare(Buffer.from(writerSeq), Buffer.from(last)) <= 0) {
        return reply(new SvcError('conflict', `Stream-Seq ${writerSeq} does not follow the last one accepted (${last})`, { writer_seq: last }));
      }
    }
    if (p.matchSeq !== undefined && p.matchSeq !== null && p.matchSeq !== s.assignedSeq) {
      return reply(new SvcError('seq_mismatch', `the stream's tail is at ${s.assignedSeq}, not at ${p.matchSeq}`, { next_seq: s.assignedSeq }));
    }
    const start = s.assignedSeq;
    let records = d.kind === 'records' ? d.records : null;
    let batches: Buffer[] = [];
    try {
      if (d.kind === 'json') records = this.#parseJsonBatch(d.body);
      if (d.kind === 'batches') batches = this.#checkBatches(d.body, p.origin === 'kafka', this.#metaOf(s).schemaValidate === true);
      validateRecords(this.#metaOf(s), this.#opts.schemas, records, batches);
    } catch (err) {
      return reply(err as SvcError);
    }
    // An idempotent Kafka producer's batch: checked here, where its sequence is known.
    let kafkaProducer: { key: string; epoch: number; seq: number; lastSeq: number } | null = null;
    if (p.origin === 'kafka' && batches.length > 0) {
      const k = this.#checkKafkaProducer(s, batches);
      if (k !== null && 'error' in k) return reply(k.error);
      if (k !== null && 'duplicate' in k) {
        const ack = k.duplicate;
        return this.#commit.afterDurable(reply, () => ({ startSeq: ack.start, nextSeq: ack.next, timestamp: ack.ts, closed: s.closed, duplicate: true, producerLastSeq: ack.seq }));
      }
      kafkaProducer = k;
    }
    const pb = producer !== null && producerId !== null ? { producerId, producerEpoch: producer.epoch, baseSequence: producer.seq } : null;
    const ts = records !== null && records.length > 0 ? this.#appendRecords(s, records, pb) : this.#stamp(s);
    const hasRecords = (records !== null && records.length > 0) || batches.length > 0;
    for (const b of batches) this.#appendBatch(s, b);
    // Logged right after the data, in the same group: replay sees both or, after a torn write, neither the sequence without its data.
    if (writerSeq !== null) this.#configure(s, { ...this.#metaOf(s), writerSeq }, { writerSeq });
    const next = s.assignedSeq;
    // A producer's seal without records carries the producer in the SEAL frame (there is no batch header to hold it).
    const sealProducer = pb !== null && !hasRecords ? { key: pb.producerId.toString(), epoch: pb.producerEpoch, ack: { seq: pb.baseSequence, start, next, ts } } : null;
    if (p.close) this.#seal(s, sealProducer);
    this.#touch(s);
    if (pb !== null) {
      const ack = { seq: pb.baseSequence, start, next, ts };
      recordProducer(s.producers, pb.producerId.toString(), pb.producerEpoch, ack, this.#opts.maxProducersPerStream ?? DEFAULT_MAX_PRODUCERS);
    }
    if (kafkaProducer !== null) {
      const ack = { seq: kafkaProducer.seq, start, next, ts };
      recordProducer(s.producers, kafkaProducer.key, kafkaProducer.epoch, ack, this.#opts.maxProducersPerStream ?? DEFAULT_MAX_PRODUCERS, kafkaProducer.lastSeq);
    }
    this.#commit.whenDurable(reply, () => ({ startSeq: start, nextSeq: next, timestamp: ts, closed: p.close }));
  }

  /**
   * Kafka idempotence (design/kafka.md): a batch with a producer id carries baseSequence, one
   * sequence per record. The next batch of a producer starts right after the last one's last
   * sequence; a repeat of one of the last ACKS_KEPT batches is answered with its original
   * offsets; anything else is refused with the Kafka error named in `kafka_error`
   * (OUT_OF_ORDER_SEQUENCE_NUMBER, DUPLICATE_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID), a stale
   * epoch with producer_fenced (INVALID_PRODUCER_EPOCH). Kafka sends one batch per partition.
   */
  #checkKafkaProducer(s: StreamState, batches: Buffer[]): { key: string; epoch: number; seq: number; lastSeq: number } | { error: SvcError } | { duplicate: ProducerAck } | null {
    const headers = batches.map((b) => readBatchHeader(b, 0));
    const idempotent = headers.filter((h) => isKafkaProducerId(h.producerId) && h.baseSequence >= 0);
    if (idempotent.length === 0) return null;
    if (batches.length > 1) return { error: new SvcError('invalid_batch', 'an idempotent producer sends one record batch per partition and request') };
    const h = idempotent[0]!;
    const key = h.producerId.toString();
    const c = checkProducer(s.producers, key, h.producerEpoch, h.baseSequence);
    if (c.kind === 'append') return { key, epoch: h.producerEpoch, seq: h.baseSequence, lastSeq: lastSequenceOf(h.baseSequence, h.lastOffsetDelta) };
    if (c.kind === 'duplicate') {
      if (c.ack !== null) return { duplicate: c.ack };
      return { error: new SvcError('conflict', `sequence ${h.baseSequence} of producer ${key} was written before, longer ago than the last ${ACKS_KEPT} batches`, { kafka_error: 46 }) };
    }
    if (c.error.code !== 'conflict') return { error: c.error };
    const known = s.producers.get(key);
    if (known === undefined) return { error: new SvcError('conflict', `producer ${key} is not known to this partition and starts at sequence 0, not ${h.baseSequence}`, { kafka_error: 59 }) };
    return { error: new SvcError('conflict', c.error.message, { kafka_error: 45, expected_seq: known.epoch === h.producerEpoch ? known.lastSeq + 1 : 0, received_seq: h.baseSequence }) };
  }

  trim(p: TrimParams, reply: Reply<AppendResult>): void {
    if (this.#refuse(reply)) return;
    const s = this.#lookupLive(p.name);
    if (s === null) return reply(this.#missing(p.name));
    if (p.seq > s.assignedSeq) {
      return reply(new SvcError('seq_out_of_range', `cannot trim to ${p.seq}: the stream ends at ${s.assignedSeq}`, { next_seq: s.assignedSeq }));
    }
    if (p.seq > s.startSeq) {
      const seq = p.seq;
      this.#commit.enqueue(s, encodeFrame(FrameType.Trim, s.id, encodeTrimPayload(seq)), () => this.#applyTrim(s, seq));
    }
    this.#commit.whenDurable(reply, () => this.#appendResult(s, s.startSeq, s.lastTs));
  }

  /**
   * Delete a stream. One that forks still read is only marked deleted (soft): it stays for them,
   * invisible to everything else, until the last fork lets go (configure with forkRefsDelta -1).
   */
  delete(name: string, reply: Reply<DeleteResult>): void {
    if (this.#refuse(reply)) return;
    const s = this.#lookupLive(name);
    if (s === null) return reply(this.#missing(name));
    const meta = this.#metaOf(s);
    if ((meta.forkRefs ?? 0) > 0) {
      this.#configure(s, { ...meta, softDeleted: true }, { softDeleted: true });
      return this.#commit.whenDurable(reply, () => ({ soft: true, fork: null }));
    }
    this.#delete(s);
    this.#commit.whenDurable(reply, () => ({ soft: false, fork: meta.fork ?? null }));
  }

  /** Change a stream's config through the log (a CONFIG frame); the reply is the stream as of the change, once durable. */
  configure(p: ConfigureParams, reply: Reply<StreamInfo>): void {
    if (this.#refuse(reply)) return;
    const s = this.#lookup(p.name);
    if (s === null || !s.durable) return reply(notFound(p.name));
    if (isGone(s, this.#now()) && (p.forkRefsDelta === undefined || p.softDeleted !== undefined)) return reply(this.#missing(p.name));
    let plan: ReturnType<typeof planConfig>;
    try {
      plan = planConfig(this.#metaOf(s), p, this.#opts.schemas);
    } catch (err) {
      return reply(err as SvcError);
    }
    const { next, patch } = plan;
    if (Object.keys(patch).length === 0) return this.#commit.afterDurable(reply, () => this.#info(s));
    this.#configure(s, next, patch);
    const info = (): StreamInfo => this.#info(s, next);
    // The last fork let go of a deleted (or expired) stream: it goes now.
    if ((next.forkRefs ?? 0) === 0 && (next.softDeleted === true || isExpired(s, this.#now()))) this.#delete(s);
    this.#commit.whenDurable(reply, info);
  }

  #configure(s: StreamState, next: StreamMeta, patch: Partial<StreamMeta>): void {
    this.#acceptedMeta.set(s, next);
    this.#commit.enqueue(s, encodeFrame(FrameType.Config, s.id, Buffer.from(JSON.stringify(patch))), () => {
      s.meta = { ...s.meta, ...patch };
      this.#appliedChanges++;
      if (this.#acceptedMeta.get(s) === next) this.#acceptedMeta.delete(s);
      this.#dirty.add(s);
    });
  }

  /** A live stream of this shard bound to `schema` (a schema is not deleted while one is), or null. */
  streamBoundTo(schema: string): string | null {
    const now = this.#now();
    for (const s of this.#byName.values()) {
      if (s.deleted || isExpired(s, now)) continue;
      if (s.meta.schema === schema || this.#metaOf(s).schema === schema) return s.meta.name;
    }
    return null;
  }

  read(p: ReadParams): ReadResult {
    const s = this.#lookupDurable(p.name, p.internal === true);
    if (p.touch !== false) this.#touch(s);
    const tail = s.nextSeq;
    const seq = p.seq < 0 ? tail : p.seq;
    if (seq > tail) throw new SvcError('seq_out_of_range', `seq ${seq} is beyond the end of the stream (${tail})`, { next_seq: tail });
    const from = Math.max(seq, s.startSeq);
    const g = gather(this.#log, this.#index, s, from, p.count, p.bytes, p.format);
    const upToDate = g.nextSeq >= tail;
    return {
      body: g.body,
      count: g.count,
      nextSeq: g.nextSeq,
      tailSeq: tail,
      startSeq: s.startSeq,
      upToDate,
      closed: upToDate && s.closed,
      streamId: this.#globalId(s),
      contentType: s.meta.contentType,
      fork: s.meta.fork ?? null,
    };
  }

  head(h: string | HeadParams): StreamInfo {
    const p: HeadParams = typeof h === 'string' ? { name: h } : h;
    const s = this.#lookupDurable(p.name, p.internal === true);
    if (p.touch === true) this.#touch(s);
    return this.#info(s);
  }

  /**
   * Start (or stop) reporting a stream's tail moves to the gateway thread, where its live readers
   * wait; returns the durable tail now. Keyed by name: a stream deleted and created again under
   * the name stays watched, and its events carry the new stream id. A missing stream reads as deleted.
   */
  watch(name: string, on: boolean): TailEvent {
    if (on) this.#watched.add(name);
    else this.#watched.delete(name);
    const s = this.#lookup(name);
    const version = ++this.#tailVersion;
    if (s === null || !s.durable) return { name, streamId: -1, nextSeq: 0, closed: false, deleted: true, bytes: 0, version };
    return { name, streamId: this.#globalId(s), nextSeq: s.nextSeq, closed: s.closed, deleted: false, bytes: 0, version };
  }

  list(p: ListParams): ListResult {
    if (this.#sortedNames === null) this.#sortedNames = [...this.#byName.keys()].sort(compareNames);
    const names = this.#sortedNames;
    let lo = firstAtLeast(names, p.prefix, false);
    if (p.startAfter !== '') lo = Math.max(lo, firstAtLeast(names, p.startAfter, true));
    const out: StreamInfo[] = [];
    const now = this.#now();
    for (let i = lo; i < names.length && names[i]!.startsWith(p.prefix); i++) {
      const s = this.#byName.get(names[i]!);
      if (s === undefined || !s.durable || s.deleted || isExpired(s, now) || s.meta.softDeleted === true) continue;
      if (out.length === p.limit) return { streams: out, hasMore: true };
      out.push(this.#info(s));
    }
    return { streams: out, hasMore: false };
  }

  stats(): ShardStats {
    const now = this.#now();
    let streamCount = 0;
    for (const s of this.#byName.values()) if (s.durable && !isExpired(s, now) && s.meta.softDeleted !== true) streamCount++;
    return { streamCount, objectCount: this.#log.sealedSegments().length, destroyedObjectBacklog: this.#destroyed.size, appliedChanges: this.#appliedChanges, commits: this.#commit.stats };
  }

  /** Start writing whatever was accepted (called once per batch of requests from the gateway). */
  flush(): void {
    this.#commit.flush();
  }

  /** One tail event per watched stream the applied group touched (appends, seal, trim, delete). */
  #emitTail(g: Group): void {
    const events: TailEvent[] = [];
    for (const [s, frames] of g.frames) {
      if (!this.#watched.has(s.meta.name)) continue;
      let bytes = 0;
      for (const f of frames) bytes += f.buf.length;
      events.push({ name: s.meta.name, streamId: this.#globalId(s), nextSeq: s.nextSeq, closed: s.closed, deleted: s.deleted, bytes, version: ++this.#tailVersion });
    }
    if (events.length > 0) this.#opts.onTail?.(events);
  }

  /** Periodic work: TTL expiry, absolute expiry, dead segment detection. */
  maintain(): void {
    if (this.#commit.failed !== null) return;
    const now = this.#now();
    const r = sweepExpired(this.#log, this.#index, this.#byName.values(), now);
    // An expired stream that forks still read stays (gone) until the last fork lets go.
    for (const s of r.expiredStreams) if ((this.#metaOf(s).forkRefs ?? 0) === 0) this.#delete(s);
    for (const s of r.trimmed) {
      this.#appliedChanges++;
      this.#forgetDropped(s);
      // A recent head cut in place by expiry is written under its new base seq.
      const first = s.recent[0];
      if (first !== undefined) this.#dirtyChunks.set(first, s.id);
      this.#dirty.add(s);
      this.#deadCheckNeeded = true;
    }
    if (r.trimmed.size > 0) this.#checkpointSoon();
    if (r.expiredStreams.length > 0) this.flush();
    if (this.#deadCheckNeeded) this.#findDeadSegments();
  }

  /** Delete sealed segments whose data is all dead. */
  reap(): number {
    if (this.#destroyed.size === 0 || this.#commit.failed !== null) return 0;
    this.#appliedChanges += this.#destroyed.size;
    // The checkpoint must be durable past these segments before they go: replay never needs them then.
    this.#checkpoint(true);
    let n = 0;
    for (const segId of this.#destroyed) {
      this.#log.deleteSegment(segId);
      n++;
    }
    this.#destroyed.clear();
    return n;
  }

  /** Wait for every accepted write to be durable, then checkpoint with sync. */
  async close(): Promise<void> {
    try {
      await this.#commit.drain();
      if (this.#commit.failed === null) this.#checkpoint(true);
    } finally {
      // Even after a failed write: the files must be released for the thread that recovers them.
      this.#log.close();
      await this.#store.close();
    }
  }

  // ── internals ─────────────────────────────────────────────────────────────

  /** Refuse a write after a storage failure, and one that `grows` the log while the disk is full. */
  #refuse(reply: Reply<never>, grows = false): boolean {
    if (grows && this.#opts.lowSpace?.() === true) {
      reply(new SvcError('storage_unavailable', 'the disk is full: creates and appends are refused until space is free again (deletes and trims are accepted)', { reason: 'disk_full' }));
      return true;
    }
    if (this.#commit.failed === null) return false;
    reply(new SvcError('storage_unavailable', `storage write failed earlier: ${this.#commit.failed.message}`));
    return true;
  }

  /** A stream by name (accepted creates included, expired ones excluded unless forks keep them: see isGone). */
  #lookup(name: string): StreamState | null {
    const s = this.#byName.get(name);
    if (s === undefined || s.deleted) return null;
    if (isExpired(s, this.#now()) && (this.#metaOf(s).forkRefs ?? 0) === 0) {
      this.#delete(s);
      return null;
    }
    return s;
  }

  /** A stream that is neither deleted nor gone. */
  #lookupLive(name: string): StreamState | null {
    const s = this.#lookup(name);
    return s === null || isGone(s, this.#now()) ? null : s;
  }

  /** not_found, marked `gone` when the name belongs to a stream kept for its forks (Durable Streams: 410). */
  #missing(name: string): SvcError {
    const s = this.#lookup(name);
    return s !== null && isGone(s, this.#now()) ? new SvcError('not_found', `stream ${name} was deleted`, { gone: true }) : notFound(name);
  }

  /** A stream readers may see: its creation is durable; a gone one only for `internal` (fork) reads. */
  #lookupDurable(name: string, internal = false): StreamState {
    const s = this.#lookup(name);
    if (s === null || !s.durable) throw notFound(name);
    if (!internal && isGone(s, this.#now())) throw this.#missing(name);
    return s;
  }

  /** Renew an idle TTL; checkpointed with the stream, not logged. */
  #touch(s: StreamState): void {
    if ((s.meta.idleTtlSeconds ?? null) === null) return;
    s.lastAccessMs = this.#now();
    this.#dirty.add(s);
    this.#checkpointSoon();
  }

  /** Server time for an append, never behind the stream's previous one. */
  #stamp(s: StreamState): number {
    const ts = Math.max(this.#now(), s.lastTs);
    s.lastTs = ts;
    return ts;
  }

  /** One batch; an idempotent producer's append carries the producer in the batch header (the log is its state). */
  #appendRecords(s: StreamState, records: RecordInput[], producer: { producerId: bigint; producerEpoch: number; baseSequence: number } | null = null): number {
    const ts = this.#stamp(s);
    const batch = encodeRecordBatch(producer === null ? { baseOffset: s.assignedSeq, baseTimestamp: ts, records } : { baseOffset: s.assignedSeq, baseTimestamp: ts, records, ...producer });
    this.#appendBatch(s, batch);
    return ts;
  }

  #appendBatch(s: StreamState, batch: Buffer): void {
    setBaseOffset(batch, s.assignedSeq, 0);
    const h = readBatchHeader(batch, 0);
    const base = s.assignedSeq;
    const last = base + h.lastOffsetDelta;
    s.assignedSeq = last + 1;
    const frame = encodeFrame(FrameType.Data, s.id, batch);
    this.#commit.enqueue(s, frame, (loc) => {
      if (s.deleted) return;
      const c = addChunk(s, { baseSeq: base, lastSeq: last, segId: loc.segId, pos: loc.pos, len: frame.length, maxTs: h.maxTimestamp }, this.#opts.maxChunkBytes);
      // A merged chunk is the same object appended to many times: written once per checkpoint.
      this.#dirtyChunks.set(c, s.id);
      s.nextSeq = last + 1;
      recordBatchProducer(s.durableProducers, h, base, this.#opts.maxProducersPerStream ?? DEFAULT_MAX_PRODUCERS);
      this.#dirty.add(s);
    });
  }

  #parseJsonBatch(body: Buffer): RecordInput[] {
    const l = this.#opts.limits;
    const parsed = parseJsonBatch(body, { maxRecords: l.maxBatchRecords, maxRecordBytes: l.maxRecordBytes });
    if ('error' in parsed) throw new SvcError(parsed.error, parsed.message);
    return parsed.records;
  }

  /**
   * Binary batches: whole and valid, and within the same limits as a JSON batch; uncompressed,
   * except from Kafka Produce, whose compressed batches are stored as sent after a check that they
   * decompress to well-formed records within the limits (schemas are not checked on them: a stream
   * that validates takes uncompressed batches only).
   */
  #checkBatches(body: Buffer, kafka: boolean, validating: boolean): Buffer[] {
    const l = this.#opts.limits;
    // The record walk that validates the batches also finds their largest value (no second pass).
    const stats: BatchStats = { largestValue: 0 };
    const batches = splitBatches(body, stats);
    if (batches instanceof RecordBatchError) throw new SvcError(batches.code === 'unsupported_compression' ? 'unsupported_compression' : 'invalid_batch', batches.message);
    let count = 0;
    for (const b of batches) {
      const h = readBatchHeader(b, 0);
      const compressed = (h.attributes & ATTR_COMPRESSION_MASK) !== 0;
      if (compressed && !kafka) throw new SvcError('unsupported_compression', 'compressed record batches are not accepted over HTTP yet');
      if (compressed && validating) throw new SvcError('unsupported_compression', 'a stream that validates its records against a schema takes uncompressed batches only');
      if (isHttpProducerId(h.producerId)) throw new SvcError('invalid_batch', 'producer ids from 2^62 up are reserved for Svc-Producer-Id appends');
      // Offsets are assigned from lastOffsetDelta; a compressed batch must agree with its header's count.
      if (compressed && h.recordsCount !== h.lastOffsetDelta + 1) throw new SvcError('invalid_batch', `recordsCount ${h.recordsCount} does not match lastOffsetDelta ${h.lastOffsetDelta}`);
      count += h.recordsCount;
      if (count > l.maxBatchRecords) throw new SvcError('batch_too_large', `a batch is limited to ${l.maxBatchRecords} records`);
      // A compressed batch is stored as sent but checked like any other: it must decompress to well-formed records (as a Kafka broker validates it).
      if (compressed) this.#inflateChecked(b, stats);
    }
    if (stats.largestValue > l.maxRecordBytes) {
      throw new SvcError('record_too_large', `a record is limited to ${l.maxRecordBytes} bytes (a record of the batch has ${stats.largestValue})`);
    }
    return batches;
  }

  #inflateChecked(b: Buffer, stats: BatchStats): void {
    let plain: Buffer;
    try {
      plain = inflateBatch(b);
    } catch (err) {
      throw new SvcError('invalid_batch', (err as Error).message);
    }
    const split = splitBatches(plain, stats);
    if (split instanceof RecordBatchError) throw new SvcError('invalid_batch', `compressed batch: ${split.message}`);
  }

  #seal(s: StreamState, producer: SealProducer | null = null): void {
    s.closing = true;
    const payload = producer === null ? null : Buffer.from(JSON.stringify(producer));
    this.#commit.enqueue(s, encodeFrame(FrameType.Seal, s.id, payload), () => {
      s.closed = true;
      this.#appliedChanges++;
      if (producer !== null) recordProducer(s.durableProducers, producer.key, producer.epoch, producer.ack, this.#opts.maxProducersPerStream ?? DEFAULT_MAX_PRODUCERS);
      this.#dirty.add(s);
    });
  }

  #applyTrim(s: StreamState, seq: number): void {
    this.#appliedChanges++;
    if (seq <= s.startSeq) return;
    s.startSeq = seq;
    this.#index.dropWhile(s, (c) => c.lastSeq < seq);
    this.#forgetDropped(s);
    this.#dirty.add(s);
    this.#deadCheckNeeded = true;
  }

  #delete(s: StreamState): void {
    s.deleted = true;
    if (this.#byName.get(s.meta.name) === s) this.#byName.delete(s.meta.name);
    this.#sortedNames = null;
    this.#commit.enqueue(s, encodeFrame(FrameType.Delete, s.id, null), () => {
      this.#streams.delete(s.id);
      this.#appliedChanges++;
      this.#dirty.delete(s);
      this.#kvOps.push({ type: 'del', key: streamKey(s.id) });
      this.#index.dropWhile(s, () => true);
      this.#forgetDropped(s);
      this.#deadCheckNeeded = true;
    });
  }

  /**
   * Checkpoints are batched: a RocksDB write per group commit cost more worker CPU than the
   * append itself. The log is the write-ahead log, so a later checkpoint only means a longer
   * replay after a crash (at most CHECKPOINT_EVERY_MS of log), never lost data.
   */
  #checkpointSoon(): void {
    // appliedIndex counts each checkpoint when it is decided, so the figure is final when the
    // change that caused it is acknowledged (the write itself follows within CHECKPOINT_EVERY_MS).
    if (this.#checkpointTimer === null) this.#appliedChanges++;
    if (this.#kvOps.length + this.#dirtyChunks.size >= CHECKPOINT_MAX_OPS) {
      this.#checkpoint(false);
      return;
    }
    if (this.#checkpointTimer !== null) return;
    this.#checkpointTimer = setTimeout(() => {
      this.#checkpointTimer = null;
      if (this.#commit.failed === null) this.#checkpoint(false);
    }, CHECKPOINT_EVERY_MS);
    this.#checkpointTimer.unref();
  }

  #checkpoint(sync: boolean): void {
    if (this.#checkpointTimer !== null) {
      clearTimeout(this.#checkpointTimer);
      this.#checkpointTimer = null;
    }
    /** Streams whose recent chunks are all stored after this write: they keep only their last. */
    const stored = new Set<number>();
    for (const [c, sid] of this.#dirtyChunks) {
      putChunk(this.#kvOps, sid, c);
      stored.add(sid);
    }
    this.#dirtyChunks.clear();
    for (const s of this.#dirty) this.#kvOps.push({ type: 'put', key: streamKey(s.id), value: encodeStream(s) });
    this.#dirty.clear();
    const end = this.#durableEnd;
    this.#kvOps.push({ type: 'put', key: CHECKPOINT_KEY, value: encodeCheckpoint({ segId: end.segId, pos: end.pos, nextStreamId: this.#nextStreamId, appliedChanges: this.#appliedChanges }) });
    const ops = this.#kvOps;
    this.#kvOps = [];
    this.#store.write(ops, sync);
    for (const sid of stored) {
      const s = this.#streams.get(sid);
      if (s !== undefined && s.recent.length > 1) s.recent = s.recent.slice(-1);
    }
  }

  /** Chunks dropped from a stream's index must not be written back by a pending put. */
  #forgetDropped(s: StreamState): void {
    for (const [c, sid] of this.#dirtyChunks) if (sid === s.id && !s.recent.includes(c)) this.#dirtyChunks.delete(c);
  }

  /** What the chunk index holds in memory now: every stream's recent chunks, and the page cache. */
  indexMemory(): { recentChunks: number; cachedChunks: number } {
    let recentChunks = 0;
    for (const s of this.#streams.values()) recentChunks += s.recent.length;
    return { recentChunks, cachedChunks: this.#index.cachedChunks };
  }

  #findDeadSegments(): void {
    this.#deadCheckNeeded = false;
    // The store must hold every applied chunk before it is asked which segments are named.
    this.#checkpoint(false);
    const carry: number[] = [];
    const carryIds = new Set<number>();
    // Only segments wholly behind the applied end: a newer one may hold frames still in flight, not yet indexed.
    for (const segId of this.#log.sealedSegments()) {
      if (segId >= this.#durableEnd.segId || this.#destroyed.has(segId) || this.#index.segmentInUse(segId)) continue;
      // A segment holding catalog frames goes only after they are carried forward (catalog-carry.ts).
      if (!this.#carried.has(segId)) {
        const ids = catalogFramesIn(this.#log, segId);
        if (ids !== null) {
          carry.push(segId);
          for (const id of ids) carryIds.add(id);
          continue;
        }
        this.#carried.add(segId);
      }
      this.#destroyed.add(segId);
    }
    if (carry.length > 0) this.#carryCatalog(carry, carryIds);
  }

  /**
   * Write the catalog of `ids` (the live ones) and the live id list at the tail; once durable,
   * the segments may go. Frames accepted earlier may land before or after it in the log: it
   * carries the accepted meta (a CONFIG frame after it sets the same fields again) and the
   * durable start, tail and seal, which replay only ever moves forward (applyCarried).
   */
  #carryCatalog(segs: number[], ids: Set<number>): void {
    if (this.#carrying) {
      this.#deadCheckNeeded = true;
      return;
    }
    const streams: StreamState[] = [];
    const liveIds: number[] = [];
    for (const s of this.#streams.values()) {
      // A stream whose delete is accepted is left out: its DELETE frame is in this group or an earlier one.
      if (s.deleted) continue;
      // One whose create is not durable yet is live: its CREATE frame precedes this one in the log.
      liveIds.push(s.id);
      if (s.durable && ids.has(s.id)) streams.push({ ...s, meta: this.#metaOf(s) });
    }
    this.#carrying = true;
    const frames = encodeCatalogFrames(streams, liveIds, this.#nextStreamId);
    frames.forEach((f, i) =>
      this.#commit.enqueue(this.#shardFrames, f, i < frames.length - 1 ? null : () => {
        this.#carrying = false;
        this.#appliedChanges++;
        for (const segId of segs) this.#carried.add(segId);
        this.#deadCheckNeeded = true;
      }),
    );
    this.#commit.flush();
  }

  #globalId(s: StreamState): number {
    return s.id * this.#opts.shardCount + this.#opts.shardId;
  }

  /** The stream's meta as of accepted changes (what new appends are checked against). */
  #metaOf(s: StreamState): StreamMeta {
    return this.#acceptedMeta.get(s) ?? s.meta;
  }

  #info(s: StreamState, meta: StreamMeta = this.#metaOf(s)): StreamInfo {
    return {
      name: s.meta.name,
      streamId: this.#globalId(s),
      contentType: s.meta.contentType,
      startSeq: s.startSeq,
      nextSeq: s.nextSeq,
      closed: s.closed,
      ttlSeconds: s.meta.ttlSeconds,
      expiresAtMs: s.meta.expiresAtMs,
      createdAtMs: s.meta.createdAtMs,
      schema: s.meta.schema ?? null,
      schemaValidate: s.meta.schemaValidate ?? false,
      kafkaTopic: s.meta.kafkaTopic ?? null,
      idleTtlSeconds: s.meta.idleTtlSeconds ?? null,
      lastAccessMs: s.lastAccessMs,
      fork: s.meta.fork ?? null,
      forkRefs: meta.forkRefs ?? 0,
      gone: meta.softDeleted === true || isExpired(s, this.#now()),
      writerSeq: meta.writerSeq ?? null,
    };
  }

  #appendResult(s: StreamState, start: number, ts: number): AppendResult {
    return { startSeq: start, nextSeq: s.nextSeq, timestamp: ts, closed: s.closed };
  }
}

function notFound(name: string): SvcError {
  return new SvcError('not_found', `no stream ${name}`);
}

/** Index of the first name >= key (or > key when `strict`). */
function firstAtLeast(names: readonly string[], key: string, strict: boolean): number {
  let lo = 0;
  let hi = names.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareNames(names[mid]!, key);
    if (c < 0 || (strict && c === 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
