/**
 * A connector's status and counters (spec "States and transitions"): starting, running,
 * stopping, stopped, error with last_error, plus `degraded` (beyond the spec, docs/connectors.md
 * "Reconnection and degraded"): the connector cannot reach the node, its target, or cannot start,
 * and retries on its own with backoff; last_error says why. Counters feed GET /stats and mirror
 * the metrics.
 */
import type { Metrics } from './metrics';

export const STATUSES = ['starting', 'running', 'degraded', 'stopping', 'stopped', 'error'] as const;
export type Status = (typeof STATUSES)[number];

/** What a runner says about its own health while it runs: it reaches what it needs, or it retries. */
export type Health = { state: 'running' } | { state: 'degraded'; reason: string };

export interface LastError {
  message: string;
  /** ISO 8601. */
  time: string;
}

export interface Counters {
  produced: number;
  sent: number;
  consumed: number;
  processed: number;
  filtered: number;
  errors: number;
  retries: number;
  dead_lettered: number;
  plugin_restarts: number;
}

export const zeroCounters = (): Counters => ({ produced: 0, sent: 0, consumed: 0, processed: 0, filtered: 0, errors: 0, retries: 0, dead_lettered: 0, plugin_restarts: 0 });

/** Counts into both the per-connector counters and the Prometheus metrics. */
export class Tally {
  constructor(
    readonly key: string,
    readonly type: 'sink' | 'source',
    readonly counters: Counters,
    readonly metrics: Metrics,
  ) {}

  add(name: keyof Counters, n = 1): void {
    if (n === 0) return;
    this.counters[name] += n;
    const k = { connector_key: this.key };
    const kt = { connector_key: this.key, connector_type: this.type };
    switch (name) {
      case 'produced':
        return this.metrics.produced.inc(k, n);
      case 'sent':
        return this.metrics.sent.inc(k, n);
      case 'consumed':
        return this.metrics.consumed.inc(k, n);
      case 'processed':
        return this.metrics.processed.inc(k, n);
      case 'filtered':
        return this.metrics.filtered.inc(k, n);
      case 'errors':
        return this.metrics.errors.inc(kt, n);
      case 'retries':
        return this.metrics.retries.inc(kt, n);
      case 'dead_lettered':
        return this.metrics.deadLettered.inc(k, n);
      case 'plugin_restarts':
        return this.metrics.pluginRestarts.inc(kt, n);
    }
  }
}

/** Rejects with a timeout error naming `what` when `p` takes longer than `ms`. */
export async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
