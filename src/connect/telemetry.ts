/**
 * OTLP export of logs and traces (spec "[logging], [telemetry]") to `telemetry.logs.endpoint` and
 * `telemetry.traces.endpoint`, each over its own `transport`: `http` (OTLP/HTTP with JSON bodies;
 * the full URL, e.g. http://collector:4318/v1/logs) or `grpc` (OTLP/gRPC with protobuf bodies,
 * otlp-grpc.ts; e.g. http://collector:4317). Every log line becomes a log record; every connector
 * batch (stage `total`) becomes a span `sink batch` / `source batch` with the connector's key.
 * Export is batched once a second and best-effort: a collector that is down costs dropped
 * telemetry (at most 10,000 items kept), never a stalled connector.
 */
import { randomBytes } from 'node:crypto';
import { OtlpGrpcClient } from './otlp-grpc';
import { type Attr, encodeLogsRequest, encodeTraceRequest, type OtlpLog, type OtlpSpan } from './otlp-proto';

const FLUSH_MS = 1000;
const MAX_PENDING = 10_000;
const SEVERITY: Record<string, number> = { debug: 5, info: 9, warn: 13, error: 17 };

export interface TelemetryConfig {
  service_name: string;
  logs: { endpoint: string; transport: 'grpc' | 'http' };
  traces: { endpoint: string; transport: 'grpc' | 'http' };
}

const attrs = (o: Record<string, unknown>): Attr[] => Object.entries(o).map(([key, v]) => ({ key, value: { stringValue: typeof v === 'string' ? v : JSON.stringify(v) } }));

const grpcFor = (s: { endpoint: string; transport: 'grpc' | 'http' }): OtlpGrpcClient | null => (s.transport === 'grpc' && s.endpoint !== '' ? new OtlpGrpcClient(s.endpoint) : null);

export class OtlpExporter {
  #logs: OtlpLog[] = [];
  #spans: OtlpSpan[] = [];
  readonly #timer: NodeJS.Timeout;
  readonly #resource: { attributes: Attr[] };
  readonly #grpc: { logs: OtlpGrpcClient | null; traces: OtlpGrpcClient | null };

  constructor(readonly cfg: TelemetryConfig) {
    this.#resource = { attributes: attrs({ 'service.name': cfg.service_name }) };
    this.#grpc = { logs: grpcFor(cfg.logs), traces: grpcFor(cfg.traces) };
    this.#timer = setInterval(() => void this.flush(), FLUSH_MS);
    this.#timer.unref();
  }

  log(level: string, msg: string, fields: Record<string, unknown>): void {
    if (this.cfg.logs.endpoint === '' || this.#logs.length >= MAX_PENDING) return;
    this.#logs.push({ timeUnixNano: String(BigInt(Date.now()) * 1_000_000n), severityNumber: SEVERITY[level] ?? 9, severityText: level.toUpperCase(), body: { stringValue: msg }, attributes: attrs(fields) });
  }

  /** A finished span of `seconds`, ending now. */
  span(name: string, seconds: number, attributes: Record<string, unknown>): void {
    if (this.cfg.traces.endpoint === '' || this.#spans.length >= MAX_PENDING) return;
    const end = BigInt(Date.now()) * 1_000_000n;
    const start = end - BigInt(Math.round(seconds * 1e9));
    this.#spans.push({ traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex'), name, kind: 1, startTimeUnixNano: String(start), endTimeUnixNano: String(end), attributes: attrs(attributes) });
  }

  async flush(): Promise<void> {
    const logs = this.#logs.splice(0);
    const spans = this.#spans.splice(0);
    const scope = { name: 'svc-connectors' };
    const post = (url: string, body: unknown): Promise<void> =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(5000) }).then(
        (r) => void r.arrayBuffer().catch(() => undefined),
        () => undefined,
      );
    const { logs: grpcLogs, traces: grpcTraces } = this.#grpc;
    await Promise.all([
      logs.length === 0
        ? null
        : grpcLogs !== null
          ? grpcLogs.export('logs', encodeLogsRequest(this.#resource, scope.name, logs)).catch(() => undefined)
          : post(this.cfg.logs.endpoint, { resourceLogs: [{ resource: this.#resource, scopeLogs: [{ scope, logRecords: logs }] }] }),
      spans.length === 0
        ? null
        : grpcTraces !== null
          ? grpcTraces.export('traces', encodeTraceRequest(this.#resource, scope.name, spans)).catch(() => undefined)
          : post(this.cfg.traces.endpoint, { resourceSpans: [{ resource: this.#resource, scopeSpans: [{ scope, spans }] }] }),
    ]);
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
    this.#grpc.logs?.close();
    this.#grpc.traces?.close();
  }
}
