/**
 * `[telemetry]`: logs and one span per connector batch exported over OTLP/HTTP (JSON) to a local
 * collector, with the service name; the gRPC transport is refused at startup with the reason.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type NodeProcess, startNode } from '../helpers/node-process';
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

  test('the gRPC transport is refused at startup with the reason', async () => {
    const dir = writeRuntimeFiles({ config: `[telemetry]\nenabled = true\n[telemetry.logs]\nendpoint = "http://127.0.0.1:1"\ntransport = "grpc"\n[connectors]\nconfig_dir = "{dir}/connectors"\n`, connectors: {} });
    const r = await runRuntimeToExit(dir);
    expect(r.code).toBe(1);
    expect(r.output).toContain('telemetry.logs.transport: "grpc" is not available in this build');
  });
});
