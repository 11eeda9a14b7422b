/**
 * What crosses between the main thread and a gateway thread for the Kafka listener
 * (`--gateway-threads`, docs/kafka.md, "Gateway threads"): connections handed to a thread, the
 * requests a thread leaves to the main thread (thread-front.ts) and their answers (relay.ts).
 */
import { type Scope } from '../actors';
import { type RefusalReport } from './server';

/** A connection's auth state as the main thread holds it after a request it ran (auth.ts, ConnectionAccess). */
export interface RelayedAccess {
  scope: Scope | null;
  /** The token SASL accepted: the thread checks it again before each request it serves (auth.ts, recheckToken). */
  token: string | null;
  mechanism: string | null;
  rawTokenNext: boolean;
}

/** The answer to a relayed request, or to its pending part. */
export type RelayedAnswer =
  /** The response frame (its size prefix included), or null: the request has none (Produce with acks=0). */
  | { kind: 'frame'; frame: Uint8Array | null }
  /** The request's effects are ordered and its response follows in a `kafka-late` message (server.ts, PendingResponse). */
  | { kind: 'pending' }
  /** The request closes the connection: why, for the log line. */
  | { kind: 'refused'; error: string; errorName: string };

/** Main thread → gateway thread. */
export type KafkaToThread =
  /** Serve this accepted socket (a descriptor of its own, this thread's to close) as connection `conn`. */
  | { t: 'kafka-conn'; fd: number; conn: number }
  /** The answer to relayed request `rid`, with the connection's auth state and client id after it. */
  | { t: 'kafka-res'; rid: number; answer: RelayedAnswer; access: RelayedAccess | null; clientId: string | null }
  /** The pending part of relayed request `rid`: its response frame, or why it failed. */
  | { t: 'kafka-late'; rid: number; answer: Exclude<RelayedAnswer, { kind: 'pending' }> };

/** Gateway thread → main thread. */
export type KafkaToMain =
  /** Run this request frame (without its size prefix) of connection `conn` as the main thread's listener would. */
  | { t: 'kafka-req'; rid: number; conn: number; remote: string; clientId: string | null; frame: Uint8Array }
  /**
   * The descriptor of connection `conn` is this thread's now: posted before the thread opens a
   * socket on it, so that the main thread closes only descriptors a thread that ended never took.
   */
  | { t: 'kafka-taken'; conn: number }
  /** Connection `conn` closed: what the main thread kept for it goes. */
  | { t: 'kafka-closed'; conn: number }
  /** A refused request's log line, for the listener's rate limit (server.ts, RefusalReport). */
  | { t: 'kafka-refused'; report: RefusalReport };

export function isKafkaToThread(m: { t: string }): m is KafkaToThread {
  return m.t === 'kafka-conn' || m.t === 'kafka-res' || m.t === 'kafka-late';
}

export function isKafkaToMain(m: { t: string }): m is KafkaToMain {
  return m.t === 'kafka-req' || m.t === 'kafka-taken' || m.t === 'kafka-closed' || m.t === 'kafka-refused';
}
