/**
 * CORS on the Svc and Durable Streams listeners (src/gateway/kit/cors.ts, docs/protocol.md
 * "Browsers (CORS)"), over real requests to real nodes: preflights are answered (before the auth
 * guard), every answer to an allowed origin carries `Access-Control-Allow-Origin` and
 * `Access-Control-Expose-Headers` — replies, errors, the guard's 401, SSE heads, the engine's 413 —
 * and an origin that is not allowed gets no allow header.
 */
import { randomBytes } from 'node:crypto';
import * as http from 'node:http';
import { loadConfig } from '../../../src/config';
import { parseCorsOrigins } from '../../../src/gateway/kit';
import { type NodeProcess, startNode } from '../../helpers/node-process';

const PAGE = 'https://app.example.com';
const OTHER = 'https://evil.example.net';

interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

async function call(url: string, init: { method?: string; origin?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.origin !== undefined) headers['origin'] = init.origin;
  const r = await fetch(url, { method: init.method ?? 'GET', headers, body: init.body });
  return { status: r.status, headers: r.headers, body: await r.text() };
}

function preflight(url: string, origin: string, method: string, requestHeaders: string): Promise<Answer> {
  return call(url, { method: 'OPTIONS', origin, headers: { 'access-control-request-method': method, 'access-control-request-headers': requestHeaders } });
}

const list = (h: Headers, name: string): string[] => (h.get(name) ?? '').split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '');

/** The status line and headers of a streamed response (SSE), then the connection is dropped. */
function head(url: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers }, (res) => {
      resolve({ status: res.statusCode ?? 0, headers: res.headers });
      req.destroy();
    });
    req.on('error', reject);
  });
}

describe.each(['uws', 'node'] as const)('CORS with the default origins (*) on the %s engine', (engine) => {
  let node: NodeProcess;
  let svc: string;
  let ds: string;

  beforeAll(async () => {
    node = await startNode({ engine, args: ['--ds-listen', '127.0.0.1:0', '--max-request-bytes', '4096', '--max-record-bytes', '4096'] });
    svc = node.url;
    ds = `${node.dsUrl!}/v1/stream`;
  });

  test('the Svc listener answers a preflight with 204 and what a page may send', async () => {
    const r = await preflight(`${svc}/orders`, PAGE, 'POST', 'content-type, svc-producer-id, svc-producer-epoch, svc-producer-seq, authorization');
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(list(r.headers, 'access-control-allow-methods')).toEqual(expect.arrayContaining(['get', 'head', 'put', 'post', 'patch', 'delete']));
    expect(list(r.headers, 'access-control-allow-headers')).toEqual(
      expect.arrayContaining(['content-type', 'authorization', 'svc-producer-id', 'svc-producer-epoch', 'svc-producer-seq', 'svc-match-seq', 'svc-closed', 'last-event-id']),
    );
    expect(r.headers.get('access-control-max-age')).toBe('86400');
    expect(r.body).toBe('');
  });

  test('Svc replies and errors carry the allow and expose headers', async () => {
    const created = await call(`${svc}/cors/a`, { method: 'PUT', origin: PAGE, headers: { 'content-type': 'text/plain' } });
    expect(created.status).toBe(201);
    expect(created.headers.get('access-control-allow-origin')).toBe('*');
    const appended = await call(`${svc}/cors/a`, { method: 'POST', origin: PAGE, headers: { 'content-type': 'text/plain' }, body: 'hello' });
    expect(appended.status).toBe(200);
    expect(appended.headers.get('access-control-allow-origin')).toBe('*');
    expect(list(appended.headers, 'access-control-expose-headers')).toEqual(
      expect.arrayContaining(['svc-next-seq', 'svc-start-seq', 'svc-timestamp', 'svc-closed', 'svc-cursor', 'svc-up-to-date', 'svc-producer-duplicate', 'etag', 'location']),
    );
    const read = await call(`${svc}/cors/a?format=raw`, { origin: PAGE });
    expect(read.status).toBe(200);
    expect(read.body).toBe('hello');
    expect(read.headers.get('access-control-allow-origin')).toBe('*');
    // A request without Origin (a server-side client, never a browser's CORS request) gets none, as from S3.
    const plain = await call(`${svc}/cors/a?format=raw`);
    expect(plain.status).toBe(200);
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
    expect(plain.headers.get('access-control-expose-headers')).toBeNull();
    const missing = await call(`${svc}/cors/none`, { origin: PAGE });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('access-control-allow-origin')).toBe('*');
    expect(JSON.parse(missing.body)).toMatchObject({ error: 'not_found' });
  });

  test('an SSE response head carries the headers, so EventSource on another origin can tail', async () => {
    const r = await head(`${svc}/cors/a?live=sse`, { origin: PAGE, accept: 'text/event-stream' });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/event-stream');
    expect(r.headers['access-control-allow-origin']).toBe('*');
  });

  test("the engine's 413 for an oversized body carries them too", async () => {
    const r = await call(`${svc}/cors/a`, { method: 'POST', origin: PAGE, headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(8192) });
    expect(r.status).toBe(413);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    const d = await call(`${ds}/cors-a`, { method: 'POST', origin: PAGE, headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(8192) });
    expect(d.status).toBe(413);
    expect(d.headers.get('access-control-allow-origin')).toBe('*');
  });

  test('the Durable Streams listener keeps its CORS and browser security headers', async () => {
    const p = await preflight(`${ds}/cors-b`, PAGE, 'POST', 'content-type, producer-id, stream-seq');
    expect(p.status).toBe(204);
    expect(p.headers.get('access-control-allow-origin')).toBe('*');
    expect(p.headers.get('x-content-type-options')).toBe('nosniff');
    expect(list(p.headers, 'access-control-allow-headers')).toEqual(expect.arrayContaining(['content-type', 'producer-id', 'stream-seq']));
    const created = await call(`${ds}/cors-b`, { method: 'PUT', origin: PAGE, headers: { 'content-type': 'text/plain' } });
    expect(created.status).toBe(201);
    expect(created.headers.get('access-control-allow-origin')).toBe('*');
    // As the reference server: on answers to GET and HEAD without Origin too (a shared cache may serve them to a page).
    expect((await call(`${ds}/cors-b`, { method: 'HEAD' })).headers.get('access-control-allow-origin')).toBe('*');
    const plainRead = await call(`${ds}/cors-b?offset=-1`);
    expect(plainRead.status).toBe(200);
    expect(plainRead.headers.get('access-control-allow-origin')).toBe('*');
    expect(list(plainRead.headers, 'access-control-expose-headers')).toContain('stream-next-offset');
    expect(created.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    expect(list(created.headers, 'access-control-expose-headers')).toEqual(expect.arrayContaining(['stream-next-offset', 'stream-cursor', 'producer-epoch']));
    const r = await head(`${ds}/cors-b?offset=-1&live=sse`, { origin: PAGE });
    expect(r.status).toBe(200);
    expect(r.headers['access-control-allow-origin']).toBe('*');
  });

  test('a Durable Streams append carries CORS only when a browser sent Origin, and the browser security headers always', async () => {
    expect((await call(`${ds}/cors-c`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    // A browser sends Origin with every POST (Fetch standard), same-origin ones included.
    const fromPage = await call(`${ds}/cors-c`, { method: 'POST', origin: PAGE, headers: { 'content-type': 'text/plain' }, body: 'a' });
    expect(fromPage.status).toBe(204);
    expect(fromPage.headers.get('access-control-allow-origin')).toBe('*');
    expect(list(fromPage.headers, 'access-control-expose-headers')).toContain('stream-next-offset');
    // A server-side client's append: no CORS headers to write or send; an append's answer is not cached.
    const plain = await call(`${ds}/cors-c`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'b' });
    expect(plain.status).toBe(204);
    expect(plain.headers.get('stream-next-offset')).toBe('0000000000000000_0000000000000002');
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
    expect(plain.headers.get('access-control-expose-headers')).toBeNull();
    expect(plain.headers.get('x-content-type-options')).toBe('nosniff');
    expect(plain.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    // Its errors the same way.
    const refused = await call(`${ds}/cors-none`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'c' });
    expect(refused.status).toBe(404);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    expect(refused.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('CORS with a list of origins and --auth required', () => {
  const b64 = (s: string | Buffer): string => Buffer.from(s).toString('base64url');
  const ROOT = `${b64('root')}.${b64(randomBytes(32))}`;
  const auth = { authorization: `Bearer ${ROOT}` };
  let node: NodeProcess;
  let svc: string;
  let ds: string;

  beforeAll(async () => {
    node = await startNode({
      args: ['--auth', 'required', '--auth-bootstrap-token', ROOT, '--ds-listen', '127.0.0.1:0'],
      env: { SVC_CORS_ORIGINS: `${PAGE}, http://localhost:3000` },
    });
    svc = node.url;
    ds = `${node.dsUrl!}/v1/stream`;
  });

  test('a preflight from an allowed origin needs no token and names that origin', async () => {
    for (const url of [`${svc}/x`, `${ds}/x`]) {
      const r = await preflight(url, PAGE, 'PUT', 'authorization, content-type');
      expect(r.status).toBe(204);
      expect(r.headers.get('access-control-allow-origin')).toBe(PAGE);
      expect(list(r.headers, 'vary')).toContain('origin');
      expect(list(r.headers, 'access-control-allow-methods')).toContain('put');
      expect(list(r.headers, 'access-control-allow-headers')).toContain('authorization');
    }
  });

  test('a preflight from another origin gets no allow headers, so the browser refuses', async () => {
    for (const url of [`${svc}/x`, `${ds}/x`]) {
      const r = await preflight(url, OTHER, 'PUT', 'authorization');
      expect(r.status).toBe(204);
      expect(r.headers.get('access-control-allow-origin')).toBeNull();
      expect(r.headers.get('access-control-allow-methods')).toBeNull();
      expect(r.headers.get('access-control-allow-headers')).toBeNull();
      expect(list(r.headers, 'vary')).toContain('origin');
    }
  });

  test("the guard's 401 reaches an allowed page, which can read WWW-Authenticate", async () => {
    const r = await call(`${svc}/x`, { origin: PAGE });
    expect(r.status).toBe(401);
    expect(r.headers.get('access-control-allow-origin')).toBe(PAGE);
    expect(list(r.headers, 'access-control-expose-headers')).toContain('www-authenticate');
    const d = await call(`${ds}/x`, { origin: PAGE });
    expect(d.status).toBe(401);
    expect(d.headers.get('access-control-allow-origin')).toBe(PAGE);
  });

  test('answers to an allowed origin carry the headers; to any other origin, none', async () => {
    expect((await call(`${svc}/cors/l`, { method: 'PUT', headers: { ...auth, 'content-type': 'text/plain' } })).status).toBe(201);
    const ok = await call(`${svc}/cors/l`, { method: 'POST', origin: 'http://localhost:3000', headers: { ...auth, 'content-type': 'text/plain' }, body: 'r0' });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('http://localhost:3000');
    expect(list(ok.headers, 'access-control-expose-headers')).toContain('svc-next-seq');
    const other = await call(`${svc}/cors/l`, { method: 'POST', origin: OTHER, headers: { ...auth, 'content-type': 'text/plain' }, body: 'r1' });
    // CORS hides the answer from the page; the server still serves a client that sends a token.
    expect(other.status).toBe(200);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect(other.headers.get('access-control-expose-headers')).toBeNull();
    expect(list(other.headers, 'vary')).toContain('origin');
    const dsOther = await call(`${ds}/cors-l`, { method: 'PUT', origin: OTHER, headers: { ...auth, 'content-type': 'text/plain' } });
    expect(dsOther.status).toBe(201);
    expect(dsOther.headers.get('access-control-allow-origin')).toBeNull();
    expect(dsOther.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('CORS off (--cors-origins none)', () => {
  let node: NodeProcess;

  beforeAll(async () => {
    node = await startNode({ args: ['--cors-origins', 'none'] });
  });

  test('no CORS headers on preflights or answers; OPTIONS still says what is allowed', async () => {
    const p = await preflight(`${node.url}/x`, PAGE, 'POST', 'content-type');
    expect(p.status).toBe(204);
    expect(p.headers.get('access-control-allow-origin')).toBeNull();
    expect(list(p.headers, 'allow')).toContain('post');
    const r = await call(`${node.url}/x`, { method: 'PUT', origin: PAGE });
    expect(r.status).toBe(201);
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    expect(r.headers.get('vary')).toBeNull();
  });
});

describe('the --cors-origins setting', () => {
  test('takes *, none or a list of origins from a flag, the environment or the config file', () => {
    const ok = loadConfig(['--cors-origins', 'https://app.example.com, http://localhost:3000/'], {});
    expect('config' in ok && ok.config.corsOrigins).toBe('https://app.example.com, http://localhost:3000/');
    expect(parseCorsOrigins('https://App.example.com, http://localhost:3000/')).toEqual(['https://app.example.com', 'http://localhost:3000']);
    expect(parseCorsOrigins('*')).toBe('*');
    expect(parseCorsOrigins('none')).toEqual([]);
    const env = loadConfig([], { SVC_CORS_ORIGINS: 'none' });
    expect('config' in env && env.config.corsOrigins).toBe('none');
    const dflt = loadConfig([], {});
    expect('config' in dflt && dflt.config.corsOrigins).toBe('*');
  });

  test('refuses what is not an origin, naming where it came from', () => {
    const bad = loadConfig(['--cors-origins', 'app.example.com'], { SVC_CORS_ORIGINS: 'https://a.example/path' });
    expect('errors' in bad && bad.errors).toEqual([
      'SVC_CORS_ORIGINS: must be *, none, or a comma-separated list of origins such as https://app.example.com (got "https://a.example/path")',
      '--cors-origins: must be *, none, or a comma-separated list of origins such as https://app.example.com (got "app.example.com")',
    ]);
  });
});
