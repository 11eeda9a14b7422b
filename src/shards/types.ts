/** Requests and results of the data plane, as the gateway and the shard worker both see them. */
import { type RecordInput } from '../util/record-batch';

export type ReadFormat = 'json' | 'raw' | 'binary';

/** Limits a shard enforces on appended batches. */
export interface BatchLimits {
  /** Largest record value, bytes. */
  maxRecordBytes: number;
  /** Most records in one append. */
  maxBatchRecords: number;
}

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
}

export interface CreateParams {
  name: string;
  contentType: string;
  ttlSeconds: number | null;
  expiresAtMs: number | null;
  closed: boolean;
  /** Initial records (the create body); empty for none. */
  records: RecordInput[];
}

export interface CreateResult {
  created: boolean;
  info: StreamInfo;
}

export interface AppendParams {
  name: string;
  /** Records to encode into one batch (single-record and JSON-batch appends). */
  records: RecordInput[] | null;
  /** Complete RecordBatch v2 batches as the client sent them (binary-batch appends). */
  batches: Buffer | null;
  /** A JSON batch body (`application/vnd.svc.batch+json`), parsed and checked on the shard's thread. */
  jsonBatch: Buffer | null;
  /** Media type of a single-record body, checked against the stream's; null for batches. */
  contentType: string | null;
  /** Seal the stream after this append. */
  close: boolean;
}

export interface AppendResult {
  startSeq: number;
  nextSeq: number;
  /** Unix milliseconds stamped on the appended records. */
  timestamp: number;
  closed: boolean;
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
}

export interface ReadResult {
  body: Buffer;
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
}
