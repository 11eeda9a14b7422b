/**
 * OTLP export of logs and traces (spec "[logging], [telemetry]") over OTLP/HTTP with JSON
 * bodies (`telemetry.logs.endpoint`, `telemetry.traces.endpoint`, e.g.
 * http://collector:4318/v1/logs). Every log line becomes a log record; every connector batch
 * (stage `total`) becomes a span `sink batch` / `source batch` with the connector's key. Export is
 * batched once a second and best-effort: a collector that is down costs dropped telemetry (at most
 * 10,000 items kept), never a stalled connector. The gRPC transport is not in this build.
 */
import { randomBytes } from 'node:crypto';

const FLUSH_MS = 1000;
const MAX_PENDING = 10_000;
const SEVERITY: Record<string, number> = { debug: 5, info: 9, warn: 13, error: 17 };

export interface TelemetryConfig {
  service_name: string;
  logs: { endpoint: string; transport: 'grpc' | 'http' };
  traces: { endpoint: string; transport: 'grpc' | 'http' };
}

type Attr = { key: string; value: { stringValue: string } };
const attrs = (o: Record<string, unknown>): Attr[] => Object.entries(o).map(([key, v]) => ({ key, value: { stringValue: typeof v === 'string' ? v : JSON.stringify(v) } }));

export class OtlpExporter {
  #logs: unknown[] = [];
  #spans: unknown[] = [];
  readonly #timer: NodeJS.Timeout;
  readonly #resource: { attributes: Attr[] };

  constructor(readonly cfg: TelemetryConfig) {
    this.#resource = { attributes: attrs({ 'service.name': cfg.service_name }) };
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
    await Promise.all([
      logs.length > 0 ? post(this.cfg.logs.endpoint, { resourceLogs: [{ resource: this.#resource, scopeLogs: [{ scope, logRecords: logs }] }] }) : null,
      spans.length > 0 ? post(this.cfg.traces.endpoint, { resourceSpans: [{ resource: this.#resource, scopeSpans: [{ scope, spans }] }] }) : null,
    ]);
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
  }
}
