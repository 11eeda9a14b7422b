/**
 * What crosses between the main thread and the object maintenance thread
 * (object-maintenance.ts, object-maintenance-thread.ts).
 */
import { type EtcdCredentials } from './actors';
import { type CompactionOptions, type CompactionStats, type HolderCompare, type ObjectStoreStats, type PlacedStream, type ReaperOptions } from './objects';

/** The thread's start: where the ledger and the objects are, and how often each job runs. */
export interface MaintenanceThreadConfig {
  /** `--metadata etcd://…/<prefix>`. */
  metadataUrl: string;
  /** `--metadata-ca|cert|key|user|password`. */
  metadataCredentials?: EtcdCredentials;
  /** `--objects`. */
  objectsUrl: string;
  reaper?: ReaperOptions;
  compaction?: CompactionOptions;
  /**
   * the `records` ledger format: this node start's writers (`g/<nodeId>/<nodeEpoch>/`), whose part
   * records the thread indexes (src/objects/indexer.ts); absent: the ledger's entries format.
   */
  indexNode?: string;
}

/** Main thread → maintenance thread. */
export type ToMaintenanceThread =
  /**
   * What the main thread's view holds now: the streams this node has placed (null: the same as
   * in the last message, no placement row having changed since), the maintenance lease's fence
   * (null: not the holder), and the live nodes' current starts (`g/<nodeId>/<nodeEpoch>/`: the
   * records format's holder strands the part records of every other start's writers).
   */
  | { type: 'state'; placed: PlacedStream[] | null; holder: HolderCompare | null; liveStarts: string[] }
  /** Stop the jobs (waiting for a tick in progress), close the link and the store, exit. */
  | { type: 'close' };

/** Maintenance thread → main thread. */
export type FromMaintenanceThread =
  /** A log line of compaction or the reaper, for the node's logger. */
  | { type: 'log'; level: 'error' | 'warn' | 'info' | 'debug'; fields: object; msg: string | undefined }
  /** The thread's object store requests and compaction's bytes and throttled time so far (the answer to each 'state'). */
  | { type: 'stats'; stats: ObjectStoreStats; compaction: CompactionStats };
