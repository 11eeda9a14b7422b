/** Requests and results of the data plane, as the gateway and the shard worker both see them. */
import { type RecordInput } from '../util/record-batch';
import { type CommitStats } from './commit-stats';
import { type ObjectStoreStats, type ProducerSnapshotRecord } from '../objects';

/**
 * `kafka`: whole stored batches, the first one holding the start seq (a Kafka Fetch answer: the
 * client skips the records below its fetch offset), never cut or re-encoded; not a client `format`.
 * `sse`: the JSON read format framed as server-sent events, one `record` event per record
 * (render/sse-records.ts); used by live SSE reads, never chosen by a client's `format`.
 */
export type ReadFormat = 'json' | 'raw' | 'binary' | 'sse' | 'json-array' | 'kafka';

/**
 * A fork (Durable Streams `Stream-Forked-From`): the stream reads its source below `seq`, then its
 * own records, which start at `seq`. The source is kept (soft-deleted at most) while forks refer to it.
 */
export interface ForkInfo {
  /** Source stream name. */
  source: string;
  /** The source stream's id when the fork was made. */
  sourceId: number;
  /** Records below this seq are the source's. */
  seq: number;
  /** The fork point as the client named it (offset and sub-offset), for idempotent re-creation. */
  offset: string;
  subOffset: number;
}

/** Limits a shard enforces on appended batches. */
export interface BatchLimits {
  /** Largest record value, bytes. */
  maxRecordBytes: number;
  /** Most records in one append. */
  maxBatchRecords: number;
}

/**
 * When an append is acknowledged (docs/storage.md, "Durability classes"): `sync` after the
 * fdatasync that makes it durable, `async` once it is written to the segment file (in the page
 * cache), synced within the checkpoint interval after.
 */
export type Durability = 'sync' | 'async';

export const DURABILITIES: readonly Durability[] = ['sync', 'async'];

export interface StreamInfo {
  name: string;
  /** Shard-local id combined with the shard number: unique in the node, never reused. */
  streamId: number;
  contentType: string;
  /** First readable seq (after trims and TTL expiry). */
  startSeq: number;
  /** Seq the next append will get (durable tail). */
  nextSeq: number;
  closed: boolean;
  ttlSeconds: number | null;
  expiresAtMs: number | null;
  createdAtMs: number;
  /** Bound schema (Svc-Schema), or null. */
  schema: string | null;
  /** Appends are validated against `schema`. */
  schemaValidate: boolean;
  /** Kafka topic set explicitly, or null when it is derived from the name. */
  kafkaTopic: string | null;
  /** Sliding lifetime (Durable Streams Stream-TTL): the stream expires this long after its last access. */
  idleTtlSeconds: number | null;
  /** Unix ms of the last access that renews `idleTtlSeconds` (reads and appends; not HEAD). */
  lastAccessMs: number;
  fork: ForkInfo | null;
  /** Forks that read this stream's records. */
  forkRefs: number;
  /** Deleted or expired while forks still read it: only fork reads and config changes see it. */
  gone: boolean;
  /** Last Durable Streams writer sequence (Stream-Seq) accepted, or null. */
  writerSeq: string | null;
  /** The durability class the stream's appends get: its own, or the node's default. */
  durability: Durability;
  /** True when the stream has no class of its own and follows the node's default (--durability). */
  durabilityDefault: boolean;
}

export interface CreateParams {
  name: string;
  contentType: string;
  ttlSeconds: number | null;
  expiresAtMs: number | null;
  closed: boolean;
  /** Initial records (the create body); empty for none. */
  records: RecordInput[];
  /** Schema to bind (must be registered); null or absent for none. */
  schema?: string | null;
  /** Validate appends (and the initial records) against `schema`. */
  schemaValidate?: boolean;
  /** Explicit Kafka topic (already checked against Kafka's rules); null or absent to derive it. */
  kafkaTopic?: string | null;
  /** Sliding lifetime in seconds (Durable Streams Stream-TTL). */
  idleTtlSeconds?: number | null;
  /** Make the stream a fork: its own seqs start at `fork.seq`. */
  fork?: ForkInfo | null;
  /** The stream's durability class; null or absent: the node's default, followed as it changes. */
  durability?: Durability | null;
}

/**
 * A stream config change (PATCH /_streams/{name}); absent fields stay as they are, null clears.
 * Applied through the shard's log as a CONFIG frame.
 */
export interface ConfigureParams {
  name: string;
  schema?: string | null;
  schemaValidate?: boolean;
  kafkaTopic?: string | null;
  ttlSeconds?: number | null;
  /** The durability class; null: back to the node's default. */
  durability?: Durability | null;
  /** Add this to the fork reference count (the result is stored, not the delta). */
  forkRefsDelta?: number;
  /** Mark the stream deleted while forks still read it. */
  softDeleted?: boolean;
}

export interface CreateResult {
  created: boolean;
  info: StreamInfo;
}

/**
 * The listener an append came through: its rules apply. `kafka`: the batches may be compressed
 * (stored as sent, records counted from the header, never decompressed on write) and carry Kafka
 * producer ids (below 2^62), checked per record sequence.
 */
export type AppendOrigin = 'http' | 'ds' | 'kafka';

/** What an append carries: one tagged union from the listener to the shard, never re-derived. */
export type AppendPayload =
  /** Records to encode into one batch (single-record and Durable Streams byte appends); none for a seal alone. */
  | { kind: 'records'; records: RecordInput[] }
  /**
   * A JSON body, checked on the shard's thread: from `http` a JSON batch (`application/vnd.svc.batch+json`),
   * from `ds` a Durable Streams JSON-mode body (an array's elements, or one value, each one message).
   */
  | { kind: 'json'; body: Buffer }
  /**
   * Complete RecordBatch v2 batches as the client sent them (binary-batch appends, Kafka Produce).
   * `ownBuffer`: `body`'s ArrayBuffer holds nothing else the sender still needs, and the sender
   * gives it up (a Kafka listener's large request frame): a large body is then moved to the shard
   * worker, not copied (detached on the sending thread once the turn's message is posted), and
   * the shard builds its log frame in place, in the bytes before `body` (shards/wire.ts,
   * worker/frame.ts). On the worker it says the body arrived so.
   */
  | { kind: 'batches'; body: Buffer; ownBuffer?: boolean };

export interface AppendParams {
  name: string;
  origin: AppendOrigin;
  payload: AppendPayload;
  /** Media type of a single-record body, checked against the stream's; null for batches. */
  contentType: string | null;
  /** Seal the stream after this append. */
  close: boolean;
  /** Idempotent producer (Svc-Producer-Id/-Epoch/-Seq, DS Producer-*); only with `records` or `json`. */
  producer?: ProducerParams | null;
  /** Conditional append (Svc-Match-Seq): only when the stream's tail is at this seq. */
  matchSeq?: number | null;
  /** Durable Streams Stream-Seq: must sort after the last one accepted (bytewise), else 409. */
  writerSeq?: string | null;
}

export interface ProducerParams {
  /** 1–256 characters. */
  id: string;
  /** 0..32767 (Kafka's int16 producerEpoch). */
  epoch: number;
  /** 0..2147483647 (Kafka's int32 baseSequence); one per append, whatever its record count. */
  seq: number;
}

export interface AppendResult {
  startSeq: number;
  nextSeq: number;
  /** Unix milliseconds stamped on the appended records. */
  timestamp: number;
  closed: boolean;
  /**
   * A producer append that repeats an accepted one: nothing was written. startSeq, nextSeq and
   * timestamp are the original acknowledgement's, or -1 when it is no longer remembered.
   */
  duplicate?: boolean;
  /** With `duplicate`: the producer's highest accepted sequence. */
  producerLastSeq?: number;
}

/** What a delete did: `soft` when forks keep the stream; `fork` is the deleted stream's own source link, released next. */
export interface DeleteResult {
  soft: boolean;
  fork: ForkInfo | null;
}

export interface TrimParams {
  name: string;
  seq: number;
}

export interface ReadParams {
  name: string;
  /** Start position, or -1 for the tail (`seq=now`). */
  seq: number;
  count: number;
  bytes: number;
  format: ReadFormat;
  /** A fork reading its source: a gone (soft-deleted) stream is readable. */
  internal?: boolean;
  /** Renew the idle TTL (reads do by default; live reads re-reading a page shared do not need to). */
  touch?: boolean;
  /** Committed data only (Kafka transactions): set by ShardClient for every format but `kafka` (docs/kafka.md, "Transactions"). */
  visibility?: ReadVisibility;
  /**
   * The caller hands the body back with `ShardClient.recycle` once nothing reads it any more (an
   * HTTP catch-up response, sent): the page may then be rendered into the worker's pooled shared
   * memory (worker/page-pool.ts). Absent: a buffer of its own, kept as long as the caller likes.
   */
  pooled?: boolean;
  /**
   * With `pooled`, and the `raw` or `binary` format: the caller can send a page made of parts
   * (ReadResult.parts), so a large page the worker's read cache holds whole comes as views of
   * its memory, not copied (docs/storage.md, "Read cache").
   */
  parts?: boolean;
}

/**
 * What a read that serves only committed data of Kafka transactional producers may show (HTTP and
 * Durable Streams reads; Kafka fetches apply their own isolation level). The Kafka listener's
 * transaction coordinator knows both; the shard applies them while it walks the batches.
 */
export interface ReadVisibility {
  /** Read no further than this seq: the first offset of the oldest open transaction (the last stable offset); null when none is open. */
  stableSeq: number | null;
  /** Aborted transactions: a transactional batch of `producerId` with a base offset in [first, last] is skipped (`last` is the abort marker). */
  aborted: Array<{ producerId: string; first: number; last: number }>;
}

export interface HeadParams {
  name: string;
  /** Renew the idle TTL (Durable Streams: live reads waiting at the tail). */
  touch?: boolean;
  /** See a gone (soft-deleted) stream. */
  internal?: boolean;
}

export interface ReadResult {
  /** The page; empty when `parts` holds it. */
  body: Buffer;
  /**
   * The page as views of the worker's read cache, in order (a read with `parts`), lent to the
   * caller until it hands them back with ShardClient.recycle; absent for any other page.
   */
  parts?: readonly Buffer[];
  /** Number of records in the body. */
  count: number;
  /** Where the next read should start. */
  nextSeq: number;
  /** The stream's durable tail when the read ran. */
  tailSeq: number;
  startSeq: number;
  upToDate: boolean;
  /** Sealed and read to the end. */
  closed: boolean;
  streamId: number;
  contentType: string;
  /** The stream is a fork: seqs below fork.seq are its source's (read them there). */
  fork: ForkInfo | null;
}

export interface ListParams {
  prefix: string;
  startAfter: string;
  limit: number;
}

export interface ListResult {
  streams: StreamInfo[];
  hasMore: boolean;
}

export interface ShardStats {
  streamCount: number;
  /** Sealed segment files (immutable objects). */
  objectCount: number;
  /** Sealed segments whose data is all dead and that are not deleted yet. */
  destroyedObjectBacklog: number;
  /**
   * Metadata-relevant changes the shards applied (creates, deletes, seals, trims and config
   * changes once durable, TTL trims and expiries, reaped segments, checkpoints that stored
   * something): the shards' part of the admin API's `appliedIndex` (docs/storage.md).
   */
  appliedChanges: number;
  /** Group-commit sizes and write + fdatasync times since the shards started (docs/metrics.md). */
  commits?: CommitStats;
  /** Objects mode: the shard's object store requests (its group objects' PUTs) since the shards started (svc_object_store_*). */
  objects?: ObjectStoreStats;
  /** The worker's read cache (svc_read_cache_*): given by one shard of each worker, as the cache is the worker's. */
  readCache?: ReadCacheStats;
  /** The worker's read page buffers (worker/page-pool.ts): given by one shard of each worker. */
  readPool?: ReadPoolStats;
}

/** A shard worker's pool of read page buffers since it started (worker/page-pool.ts). */
export interface ReadPoolStats {
  /** Pages rendered into a buffer taken from the pool. */
  reused: number;
  /** Pooled-size buffers allocated because the pool had none of the size. */
  allocated: number;
  /** Buffers the gateway thread handed back once their response was sent. */
  returned: number;
  /** Bytes of idle buffers held now. */
  bytes: number;
}

/** A shard worker's read cache since it started (worker/read-cache.ts). */
export interface ReadCacheStats {
  /** Chunks served from the cache. */
  hits: number;
  /** Chunks checked, rendered and added. */
  fills: number;
  /** Bytes held now (values, where each ends, bookkeeping). */
  bytes: number;
  /** Read pages sent as views of the cache, not copied (ReadResult.parts). */
  lent: number;
  /** Of those, pages handed back once sent. */
  returned: number;
}

/**
 * A watched stream's tail moved (records applied, sealed, deleted, trimmed): sent by the shard
 * to the gateway thread after a group commit is applied, one per watched stream it touched.
 * Live reads (long-poll, SSE) wait on these instead of polling the shard.
 */
export interface TailEvent {
  name: string;
  /** The stream the event is about (a name deleted and created again gets a new id). */
  streamId: number;
  /** The durable tail: the seq the next append will get. */
  nextSeq: number;
  closed: boolean;
  deleted: boolean;
  /** Frame bytes this group wrote for the stream (0 in a watch reply): how fast the stream moves. */
  bytes: number;
  /**
   * Increases with every event and watch reply of the shard. Replies resolve a promise a turn
   * later than events are delivered, so the gateway keeps the highest version it has seen.
   */
  version: number;
}

/**
 * A stream's stored state as another node wrote it: the object ledger's `m/<stream>` record
 * (docs/storage.md, "Imported streams"). `meta` is the stored form of a CREATE frame
 * (`name`, `contentType`, `createdAtMs`, … with the fields at their default left out).
 */
export interface ImportedMeta {
  meta: Record<string, unknown>;
  /** Trim point: records below it are not imported. */
  startSeq: number;
  sealed: boolean;
}

/** What `ShardClient.importStream` takes: the stored meta and the stream's frames. */
export interface StreamImport {
  meta: ImportedMeta;
  /**
   * The stream's frames in log order, exactly as a shard writes them to its segment log
   * (frame.ts), with the writer's stream ids (ignored). A buffer may hold several frames and a
   * frame may span buffers; they are sent to the shard in chunks of at most
   * `IMPORT_CHUNK_BYTES` cut at frame boundaries.
   */
  frames: Iterable<Buffer> | AsyncIterable<Buffer>;
  /**
   * Objects mode: the fence epoch this node opened the stream at (docs/cluster.md, "Transfers").
   * A write accepted by this copy is committed only under that epoch, never under a later open.
   */
  epoch?: number;
  /** Objects mode: the stream's place in the ledger as the open left it (OpenedLedger). */
  ledger?: OpenedLedger;
}

/**
 * A moved stream's place in the object ledger as the node that opened it left it: it holds the
 * fence (`nodeId:epoch`) and recorded the old owner's tail under it, and the ledger's entries of
 * that epoch end below `counter`. With it the shard's first write of the stream commits at once,
 * without reading the fence, walking the tail and reading every entry again (object-commit.ts).
 */
export interface OpenedLedger {
  fence: { nodeId: number; epoch: number };
  /** The next entry counter within the fence's epoch. */
  counter: number;
}

/** An import in progress on a shard (its staging stream's local id). */
export interface ImportBeginParams {
  name: string;
  meta: ImportedMeta;
  /** StreamImport.epoch. */
  epoch?: number;
  /** StreamImport.ledger. */
  ledger?: OpenedLedger;
}
export interface ImportStepParams {
  name: string;
  importId: number;
}
export interface ImportFramesParams extends ImportStepParams {
  /** Whole frames, at most IMPORT_CHUNK_BYTES (one frame larger than that alone). */
  frames: Buffer;
}
export interface ImportFramesResult {
  /** Frames taken so far (all kinds), and the imported data's next seq so far. */
  frames: number;
  nextSeq: number;
}
export interface ImportResult {
  info: StreamInfo;
  /** A local copy of the stream was replaced. */
  replaced: boolean;
  /** Frames read from the input, and DATA frames written (records below the start skipped). */
  frames: number;
  dataFrames: number;
}
/**
 * Open a stream here without copying its data (docs/objects.md, "Opening without a copy"): the
 * stream as the object ledger holds it, its records left in the object store (`--objects-reads
 * remote`, the default); reads below `remoteEnd` are served from the store (worker/remote-reader.ts).
 */
export interface AdoptParams {
  name: string;
  /** The ledger's `m/<name>` record. */
  meta: ImportedMeta;
  /**
   * The stream's ledger entries (`i/<name>/…`) in ledger order: bytes `off..off+len` of object `o`
   * hold the frames of seqs `[from, to)`. The last data entry's `to` is the stream's next seq.
   */
  entries: Array<{ o: string; off: number; len: number; from: number; to: number }>;
  /** StreamImport.epoch. */
  epoch?: number;
  /** StreamImport.ledger. */
  ledger?: OpenedLedger;
  /**
   * The idempotent producers as the old owner held them at the stream's next seq (snapshot plus
   * replay: producer-snapshot.ts), in the catalog's stored form (`encodeProducers`).
   */
  producers?: unknown[];
  /**
   * Instead of `producers`: the shard rebuilds the producers from every entry's batch headers
   * (worker/adopt-producers.ts) after the adopt, while it serves the stream; appends carrying a
   * producer (and Kafka batches) wait until it has. Needs the shard's object store.
   */
  replayProducers?: boolean;
  /** With `replayProducers`: the stream's newest producer snapshot (`p/<name>`); the replay starts from it. */
  producerSnapshot?: ProducerSnapshotRecord | null;
}
export interface AdoptResult {
  /** The stream as served: `startSeq` is the ledger's start, `nextSeq` the remote end. */
  info: StreamInfo;
  /** A local copy of the stream was replaced. */
  replaced: boolean;
  /** The seq after the last record held in the object store: appends here start at it. */
  remoteEnd: number;
  /** Remote chunks kept (ledger holes included). */
  remoteChunks: number;
}
/** Which local copy a drop removes (ShardClient.dropStream). */
export interface DropParams {
  name: string;
  /**
   * The epoch of the move that took the stream away: only a copy opened below it is dropped. A
   * copy opened at it or later came back here while the drop waited (a transfer back), and is the
   * one this node now serves. Absent: whatever copy there is.
   */
  below?: number;
}

export interface DropResult {
  /** False when there was no local copy (dropping is idempotent). */
  dropped: boolean;
}

/** The shard calls a HopTracer sees. */
export type HopOp = 'append' | 'read';

/** Ends a hop's span: what the call moved (records, bytes), or the error it failed with (else null). */
export type HopEnd = (records: number, bytes: number, error: unknown) => void;

/**
 * Optional tracing of the hop to a shard worker (docs/metrics.md, "Traces"; `ShardClient.setHopTracer`).
 * `start` is called as an append or a read is sent and returns what ends its span, or null for none.
 * The storage layer knows nothing of the tracing library: the node hands it an implementation.
 */
export interface HopTracer {
  start(op: HopOp, stream: string, shard: number, worker: number): HopEnd | null;
}
