/** What the Durable Streams listener's handlers share. */
import { type ShardClient } from '../../shards';
import { type HttpRequest } from '../http/engine';
import { type LiveWaiters } from '../svc/live-waiters';
import { type Subscriptions } from './subscriptions';

export interface DsContext {
  shards: ShardClient;
  live: LiveWaiters;
  /** Largest message (record) body, bytes. */
  maxRecordBytes: number;
  /** Longest stream name, UTF-8 bytes. */
  maxStreamNameBytes: number;
  /** Most messages one JSON append may carry. */
  maxBatchRecords: number;
  /** Byte budget of a catch-up page. */
  readBytes: number;
  /** An SSE response is ended after this long so that clients reconnect (and caches can collapse them), ms. */
  sseReconnectMs: number;
  /** The `__ds` subscription APIs, or null when they are off. */
  subscriptions: Subscriptions | null;
  /**
   * Auth hook (the auth feature plugs in here): null lets the request through; a denial is answered
   * as this listener must, plain text with no headers beyond the protocol's own, so a scope 403
   * never looks like producer fencing (403 with Producer-Epoch). Absent: no auth.
   */
  authorize?: (req: HttpRequest) => Promise<AuthDenial | null>;
}

export interface AuthDenial {
  /** 401: no usable credential; 403: a valid one that does not allow this request. */
  status: 401 | 403;
  message: string;
}

/** Streams live under this path on the Durable Streams listener: `/v1/stream/orders` is the stream `/orders`. */
export const STREAM_BASE = '/v1/stream';
