/** The runtime's API over TLS (`[http.tls]`) and with CORS (`[http.cors]`) for browsers. */
import { execFileSync } from 'node:child_process';
import * as https from 'node:https';
import * as path from 'node:path';
import { startRuntime, writeRuntimeFiles } from './helpers/runtime-process';

test('the API serves HTTPS with the configured certificate and answers CORS preflights for allowed origins', async () => {
  const dir = writeRuntimeFiles({ config: '', connectors: {} });
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
  writeRuntimeFiles(
    {
      config: `[connectors]\nconfig_dir = "{dir}/connectors"\n[http.tls]\nenabled = true\ncert_file = "{dir}/cert.pem"\nkey_file = "{dir}/key.pem"\n[http.cors]\nenabled = true\nallowed_origins = ["https://ui.example"]\n`,
      connectors: {},
    },
    dir,
  );
  const rt = await startRuntime(dir);
  const url = rt.url.replace('http://', 'https://');
  const request = (method: string, origin: string): Promise<{ status: number; headers: Record<string, unknown> }> =>
    new Promise((resolve, reject) => {
      const req = https.request(`${url}/sinks`, { method, rejectUnauthorized: false, headers: { origin } }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers }));
      });
      req.on('error', reject);
      req.end();
    });
  const pre = await request('OPTIONS', 'https://ui.example');
  expect(pre.status).toBe(204);
  expect(pre.headers).toMatchObject({ 'access-control-allow-origin': 'https://ui.example', 'access-control-allow-headers': 'content-type, api-key' });
  const get = await request('GET', 'https://ui.example');
  expect(get.status).toBe(200);
  expect(get.headers['access-control-allow-origin']).toBe('https://ui.example');
  const other = await request('GET', 'https://evil.example');
  expect(other.headers['access-control-allow-origin']).toBeUndefined();
  await rt.stop();
});
