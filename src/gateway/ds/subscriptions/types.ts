/**
 * The contract between the Durable Streams listener and the subscription manager. Paths are
 * DS stream paths relative to `/v1/stream/`, without a leading slash (`events/sync-123`).
 */
import { type Logger } from '../../../log';

/** What the DS listener gives the subscription manager. */
export interface SubscriptionHost {
  /**
   * Tail offset of a stream in the DS offset format (`%016d_%016d`), or null when it does not
   * exist. Must already reflect every append the listener has acknowledged (a claim right after
   * an append has to see it).
   */
  tailOffset(path: string): Promise<string | null>;
  /** Append one JSON value as one message to an existing application/json DS stream (the pull-wake wake stream). */
  appendJson(path: string, value: unknown): Promise<void>;
  /**
   * Optional: the existing streams whose path starts with `prefix` (`''` = all). When given, a
   * new glob subscription links the streams that already match at their current tail, so it
   * sees only what is appended after it was created; without it such a stream is linked on its
   * next change from its beginning.
   */
  listStreams?(prefix: string): Promise<string[]>;
}

/** One request under `/v1/stream/__ds/`, as the listener read it. */
export interface SubscriptionRequest {
  /** Upper-case HTTP method. */
  method: string;
  /** The raw path after `__ds/` (percent-encoding kept), e.g. `subscriptions/x/claim` or `jwks.json`. */
  subpath: string;
  /** Lower-case header names. */
  headers: Record<string, string>;
  body: Buffer;
  /** The public URL of the stream root, e.g. `http://127.0.0.1:4437/v1/stream/`; builds `jwks_url` and `callback_url`. */
  streamBaseUrl: string;
}

export interface SubscriptionResponse {
  status: number;
  headers: Record<string, string>;
  body: string | Buffer;
}

export interface SubscriptionsOptions {
  host: SubscriptionHost;
  /** Persist subscriptions, the signing key and acked offsets here (JSON, replaced atomically). */
  stateFile?: string;
  log: Logger;
  /** Wall clock in milliseconds (tests move it); timers still run on the real clock. */
  now?: () => number;
  /** How long one webhook POST may take before it counts as failed, in ms. Default 10 000. */
  webhookTimeoutMs?: number;
  /** Accept `http://` webhook URLs on loopback hosts (localhost, 127.0.0.0/8, ::1). Default true. */
  allowLoopbackHttp?: boolean;
}
