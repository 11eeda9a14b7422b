/**
 * OpenTelemetry traces of the node (docs/metrics.md, "Traces"): the only file that imports the
 * OpenTelemetry libraries. Off unless an OTLP endpoint is set (config.ts, otlpTracesEndpointOf);
 * then src/node.ts makes one Tracing and hands it to the layers that make spans:
 *
 *   Svc / DS HTTP request (gateway/metrics/traced.ts) ─┐                  ┌─▶ shard append: worker hop,
 *       parent: the request's W3C traceparent, if any  ├─▶ request span ──┤   group commit, fdatasync
 *   Kafka Produce / Fetch (kafka-wire/dispatch.ts) ────┘   (SERVER)       └─▶ shard read: worker hop
 *                                                                             (INTERNAL, ShardClient)
 *
 * - A child finds its request span through an AsyncLocalStorage entered for the request, so no
 *   handler passes a context on; a shard call outside a traced request (retention, internal
 *   reads) makes no span, nor does one after its request's span ended (an SSE stream's later pages).
 *   On Node 20 an enabled AsyncLocalStorage hooks every promise of the process (several per
 *   append), so the store is disabled again whenever no traced request is open: a low sample
 *   ratio does not leave every untraced request paying for the hook.
 * - The request span ends at its status line (a streamed reply: at its head), as the latency in
 *   metrics does; it carries the stream, records and bytes its shard calls moved.
 * - Sampling is decided before anything is made (parentOf): a new trace is kept with probability
 *   `--otlp-traces-sample-ratio`, a request with a traceparent follows its caller's sampled flag.
 *   A request not sampled runs as if traces were off: no span, no scope, no wrapper.
 * - Export is batched (BatchSpanProcessor: every second, at most 2,048 spans queued, the rest
 *   dropped) over OTLP/HTTP with JSON bodies. A collector that is down or slow costs dropped spans
 *   and one log line a minute at most, never a request's time.
 * - With gateway threads (`--gateway-threads`) each thread serving requests makes a Tracing of its
 *   own (gateway-thread.ts, loaded only when traces are on) with its own batch and exporter, and
 *   its request spans carry `thread.name`; a request a thread leaves to the main thread is traced
 *   there, once.
 * - Off, nothing here runs: node.ts builds no Tracing, installs no layer, and the shard client and
 *   the Kafka dispatch test one `null`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { type Attributes, type Context, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, type TextMapGetter, TraceFlags, type Tracer, trace } from '@opentelemetry/api';
import { ExportResultCode, W3CTraceContextPropagator, type ExportResult } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, type ReadableSpan, type SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { type HopEnd, type HopOp, type HopTracer } from './shards';

export interface TracingOptions {
  /** The collector's OTLP/HTTP traces URL, e.g. http://127.0.0.1:4318/v1/traces. */
  endpoint: string;
  /** Share of new traces kept, 0 to 1. */
  sampleRatio: number;
  /** `service.name` of the exported spans. */
  serviceName: string;
  /** This node's id (`service.instance.id`). */
  nodeId: number;
  /**
   * The gateway thread this Tracing serves (`--gateway-threads`): each thread has its own, and
   * its request spans carry `thread.name` (OpenTelemetry's attribute); absent on the main thread.
   */
  threadName?: string;
}

/** What tracing needs of a logger (the node's pino logger fits). */
export interface TracingLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export type SpanValue = string | number | boolean;

/** Where a traced request's span hangs: the caller's context, or a new trace (Tracing.parentOf). */
export type TraceParent = Context;

/** A listener request's span, as the layer that made it sees it. */
export interface RequestSpan {
  /** Sets an attribute (ignored once the span ended). */
  set(key: string, value: SpanValue): void;
  /** Ends the span, once; `error` names a failure on the node's side (a 5xx status, a Kafka error code), else null. */
  end(error: string | null): void;
  readonly ended: boolean;
}

/** Milliseconds between two log lines about failed exports: a collector that is down says so once a minute. */
const EXPORT_LOG_INTERVAL_MS = 60_000;
/** Milliseconds an export may take before it counts as failed (the OTLP default is 10 s). */
const EXPORT_TIMEOUT_MS = 5_000;
/** Milliseconds the node's shutdown waits for the last spans to be sent. */
const CLOSE_WAIT_MS = 2_000;

/** Reads the request's lower-case header record (gateway/http/engine.ts HttpRequest.headers). */
const HEADERS: TextMapGetter<Readonly<Record<string, string>>> = {
  get: (carrier, key) => carrier[key],
  keys: (carrier) => Object.keys(carrier),
};

/** One request's scope: its span, the context its children take as parent, and what its shard calls moved. */
class RequestScope implements RequestSpan {
  readonly span: Span;
  readonly ctx: Context;
  ended = false;
  stream: string | null = null;
  hops = 0;
  records = 0;
  bytes = 0;

  readonly #closed: () => void;

  constructor(span: Span, ctx: Context, closed: () => void) {
    this.span = span;
    this.ctx = ctx;
    this.#closed = closed;
  }

  set(key: string, value: SpanValue): void {
    if (!this.ended) this.span.setAttribute(key, value);
  }

  end(error: string | null): void {
    if (this.ended) return;
    this.ended = true;
    const s = this.span;
    if (this.stream !== null) s.setAttribute('svc.stream', this.stream);
    if (this.hops > 0) {
      s.setAttribute('svc.records', this.records);
      s.setAttribute('svc.bytes', this.bytes);
    }
    if (error !== null) {
      s.setAttribute('error.type', error);
      s.setStatus({ code: SpanStatusCode.ERROR });
    }
    s.end();
    this.#closed();
  }
}

/**
 * The exporter, with its failures logged at most once a minute (with the spans dropped since the
 * last line) instead of OpenTelemetry's diagnostic logger, which the node does not install.
 */
class LoggedExporter implements SpanExporter {
  readonly #inner: SpanExporter;
  readonly #log: TracingLog;
  readonly #endpoint: string;
  #lastLog = -Infinity;
  #dropped = 0;

  constructor(inner: SpanExporter, log: TracingLog, endpoint: string) {
    this.#inner = inner;
    this.#log = log;
    this.#endpoint = endpoint;
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.#inner.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) this.#failed(spans.length, result.error);
      done(result);
    });
  }

  #failed(spans: number, error: Error | undefined): void {
    this.#dropped += spans;
    const now = performance.now();
    if (now - this.#lastLog < EXPORT_LOG_INTERVAL_MS) return;
    this.#lastLog = now;
    this.#log.warn({ endpoint: this.#endpoint, droppedSpans: this.#dropped, err: error?.message }, 'cannot export traces to the OTLP endpoint; spans are dropped (logged at most once a minute)');
    this.#dropped = 0;
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }
}

export class Tracing implements HopTracer {
  readonly #provider: TracerProvider;
  readonly #tracer: Tracer;
  readonly #scope = new AsyncLocalStorage<RequestScope>();
  readonly #propagator = new W3CTraceContextPropagator();
  readonly #ratio: number;
  /** `thread.name` of this thread's request spans (TracingOptions.threadName), or null. */
  readonly #thread: string | null;
  /** Request spans open now; at 0 the scope store is disabled (see the file comment). */
  #open = 0;
  readonly #closed = (): void => {
    if (--this.#open === 0) this.#scope.disable();
  };

  constructor(o: TracingOptions, log: TracingLog) {
    const exporter = new LoggedExporter(new OTLPTraceExporter({ url: o.endpoint, timeoutMillis: EXPORT_TIMEOUT_MS }), log, o.endpoint);
    this.#provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': o.serviceName, 'service.instance.id': String(o.nodeId) }),
      // The ratio is applied in parentOf, before any span exists; what reaches the SDK is kept.
      sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
      spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: 1000, maxQueueSize: 2048, maxExportBatchSize: 512, exportTimeoutMillis: EXPORT_TIMEOUT_MS })],
    });
    this.#tracer = this.#provider.getTracer('svc');
    this.#ratio = o.sampleRatio;
    this.#thread = o.threadName ?? null;
    // Each gateway thread says so too: one line per thread that exports.
    log.info({ endpoint: o.endpoint, sampleRatio: o.sampleRatio, serviceName: o.serviceName, ...(o.threadName === undefined ? {} : { thread: o.threadName }) }, 'OpenTelemetry traces on');
  }

  /**
   * Whether a request is traced, and under what: `headers` are an HTTP request's, whose W3C
   * `traceparent` (and `tracestate`) names the caller's span; null for none (Kafka). Null: not
   * sampled, the caller runs the request untraced.
   */
  parentOf(headers: Readonly<Record<string, string>> | null): TraceParent | null {
    if (headers === null || headers['traceparent'] === undefined) return this.#ratio >= 1 || Math.random() < this.#ratio ? ROOT_CONTEXT : null;
    const parent = this.#propagator.extract(ROOT_CONTEXT, headers, HEADERS);
    const caller = trace.getSpanContext(parent);
    // A malformed traceparent is ignored (W3C Trace Context): a new trace, sampled by the ratio.
    if (caller === undefined) return this.#ratio >= 1 || Math.random() < this.#ratio ? ROOT_CONTEXT : null;
    return (caller.traceFlags & TraceFlags.SAMPLED) !== 0 ? parent : null;
  }

  /** Runs `fn` inside a new request span (kind SERVER) named `name`, a child of `parent` (parentOf). */
  request<T>(name: string, attributes: Attributes, parent: TraceParent, fn: (span: RequestSpan) => T): T {
    const span = this.#tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
    if (this.#thread !== null) span.setAttribute('thread.name', this.#thread);
    const scope = new RequestScope(span, trace.setSpan(parent, span), this.#closed);
    this.#open++;
    return this.#scope.run(scope, () => fn(scope));
  }

  /** HopTracer: a shard call made inside a traced request gets a child span (`shard append`, `shard read`). */
  start(op: HopOp, stream: string, shard: number, worker: number): HopEnd | null {
    const scope = this.#scope.getStore();
    if (scope === undefined || scope.ended || !scope.span.isRecording()) return null;
    const span = this.#tracer.startSpan(`shard ${op}`, { kind: SpanKind.INTERNAL, attributes: { 'svc.stream': stream, 'svc.shard': shard, 'svc.worker': worker } }, scope.ctx);
    scope.stream ??= stream;
    return (records, bytes, error) => {
      if (error === null) {
        span.setAttribute('svc.records', records);
        span.setAttribute('svc.bytes', bytes);
        scope.hops++;
        scope.records += records;
        scope.bytes += bytes;
      } else {
        // A storage outcome (duplicate, stale_epoch, closed…) or an error code (docs/errors.md).
        const e = error as { code?: unknown; outcome?: { kind?: unknown } };
        const what = typeof e.outcome?.kind === 'string' ? e.outcome.kind : typeof e.code === 'string' ? e.code : 'internal';
        span.setAttribute('svc.outcome', what);
        span.setAttribute('error.type', what);
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    };
  }

  /** Exports what is queued and stops; a collector that does not answer holds the node's shutdown for 2 s at most. */
  async close(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)));
    await Promise.race([this.#provider.shutdown().catch(() => undefined), late]);
    clearTimeout(timer);
  }
}
