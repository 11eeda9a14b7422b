/**
 * I/O threads (`--sse-threads`, src/gateway/http/io-threads.ts) over real sockets: the uWS engine
 * with two I/O threads listening on one port. The kernel spreads connections over their apps;
 * handlers run on this (the main) thread, and what a client sees must be what the engine without
 * threads gives: requests and bodies arrive whole, complete and streamed
 * responses (one chunk written to many readers) arrive whole, an oversized body gets the
 * listener's own refusal, a client that leaves aborts its response, and close() ends the threads.
 * The engine is loaded from dist/ (the threads start dist/gateway/http/io-thread.js).
 */
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import type * as Http from '../../../src/gateway/http';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { loadHttpEngine } = require('../../../dist/gateway/http') as typeof Http;

const THREADS = 2;
const CONNECTIONS = 40;

const tooLarge: Http.ListenOptions['tooLarge'] = (req) => ({
  status: 413,
  headers: [['content-type', 'application/json']],
  body: JSON.stringify({ error: 'too_large', path: req.path }),
});

let server: Http.HttpServerHandle;
let handler: Http.RequestHandler = () => undefined;
/** Responses by the class that served them: the main app's, or one forwarded from an I/O thread. */
const servedBy = new Map<string, number>();

beforeAll(async () => {
  const engine = await loadHttpEngine('uws', { warn: () => undefined });
  server = await engine.listen({ host: '127.0.0.1', port: 0, bodyLimit: 64 * 1024, tooLarge, threads: THREADS }, (req, res) => {
    const kind = res.constructor.name;
    servedBy.set(kind, (servedBy.get(kind) ?? 0) + 1);
    return handler(req, res);
  });
});

afterAll(async () => {
  await server?.close();
});

beforeEach(() => servedBy.clear());

/** A fresh connection per request, so the kernel picks an app for each. */
async function fresh<T>(fn: (dispatcher: Agent) => Promise<T>): Promise<T> {
  const agent = new Agent({ connections: 1 });
  try {
    return await fn(agent);
  } finally {
    await agent.close();
  }
}

test('requests on every I/O thread reach the handler whole, and their answers come back whole', async () => {
  handler = (req, res) => {
    res.send(200, [['content-type', 'application/json'], ['x-echo', req.headers['x-n'] ?? '']], JSON.stringify({ method: req.method, path: req.path, query: req.query, body: req.body.toString('base64') }));
  };
  const results = await Promise.all(
    Array.from({ length: CONNECTIONS }, (_, n) =>
      fresh(async (dispatcher) => {
        const body = Buffer.alloc(1000 + n * 500, n);
        const r = await request(`http://127.0.0.1:${server.port}/s/${n}?seq=${n}`, { method: 'POST', body, headers: { 'x-n': String(n) }, dispatcher });
        const json = (await r.body.json()) as { method: string; path: string; query: string; body: string };
        return { n, status: r.statusCode, echo: r.headers['x-echo'], json, sent: body.toString('base64') };
      }),
    ),
  );
  for (const r of results) {
    expect(r.status).toBe(200);
    expect(r.echo).toBe(String(r.n));
    expect(r.json).toEqual({ method: 'POST', path: `/s/${r.n}`, query: `seq=${r.n}`, body: r.sent });
  }
  // The I/O threads alone listen: every request crossed from one of them (RemoteResponse).
  expect(servedBy.get('RemoteResponse')).toBe(CONNECTIONS);
  expect(servedBy.get('UwsResponse')).toBeUndefined();
});

test('headers cross without a prototype, as the engine gives them: an absent `constructor` header is undefined', async () => {
  handler = (req, res) => {
    res.send(200, [], JSON.stringify({ constructor: typeof req.headers['constructor'], proto: Object.getPrototypeOf(req.headers) === null, x: req.headers['x-a'] }));
  };
  const seen = await Promise.all(
    Array.from({ length: 6 }, () =>
      fresh(async (dispatcher) => (await (await request(`http://127.0.0.1:${server.port}/h`, { headers: { 'x-a': 'b' }, dispatcher })).body.json()) as unknown),
    ),
  );
  for (const s of seen) expect(s).toEqual({ constructor: 'undefined', proto: true, x: 'b' });
});

test('one chunk written to many streamed responses reaches every reader, in order, and the responses end', async () => {
  const open: Http.HttpResponse[] = [];
  handler = (_req, res) => {
    res.writeHead(200, [['content-type', 'text/event-stream']]);
    res.write('event: hello\n\n');
    open.push(res);
  };
  const readers = Array.from({ length: CONNECTIONS }, () => rawStream(server.port, '/sse'));
  while (open.length < CONNECTIONS) await sleep(10);
  const chunk = Buffer.from('event: record\ndata: {"seq":1}\n\n');
  for (const res of open) expect(res.write(chunk)).toBe(true);
  for (const res of open) res.end();
  const texts = await Promise.all(readers);
  for (const t of texts) {
    expect(t).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(t).toContain('content-type: text/event-stream');
    // Chunked framing around the two writes, then the last chunk.
    const body = t.slice(t.indexOf('\r\n\r\n') + 4);
    expect(body.indexOf('event: hello')).toBeGreaterThan(-1);
    expect(body.indexOf('event: record')).toBeGreaterThan(body.indexOf('event: hello'));
    expect(body.endsWith('0\r\n\r\n')).toBe(true);
  }
  expect(servedBy.get('RemoteResponse')).toBe(CONNECTIONS);
});

test('an oversized body is refused with the listener tooLarge answer', async () => {
  handler = () => {
    throw new Error('the handler must not run for an oversized body');
  };
  const statuses = await Promise.all(
    Array.from({ length: 12 }, (_, n) =>
      fresh(async (dispatcher) => {
        const r = await request(`http://127.0.0.1:${server.port}/big/${n}`, { method: 'POST', body: Buffer.alloc(100 * 1024), dispatcher }).catch(() => null);
        if (r === null) return null; // the connection closed before the answer was read
        return { status: r.statusCode, body: (await r.body.json()) as unknown };
      }),
    ),
  );
  const answered = statuses.filter((s) => s !== null);
  expect(answered.length).toBeGreaterThan(0);
  for (const [i, s] of statuses.entries()) if (s !== null) expect(s).toEqual({ status: 413, body: { error: 'too_large', path: `/big/${i}` } });
});

test('a client that leaves aborts its response on the main thread', async () => {
  let aborted = 0;
  let started = 0;
  handler = (_req, res) => {
    started++;
    res.onAborted(() => aborted++);
    res.writeHead(200, [['content-type', 'text/plain']]);
    res.write('x');
  };
  const sockets = Array.from({ length: 20 }, () => {
    const s = connect(server.port, '127.0.0.1');
    s.on('error', () => undefined);
    s.write('GET /wait HTTP/1.1\r\nHost: t\r\n\r\n');
    return s;
  });
  while (started < sockets.length) await sleep(10);
  expect(servedBy.get('RemoteResponse')).toBe(sockets.length);
  for (const s of sockets) s.destroy();
  const deadline = Date.now() + 5000;
  while (aborted < sockets.length && Date.now() < deadline) await sleep(20);
  expect(aborted).toBe(sockets.length);
});

/** Sends one GET and resolves with everything received until the server ends the response. */
function rawStream(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    let text = '';
    s.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      if (text.endsWith('\r\n0\r\n\r\n')) {
        s.destroy();
        resolve(text);
      }
    });
    s.on('error', reject);
    s.write(`GET ${path} HTTP/1.1\r\nHost: t\r\n\r\n`);
  });
}
