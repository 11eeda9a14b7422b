/**
 * OTLP protobuf encoding of the two requests the runtime exports over gRPC (opentelemetry-proto
 * v1: collector/logs/v1 ExportLogsServiceRequest, collector/trace/v1 ExportTraceServiceRequest),
 * from the same OTLP/JSON-shaped objects the HTTP transport sends. Only the fields the runtime
 * sets are written; field numbers are those of the .proto files:
 *
 *   ExportLogsServiceRequest { ResourceLogs resource_logs = 1 }
 *   ResourceLogs  { Resource resource = 1; ScopeLogs scope_logs = 2 }
 *   ScopeLogs     { InstrumentationScope scope = 1; LogRecord log_records = 2 }
 *   LogRecord     { fixed64 time_unix_nano = 1; SeverityNumber severity_number = 2;
 *                   string severity_text = 3; AnyValue body = 5; KeyValue attributes = 6 }
 *   ExportTraceServiceRequest { ResourceSpans resource_spans = 1 }
 *   ResourceSpans { Resource resource = 1; ScopeSpans scope_spans = 2 }
 *   ScopeSpans    { InstrumentationScope scope = 1; Span spans = 2 }
 *   Span          { bytes trace_id = 1; bytes span_id = 2; string name = 5; SpanKind kind = 6;
 *                   fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
 *                   KeyValue attributes = 9 }
 *   Resource { KeyValue attributes = 1 }   InstrumentationScope { string name = 1 }
 *   KeyValue { string key = 1; AnyValue value = 2 }   AnyValue { string string_value = 1 }
 */

export type Attr = { key: string; value: { stringValue: string } };
export interface OtlpLog {
  timeUnixNano: string;
  severityNumber: number;
  severityText: string;
  body: { stringValue: string };
  attributes: Attr[];
}
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Attr[];
}

/** Protobuf wire types. */
const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;

function varint(n: number | bigint): Buffer {
  let v = BigInt(n);
  const out: number[] = [];
  while (v > 0x7fn) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return Buffer.from(out);
}

const tag = (field: number, wire: number): Buffer => varint((field << 3) | wire);
const bytes = (field: number, b: Buffer): Buffer => Buffer.concat([tag(field, LEN), varint(b.length), b]);
const str = (field: number, s: string): Buffer => bytes(field, Buffer.from(s, 'utf8'));
const msg = (field: number, parts: Buffer[]): Buffer => bytes(field, Buffer.concat(parts));
const uint = (field: number, n: number): Buffer => Buffer.concat([tag(field, VARINT), varint(n)]);
function fixed64(field: number, decimal: string): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(decimal));
  return Buffer.concat([tag(field, FIXED64), b]);
}

const anyValue = (field: number, v: { stringValue: string }): Buffer => msg(field, [str(1, v.stringValue)]);
const keyValue = (field: number, a: Attr): Buffer => msg(field, [str(1, a.key), anyValue(2, a.value)]);
const resource = (r: { attributes: Attr[] }): Buffer => msg(1, r.attributes.map((a) => keyValue(1, a)));
const scope = (name: string): Buffer => msg(1, [str(1, name)]);

export function encodeLogsRequest(res: { attributes: Attr[] }, scopeName: string, logs: OtlpLog[]): Buffer {
  const records = logs.map((l) => msg(2, [fixed64(1, l.timeUnixNano), uint(2, l.severityNumber), str(3, l.severityText), anyValue(5, l.body), ...l.attributes.map((a) => keyValue(6, a))]));
  return msg(1, [resource(res), msg(2, [scope(scopeName), ...records])]);
}

export function encodeTraceRequest(res: { attributes: Attr[] }, scopeName: string, spans: OtlpSpan[]): Buffer {
  const encoded = spans.map((s) =>
    msg(2, [bytes(1, Buffer.from(s.traceId, 'hex')), bytes(2, Buffer.from(s.spanId, 'hex')), str(5, s.name), uint(6, s.kind), fixed64(7, s.startTimeUnixNano), fixed64(8, s.endTimeUnixNano), ...s.attributes.map((a) => keyValue(9, a))]),
  );
  return msg(1, [resource(res), msg(2, [scope(scopeName), ...encoded])]);
}
