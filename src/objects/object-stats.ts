/**
 * Object store figures (docs/metrics.md, `svc_object_store_*`): per operation, plain counters
 * and a latency histogram as bucket counts, like the shards' group-commit stats. Each thread
 * keeps its own (a store is opened per thread) and hands them to the main thread as plain data,
 * where `addObjectStoreStats` sums them for the node.
 */
import { type ObjectOp } from './object-store';

export const OBJECT_OPS: readonly ObjectOp[] = ['put', 'get', 'delete', 'list'];

/** Seconds per request: upper bounds, from a local file write (~1 ms) to a stalled store (10 s). */
export const OBJECT_SECONDS_BOUNDS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One histogram: counts per bucket (not cumulative; the last is above every bound), their sum and count. */
export interface ObjectBucketCounts {
  counts: number[];
  sum: number;
  count: number;
}

/** One operation's figures. A request is one store call (`list`: one page; S3 retries are counted apart). */
export interface ObjectOpStats {
  /** Requests that succeeded. */
  ok: number;
  /** Requests that found no object (a get of an absent key; delete and list never count here). */
  notFound: number;
  /** Requests that failed (after their retries). */
  errors: number;
  /** Attempts repeated after a 5xx or a network error (S3 only). */
  retries: number;
  /** Body bytes: sent by put, received by get. */
  bytes: number;
  /** Seconds per request, retries included. */
  seconds: ObjectBucketCounts;
}

export type ObjectStoreStats = Record<ObjectOp, ObjectOpStats>;

export type ObjectOutcome = 'ok' | 'not_found' | 'error';

function newOpStats(): ObjectOpStats {
  return { ok: 0, notFound: 0, errors: 0, retries: 0, bytes: 0, seconds: { counts: new Array<number>(OBJECT_SECONDS_BOUNDS.length + 1).fill(0), sum: 0, count: 0 } };
}

export function newObjectStoreStats(): ObjectStoreStats {
  return { put: newOpStats(), get: newOpStats(), delete: newOpStats(), list: newOpStats() };
}

/** Count one finished request of `op`. */
export function recordObjectRequest(s: ObjectStoreStats, op: ObjectOp, outcome: ObjectOutcome, seconds: number, bytes = 0): void {
  const o = s[op];
  if (outcome === 'ok') o.ok++;
  else if (outcome === 'not_found') o.notFound++;
  else o.errors++;
  o.bytes += bytes;
  const b = o.seconds;
  let i = 0;
  while (i < OBJECT_SECONDS_BOUNDS.length && seconds > OBJECT_SECONDS_BOUNDS[i]!) i++;
  b.counts[i]!++;
  b.sum += seconds;
  b.count++;
}

/** Add `from` into `into` (every thread's figures summed for the node). */
export function addObjectStoreStats(into: ObjectStoreStats, from: ObjectStoreStats): void {
  for (const op of OBJECT_OPS) {
    const a = into[op];
    const b = from[op];
    a.ok += b.ok;
    a.notFound += b.notFound;
    a.errors += b.errors;
    a.retries += b.retries;
    a.bytes += b.bytes;
    for (let i = 0; i < a.seconds.counts.length; i++) a.seconds.counts[i]! += b.seconds.counts[i] ?? 0;
    a.seconds.sum += b.seconds.sum;
    a.seconds.count += b.seconds.count;
  }
}
