/** What the protocol listener's handlers share: the data plane and the limits. */
import { type ShareStates } from '../../actors';
import { type Schemas, type ShardClient } from '../../shards';
import { type LiveWaiters } from '../kit';
import { type RecordValidation } from '../../util/validation-rule';

export interface SvcLimits {
  /** Largest single record value, bytes. */
  maxRecordBytes: number;
  /** Most records in one batch append. */
  maxBatchRecords: number;
  /** Longest stream name, UTF-8 bytes. */
  maxStreamNameBytes: number;
  /** Byte budget of a read page when `bytes` is absent. */
  readDefaultBytes: number;
  /** Largest byte budget a read may ask for. */
  readMaxBytes: number;
  /** Records per read page when `count` is absent. */
  readDefaultCount: number;
  /** Largest `limit` of a list page (also its default). */
  listMaxLimit: number;
}

export interface SvcContext {
  shards: ShardClient;
  limits: SvcLimits;
  /** Where live reads (long-poll, SSE) wait for tail events. */
  live: LiveWaiters;
  /** The schema registry (`/_schemas/{name}`). */
  schemas: Schemas;
  /** Named offsets (`/_offsets/{stream}`), kept in the metadata store; null: the route answers 404. */
  offsets: NamedOffsetStore | null;
  /** Share groups (`/_share/{stream}`), kept in the metadata store; null or absent: the route answers 404. */
  share?: ShareStates | null;
  /** Schema validation against the Confluent-compatible registry (`registryValidation`); null or absent: none. */
  validation?: RecordValidation | null;
}

/** A committed position: the next seq to read, and when it was committed (ms since the epoch). */
export interface NamedOffsetValue {
  readonly seq: number;
  readonly committedAt: number;
}

/** Where named offsets are kept (the control plane's NamedOffsets, given by the node). */
export interface NamedOffsetStore {
  get(group: string, stream: string): Promise<NamedOffsetValue | null>;
  commit(group: string, stream: string, seq: number): Promise<NamedOffsetValue>;
  delete(group: string, stream: string): Promise<boolean>;
}

export const JSON_BATCH_TYPE = 'application/vnd.svc.batch+json';
export const BINARY_BATCH_TYPE = 'application/vnd.svc.batch';
export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';
