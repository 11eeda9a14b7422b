/**
 * The runtime's HTTP API against a real node: the api-key header when `[http] api_key` is set
 * (and nothing checked when it is not), JSON errors, a disabled connector shown as stopped,
 * redacted plugin_config, and a version switch and rollback through the configs endpoints,
 * each taking effect at restart.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { startRuntime, waitFor, writeRuntimeFiles } from './helpers/runtime-process';

const lineCount = (f: string): number => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter(Boolean).length : 0);

describe('HTTP API', () => {
  let node: NodeProcess;
  let config: string;
  beforeAll(async () => {
    node = await startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1'] });
    config = `[kafka]\nbootstrap_servers = "${node.kafka}"\n[connectors]\nconfig_dir = "{dir}/connectors"\n[state]\npath = "{dir}/state"\n`;
  });
  afterAll(async () => {
    await node?.stop();
  });

  async function append(stream: string, bodies: string[]): Promise<void> {
    await fetch(`${node.url}/${stream}`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } });
    const r = await fetch(`${node.url}/${stream}`, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body: JSON.stringify({ records: bodies.map((body) => ({ body })) }) });
    expect(r.status).toBeLessThan(300);
  }

  test('with api_key set every request needs the api-key header; without it nothing is checked', async () => {
    const dir = writeRuntimeFiles({ config: config + '[http]\napi_key = "s3cret-key"\n[http.metrics]\nenabled = true\n', connectors: {} });
    const rt = await startRuntime(dir);
    for (const p of ['/', '/sinks', '/stats', '/metrics']) {
      const r = await fetch(rt.url + p);
      expect(r.status).toBe(401);
      expect(await r.json()).toEqual({ error: { code: 'unauthorized', message: 'missing or wrong api-key header' } });
    }
    expect((await fetch(`${rt.url}/sinks`, { headers: { 'api-key': 'wrong' } })).status).toBe(401);
    const ok = await fetch(`${rt.url}/sinks`, { headers: { 'api-key': 's3cret-key' } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual([]);
    const metrics = await fetch(`${rt.url}/metrics`, { headers: { 'api-key': 's3cret-key' } });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('svc_connectors_sinks_total 0');
    expect(rt.output()).not.toContain('s3cret-key');
    await rt.stop();

    const open = await startRuntime(writeRuntimeFiles({ config, connectors: {} }));
    const banner = await fetch(`${open.url}/`);
    expect(banner.status).toBe(200);
    expect(await banner.json()).toMatchObject({ name: 'svc-connectors', sdk: 'svc_connector_sdk_v1_0' });
    // Metrics are off by default.
    expect((await fetch(`${open.url}/metrics`)).status).toBe(404);
    expect(await (await fetch(`${open.url}/sinks/nope`)).json()).toEqual({ error: { code: 'connector_not_found', message: 'no sink with key "nope"' } });
    const badPath = await fetch(`${open.url}/sinks/%E0%A4%A`);
    expect(badPath.status).toBe(400);
    expect(await badPath.json()).toMatchObject({ error: { code: 'invalid_path' } });
    expect((await fetch(`${open.url}/nothing/here`, { method: 'DELETE' })).status).toBe(404);
    await open.stop();
  });

  test('versions: a new version is stored beside the original file, activated, restarted into, and rolled back', async () => {
    await append('api-versions', ['a1', 'a2']);
    const dir = writeRuntimeFiles({
      config,
      connectors: {
        'files.toml': `type = "sink"\nkey = "files"\nname = "files"\npath = "libsvc_connector_file_sink"\nversion = 1\n[[topics]]\nnames = ["api-versions"]\n[plugin_config]\npath = "{dir}/v1.txt"\n`,
        'off.toml': `type = "sink"\nkey = "off"\npath = "libsvc_connector_http_sink"\nenabled = false\n[[topics]]\nnames = ["x"]\n[plugin_config]\nurl = "http://user:pw@127.0.0.1:1/"\napi_token = "tok-123"\n`,
      },
    });
    const rt = await startRuntime(dir);
    await waitFor(() => lineCount(path.join(dir, 'v1.txt')) === 2, 'version 1 wrote the first records');

    const off = (await (await fetch(`${rt.url}/sinks/off`)).json()) as Record<string, unknown>;
    expect(off).toMatchObject({ key: 'off', enabled: false, status: 'stopped', last_error: null });
    expect(await (await fetch(`${rt.url}/sinks/off/configs/plugin`)).json()).toEqual({ url: 'http://user:***@127.0.0.1:1/', api_token: '***' });

    const post = await fetch(`${rt.url}/sinks/files/configs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'files', path: 'libsvc_connector_file_sink', topics: [{ names: ['api-versions'] }], plugin_config: { path: `${dir}/v2.txt` } }) });
    expect(post.status).toBe(201);
    expect(await post.json()).toMatchObject({ version: 2, active: false });
    expect(fs.existsSync(path.join(dir, 'connectors', 'files.v2.toml'))).toBe(true);
    const bad = await fetch(`${rt.url}/sinks/files/configs`, { method: 'POST', body: JSON.stringify({ path: 'x', enabled: 'yes' }) });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: 'invalid_definition', details: expect.arrayContaining([expect.stringContaining('enabled: Expected boolean')]) } });
    expect((await fetch(`${rt.url}/sinks/files/configs`, { method: 'POST', body: JSON.stringify({ version: 2, path: 'x', topics: [{ names: ['t'] }] }) })).status).toBe(409);
    const notJson = await fetch(`${rt.url}/sinks/files/configs`, { method: 'POST', body: '{oops' });
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({ error: { code: 'invalid_json' } });

    const list = (await (await fetch(`${rt.url}/sinks/files/configs`)).json()) as { active: number; versions: { version: number; active: boolean }[] };
    expect(list.active).toBe(1);
    expect(list.versions.map((v) => [v.version, v.active])).toEqual([
      [1, true],
      [2, false],
    ]);
    expect(await (await fetch(`${rt.url}/sinks/files/configs/2`)).json()).toMatchObject({ version: 2, definition: { plugin_config: { path: `${dir}/v2.txt` } } });

    const put = await fetch(`${rt.url}/sinks/files/configs/active`, { method: 'PUT', body: JSON.stringify({ version: 2 }) });
    expect(await put.json()).toEqual({ version: 2, restart_required: true });
    expect((await fetch(`${rt.url}/sinks/files/configs/active`, { method: 'PUT', body: JSON.stringify({ version: 9 }) })).status).toBe(404);
    expect((await fetch(`${rt.url}/sinks/files/configs?version=2`, { method: 'DELETE' })).status).toBe(409);
    const restarted = await fetch(`${rt.url}/sinks/files/restart`, { method: 'POST' });
    expect(await restarted.json()).toMatchObject({ version: 2, status: 'running' });
    await append('api-versions', ['b1']);
    await waitFor(() => lineCount(path.join(dir, 'v2.txt')) === 1, 'version 2 writes to its own file');
    expect(lineCount(path.join(dir, 'v1.txt'))).toBe(2);

    // Rollback: activate the previous version and restart.
    await fetch(`${rt.url}/sinks/files/configs/active`, { method: 'PUT', body: JSON.stringify({ version: 1 }) });
    await fetch(`${rt.url}/sinks/files/restart`, { method: 'POST' });
    await append('api-versions', ['c1']);
    await waitFor(() => lineCount(path.join(dir, 'v1.txt')) === 3, 'version 1 writes again');
    expect(lineCount(path.join(dir, 'v2.txt'))).toBe(1);
    expect(fs.readFileSync(path.join(dir, 'connectors', 'files.active'), 'utf8').trim()).toBe('1');
    expect((await fetch(`${rt.url}/sinks/files/configs?version=2`, { method: 'DELETE' })).status).toBe(204);
    expect(fs.existsSync(path.join(dir, 'connectors', 'files.v2.toml'))).toBe(false);
    expect(await (await fetch(`${rt.url}/sinks/files/transforms`)).json()).toEqual([]);
    await rt.stop();

    // The active version survives a restart of the runtime.
    const again = await startRuntime(dir);
    expect(await (await fetch(`${again.url}/sinks/files/configs/active`)).json()).toEqual({ version: 1 });
    await again.stop();
  });
});
