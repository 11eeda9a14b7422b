/**
 * One shard: the streams hashed to it, their log and their index. Lives on a shard worker
 * thread; nothing else touches its files.
 *
 *   op ──▶ validate against in-memory state ──▶ frame ──▶ pending group
 *          (append-checks.ts, producers.ts,                 │ (one group in flight at a time)
 *           stream-config.ts)                               ▼
 *                                  SegmentLog.write: one write + fdatasync per segment
 *                                                           │
 *            apply effects (index, durable tail) ───────────┴─▶ replies ─▶ tail events (tail-watches.ts)
 *                 └─▶ checkpoint to RocksDB within 100 ms (checkpointer.ts)
 *
 * Seqs are assigned when an append is accepted, so concurrent appends to one stream are
 * ordered by arrival; they become visible to readers and are acknowledged only after the
 * group holding them is durable. The frames of accepted changes and their apply steps are in
 * stream-writes.ts; the streams themselves are kept by stream-catalog.ts, their metadata
 * normalised when read from disk (stream-meta.ts); dead segments are found and reaped by
 * dead-segments.ts.
 */
import { SvcError } from '../../errors';
import {
  type AdoptParams,
  type AdoptResult,
  type AppendParams,
  type BatchLimits,
  type AppendResult,
  type ConfigureParams,
  type CreateParams,
  type CreateResult,
  type DeleteResult,
  type DropParams,
  type DropResult,
  type Durability,
  type HeadParams,
  type ImportBeginParams,
  type ImportFramesParams,
  type ImportFramesResult,
  type ImportResult,
  type ImportStepParams,
  type ListParams,
  type ListResult,
  type ReadParams,
  type ReadResult,
  type ShardStats,
  type StreamInfo,
  type TailEvent,
  type TrimParams,
} from '../types';
import { type KafkaProducerAppend, checkBatches, checkDsJson, checkJsonBatch, checkKafkaProducer, contentTypeMismatch, writerSeqRegression } from './append-checks';
import { Checkpointer } from './checkpointer';
import { ChunkIndex, DEFAULT_INDEX_CACHE_CHUNKS } from './chunk-index';
import { DeadSegments } from './dead-segments';
import { type KvStore } from './kv-store';
import { DEFAULT_MAX_PRODUCERS, checkProducer, cloneProducers, producerIdOf, recordProducer } from './producers';
import { GroupCommit, type Replicator, type Reply } from './group-commit';
import { type CommitBarrier } from './commit-barrier';
import { type ObjectStoreStats, type ProducerSnapshotRecord } from '../../objects';
import { mediaType } from '../names';
import { type Location, type SegmentLog } from './segment-log';
import { type ShardCache, gather, gatherBatches } from './shard-reader';
import { type RangeCache } from '../../objects';
import { type RemoteBatch, type RemoteChunks, type RemoteEntry } from './remote-chunks';
import { RemoteReader } from './remote-reader';
import { adoptProducers } from './adopt-producers';
import { SILENT_WORKER_LOG, type WorkerLog } from './worker-log';
import { type ReadCache } from './read-cache';
import { recoverShard } from './shard-recovery';
import { StreamCatalog } from './stream-catalog';
import { StreamImports } from './stream-import';
import { type StreamMeta, readMeta } from './stream-meta';
import { type StreamState, isExpired, isGone, servedStart } from './stream-state';
import { type BatchProducer, StreamWrites } from './stream-writes';
import { sweepExpired } from './retention';
import { TailWatches } from './tail-watches';
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
  /** The worker's read cache (read-cache.ts), shared by its shards; absent: none. */
  readCache?: ReadCache;
  /** This shard reports the worker's read cache in its stats (one shard per worker does). */
  reportsReadCache?: boolean;
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
  /** Objects mode (object-commit.ts): groups are made durable in the object store and the ledger before the local write. */
  replicator?: Replicator;
  /** Objects mode: the requests of this shard's object store (reported with its stats). */
  objectStats?: ObjectStoreStats;
  /** The worker's commit barrier (commit-barrier.ts): groups of its shards started in one turn share one fdatasync. Not with a replicator. */
  barrier?: CommitBarrier;
  /** Takes back a buffer the gateway thread gave up with an append (`ownBuffer`), once its frame is written and applied (StreamWritesContext.returnBuffer). */
  returnBuffer?: (ab: ArrayBuffer) => void;
  /** The durability class of streams that have none of their own (--durability); default `sync`. */
  durability?: Durability;
  /** Objects mode: reads of adopted streams below their remote end, from the object store (docs/objects.md); absent: such reads are refused. */
  remoteReads?: RemoteReads;
  /** Lines for the node's log, for what no request answers (worker-log.ts); default: nowhere. */
  log?: WorkerLog;
}

/** What a shard reads adopted streams' remote records with (worker-main.ts). */
export interface RemoteReads {
  /** The worker's object range cache (`--objects-cache-bytes`), shared by its shards. */
  cache: RangeCache<RemoteBatch[]>;
  /** A ranged GET of the object store. */
  get(key: string, range: { offset: number; length: number }): Promise<Buffer>;
  /** The stream's ledger entries read again (a GET found no object: compaction may have replaced it). */
  entries(stream: string): Promise<RemoteEntry[]>;
  /** Read-ahead of a catch-up reader, in bytes (default remote-reader.ts's). */
  readAheadBytes?: number;
}

/**
 * A read reached records in the object store that the cache does not hold and has none before
 * them to answer with: `Shard.readAsync` runs it again once `ready` settles.
 */
class RemoteWait {
  constructor(readonly ready: Promise<void>) {}
}

/** Re-runs of one read after fetches, at most (each fetch leaves its range with the reader). */
const MAX_REMOTE_WAITS = 8;

export class Shard {
  readonly #store: KvStore;
  readonly #index: ChunkIndex;
  readonly #readCache: ShardCache | undefined;
  readonly #log: SegmentLog;
  readonly #opts: ShardOptions;
  readonly #say: WorkerLog;
  readonly #now: () => number;
  readonly #maxProducers: number;
  readonly #streams: StreamCatalog;
  readonly #commit: GroupCommit;
  readonly #checkpoints: Checkpointer;
  readonly #deadSegments: DeadSegments;
  readonly #watches: TailWatches;
  readonly #writes: StreamWrites;
  readonly #imports: StreamImports;
  /** The reader of each adopted stream's remote chunks, made at its first remote read. */
  readonly #remoteReaders = new WeakMap<RemoteChunks, RemoteReader>();
  /** End of the log as far as groups have been applied: the checkpoint position. */
  #durableEnd: Location;

  constructor(store: KvStore, log: SegmentLog, opts: ShardOptions) {
    this.#store = store;
    this.#log = log;
    this.#opts = opts;
    this.#say = opts.log ?? SILENT_WORKER_LOG;
    this.#now = opts.now ?? Date.now;
    this.#maxProducers = opts.maxProducersPerStream ?? DEFAULT_MAX_PRODUCERS;
    this.#index = new ChunkIndex(store, opts.indexCacheChunks ?? DEFAULT_INDEX_CACHE_CHUNKS);
    this.#readCache = opts.readCache === undefined ? undefined : { cache: opts.readCache, shardId: opts.shardId };
    let r: ReturnType<typeof recoverShard>;
    try {
      r = recoverShard(store, this.#index, log, opts.maxChunkBytes, this.#maxProducers);
    } catch (err) {
      // Startup refusals name the shard, the file and the remedy (docs/storage.md).
      throw new Error(`shard ${opts.shardId}: ${(err as Error).message}`, { cause: err });
    }
    this.#streams = new StreamCatalog(r.streams, r.byName, r.nextStreamId);
    this.#durableEnd = log.tail;
    this.#watches = new TailWatches(opts.tailVersionBase ?? 0, opts.onTail);
    // A start that replayed frames beyond the checkpoint counts its own checkpoint (below): it makes up
    // for a checkpoint decided but not written before a crash, so appliedIndex is above its last
    // figure after a restart (docs/storage.md).
    this.#checkpoints = new Checkpointer(
      store,
      {
        durableEnd: () => this.#durableEnd,
        // `async` streams' groups are written without fdatasync: a checkpoint refers only to synced log.
        syncLog: () => this.#commit.syncWritten(),
        nextStreamId: () => this.#streams.nextStreamId,
        stream: (id) => this.#streams.byId.get(id),
        healthy: () => this.#commit.failed === null,
      },
      r.ops,
      r.appliedChanges + (r.replayedFrames > 0 ? 1 : 0),
    );
    const defaultDurability: Durability = opts.durability ?? 'sync';
    this.#commit = new GroupCommit(log, {
      failed: (err) => opts.onStorageFailure?.(err),
      applied: (end) => {
        this.#durableEnd = end;
        this.#checkpoints.soon();
      },
      afterReplies: (g) => {
        if (this.#watches.any) this.#watches.emit(g, (s) => this.#globalId(s));
      },
      asyncStream: (s) => (s.meta.durability ?? defaultDurability) === 'async',
    }, opts.replicator ?? null, opts.barrier === undefined || opts.replicator !== undefined ? undefined : (stats) => opts.barrier!.writer(opts.shardId, log, stats));
    this.#deadSegments = new DeadSegments({
      log,
      index: this.#index,
      commit: this.#commit,
      checkpointer: this.#checkpoints,
      durableEnd: () => this.#durableEnd,
      streams: () => this.#streams.byId.values(),
      nextStreamId: () => this.#streams.nextStreamId,
      metaOf: (s) => this.#streams.metaOf(s),
    });
    this.#writes = new StreamWrites({
      commit: this.#commit,
      checkpoints: this.#checkpoints,
      streams: this.#streams,
      index: this.#index,
      deadSegments: this.#deadSegments,
      maxChunkBytes: opts.maxChunkBytes,
      maxProducers: this.#maxProducers,
      now: this.#now,
      // Objects mode keeps them: a failed group can settle while its object PUT is still sending
      // (or retrying) its frames, and a buffer handed back then would be reused under it.
      returnBuffer: opts.replicator === undefined ? (opts.returnBuffer ?? null) : null,
    });
    this.#imports = new StreamImports(this.#streams, this.#writes);
    this.#checkpoints.write(false);
    // An import the log has unpublished was cut short (its caller got no answer and imports again): its staging stream goes.
    let abandoned = 0;
    for (const s of this.#streams.byId.values()) {
      if (!s.meta.importing || s.deleted) continue;
      this.#writes.delete(s, true);
      abandoned++;
    }
    if (abandoned > 0) this.#commit.flush();
    // Replayed chunks are in the store now: only each stream's last one stays in memory.
    for (const s of this.#streams.byId.values()) if (s.recent.length > 1) s.recent = s.recent.slice(-1);
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
      if (this.#refuseMoved(existing, reply)) return;
      return this.#commit.afterDurable(reply, () => ({ created: false, info: this.#info(existing) }), existing);
    }
    let meta: StreamMeta;
    try {
      meta = readMeta({ name: p.name, contentType: p.contentType, ttlSeconds: p.ttlSeconds, expiresAtMs: p.expiresAtMs, createdAtMs: this.#now(), ...createConfig(p, this.#opts.schemas, this.#opts.replicator !== undefined) });
      validateRecords(meta, this.#opts.schemas, p.records, []);
    } catch (err) {
      return reply(err as SvcError);
    }
    const s = this.#writes.create(meta);
    if (p.records.length > 0) this.#writes.appendRecords(s, p.records);
    if (p.closed) this.#writes.seal(s);
    this.#commit.whenDurable(reply, () => ({ created: true, info: this.#info(s) }), s);
  }

  append(p: AppendParams, reply: Reply<AppendResult>): void {
    if (this.#refuse(reply, true)) return;
    let d = p.payload;
    if (d.kind === 'json' && p.origin === 'ds') {
      // A Durable Streams JSON body is split into its messages before any other check, as the
      // listener did when it parsed the body itself: invalid JSON is 400 whatever the stream's state
      // (even a missing one).
      try {
        d = { kind: 'records', records: checkDsJson(d.body, this.#opts.limits) };
      } catch (err) {
        return reply(err as SvcError);
      }
    }
    const s = this.#lookupLive(p.name);
    if (s === null) return reply(this.#missing(p.name));
    if (this.#refuseMoved(s, reply)) return;
    // An adopted stream whose producers are still being replayed from its entries: an append that
    // carries a producer (or a Kafka producer id) waits for them, in arrival order; others go on.
    const pending = s.remote?.producersPending;
    if (pending !== undefined && pending !== null && (p.producer != null || (d.kind === 'batches' && hasKafkaProducer(d.body)))) {
      pending.push({ run: () => this.append(p, reply), fail: (err) => reply(err) });
      return;
    }
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
      if (c.kind === 'refused') return reply(SvcError.refused(c.outcome, c.message));
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
        }), s);
      }
    }
    if (s.closing) {
      // A seal-only request on a sealed stream is idempotent; anything carrying data is refused.
      if (!hasData && p.close) return this.#commit.afterDurable(reply, () => this.#appendResult(s, s.nextSeq, s.lastTs), s);
      // Spec "Append or trim": the 409 for a sealed stream carries the producer's sequence (the listeners put it in their headers).
      return reply(SvcError.refused({ kind: 'closed', producerSeq: producer === null ? null : producer.seq }, 'stream is sealed', { next_seq: s.assignedSeq }));
    }
    const wrongType = contentTypeMismatch(p.contentType, s.meta.contentType);
    if (wrongType !== null) return reply(wrongType);
    const meta = this.#streams.metaOf(s);
    const writerSeq = p.writerSeq ?? null;
    const regression = writerSeq === null ? null : writerSeqRegression(writerSeq, meta.writerSeq);
    if (regression !== null) return reply(regression);
    if (p.matchSeq !== undefined && p.matchSeq !== null && p.matchSeq !== s.assignedSeq) {
      return reply(new SvcError('seq_mismatch', `the stream's tail is at ${s.assignedSeq}, not at ${p.matchSeq}`, { next_seq: s.assignedSeq }));
    }
    const start = s.assignedSeq;
    let records = d.kind === 'records' ? d.records : null;
    let batches: Buffer[] = [];
    try {
      if (d.kind === 'json') records = checkJsonBatch(d.body, this.#opts.limits);
      if (d.kind === 'batches') batches = checkBatches(d.body, this.#opts.limits, p.origin === 'kafka', meta.schemaValidate);
      validateRecords(meta, this.#opts.schemas, records, batches);
    } catch (err) {
      return reply(err as SvcError);
    }
    // An idempotent Kafka producer's batch: checked here, where its sequence is known.
    let kafkaProducer: KafkaProducerAppend | null = null;
    if (p.origin === 'kafka' && batches.length > 0) {
      const k = checkKafkaProducer(s.producers, batches);
      if (k !== null && 'error' in k) return reply(k.error);
      if (k !== null && 'duplicate' in k) {
        const ack = k.duplicate;
        return this.#commit.afterDurable(reply, () => ({ startSeq: ack.start, nextSeq: ack.next, timestamp: ack.ts, closed: s.closed, duplicate: true, producerLastSeq: ack.seq }), s);
      }
      kafkaProducer = k;
    }
    const pb: BatchProducer | null = producer !== null && producerId !== null ? { producerId, producerEpoch: producer.epoch, baseSequence: producer.seq } : null;
    const ts = records !== null && records.length > 0 ? this.#writes.appendRecords(s, records, pb) : this.#writes.stamp(s);
    const hasRecords = (records !== null && records.length > 0) || batches.length > 0;
    // A body moved here with its own buffer (a Kafka request frame): its first batch is framed in place.
    const inPlace = d.kind === 'batches' && d.ownBuffer === true;
    for (let i = 0; i < batches.length; i++) this.#writes.appendBatch(s, batches[i]!, inPlace && i === 0);
    // Logged right after the data, in the same group: replay sees both or, after a torn write, neither the sequence without its data.
    if (writerSeq !== null) this.#writes.configure(s, { ...meta, writerSeq }, { writerSeq });
    const next = s.assignedSeq;
    // A producer's seal without records carries the producer in the SEAL frame (there is no batch header to hold it).
    const sealProducer = pb !== null && !hasRecords ? { key: pb.producerId.toString(), epoch: pb.producerEpoch, ack: { seq: pb.baseSequence, start, next, ts } } : null;
    if (p.close) this.#writes.seal(s, sealProducer);
    this.#touch(s);
    if (pb !== null) recordProducer(s.producers, pb.producerId.toString(), pb.producerEpoch, { seq: pb.baseSequence, start, next, ts }, this.#maxProducers);
    if (kafkaProducer !== null) {
      recordProducer(s.producers, kafkaProducer.key, kafkaProducer.epoch, { seq: kafkaProducer.seq, start, next, ts }, this.#maxProducers, kafkaProducer.lastSeq);
    }
    this.#commit.whenDurable(reply, () => ({ startSeq: start, nextSeq: next, timestamp: ts, closed: p.close }), s);
  }

  trim(p: TrimParams, reply: Reply<AppendResult>): void {
    if (this.#refuse(reply)) return;
    const s = this.#lookupLive(p.name);
    if (s === null) return reply(this.#missing(p.name));
    if (this.#refuseMoved(s, reply)) return;
    if (p.seq > s.assignedSeq) {
      return reply(new SvcError('seq_out_of_range', `cannot trim to ${p.seq}: the stream ends at ${s.assignedSeq}`, { next_seq: s.assignedSeq }));
    }
    const r = s.remote;
    if (r !== undefined && p.seq > servedStart(s) && p.seq <= s.startSeq) {
      // An adopted stream trimmed within its remote records: the TRIM frame carries the new start
      // to the ledger's m/ (object-commit.ts) and changes nothing local; the remote chunks below
      // it go at once (reads never start below the start: docs/objects.md, "Compaction and the reaper").
      this.#writes.trim(s, p.seq);
      r.startSeq = p.seq;
      r.chunks.trim(p.seq);
    } else if (p.seq > s.startSeq) {
      this.#writes.trim(s, p.seq);
      if (r !== undefined) {
        // Past the remote end: no remote record is left.
        r.startSeq = p.seq;
        r.chunks.trim(p.seq);
      }
    }
    this.#commit.whenDurable(reply, () => this.#appendResult(s, servedStart(s), s.lastTs), s);
  }

  /**
   * Delete a stream. One that forks still read is only marked deleted (soft): it stays for them,
   * invisible to everything else, until the last fork lets go (configure with forkRefsDelta -1).
   */
  delete(name: string, reply: Reply<DeleteResult>): void {
    if (this.#refuse(reply)) return;
    const s = this.#lookupLive(name);
    if (s === null) return reply(this.#missing(name));
    if (this.#refuseMoved(s, reply)) return;
    const meta = this.#streams.metaOf(s);
    if (meta.forkRefs > 0) {
      this.#writes.configure(s, { ...meta, softDeleted: true }, { softDeleted: true });
      return this.#commit.whenDurable(reply, () => ({ soft: true, fork: null }), s);
    }
    this.#writes.delete(s);
    this.#commit.whenDurable(reply, () => ({ soft: false, fork: meta.fork }), s);
  }

  /** Change a stream's config through the log (a CONFIG frame); the reply is the stream as of the change, once durable. */
  configure(p: ConfigureParams, reply: Reply<StreamInfo>): void {
    if (this.#refuse(reply)) return;
    const s = this.#lookup(p.name);
    if (s === null || !s.durable) return reply(notFound(p.name));
    if (this.#refuseMoved(s, reply)) return;
    if (isGone(s, this.#now()) && (p.forkRefsDelta === undefined || p.softDeleted !== undefined)) return reply(this.#missing(p.name));
    let plan: ReturnType<typeof planConfig>;
    try {
      plan = planConfig(this.#streams.metaOf(s), p, this.#opts.schemas, this.#opts.replicator !== undefined);
    } catch (err) {
      return reply(err as SvcError);
    }
    const { next, patch } = plan;
    if (Object.keys(patch).length === 0) return this.#commit.afterDurable(reply, () => this.#info(s), s);
    this.#writes.configure(s, next, patch);
    const info = (): StreamInfo => this.#info(s, next);
    // The last fork let go of a deleted (or expired) stream: it goes now.
    if (next.forkRefs === 0 && (next.softDeleted || isExpired(s, this.#now()))) this.#writes.delete(s);
    this.#commit.whenDurable(reply, info, s);
  }

  // ── imports and drops (docs/storage.md, "Imported streams"; stream-import.ts) ──

  importBegin(p: ImportBeginParams, reply: Reply<{ importId: number }>): void {
    if (this.#refuse(reply, true)) return;
    let importId: number;
    try {
      importId = this.#imports.begin(p);
    } catch (err) {
      return reply(err as SvcError);
    }
    this.#commit.whenDurable(reply, () => ({ importId }));
  }

  /** One chunk of frames; answered once its batches are durable (the sender's pace is the disk's). */
  importFrames(p: ImportFramesParams, reply: Reply<ImportFramesResult>): void {
    if (this.#refuse(reply, true)) return;
    let r: ImportFramesResult;
    try {
      r = this.#imports.frames(p.name, p.importId, p.frames);
    } catch (err) {
      return reply(err as SvcError);
    }
    this.#commit.whenDurable(reply, () => r);
  }

  /** Publish an import: readers see the imported stream once this is durable, the replaced copy until then. */
  importEnd(p: ImportStepParams, reply: Reply<ImportResult>): void {
    if (this.#refuse(reply)) return;
    let r: ReturnType<StreamImports['end']>;
    try {
      r = this.#imports.end(p.name, p.importId);
    } catch (err) {
      return reply(err as SvcError);
    }
    this.#commit.whenDurable(reply, () => ({ info: this.#info(r.s), replaced: r.replaced, frames: r.frames, dataFrames: r.dataFrames }));
  }

  importAbort(p: ImportStepParams, reply: Reply<{ aborted: boolean }>): void {
    if (this.#refuse(reply)) return;
    const aborted = this.#imports.abort(p.name, p.importId);
    this.#commit.afterDurable(reply, () => ({ aborted }));
  }

  /**
   * Open a stream from the object ledger without copying its records (stream-import.ts, `adopt`);
   * answered once its frames are durable. Reads below the remote end are not served from the
   * object store yet (docs/objects.md, "Built so far"): nothing calls this by default.
   */
  adopt(p: AdoptParams, reply: Reply<AdoptResult>): void {
    if (this.#refuse(reply)) return;
    const replay = p.replayProducers === true;
    if (replay && this.#opts.remoteReads === undefined) return reply(new SvcError('bad_request', `stream ${p.name}: producers can be replayed from the entries only by a shard that reads the object store`));
    let r: ReturnType<StreamImports['adopt']>;
    try {
      r = this.#imports.adopt(p);
    } catch (err) {
      return reply(err as SvcError);
    }
    // The copy here was opened at this epoch already: answered as it is, its producers as they are.
    if (r.kept === true) return this.#commit.afterDurable(reply, () => ({ info: this.#info(r.s), replaced: false, remoteEnd: r.chunks.end, remoteChunks: r.chunks.size }));
    const remote = r.s.remote!;
    if (replay) remote.producersPending = [];
    this.#commit.whenDurable(
      (err, res) => {
        reply(err, res);
        if (replay) this.#replayProducers(r.s, remote, p.entries, p.meta.startSeq, p.producerSnapshot ?? null, err, 0);
      },
      () => ({ info: this.#info(r.s), replaced: r.replaced, remoteEnd: r.chunks.end, remoteChunks: r.chunks.size }),
    );
  }

  /**
   * Rebuild an adopted stream's producers from its entries (adopt-producers.ts) while it is
   * served, then run the appends that waited for them. A failure (an outage, a damaged entry)
   * answers those appends with it and tries again later (1 s, doubling up to 30 s) from the
   * entries read again; appends keep waiting meanwhile. Stops when the stream is no longer this adopt's (dropped, adopted again).
   */
  #replayProducers(
    s: StreamState,
    remote: NonNullable<StreamState['remote']>,
    entries: AdoptParams['entries'],
    startSeq: number,
    snapshot: ProducerSnapshotRecord | null,
    failed: SvcError | null,
    attempt: number,
  ): void {
    const current = (): boolean => s.remote === remote && !s.deleted && this.#commit.failed === null;
    const take = (): NonNullable<NonNullable<StreamState['remote']>['producersPending']> => {
      const waiting = remote.producersPending ?? [];
      remote.producersPending = null;
      return waiting;
    };
    if (failed !== null || !current()) {
      for (const w of take()) w.fail(failed ?? new SvcError('storage_unavailable', `stream ${s.meta.name} is no longer served here; retry`));
      return;
    }
    const rr = this.#opts.remoteReads!;
    adoptProducers(rr, s.meta.name, entries, startSeq, remote.chunks.end, this.#maxProducers, snapshot).then(
      ({ table, bytes, from, unusable }) => {
        if (!current()) return;
        // The stream is served either way; an operator hears that its snapshot was damaged or missing (svc check --objects names it).
        if (unusable !== null) this.#say.warn({ stream: s.meta.name, reason: unusable, replayedBytes: bytes }, 'the stream\'s producer snapshot is unusable: its producers were replayed from all of its entries');
        else if (attempt > 0) this.#say.info({ stream: s.meta.name, from, replayedBytes: bytes, attempt }, 'the stream\'s producers were replayed after failed attempts');
        s.durableProducers = table;
        s.producers = cloneProducers(table);
        this.#checkpoints.streamChanged(s);
        this.#checkpoints.soon();
        for (const w of take()) w.run();
        // Known now: a replay of more than the snapshot interval has the stream snapshotted at once.
        this.#opts.replicator?.producersReplayed?.(s, bytes);
        this.flush();
      },
      (err: unknown) => {
        if (!current()) return;
        const e = err instanceof SvcError ? err : new SvcError('storage_unavailable', `stream ${s.meta.name}: ${(err as Error).message}`, { reason: 'object_store' });
        const waiting = take();
        remote.producersPending = [];
        const retryMs = Math.min(30_000, 1000 * 2 ** attempt);
        this.#say.warn({ stream: s.meta.name, err: e.message, attempt, retryMs }, 'replaying the stream\'s producers failed: its producer appends are refused (retryable) until a retry succeeds');
        for (const w of waiting) w.fail(e);
        // The entries are read again first: compaction may have replaced those of the adopt, and
        // the reaper deleted their objects (kept: those starting below the remote end, as the reader keeps them).
        const again = (list: AdoptParams['entries']): void => this.#replayProducers(s, remote, list, startSeq, snapshot, null, attempt + 1);
        setTimeout(() => {
          rr.entries(s.meta.name).then(
            (fresh) => again(fresh.filter((x) => x.from < remote.chunks.end)),
            () => again(entries),
          );
        }, retryMs).unref();
      },
    );
  }

  /**
   * Remove the local copy of a stream that another node now serves: a delete whatever its state
   * (forks, expiry), written as `local` frames, with nothing shared touched (no fork reference
   * released). Imports of the name still open are abandoned.
   */
  drop(p: DropParams, reply: Reply<DropResult>): void {
    if (this.#refuse(reply)) return;
    // A copy opened at or after the move that asked for the drop is the stream come back (the
    // drop waited for the gateway threads meanwhile): it stays, and so does an import of it.
    const mine = (s: StreamState): boolean => p.below === undefined || s.openedEpoch === undefined || s.openedEpoch < p.below;
    this.#imports.abandonName(p.name, mine);
    const s = this.#streams.byName.get(p.name);
    if (s === undefined || s.deleted || !mine(s)) return this.#commit.afterDurable(reply, () => ({ dropped: false }));
    this.#writes.delete(s, true);
    this.#commit.whenDurable(reply, () => ({ dropped: true }));
  }

  /** A live stream of this shard bound to `schema` (a schema is not deleted while one is), or null. */
  streamBoundTo(schema: string): string | null {
    return this.#streams.boundTo(schema, this.#now());
  }

  /** Every live stream of this shard bound to a schema. */
  schemaBindings(): Array<{ stream: string; schema: string }> {
    return this.#streams.bindings(this.#now());
  }

  read(p: ReadParams): ReadResult {
    const s = this.#lookupDurable(p.name, p.internal === true);
    if (p.touch !== false) this.#touch(s);
    const tail = s.nextSeq;
    // A committed-only read (docs/kafka.md, "Transactions") ends at the last stable offset: its
    // reader's tail, where `seq=now` starts and where it is up to date and waits.
    const stable = p.visibility?.stableSeq ?? null;
    const end = stable === null ? tail : Math.min(stable, tail);
    const seq = p.seq < 0 ? end : p.seq;
    if (seq > tail) throw new SvcError('seq_out_of_range', `seq ${seq} is beyond the end of the stream (${tail})`, { next_seq: tail });
    const from = Math.max(seq, servedStart(s));
    // An adopted stream's records below its remote end are in the object store (docs/objects.md,
    // "How a read finds its object and byte range"); a read of them never starts at the local
    // records as if they were trimmed.
    const g = s.remote !== undefined && from < s.startSeq ? this.#readRemote(s, from, p) : gather(this.#log, this.#index, s, from, p.count, p.bytes, p.format, p.visibility, this.#readCache, p.pooled === true, p.parts === true);
    const upToDate = g.nextSeq >= end;
    const r: ReadResult = {
      body: g.body,
      count: g.count,
      nextSeq: g.nextSeq,
      tailSeq: end,
      startSeq: servedStart(s),
      upToDate,
      closed: g.nextSeq >= tail && s.closed,
      streamId: this.#globalId(s),
      contentType: s.meta.contentType,
      fork: s.meta.fork,
    };
    if (g.parts !== undefined) r.parts = g.parts;
    return r;
  }

  /**
   * `read`, answered through `reply`: a read of an adopted stream that reaches records in the
   * object store not held by the object cache waits for their fetch (the only read that waits;
   * every other one is answered in this turn, as `read`).
   */
  readAsync(p: ReadParams, reply: Reply<ReadResult>, waits = 0): void {
    let r: ReadResult;
    try {
      r = this.read(p);
    } catch (err) {
      if (!(err instanceof RemoteWait)) return reply(err as SvcError);
      if (waits >= MAX_REMOTE_WAITS) return reply(new SvcError('storage_unavailable', `stream ${p.name}: the records from seq ${p.seq} were fetched from the object store ${waits} times and are not held yet; retry`, { reason: 'object_store' }));
      err.ready.then(
        () => this.readAsync(p, reply, waits + 1),
        (e: unknown) => reply(e instanceof SvcError ? e : new SvcError('storage_unavailable', `stream ${p.name}: ${(e as Error).message}`, { reason: 'object_store' })),
      );
      return;
    }
    reply(null, r);
  }

  /**
   * A page of an adopted stream's remote records from `from` (below the local start): what the
   * object cache holds from there, rendered as a local chunk is; the page ends at the local start
   * at most (the reader's next read continues there). Nothing held at `from`: RemoteWait on its
   * fetch. Held, with more of the page's budget missing: served short, the rest fetched meanwhile.
   */
  #readRemote(s: StreamState, from: number, p: ReadParams): ReturnType<typeof gather> {
    const remote = s.remote!;
    const rr = this.#opts.remoteReads;
    if (rr === undefined) {
      throw new SvcError('storage_unavailable', `stream ${s.meta.name}: records ${from}..${s.startSeq - 1} are in the object store, and this node reads none from it; read from seq ${s.startSeq}`, { stream: s.meta.name, from_seq: from, to_seq: s.startSeq - 1 });
    }
    let reader = this.#remoteReaders.get(remote.chunks);
    if (reader === undefined) {
      const chunks = remote.chunks;
      // Appends after the adopt are in the ledger too, and local: the remote chunks keep only the
      // entries starting below their end, the local start at the adopt. Not those ending there:
      // compaction joins remote and local entries into one, and that one holds remote seqs.
      reader = new RemoteReader({
        chunks,
        cache: rr.cache,
        get: (key, range) => rr.get(key, range),
        refresh: () => rr.entries(s.meta.name),
        startSeq: () => remote.startSeq,
        ...(rr.readAheadBytes !== undefined ? { readAheadBytes: rr.readAheadBytes } : {}),
      });
      this.#remoteReaders.set(chunks, reader);
    }
    const peek = reader.peek(from, p.bytes);
    if (peek.batches.length === 0) {
      if (peek.missing !== null) throw new RemoteWait(reader.fetch(from));
      // No entry holds `from` (a hole below the first entry): the reader moves on past it, as past a gap between local chunks.
      const at = Math.min(remote.chunks.find(from) < 0 && from < remote.chunks.start ? remote.chunks.start : s.startSeq, s.startSeq);
      if (at <= from) throw new SvcError('internal', `stream ${s.meta.name}: seq ${from} is below the local start ${s.startSeq} and in no remote chunk`);
      return { body: gatherBatches([], s, from, 0, 0, p.format).body, count: 0, nextSeq: at };
    }
    if (peek.missing !== null) {
      // The page's budget reaches an entry not held: fetched (with read-ahead) while this page goes out.
      reader.fetch(peek.next).catch(() => {});
    } else reader.readAhead(peek.next - 1);
    return gatherBatches(peek.batches, s, from, p.count, p.bytes, p.format, p.visibility, p.pooled === true);
  }

  head(h: string | HeadParams): StreamInfo {
    const p: HeadParams = typeof h === 'string' ? { name: h } : h;
    const s = this.#lookupDurable(p.name, p.internal === true);
    if (p.touch === true) this.#touch(s);
    return this.#info(s);
  }

  /**
   * Start (or stop) reporting a stream's tail moves to the gateway thread, where its live readers
   * wait; returns the durable tail now (tail-watches.ts).
   */
  watch(name: string, on: boolean): TailEvent {
    const s = this.#lookup(name);
    return this.#watches.watch(name, on, s, s === null ? -1 : this.#globalId(s));
  }

  list(p: ListParams): ListResult {
    return this.#streams.list(p, this.#now(), (s) => this.#info(s));
  }

  stats(): ShardStats {
    return {
      streamCount: this.#streams.countVisible(this.#now()),
      objectCount: this.#log.sealedSegments().length,
      destroyedObjectBacklog: this.#deadSegments.backlog,
      appliedChanges: this.#checkpoints.appliedChanges,
      commits: this.#commit.stats,
      ...(this.#opts.objectStats !== undefined ? { objects: this.#opts.objectStats } : {}),
      ...(this.#opts.reportsReadCache === true && this.#opts.readCache?.enabled === true ? { readCache: this.#opts.readCache.stats } : {}),
    };
  }

  /** What the chunk index holds in memory now: every stream's recent chunks, and the page cache. */
  indexMemory(): { recentChunks: number; cachedChunks: number } {
    let recentChunks = 0;
    for (const s of this.#streams.byId.values()) recentChunks += s.recent.length;
    return { recentChunks, cachedChunks: this.#index.cachedChunks };
  }

  /** Start writing whatever was accepted (called once per batch of requests from the gateway). */
  flush(): void {
    this.#commit.flush();
  }

  /** Periodic work: TTL expiry, absolute expiry, dead segment detection. */
  maintain(): void {
    if (this.#commit.failed !== null) return;
    const now = this.#now();
    const r = sweepExpired(this.#log, this.#index, this.#streams.byName.values(), now);
    // An expired stream that forks still read stays (gone) until the last fork lets go.
    for (const s of r.expiredStreams) if (this.#streams.metaOf(s).forkRefs === 0) this.#writes.delete(s);
    for (const s of r.trimmed) {
      this.#opts.replicator?.expired?.(s);
      this.#checkpoints.appliedChanges++;
      this.#checkpoints.forgetDropped(s);
      // A recent head cut in place by expiry is written under its new base seq.
      const first = s.recent[0];
      if (first !== undefined) this.#checkpoints.chunkChanged(first, s.id);
      this.#checkpoints.streamChanged(s);
      this.#deadSegments.changed();
    }
    if (r.trimmed.size > 0) this.#checkpoints.soon();
    if (r.expiredStreams.length > 0) this.flush();
    this.#deadSegments.maintain();
  }

  /** Delete sealed segments whose data is all dead. */
  reap(): number {
    return this.#deadSegments.reap();
  }

  /** Wait for every accepted write to be durable, then checkpoint with sync. */
  async close(): Promise<void> {
    try {
      await this.#commit.drain();
      if (this.#commit.failed === null) this.#checkpoints.write(true);
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
    if (this.#commit.stalled) {
      // Not written; answered as in doubt all the same: a producer whose earlier batch waits in the
      // stalled group must retry this one with its sequence, not start a new epoch (outcomes.ts).
      reply(SvcError.refused({ kind: 'maybe_written' }, 'the object store or the ledger is not answering: writes are refused until it does; retry as the same write'));
      return true;
    }
    if (this.#commit.failed === null) return false;
    reply(new SvcError('storage_unavailable', `storage write failed earlier: ${this.#commit.failed.message}`));
    return true;
  }

  /** Objects mode: a stream whose fence moved to another node takes no writes here (outcome `moved`). */
  #refuseMoved(s: StreamState, reply: Reply<never>): boolean {
    const moved = s.ledger?.moved ?? null;
    if (moved === null) return false;
    reply(SvcError.refused({ kind: 'moved', nodeId: moved.nodeId }, `stream ${s.meta.name} moved to another node`));
    return true;
  }

  /** A stream by name (accepted creates included, expired ones excluded unless forks keep them: see isGone). */
  #lookup(name: string): StreamState | null {
    const s = this.#streams.byName.get(name);
    if (s === undefined || s.deleted) return null;
    if (isExpired(s, this.#now()) && this.#streams.metaOf(s).forkRefs === 0) {
      this.#writes.delete(s);
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
    if (s.meta.idleTtlSeconds === null) return;
    s.lastAccessMs = this.#now();
    this.#checkpoints.streamChanged(s);
    this.#checkpoints.soon();
  }

  #globalId(s: StreamState): number {
    return s.id * this.#opts.shardCount + this.#opts.shardId;
  }

  #info(s: StreamState, meta: StreamMeta = this.#streams.metaOf(s)): StreamInfo {
    const m = s.meta;
    return {
      name: m.name,
      streamId: this.#globalId(s),
      contentType: m.contentType,
      startSeq: servedStart(s),
      nextSeq: s.nextSeq,
      closed: s.closed,
      ttlSeconds: m.ttlSeconds,
      expiresAtMs: m.expiresAtMs,
      createdAtMs: m.createdAtMs,
      schema: m.schema,
      schemaValidate: m.schemaValidate,
      kafkaTopic: m.kafkaTopic,
      idleTtlSeconds: m.idleTtlSeconds,
      lastAccessMs: s.lastAccessMs,
      fork: m.fork,
      forkRefs: meta.forkRefs,
      gone: meta.softDeleted || isExpired(s, this.#now()),
      writerSeq: meta.writerSeq,
      durability: meta.durability ?? this.#opts.durability ?? 'sync',
      durabilityDefault: meta.durability === null,
    };
  }

  #appendResult(s: StreamState, start: number, ts: number): AppendResult {
    return { startSeq: start, nextSeq: s.nextSeq, timestamp: ts, closed: s.closed };
  }
}

/** A Kafka Produce body whose first batch carries a producer id (an idempotent or transactional producer's). */
function hasKafkaProducer(body: Buffer): boolean {
  return body.length >= 61 && body.readBigInt64BE(43) >= 0n;
}

function notFound(name: string): SvcError {
  return new SvcError('not_found', `no stream ${name}`);
}
