/** The data plane's front door: everything outside src/shards imports from here only. */
export { type ClientLinkEvents, ShardClient, type ShardClientOptions } from './shard-client';
export { PortLinks } from './worker-links';
export { mediaType } from './names';
export { IMPORT_CHUNK_BYTES, liveFrames } from './import-chunks';
// A moved stream read back from the object store for an import (objects mode).
export { DEFAULT_FETCH_CONCURRENCY, type ObjectRangeReader, type StreamEntry, type StreamLedgerReader, type StreamSource, nextEntryCounter, readStreamFromObjects } from './stream-source';
export { type JsonSplit, splitJsonMessages } from './worker/json-split';
export { type ControlChannel, type PutOptions, SchemaDocs, type Schemas, SchemaStore } from './schema-store';
export { SpaceGuard, type SpaceState } from './space-guard';
export { type WorkerDown } from './worker-pool';
export { type SchemaBinding, type SchemaControl, type SchemaControlResult, type SchemaDocument, checkSchemaName, parseRegistration } from './schema-registry';
export * from './types';
export type { RecordInput } from '../util/record-batch';
export { type CheckReport, type Finding, type RepairAction, checkDataDir, repairDataDir } from './log-check';
export { type DataDirLock, LOCK_FILE, lockDataDir } from './data-dir-lock';
export { COMMIT_FRAME_BOUNDS, COMMIT_SECONDS_BOUNDS, type BucketCounts, type CommitStats, observeBucket } from './commit-stats';
