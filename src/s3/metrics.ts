/**
 * Prometheus metrics of svc-cache, on their own listener ([metrics] listen, path). The only
 * file that imports prom-client; each server gets its own registry, so tests can run many.
 */
import * as http from 'node:http';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]; // seconds

export class Metrics {
  readonly registry = new Registry();
  /** Reads answered from the cache, by tier (memory, disk, metadata). */
  readonly hits = new Counter({ name: 'svc_cache_hits_total', help: 'reads answered from the cache', labelNames: ['tier'] as const, registers: [this.registry] });
  /** Cacheable reads that needed the origin (cold, expired or changed). */
  readonly misses = new Counter({ name: 'svc_cache_misses_total', help: 'cacheable reads that went to the origin', registers: [this.registry] });
  /** Misses that joined an origin fetch already under way instead of starting one. */
  readonly coalesced = new Counter({ name: 'svc_cache_coalesced_total', help: 'misses served by a fetch already in flight', registers: [this.registry] });
  /** Response body bytes written to clients, by where they came from. */
  readonly bytes = new Counter({ name: 'svc_cache_response_bytes_total', help: 'response body bytes sent to clients', labelNames: ['source'] as const, registers: [this.registry] });
  readonly evictions = new Counter({ name: 'svc_cache_evictions_total', help: 'entries evicted for capacity', labelNames: ['tier'] as const, registers: [this.registry] });
  readonly invalidations = new Counter({ name: 'svc_cache_invalidations_total', help: 'entries invalidated by writes', registers: [this.registry] });
  /** Origin requests that failed to connect or answered 5xx. */
  readonly originErrors = new Counter({ name: 'svc_cache_origin_errors_total', help: 'origin requests that failed or answered 5xx', registers: [this.registry] });
  readonly requests = new Histogram({
    name: 'svc_cache_request_duration_seconds',
    help: 'client request latency until the response ends',
    labelNames: ['op', 'result'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly origin = new Histogram({
    name: 'svc_cache_origin_duration_seconds',
    help: 'origin latency until response headers',
    labelNames: ['method'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  /**
   * Label children by their label values, looked up once: prom-client hashes a label object on
   * every call, which costs about as much as the rest of a hit's bookkeeping.
   */
  readonly #requestChildren = new Map<string, { observe(v: number): void }>();
  readonly #hitChildren = new Map<string, { inc(n?: number): void }>();
  readonly #byteChildren = new Map<string, { inc(n?: number): void }>();

  /** One client request ended: its op and status, and how long it took (seconds). */
  request(op: string, status: number, seconds: number): void {
    const key = `${op} ${status}`;
    let child = this.#requestChildren.get(key);
    if (child === undefined) this.#requestChildren.set(key, (child = this.requests.labels(op, String(status))));
    child.observe(seconds);
  }

  /** A read answered from the cache tier `tier`. */
  hit(tier: string): void {
    let child = this.#hitChildren.get(tier);
    if (child === undefined) this.#hitChildren.set(tier, (child = this.hits.labels(tier)));
    child.inc();
  }

  /** `n` response body bytes sent from `source` (cache or origin). */
  sent(source: 'cache' | 'origin', n: number): void {
    let child = this.#byteChildren.get(source);
    if (child === undefined) this.#byteChildren.set(source, (child = this.bytes.labels(source)));
    child.inc(n);
  }

  constructor(processMetrics = false) {
    if (processMetrics) collectDefaultMetrics({ register: this.registry });
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
