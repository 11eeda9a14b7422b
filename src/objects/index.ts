/**
 * The object store (docs/objects.md): where stream data lives in objects mode. Open one per
 * thread from the `--objects` URL; every backend keeps the `ObjectStore` contract. The object
 * ledger (docs/cluster.md, "Objects mode: where data lives") says which object holds which of a
 * stream's frames.
 */
import { FileObjectStore } from './file-store';
import { type ObjectStoreStats } from './object-stats';
import { type ObjectStore } from './object-store';
import { parseObjectsUrl } from './objects-url';
import { S3ObjectStore, type S3StoreOptions } from './s3-store';

export {
  type ByteRange, type ListedObject, type ObjectErrorData, type ObjectOp, type ObjectStore, type PutOptions, ObjectNotFoundError, ObjectStoreError, isObjectNotFound, keyProblem,
  objectErrorData, objectErrorFromData,
} from './object-store';
export {
  OBJECT_OPS, OBJECT_SECONDS_BOUNDS, type ObjectBucketCounts, type ObjectOpStats, type ObjectOutcome, type ObjectStoreStats,
  addObjectStoreStats, newObjectStoreStats, recordObjectRequest,
} from './object-stats';
export { OBJECTS_URL_FORMS, type ObjectsLocation, ObjectsUrlError, describeObjectsLocation, objectsUrlProblem, parseObjectsUrl } from './objects-url';
// The object ledger in etcd (ledger.ts, ledger-keys.ts): which object holds which of a stream's frames, and the fences.
export { type CommitResult, type CommitToken, DEFAULT_LEDGER_DEADLINE_MS, type EntryValue, Ledger, type LedgerCredentials, type LedgerEntry, type LedgerMeta, OBJECTS_PER_COMMIT, type ProducerSnapshotRecord, type RecordedThrough, STREAMS_PER_TXN, type StreamCommit, type StreamRecord, type TailWalk } from './ledger';
export { type LedgerFormat, NEW_CLUSTER_FORMAT } from './ledger-format';
export { type Fence, LedgerKeys, compactedObjectKey, entryName, fenceValue, groupObjectKey, parseEntryName, parseFence, parseGroupObjectKey, producerObjectKey, sameFence, streamOfSegment, streamSegment, writerObjectKey } from './ledger-keys';
// Group objects' part tables and fence markers (group-object.ts), and the recovery of a stream's unrecorded tail (tail-recovery.ts).
export { type GroupObject, type GroupPart, fenceMarker, groupTrailer, mayBeMarker, readGroupObject } from './group-object';
export { type RecoveredTail, type TailRecords, type TailStore, recoverTail } from './tail-recovery';
export { type PlannedEntry, type RecoveryPlan } from './recovery-plan';
// The records format (part-records.ts) and its indexer (indexer.ts).
export { type IndexTick, Indexer, type IndexerDeps, type IndexerOptions, ownWriters } from './indexer';
// Maintenance (compaction.ts, reaper.ts, object-census.ts): compaction by owners, the reaper by the lease holder, the counts.
export { CompactedCounter, type CompactionOptions, type CompactionStats, type CompactionTick, Compactor, GROUP_OBJECT_WHOLE_MAX, type PlacedStream } from './compaction';
// The bound on compaction's store I/O (byte-rate.ts: `--objects-compact-bytes-per-second`).
export { ByteRate, type ByteRateClock, type Take } from './byte-rate';
export { type HolderCompare, Reaper, type ReaperOptions, type ReaperTick } from './reaper';
export { ObjectCensus, type ObjectCounts } from './object-census';
export { type MaintenanceLog } from './maintenance-ledger';
// The object cache of checked ranges, for reads served from the object store (range-cache.ts).
export { RangeCache, type RangeCacheOptions, type RangeCacheStats, rangeKey } from './range-cache';
// The offline check of every range the ledger names (ledger-check.ts: `svc check --objects`).
export { type LedgerCheckOptions, type LedgerCheckResult, type ObjectDamage, checkObjectLedger } from './ledger-check';
// The store tried once at a node's start (store-check.ts).
export { STORE_CHECK_MS, type StoreCheck, checkObjectStore, isRefusal } from './store-check';

export interface OpenObjectStoreOptions {
  /** Figures of this thread's requests are added here (object-stats.ts). */
  stats?: ObjectStoreStats;
  /** Where S3 credentials are read (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN); process.env by default. */
  env?: NodeJS.ProcessEnv;
  /** S3 transport tuning (tests shorten these). */
  s3?: Partial<S3StoreOptions>;
  /** file: stores: every call's I/O on the calling thread (FileStoreOptions.blocking). */
  blocking?: boolean;
  /** file: stores: listings remove the empty directories they pass (FileStoreOptions.pruneEmptyDirs). */
  pruneEmptyDirs?: boolean;
}

/**
 * Opens the store a `--objects` URL names. Throws ObjectsUrlError for a bad URL, and an Error
 * naming the variables when an `s3://` store has no credentials. Opening does no I/O: the first
 * request finds out whether the store is reachable.
 */
export function openObjectStore(url: string, options: OpenObjectStoreOptions = {}): ObjectStore {
  const loc = parseObjectsUrl(url);
  if (loc.kind === 'file') return new FileObjectStore(loc.dir, options.stats, { blocking: options.blocking ?? false, pruneEmptyDirs: options.pruneEmptyDirs ?? false });
  const env = options.env ?? process.env;
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) {
    throw new Error(`objects URL ${JSON.stringify(url)}: an s3:// store needs credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones)`);
  }
  return new S3ObjectStore(loc, { accessKeyId, secretAccessKey, sessionToken: env.AWS_SESSION_TOKEN || undefined }, options.stats, options.s3);
}
