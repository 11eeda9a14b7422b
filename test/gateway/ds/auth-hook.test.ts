/**
 * The Durable Streams listener's auth hook: a denial is a plain-text 401/403 with no headers
 * beyond the protocol's own (no WWW-Authenticate, no Producer-Epoch), so clients can tell a scope
 * 403 from producer fencing; preflights are never checked. The hook runs before any storage work.
 */
import { type HeaderList, type HttpRequest, type HttpResponse } from '../../../src/gateway/http/engine';
import { InFlight } from '../../../src/gateway/in-flight';
import { type AuthDenial, type DsContext, createDsHandler } from '../../../src/gateway/ds';
import { COMMON_HEADERS } from '../../../src/gateway/ds/ds-headers';

interface Sent {
  status: number;
  headers: HeaderList;
  body: string;
}

function call(ctx: DsContext, req: Partial<HttpRequest>): Promise<Sent> {
  const handler = createDsHandler(ctx, new InFlight());
  return new Promise((resolve) => {
    const res: HttpResponse = {
      aborted: false,
      onAborted: () => undefined,
      send: (status, headers, body) => resolve({ status, headers, body: body === undefined ? '' : Buffer.from(body).toString() }),
      writeHead: () => undefined,
      write: () => true,
      onWritable: () => undefined,
      end: () => undefined,
      destroy: () => undefined,
    };
    handler({ method: 'GET', path: '/v1/stream/orders', query: 'offset=-1', headers: {}, body: Buffer.alloc(0), ...req }, res);
  });
}

/** A context whose storage fails the test if touched: denied requests must not reach it. */
function context(authorize: (req: HttpRequest) => Promise<AuthDenial | null>): DsContext {
  const untouchable = new Proxy({}, { get: () => () => Promise.reject(new Error('storage reached')) });
  return {
    shards: untouchable as DsContext['shards'],
    live: untouchable as DsContext['live'],
    maxRecordBytes: 1024,
    maxStreamNameBytes: 1024,
    maxBatchRecords: 10,
    readBytes: 1024,
    sseReconnectMs: 1000,
    subscriptions: null,
    authorize,
  };
}

const names = (h: HeaderList): string[] => h.map(([k]) => k.toLowerCase());
const protocolHeaders = [...names(COMMON_HEADERS), 'content-type'];

test.each([
  [401, 'no credential'],
  [403, 'the token does not allow reading /orders'],
] as const)('a %i denial is plain text with only the protocol headers', async (status, message) => {
  const sent = await call(context(async () => ({ status, message })), { headers: { authorization: 'Bearer x' } });
  expect(sent.status).toBe(status);
  expect(sent.body).toBe(message);
  expect(names(sent.headers).sort()).toEqual([...protocolHeaders].sort());
  expect(sent.headers).toContainEqual(['content-type', 'text/plain; charset=utf-8']);
});

test('a CORS preflight is answered without asking the hook', async () => {
  let asked = 0;
  const sent = await call(
    context(async () => {
      asked++;
      return { status: 401, message: 'no' };
    }),
    { method: 'OPTIONS', headers: { origin: 'https://example.com', 'access-control-request-method': 'POST' } },
  );
  expect(sent.status).toBe(204);
  expect(asked).toBe(0);
});

test('an allowed request goes on to storage', async () => {
  const sent = await call(context(async () => null), {});
  // The untouchable storage rejects: the request got past the hook.
  expect(sent.status).toBe(500);
});
