/**
 * Native plugins over the C ABI against a real node: the shipped C file sink (found by name in
 * the runtime's directory) writes records appended over HTTP; a plugin built for another SDK
 * fails to load with a symbol error naming the path and the expected SDK; a plugin that
 * segfaults costs its connector an error and a respawn, and no record; a plugin that hangs is
 * killed at its timeout and the connector goes to error; a missing plugin lists every path
 * searched, in the spec's order.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { decodeCheckpoint } from '../../src/connect';
import { buildCounterSource, buildFixture } from './helpers/native-fixtures';
import { RUNTIME_MAIN, runRuntimeToExit, startRuntime, waitFor, writeRuntimeFiles } from './helpers/runtime-process';

const lines = (f: string): string[] => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter(Boolean) : []);

async function append(node: NodeProcess, stream: string, bodies: string[]): Promise<void> {
  await fetch(`${node.url}/${stream}`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } });
  for (let i = 0; i < bodies.length; i += 100) {
    const r = await fetch(`${node.url}/${stream}`, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body: JSON.stringify({ records: bodies.slice(i, i + 100).map((body) => ({ body })) }) });
    expect(r.status).toBeLessThan(300);
  }
}

const sinkDef = (key: string, plugin: string, topic: string, extra = ''): string =>
  `type = "sink"\nkey = "${key}"\npath = "${plugin}"\n${extra}\n[[topics]]\nnames = ["${topic}"]\n[plugin_config]\npath = "{dir}/${key}.out"\nmarker = "{dir}/${key}.crashed"\n`;

describe('native plugins', () => {
  let node: NodeProcess;
  let config: string;
  beforeAll(async () => {
    node = await startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1'] });
    config = `[kafka]\nbootstrap_servers = "${node.kafka}"\n[connectors]\nstartup = "strict"\nconfig_dir = "{dir}/connectors"\n[state]\npath = "{dir}/state"\n[http.metrics]\nenabled = true\n`;
  });
  afterAll(async () => {
    await node?.stop();
  });

  test('the shipped C file sink writes every record appended over HTTP, in order, in its host process and in process', async () => {
    const bodies = Array.from({ length: 500 }, (_, i) => `{"n":${i}}`);
    await append(node, 'native-c', bodies);
    const dir = writeRuntimeFiles({ config, connectors: { 'c.toml': sinkDef('c', 'libsvc_connector_c_file_sink', 'native-c'), 'ci.toml': sinkDef('ci', 'libsvc_connector_c_file_sink', 'native-c', 'isolation = "in_process"') } });
    const rt = await startRuntime(dir);
    await waitFor(() => lines(path.join(dir, 'c.out')).length >= 500 && lines(path.join(dir, 'ci.out')).length >= 500, 'both C sinks wrote 500 lines');
    expect(lines(path.join(dir, 'c.out'))).toEqual(bodies);
    // The same library called in the runtime's own process, by a second instance id.
    expect(lines(path.join(dir, 'ci.out'))).toEqual(bodies);
    expect(await (await fetch(`${rt.url}/sinks/ci`)).json()).toMatchObject({ status: 'running', isolation: 'in_process' });
    const sink = (await (await fetch(`${rt.url}/sinks/c`)).json()) as { status: string; isolation: string };
    expect(sink).toMatchObject({ status: 'running', isolation: 'process' });
    await rt.stop();
  });

  test('a native source in its host process: every record reaches the node in order, small poll buffers grow, and a restart continues from the checkpoint', async () => {
    const so = buildCounterSource(30000);
    const dir = writeRuntimeFiles({
      config,
      connectors: {
        'count.toml': `type = "source"\nkey = "count"\npath = "${so}"\n[[topics]]\nname = "native-count"\n[batch]\nmax_records = 20000\n`,
        'out.toml': `type = "sink"\nkey = "count-out"\npath = "libsvc_connector_file_sink"\n[[topics]]\nnames = ["native-count"]\n[plugin_config]\npath = "{dir}/count.out"\n`,
      },
    });
    const rt = await startRuntime(dir);
    // 20,000 records of about 21 bytes need more than the host's first 256 KiB poll buffer.
    await waitFor(() => lines(path.join(dir, 'count.out')).length >= 30000, '30000 records through the node');
    expect(lines(path.join(dir, 'count.out'))).toEqual(Array.from({ length: 30000 }, (_, n) => `{"n":${n}}`));
    expect(rt.output()).toContain('counter source opened');
    await rt.stop();
    const { state, position } = decodeCheckpoint(fs.readFileSync(path.join(dir, 'state', 'count.state')));
    expect(state.readBigUInt64LE(0)).toBe(30000n);
    expect(position?.seq).toBe(30000);
    const again = await startRuntime(dir);
    expect(again.output()).not.toContain('it starts from the beginning');
    await new Promise((r) => setTimeout(r, 1000));
    expect(lines(path.join(dir, 'count.out'))).toHaveLength(30000);
    await again.stop();
  });

  test('a plugin built for another SDK fails to load with a symbol error naming its path and the expected SDK', async () => {
    const so = buildFixture('WRONG_SDK');
    const dir = writeRuntimeFiles({ config, connectors: { 'w.toml': sinkDef('w', so, 'native-w') } });
    const r = await runRuntimeToExit(dir);
    expect(r.code).toBe(1);
    expect(r.output).toContain('startup failed at steps 4-6');
    expect(r.output).toContain(`${so}: symbol svc_connector_sdk_v1_0 not found`);
    expect(r.output).toContain('SDK 1.0');
  });

  test('a missing plugin reports every path searched, in the spec order', async () => {
    const dir = writeRuntimeFiles({ config, connectors: { 'm.toml': sinkDef('m', 'libsvc_connector_nowhere', 'native-m') } });
    const r = await runRuntimeToExit(dir);
    expect(r.code).toBe(1);
    const expected = [path.dirname(RUNTIME_MAIN), dir, '/usr/lib', '/usr/lib64', '/lib', '/lib64', '/usr/local/lib', '/usr/local/lib64'].map((d) => path.join(d, 'libsvc_connector_nowhere.so'));
    const listed = r.output.split('\n').map((l) => l.trim()).filter((l) => l.endsWith('libsvc_connector_nowhere.so'));
    expect(listed).toEqual(expected);
  });

  test('a plugin that segfaults: the connector goes to error, is respawned, and no record is lost', async () => {
    const so = buildFixture('CRASH_ONCE');
    const bodies = Array.from({ length: 300 }, (_, i) => `crash-${i}`);
    await append(node, 'native-crash', bodies);
    const dir = writeRuntimeFiles({ config, connectors: { 'x.toml': sinkDef('x', so, 'native-crash') } });
    const rt = await startRuntime(dir);
    await waitFor(() => new Set(lines(path.join(dir, 'x.out'))).size >= 300, 'every record written after the respawn');
    expect(fs.existsSync(path.join(dir, 'x.crashed'))).toBe(true);
    expect(new Set(lines(path.join(dir, 'x.out')))).toEqual(new Set(bodies));
    const sink = (await (await fetch(`${rt.url}/sinks/x`)).json()) as { status: string; last_error: { message: string } };
    expect(sink.status).toBe('running');
    expect(sink.last_error.message).toContain('SIGSEGV');
    expect(rt.output()).toMatch(/"msg":"connector failed".*SIGSEGV/);
    const metrics = await (await fetch(`${rt.url}/metrics`)).text();
    expect(metrics).toContain('svc_connector_plugin_restarts_total{connector_key="x",connector_type="sink"} 1');
    expect(rt.proc.exitCode).toBeNull();
    await rt.stop();
  });

  test('a plugin that hangs is killed at its timeout and the connector goes to error with the reason', async () => {
    const so = buildFixture('HANG');
    await append(node, 'native-hang', ['one', 'two']);
    const dir = writeRuntimeFiles({ config, connectors: { 'h.toml': sinkDef('h', so, 'native-hang', 'plugin_timeout = "1s"') } });
    const rt = await startRuntime(dir);
    await waitFor(async () => ((await (await fetch(`${rt.url}/sinks/h`)).json()) as { last_error: unknown }).last_error !== null, 'the sink reports an error', 20000);
    const sink = (await (await fetch(`${rt.url}/sinks/h`)).json()) as { status: string; last_error: { message: string; time: string } };
    expect(sink.last_error.message).toMatch(/sink\.write timed out after 1000 ms; the host was killed/);
    expect(Date.parse(sink.last_error.time)).toBeGreaterThan(0);
    expect(lines(path.join(dir, 'h.out'))).toEqual([]);
    expect(rt.proc.exitCode).toBeNull();
    await rt.stop();
  });
});
