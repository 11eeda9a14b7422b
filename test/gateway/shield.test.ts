/**
 * The shield around every listener's handler, on both engines over real sockets: a handler that
 * throws, rejects, or asks the engine to write a header it cannot write ends in a 500 `internal`
 * carrying a request id that the error log line carries too; nothing reaches the process.
 */
import { loadHttpEngine, type HttpServerHandle, type RequestHandler } from '../../src/gateway/http';
import { adminInternalReply } from '../../src/gateway/admin/admin-api';
import { DS_CORS, dsInternalReply } from '../../src/gateway/ds';
import { internalReply } from '../../src/gateway/kit/http-errors';
import { CorsPolicy, withCors } from '../../src/gateway/kit';
import { SVC_CORS } from '../../src/gateway/svc/svc-cors';
import { type InternalReply, REQUEST_ID_HEADER, shield } from '../../src/gateway/shield';
import { SvcError } from '../../src/errors';

interface Logged {
  obj: { requestId?: string; err?: unknown; listener?: string };
  msg: string;
}

const quiet = { warn: () => undefined };
const servers: HttpServerHandle[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function serve(engine: 'uws' | 'node', listener: 'svc' | 'ds' | 'admin', reply: InternalReply, handler: RequestHandler): Promise<{ url: string; logged: Logged[] }> {
  const logged: Logged[] = [];
  const log = { error: (obj: object, msg: string) => logged.push({ obj: obj as Logged['obj'], msg }) };
  const e = await loadHttpEngine(engine, quiet);
  const server = await e.listen(
    { host: '127.0.0.1', port: 0, bodyLimit: 1024, tooLarge: () => ({ status: 413, headers: [], body: 'too large' }) },
    // As src/node.ts composes them: CORS (the default, any origin) outside the shield on the stream listeners.
    listener === 'admin' ? shield(listener, handler, log, reply) : withCors(new CorsPolicy('*', listener === 'ds' ? DS_CORS : SVC_CORS), shield(listener, handler, log, reply)),
  );
  servers.push(server);
  return { url: `http://127.0.0.1:${server.port}`, logged };
}

const failing: Record<string, RequestHandler> = {
  'throws synchronously': () => {
    throw new TypeError('boom');
  },
  'rejects later': async () => {
    await new Promise((r) => setTimeout(r, 5));
    throw new RangeError('later boom');
  },
  'fails with an internal SvcError': () => Promise.reject(new SvcError('internal', 'a worker said so')),
  'sends a header no HTTP response can carry': (_req, res) => {
    res.send(201, [['location', '/\u2713']]);
  },
};

describe.each(['uws', 'node'] as const)('the shield on the %s engine', (engine) => {
  it.each(Object.keys(failing))('answers a handler that %s with 500 internal and a request id that is in the log', async (name) => {
    const { url, logged } = await serve(engine, 'svc', internalReply, failing[name]!);
    const r = await fetch(`${url}/x`, { method: 'PUT' });
    expect(r.status).toBe(500);
    const id = r.headers.get(REQUEST_ID_HEADER);
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    const body = (await r.json()) as { error: string; message: string };
    expect(body.error).toBe('internal');
    expect(body.message).toContain(id);
    expect(logged).toHaveLength(1);
    expect(logged[0]!.obj.requestId).toBe(id);
    expect(String(logged[0]!.obj.err)).toMatch(/boom|said so|header/);
    // The server keeps serving.
    expect((await fetch(`${url}/y`, { method: 'PUT' })).status).toBe(500);
  });

  it('answers in the Durable Streams shape (plain text, CORS headers) and in the admin shape', async () => {
    const ds = await serve(engine, 'ds', dsInternalReply, failing['throws synchronously']!);
    const r1 = await fetch(`${ds.url}/v1/stream/x`);
    expect(r1.status).toBe(500);
    expect(r1.headers.get('access-control-allow-origin')).toBe('*');
    expect(await r1.text()).toContain(r1.headers.get(REQUEST_ID_HEADER)!);
    const admin = await serve(engine, 'admin', adminInternalReply, failing['rejects later']!);
    const r2 = await fetch(`${admin.url}/admin/cluster`);
    expect(r2.status).toBe(500);
    expect(await r2.json()).toEqual({ error: 'internal' });
    expect(admin.logged[0]!.obj.requestId).toBe(r2.headers.get(REQUEST_ID_HEADER));
  });

  it('closes the connection when the handler fails after its response has started', async () => {
    const { url, logged } = await serve(engine, 'svc', internalReply, async (_req, res) => {
      res.writeHead(200, [['content-type', 'text/plain']]);
      res.write('partial');
      await new Promise((r) => setTimeout(r, 5));
      throw new Error('mid-stream');
    });
    const r = await fetch(`${url}/s`);
    expect(r.status).toBe(200);
    await expect(r.text()).rejects.toThrow();
    expect(logged).toHaveLength(1);
  });

  it('still answers 500 without the shield: the engine floor catches a rejected handler', async () => {
    const e = await loadHttpEngine(engine, quiet);
    const server = await e.listen({ host: '127.0.0.1', port: 0, bodyLimit: 1024, tooLarge: () => ({ status: 413, headers: [], body: '' }) }, () => Promise.reject(new Error('unshielded')));
    servers.push(server);
    const r = await fetch(`http://127.0.0.1:${server.port}/`);
    expect(r.status).toBe(500);
    expect(await r.text()).toBe('internal error');
  });
});
