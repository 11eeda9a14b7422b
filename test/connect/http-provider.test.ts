/**
 * `[connectors] config_type = "http"`: definitions fetched from a service at startup (with its
 * headers and data path), and the API's create, activate and delete calls forwarded to it; a
 * change the service refuses is answered 502 and not applied.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startRuntime, writeRuntimeFiles } from './helpers/runtime-process';

test('definitions come from the HTTP provider, and version changes are forwarded to it', async () => {
  const seen: { method: string; url: string; auth: string | undefined; body: string }[] = [];
  const s = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, body });
      if (req.method === 'GET' && req.url === '/api/list') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: { items: [{ type: 'sink', key: 'remote', path: 'libsvc_connector_stdout_sink', version: 4, topics: [{ names: ['remote-topic'] }], plugin_config: { format: 'json' } }] } }));
      } else if (req.method === 'DELETE') res.writeHead(500).end();
      else res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const base = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  const dir = writeRuntimeFiles({
    config: `[kafka]\nbootstrap_servers = "127.0.0.1:1"\n[connectors]\nconfig_type = "http"\n[connectors.http]\nbase_url = "${base}"\nurl_templates = { list = "/api/list" }\nrequest_headers = { authorization = "Bearer prov" }\nresponse = { data_path = "data.items" }\n`,
    connectors: {},
  });
  const rt = await startRuntime(dir);
  try {
    expect(seen[0]).toMatchObject({ method: 'GET', url: '/api/list', auth: 'Bearer prov' });
    expect(await (await fetch(`${rt.url}/sinks/remote`)).json()).toMatchObject({ key: 'remote', version: 4, status: 'running' });

    const post = await fetch(`${rt.url}/sinks/remote/configs`, { method: 'POST', body: JSON.stringify({ path: 'libsvc_connector_stdout_sink', topics: [{ names: ['remote-topic'] }] }) });
    expect(post.status).toBe(201);
    const forwarded = seen.find((x) => x.method === 'POST')!;
    expect(forwarded).toMatchObject({ url: '/connectors/sink/remote/configs', auth: 'Bearer prov' });
    expect(JSON.parse(forwarded.body)).toMatchObject({ type: 'sink', key: 'remote', version: 5 });

    expect((await fetch(`${rt.url}/sinks/remote/configs/active`, { method: 'PUT', body: '{"version":5}' })).status).toBe(200);
    expect(seen.find((x) => x.method === 'PUT')).toMatchObject({ url: '/connectors/sink/remote/configs/active', body: '{"version":5}' });

    const del = await fetch(`${rt.url}/sinks/remote/configs?version=4`, { method: 'DELETE' });
    expect(del.status).toBe(502);
    expect(await del.json()).toMatchObject({ error: { code: 'provider_error' } });
    const list = (await (await fetch(`${rt.url}/sinks/remote/configs`)).json()) as { versions: { version: number }[] };
    expect(list.versions.map((v) => v.version)).toEqual([4, 5]);
  } finally {
    await rt.stop();
    await new Promise((r) => s.close(r));
  }
});
