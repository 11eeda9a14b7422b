/**
 * `[telemetry]`: logs and one span per connector batch exported to a local collector with the
 * service name, over OTLP/HTTP (JSON) and over OTLP/gRPC (protobuf, decoded here with protobufjs
 * against the opentelemetry-proto field numbers); a gRPC endpoint with a path is refused at startup.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as protobuf from 'protobufjs';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { startGrpcCollector } from './helpers/otlp-grpc-collector';
import { runRuntimeToExit, startRuntime, waitFor, writeRuntimeFiles } from './helpers/runtime-process';

describe('OTLP telemetry', () => {
  let node: NodeProcess;
  beforeAll(async () => {
    node = await startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1'] });
  });
  afterAll(async () => {
    await node?.stop();
  });

  test('logs and batch spans reach an OTLP/HTTP collector', async () => {
    const bodies: { url: string; body: Record<string, unknown> }[] = [];
    const s = http.createServer((req, res) => {
      let b = '';
      req.on('data', (c: Buffer) => (b += c.toString()));
      req.on('end', () => {
        bodies.push({ url: req.url!, body: JSON.parse(b) as Record<string, unknown> });
        res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    const dir = writeRuntimeFiles({
      config: `[kafka]\nbootstrap_servers = "${node.kafka}"\n[connectors]\nconfig_dir = "{dir}/connectors"\n[state]\npath = "{dir}/state"\n[telemetry]\nenabled = true\nservice_name = "connect-test"\n[telemetry.logs]\nendpoint = "${base}/v1/logs"\n[telemetry.traces]\nendpoint = "${base}/v1/traces"\n`,
      connectors: {
        'gen.toml': `type = "source"\nkey = "gen"\npath = "libsvc_connector_generator_source"\n[[topics]]\nname = "otlp"\n[plugin_config]\nrate = 0\ncount = 300\n`,
        'out.toml': `type = "sink"\nkey = "out"\npath = "libsvc_connector_file_sink"\n[[topics]]\nnames = ["otlp"]\n[plugin_config]\npath = "{dir}/out"\n`,
      },
    });
    const rt = await startRuntime(dir);
    const text = (): string => JSON.stringify(bodies);
    await waitFor(() => text().includes('"sink batch"') && text().includes('"source batch"') && text().includes('svc-connectors started'), 'logs and spans exported', 20000);
    const logs = bodies.find((b) => b.url === '/v1/logs')!.body as { resourceLogs: { resource: { attributes: unknown[] } }[] };
    expect(logs.resourceLogs[0]!.resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'connect-test' } });
    expect(text()).toContain('{"key":"connector_key","value":{"stringValue":"out"}}');
    await rt.stop();
    await new Promise((r) => s.close(r));
  });

  test('logs and batch spans reach an OTLP/gRPC collector as protobuf', async () => {
    // A gRPC server with the collector's two Export methods; requests are decoded with protobufjs
    // against the opentelemetry-proto field numbers (the subset the runtime sets).
    const root = protobuf.parse(OTLP_SUBSET).root;
    const LogsReq = root.lookupType('otlp.ExportLogsServiceRequest');
    const TraceReq = root.lookupType('otlp.ExportTraceServiceRequest');
    const got: { logs: Record<string, unknown>[]; traces: Record<string, unknown>[] } = { logs: [], traces: [] };
    const collector = await startGrpcCollector((signal, body) => {
      const type = signal === 'logs' ? LogsReq : TraceReq;
      got[signal].push(type.toObject(type.decode(body), { longs: String, bytes: String, defaults: false }));
    });
    const port = collector.port;
    const dir = writeRuntimeFiles({
      config: `[kafka]\nbootstrap_servers = "${node.kafka}"\n[connectors]\nconfig_dir = "{dir}/connectors"\n[state]\npath = "{dir}/state"\n[telemetry]\nenabled = true\nservice_name = "connect-grpc"\n[telemetry.logs]\nendpoint = "http://127.0.0.1:${port}"\ntransport = "grpc"\n[telemetry.traces]\nendpoint = "127.0.0.1:${port}"\ntransport = "grpc"\n`,
      connectors: {
        'gen.toml': `type = "source"\nkey = "gen"\npath = "libsvc_connector_generator_source"\n[[topics]]\nname = "otlp-grpc"\n[plugin_config]\nrate = 0\ncount = 300\n`,
        'out.toml': `type = "sink"\nkey = "out"\npath = "libsvc_connector_file_sink"\n[[topics]]\nnames = ["otlp-grpc"]\n[plugin_config]\npath = "{dir}/out"\n`,
      },
    });
    const rt = await startRuntime(dir);
    const text = (): string => JSON.stringify(got);
    await waitFor(() => text().includes('"sink batch"') && text().includes('"source batch"') && text().includes('svc-connectors started'), 'logs and spans exported over gRPC', 20000);
    const logs = got.logs[0] as { resourceLogs: { resource: { attributes: unknown[] }; scopeLogs: { scope: { name: string }; logRecords: { timeUnixNano: string; severityText: string; body: { stringValue: string } }[] }[] }[] };
    expect(logs.resourceLogs[0]!.resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'connect-grpc' } });
    expect(logs.resourceLogs[0]!.scopeLogs[0]!.scope.name).toBe('svc-connectors');
    const record = logs.resourceLogs[0]!.scopeLogs[0]!.logRecords[0]!;
    expect(Math.abs(Number(BigInt(record.timeUnixNano) / 1_000_000n) - Date.now())).toBeLessThan(60_000);
    const spans = got.traces.flatMap((t) => (t as { resourceSpans: { scopeSpans: { spans: { name: string; kind: number; traceId: string; startTimeUnixNano: string; endTimeUnixNano: string; attributes: unknown[] }[] }[] }[] }).resourceSpans[0]!.scopeSpans[0]!.spans);
    const sink = spans.find((sp) => sp.name === 'sink batch')!;
    expect(sink.attributes).toContainEqual({ key: 'connector_key', value: { stringValue: 'out' } });
    expect(Buffer.from(sink.traceId, 'base64')).toHaveLength(16);
    expect(BigInt(sink.endTimeUnixNano) >= BigInt(sink.startTimeUnixNano)).toBe(true);
    expect(sink.kind).toBe(1);
    await rt.stop();
    collector.close();
  });

  test('a gRPC endpoint with a path is refused at startup with the reason', async () => {
    const dir = writeRuntimeFiles({ config: `[telemetry]\nenabled = true\n[telemetry.logs]\nendpoint = "http://127.0.0.1:4317/v1/logs"\ntransport = "grpc"\n[connectors]\nconfig_dir = "{dir}/connectors"\n`, connectors: {} });
    const r = await runRuntimeToExit(dir);
    expect(r.code).toBe(1);
    expect(r.output).toContain('telemetry.logs.endpoint: the grpc transport takes host:port or http(s)://host:port');
  });
});

/** The opentelemetry-proto v1 messages the runtime sends, with their field numbers. */
const OTLP_SUBSET = `
syntax = "proto3";
package otlp;
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; } }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message InstrumentationScope { string name = 1; string version = 2; }
message LogRecord { fixed64 time_unix_nano = 1; fixed64 observed_time_unix_nano = 11; int32 severity_number = 2; string severity_text = 3; AnyValue body = 5; repeated KeyValue attributes = 6; }
message ScopeLogs { InstrumentationScope scope = 1; repeated LogRecord log_records = 2; string schema_url = 3; }
message ResourceLogs { Resource resource = 1; repeated ScopeLogs scope_logs = 2; string schema_url = 3; }
message ExportLogsServiceRequest { repeated ResourceLogs resource_logs = 1; }
message Span { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5; int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
`;
