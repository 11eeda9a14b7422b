/**
 * A real OTLP/HTTP traces receiver for tests: an HTTP server on a loopback port that accepts
 * `POST /v1/traces` with the JSON encoding of ExportTraceServiceRequest (opentelemetry-proto,
 * "OTLP/HTTP JSON": ids as hex strings, 64-bit integers as numbers or strings), answers 200 `{}`
 * as a collector does, and keeps every span with its attributes flattened. Closed when the test
 * file ends.
 */
import * as http from 'node:http';
import { type AddressInfo } from 'node:net';

export type AttrValue = string | number | boolean;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** SpanKind: 1 internal, 2 server. */
  kind: number;
  /** Status code: 0 unset, 1 ok, 2 error. */
  status: number;
  attributes: Record<string, AttrValue>;
  resource: Record<string, AttrValue>;
  startNs: bigint;
  endNs: bigint;
}

export interface OtlpReceiver {
  /** The traces URL, http://127.0.0.1:<port>/v1/traces. */
  url: string;
  /** The base URL (what OTEL_EXPORTER_OTLP_ENDPOINT names). */
  base: string;
  spans: ReceivedSpan[];
  /** Export requests received (any path). */
  requests: number;
  /** Resolves once `pred` holds for the spans received, or rejects after `ms`. */
  waitFor(pred: (spans: ReceivedSpan[]) => boolean, ms?: number): Promise<void>;
  close(): Promise<void>;
}

interface JsonAnyValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
}
interface JsonKeyValue {
  key: string;
  value: JsonAnyValue;
}
interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes?: JsonKeyValue[];
  status?: { code?: number };
}
interface JsonRequest {
  resourceSpans?: Array<{ resource?: { attributes?: JsonKeyValue[] }; scopeSpans?: Array<{ spans?: JsonSpan[] }> }>;
}

function flatten(kvs: JsonKeyValue[] | undefined): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  for (const { key, value } of kvs ?? []) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
  }
  return out;
}

const open = new Set<OtlpReceiver>();

/** `refuseWith`: answer every export with this status instead (a collector that rejects what it is sent). */
export async function startOtlpReceiver(o: { refuseWith?: number } = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const waiters = new Set<() => void>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      receiver.requests++;
      if (o.refuseWith !== undefined) {
        res.writeHead(o.refuseWith, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !(req.headers['content-type'] ?? '').startsWith('application/json')) {
        res.writeHead(415, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as JsonRequest;
      for (const rs of body.resourceSpans ?? []) {
        const resource = flatten(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId === undefined || s.parentSpanId === '' ? null : s.parentSpanId,
              name: s.name,
              kind: s.kind,
              status: s.status?.code ?? 0,
              attributes: flatten(s.attributes),
              resource,
              startNs: BigInt(s.startTimeUnixNano),
              endNs: BigInt(s.endTimeUnixNano),
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      for (const w of waiters) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const receiver: OtlpReceiver = {
    url: `${base}/v1/traces`,
    base,
    spans,
    requests: 0,
    waitFor(pred, ms = 15_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (!pred(spans)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`spans expected did not arrive in ${ms} ms; received: ${spans.map((s) => s.name).join(', ')}`));
        }, ms);
        waiters.add(check);
        check();
      });
    },
    close() {
      open.delete(receiver);
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  open.add(receiver);
  return receiver;
}

afterAll(async () => {
  await Promise.all([...open].map((r) => r.close()));
});
