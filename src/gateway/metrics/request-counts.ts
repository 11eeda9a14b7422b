/**
 * Request counts of the HTTP listeners as plain numbers (docs/metrics.md): per (listener, op), the
 * requests per status class and a latency histogram. Kept by the main thread's NodeMetrics and by
 * each gateway thread (gateway-thread.ts), which sends its own at every scrape; no prom-client here,
 * so a thread does not load it.
 */
import { type BucketCounts, observeBucket } from '../../shards';

export type HttpListener = 'svc' | 'ds' | 'admin';

/** The `op` label of an HTTP request: from its method (svc, ds) or read/write (admin). Bounded on purpose. */
export const HTTP_OPS = ['read', 'head', 'append', 'create', 'delete', 'config', 'write', 'other'] as const;
export type HttpOp = (typeof HTTP_OPS)[number];
export const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/** Seconds; from 100 µs (an in-memory read) to 10 s (a stalled disk). */
export const LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One (listener, op)'s series: requests per status class (1xx … 5xx) and the latency histogram. */
export interface RequestSeries {
  readonly listener: HttpListener;
  readonly op: HttpOp;
  readonly byClass: number[];
  readonly latency: BucketCounts;
}

/** What a gateway thread reports at a scrape: its requests, its acknowledged appends and its live readers. */
export interface GatewayFigures {
  requests: RequestSeries[];
  appended: { records: number; bytes: number };
  liveReaders: { sse: number; longPoll: number };
  /** Kafka requests the thread served itself (Produce; the rest are counted by the main thread's listener), by API name. */
  kafkaRequests: Array<{ api: string; count: number }>;
}

export class RequestCounts {
  readonly #series = new Map<HttpListener, Array<RequestSeries | null>>();

  /** The pre-bound series of (listener, op index in HTTP_OPS), made on first use. */
  series(listener: HttpListener, op: number): RequestSeries {
    let ops = this.#series.get(listener);
    if (ops === undefined) this.#series.set(listener, (ops = HTTP_OPS.map(() => null)));
    let s = ops[op];
    if (s === undefined || s === null) {
      s = emptySeries(listener, HTTP_OPS[op]!);
      ops[op] = s;
    }
    return s;
  }

  /** Count one answered request of `status` in `s`, `seconds` after it arrived. */
  observe(s: RequestSeries, status: number, seconds: number): void {
    const k = Math.min(Math.max(Math.trunc(status / 100) - 1, 0), 4);
    s.byClass[k]!++;
    observeBucket(s.latency, LATENCY_BUCKETS, seconds);
  }

  /** Every series made so far. */
  all(): RequestSeries[] {
    return [...this.#series.values()].flatMap((ops) => ops.filter((x): x is RequestSeries => x !== null));
  }
}

/** Series of several counters (this thread's and the gateway threads'), summed per (listener, op). */
export function sumSeries(lists: ReadonlyArray<readonly RequestSeries[]>): RequestSeries[] {
  const out = new Map<string, RequestSeries>();
  for (const list of lists) {
    for (const s of list) {
      const key = `${s.listener} ${s.op}`;
      let t = out.get(key);
      if (t === undefined) out.set(key, (t = emptySeries(s.listener, s.op)));
      for (let k = 0; k < t.byClass.length; k++) t.byClass[k]! += s.byClass[k] ?? 0;
      for (let i = 0; i < t.latency.counts.length; i++) t.latency.counts[i]! += s.latency.counts[i] ?? 0;
      t.latency.sum += s.latency.sum;
      t.latency.count += s.latency.count;
    }
  }
  return [...out.values()];
}

/** The gateway threads' figures as one. */
export function sumFigures(list: readonly GatewayFigures[]): GatewayFigures {
  return {
    requests: sumSeries(list.map((f) => f.requests)),
    appended: { records: list.reduce((n, f) => n + f.appended.records, 0), bytes: list.reduce((n, f) => n + f.appended.bytes, 0) },
    liveReaders: { sse: list.reduce((n, f) => n + f.liveReaders.sse, 0), longPoll: list.reduce((n, f) => n + f.liveReaders.longPoll, 0) },
    kafkaRequests: sumByApi(list.flatMap((f) => f.kafkaRequests)),
  };
}

/** Counts of one API summed (the main thread's and every gateway thread's). */
export function sumByApi(counts: ReadonlyArray<{ api: string; count: number }>): Array<{ api: string; count: number }> {
  const out = new Map<string, number>();
  for (const c of counts) out.set(c.api, (out.get(c.api) ?? 0) + c.count);
  return [...out].map(([api, count]) => ({ api, count }));
}

function emptySeries(listener: HttpListener, op: HttpOp): RequestSeries {
  return { listener, op, byClass: STATUS_CLASSES.map(() => 0), latency: { counts: new Array<number>(LATENCY_BUCKETS.length + 1).fill(0), sum: 0, count: 0 } };
}
