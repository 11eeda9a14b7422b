/**
 * Request ids on error replies, on both engines over real sockets with the product's pino logger:
 * every 4xx/5xx carries an Svc-Request-Id that one log line carries too; bodies keep the spec's
 * shapes; a success has neither an id nor a log line; the shield's 500 keeps the shield's id, so its cause and the reply line match.
 */
import { loadHttpEngine, type HttpServerHandle, type RequestHandler } from '../../src/gateway/http';
import { internalReply, toHttpError } from '../../src/gateway/kit/http-errors';
import { REQUEST_ID_HEADER, requestLog } from '../../src/gateway/request-log';
import { shield } from '../../src/gateway/shield';
import { SvcError } from '../../src/errors';
import { createLogger } from '../../src/log';

const quiet = { warn: () => undefined };
const servers: HttpServerHandle[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

type Line = Record<string, unknown>;

async function serve(engine: 'uws' | 'node', listener: 'svc' | 'ds' | 'admin', handler: RequestHandler): Promise<{ url: string; lines: Line[] }> {
  const lines: Line[] = [];
  const log = createLogger('info', { write: (l: string) => lines.push(JSON.parse(l) as Line) });
  const e = await loadHttpEngine(engine, quiet);
  const server = await e.listen(
    { host: '127.0.0.1', port: 0, bodyLimit: 1024, tooLarge: () => ({ status: 413, headers: [], body: 'too large' }) },
    requestLog(listener, log, shield(listener, handler, log, internalReply)),
  );
  servers.push(server);
  return { url: `http://127.0.0.1:${server.port}`, lines };
}

/** Answers /ok with 200, /missing with the Svc 404, /ds with a plain-text 409, /admin with `{error}`, /boom by throwing. */
const handler: RequestHandler = (req, res) => {
  if (req.path === '/ok') return res.send(200, [['content-type', 'application/json']], '{"ok":true}');
  if (req.path === '/missing') {
    const e = toHttpError(new SvcError('not_found', 'no stream /missing'));
    return res.send(e.status, e.headers, e.body);
  }
  if (req.path === '/ds') return res.send(409, [['content-type', 'text/plain; charset=utf-8']], 'stream is closed');
  if (req.path === '/admin') return res.send(403, [['content-type', 'application/json']], Buffer.from('{"error":"forbidden"}'));
  if (req.path === '/stream-err') {
    res.writeHead(503, [['content-type', 'text/event-stream']]);
    return res.end();
  }
  throw new TypeError('boom');
};

describe.each(['uws', 'node'] as const)('request ids on the %s engine', (engine) => {
  it('gives a Svc 4xx an id in its header, keeps its body, and logs one line with the id', async () => {
    const { url, lines } = await serve(engine, 'svc', handler);
    const r = await fetch(`${url}/missing`);
    expect(r.status).toBe(404);
    const id = r.headers.get(REQUEST_ID_HEADER);
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(await r.json()).toEqual({ error: 'not_found', message: 'no stream /missing' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'info', requestId: id, listener: 'svc', method: 'GET', path: '/missing', status: 404, error: 'not_found', msg: 'request answered with an error' });
  });

  it('answers a success without an id or a log line', async () => {
    const { url, lines } = await serve(engine, 'svc', handler);
    const r = await fetch(`${url}/ok`);
    expect(r.status).toBe(200);
    expect(r.headers.get(REQUEST_ID_HEADER)).toBeNull();
    expect(await r.json()).toEqual({ ok: true });
    expect(lines).toEqual([]);
  });

  it('keeps the Durable Streams and admin bodies as they are, the id in the header', async () => {
    const ds = await serve(engine, 'ds', handler);
    const r1 = await fetch(`${ds.url}/ds`, { method: 'POST' });
    expect(r1.status).toBe(409);
    expect(await r1.text()).toBe('stream is closed');
    expect(ds.lines[0]).toMatchObject({ requestId: r1.headers.get(REQUEST_ID_HEADER), listener: 'ds', status: 409, message: 'stream is closed' });
    const admin = await serve(engine, 'admin', handler);
    const r2 = await fetch(`${admin.url}/admin`);
    expect(r2.status).toBe(403);
    expect(await r2.json()).toEqual({ error: 'forbidden' });
    expect(r2.headers.get(REQUEST_ID_HEADER)).toMatch(/^[0-9a-f]{16}$/);
    expect(admin.lines[0]).toMatchObject({ requestId: r2.headers.get(REQUEST_ID_HEADER), listener: 'admin', status: 403, error: 'forbidden' });
  });

  it("keeps the shield's id on a 500: the cause and the reply are logged under the id the client got", async () => {
    const { url, lines } = await serve(engine, 'svc', handler);
    const r = await fetch(`${url}/boom`, { method: 'PUT' });
    expect(r.status).toBe(500);
    const id = r.headers.get(REQUEST_ID_HEADER)!;
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(await r.json()).toEqual({ error: 'internal', message: `internal error (request id ${id}); the node's log has the cause` });
    expect(lines.map((l) => [l['level'], l['requestId']])).toEqual([
      ['error', id],
      ['warn', id],
    ]);
    expect(JSON.stringify(lines[0]!['err'])).toContain('boom');
  });

  it('names the id on a streamed error head too', async () => {
    const { url, lines } = await serve(engine, 'svc', handler);
    const r = await fetch(`${url}/stream-err`);
    expect(r.status).toBe(503);
    await r.text();
    expect(lines[0]).toMatchObject({ level: 'warn', requestId: r.headers.get(REQUEST_ID_HEADER), status: 503 });
  });
});
