/** What the Durable Streams listener's handlers share. */
import { type ShardClient } from '../../shards';
import { type LiveWaiters } from '../kit';
import { type RecordValidation } from '../../util/validation-rule';
import { type Subscriptions } from './subscriptions';

export interface DsContext {
  shards: ShardClient;
  live: LiveWaiters;
  /** Largest message (record) body, bytes. */
  maxRecordBytes: number;
  /** Longest stream name, UTF-8 bytes. */
  maxStreamNameBytes: number;
  /** Byte budget of a catch-up page. */
  readBytes: number;
  /** An SSE response is ended after this long so that clients reconnect (and caches can collapse them), ms. */
  sseReconnectMs: number;
  /**
   * The `__ds` subscription APIs, or null when they are off. On a gateway thread, which leaves
   * `__ds` requests to the main thread, only its stream events, posted to the main thread's.
   */
  subscriptions: Pick<Subscriptions, 'handle' | 'onStreamChanged' | 'onStreamDeleted'> | null;
  /**
   * Schema validation against the registry (`registryValidation`, docs/schema-registry.md): a
   * validated stream's appends are checked as on the Svc listener; absent: none (a gateway
   * thread, which leaves a validated stream's writes to the main thread).
   */
  validation?: RecordValidation | null;
}

/** Streams live under this path on the Durable Streams listener: `/v1/stream/orders` is the stream `/orders`. */
export const STREAM_BASE = '/v1/stream';
