/**
 * Prometheus metrics of svc-cache, on their own listener ([metrics] listen, path). The only
 * file that imports prom-client; each server gets its own registry, so tests can run many.
 */
import * as http from 'node:http';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { EVENT_LOOP_SAMPLE_MS } from '../util/event-loop-sampling';

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]; // seconds

/** One label set of the request latency histogram: counts per bucket (the last is +Inf), sum, count. */
interface LatencySeries {
  op: string;
  result: string;
  counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * The request latency histogram, kept as plain numbers and turned into Prometheus values only
 * when scraped: prom-client's own observe() builds and hashes a label string and converts the
 * bucket bound to a property name on every call, about a microsecond per request. Same name,
 * labels, buckets and exposition as a prom-client Histogram.
 */
class LatencyHistogram {
  readonly name = 'svc_cache_request_duration_seconds';
  readonly help = 'client request latency until the response ends';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  /** Series by op, then by status code (numbers: no string built per request). */
  readonly #series = new Map<string, Map<number, LatencySeries>>();

  observe(op: string, status: number, seconds: number): void {
    let byStatus = this.#series.get(op);
    if (byStatus === undefined) this.#series.set(op, (byStatus = new Map()));
    let s = byStatus.get(status);
    if (s === undefined) byStatus.set(status, (s = { op, result: String(status), counts: new Float64Array(LATENCY_BUCKETS.length + 1), sum: 0, count: 0 }));
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[i]!) i++;
    s.counts[i]! += 1;
    s.sum += seconds;
    s.count += 1;
  }

  /** The exposition values, as prom-client's Histogram.get() gives them (cumulative buckets). */
  async get(): Promise<{ name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: { labels: Record<string, string | number>; value: number; metricName: string }[] }> {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const byStatus of this.#series.values())
      for (const s of byStatus.values()) {
        let acc = 0;
        for (let i = 0; i <= LATENCY_BUCKETS.length; i++) {
          acc += s.counts[i]!;
          values.push({ labels: { le: i < LATENCY_BUCKETS.length ? LATENCY_BUCKETS[i]! : '+Inf', op: s.op, result: s.result }, value: acc, metricName: `${this.name}_bucket` });
        }
        values.push({ labels: { op: s.op, result: s.result }, value: s.sum, metricName: `${this.name}_sum` });
        values.push({ labels: { op: s.op, result: s.result }, value: s.count, metricName: `${this.name}_count` });
      }
    return { name: this.name, help: this.help, type: 'histogram', aggregator: 'sum', values };
  }
}

/**
 * Counts by label kept as plain numbers on the hot path and added to the prom-client counter
 * when it is scraped (its collect hook): a labelled child's inc() hashes its labels every call.
 */
class PendingCounts {
  readonly #label: string;
  readonly #pending = new Map<string, number>();

  constructor(label: string) {
    this.#label = label;
  }

  add(value: string, n: number): void {
    this.#pending.set(value, (this.#pending.get(value) ?? 0) + n);
  }

  /** Adds what was counted since the last scrape to `counter`. */
  flushInto(counter: Counter<string>): void {
    for (const [value, n] of this.#pending) if (n > 0) counter.inc({ [this.#label]: value }, n);
    this.#pending.clear();
  }
}

export class Metrics {
  readonly registry = new Registry();
  /** Reads answered from the cache, by tier (memory, disk, metadata). */
  readonly #pendingHits = new PendingCounts('tier');
  readonly #pendingBytes = new PendingCounts('source');
  readonly hits: Counter<'tier'> = new Counter({ name: 'svc_cache_hits_total', help: 'reads answered from the cache', labelNames: ['tier'] as const, registers: [this.registry], collect: (): void => this.#pendingHits.flushInto(this.hits) });
  /** Cacheable reads that needed the origin (cold, expired or changed). */
  readonly misses = new Counter({ name: 'svc_cache_misses_total', help: 'cacheable reads that went to the origin', registers: [this.registry] });
  /** Misses that joined an origin fetch already under way instead of starting one. */
  readonly coalesced = new Counter({ name: 'svc_cache_coalesced_total', help: 'misses served by a fetch already in flight', registers: [this.registry] });
  /** Response body bytes written to clients, by where they came from. */
  readonly bytes: Counter<'source'> = new Counter({ name: 'svc_cache_response_bytes_total', help: 'response body bytes sent to clients', labelNames: ['source'] as const, registers: [this.registry], collect: (): void => this.#pendingBytes.flushInto(this.bytes) });
  readonly evictions = new Counter({ name: 'svc_cache_evictions_total', help: 'entries evicted for capacity', labelNames: ['tier'] as const, registers: [this.registry] });
  readonly invalidations = new Counter({ name: 'svc_cache_invalidations_total', help: 'entries invalidated by writes', registers: [this.registry] });
  /** Origin requests that failed to connect or answered 5xx. */
  readonly originErrors = new Counter({ name: 'svc_cache_origin_errors_total', help: 'origin requests that failed or answered 5xx', registers: [this.registry] });
  /** Reads answered from an entry past its TTL because the origin failed (stale-if-error). */
  readonly staleServed = new Counter({ name: 'svc_cache_stale_served_total', help: 'reads answered from an expired entry because the origin failed', registers: [this.registry] });
  /** Client request latency by op and status (svc_cache_request_duration_seconds). */
  readonly requests = new LatencyHistogram();
  readonly origin = new Histogram({
    name: 'svc_cache_origin_duration_seconds',
    help: 'origin latency until response headers',
    labelNames: ['method'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  /** One client request ended: its op and status, and how long it took (seconds). */
  request(op: string, status: number, seconds: number): void {
    this.requests.observe(op, status, seconds);
  }

  /** A read answered from the cache tier `tier` (counted on the next scrape). */
  hit(tier: string): void {
    this.#pendingHits.add(tier, 1);
  }

  /** `n` response body bytes sent from `source` (cache or origin; counted on the next scrape). */
  sent(source: 'cache' | 'origin', n: number): void {
    this.#pendingBytes.add(source, n);
  }

  constructor(processMetrics = false) {
    // The registry takes any object with a name and get(); its type names only prom-client's classes.
    this.registry.registerMetric(this.requests as unknown as Histogram);
    if (processMetrics) collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }

  /** A listener that answers `path` with the exposition text. */
  server(path: string): http.Server {
    return http.createServer((req, res) => {
      if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== path) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
        return;
      }
      this.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': this.registry.contentType }).end(text),
        (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(err.message),
      );
    });
  }
}
