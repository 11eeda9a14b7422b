/**
 * The Durable Streams listener (`--protocol ds`, `--ds-listen`): routes requests, puts the
 * browser security headers on every response (CORS: the kit's withCors around it), and maps errors to the protocol's plain-text
 * answers. Streams are at `/v1/stream/{name}` (the stream `/{name}` of the node), the
 * subscription APIs at `/v1/stream/__ds/…`.
 */
import { SvcError } from '../../errors';
import { type HeaderList, type HttpRequest, type HttpResponse, type RequestHandler } from '../http/engine';
import { type InFlight } from '../in-flight';
import { type Reply, parseStreamName } from '../kit';
import { STREAM_BASE, type DsContext } from './context';
import { COMMON_HEADERS } from './ds-headers';
import { toDsError } from './ds-errors';
import { readDsStream } from './ds-read';
import { appendDs, createDsStream, deleteDs, headDs } from './ds-write';

/** Where the subscription APIs are (the main thread's: a gateway thread leaves them to it). */
export const SUBSCRIPTIONS_PREFIX = `${STREAM_BASE}/__ds/`;

export function createDsHandler(ctx: DsContext, inFlight: InFlight): RequestHandler {
  return (req: HttpRequest, res: HttpResponse): void | Promise<void> => {
    if (inFlight.closing) {
      // Retriable like every 503 (ds-errors.ts): the restarted node, or another, takes it.
      send(res, req, { status: 503, headers: [['connection', 'close'], ['content-type', 'text/plain; charset=utf-8'], ['Retry-After', '1']], body: 'the node is shutting down' });
      return;
    }
    inFlight.begin();
    // Returned: the shield (gateway/shield.ts) answers bugs and `internal` errors, with a request id.
    return inFlight.answer(routeOf, ctx, req, res, send, sendError);
  };
}

function sendError(res: HttpResponse, req: HttpRequest, err: unknown): void {
  send(res, req, toDsError(err));
}

function send(res: HttpResponse, req: HttpRequest, r: Reply | null): void {
  if (r === null) return;
  // Never given to the engine: nothing reads the body again.
  if (res.aborted) return r.bodyDone?.();
  const headers: HeaderList = COMMON_HEADERS.concat(r.headers);
  res.send(r.status, headers, req.method === 'HEAD' || r.status === 204 || r.status === 304 ? undefined : r.body, r.bodyDone);
}

/** Not `async`: a throw while routing is the request's rejection (InFlight.answer). */
function routeOf(ctx: DsContext, req: HttpRequest, res: HttpResponse): Promise<Reply | null> {
  // OPTIONS (CORS preflights) never gets here: the kit's CORS layer (withCors) answers it.
  if (req.path.startsWith(SUBSCRIPTIONS_PREFIX)) return subscriptions(ctx, req);
  if (!req.path.startsWith(STREAM_BASE + '/')) throw new SvcError('not_found', `streams are under ${STREAM_BASE}/`);
  const name = parseStreamName(req.path.slice(STREAM_BASE.length), ctx.maxStreamNameBytes);
  switch (req.method) {
    case 'PUT':
      return createDsStream(ctx, name, req);
    case 'POST':
      return appendDs(ctx, name, req);
    case 'GET':
      return readDsStream(ctx, name, req, res);
    case 'HEAD':
      return headDs(ctx, name);
    case 'DELETE':
      return deleteDs(ctx, name);
    default:
      throw new SvcError('method_not_allowed', `${req.method} is not allowed on a stream`);
  }
}

async function subscriptions(ctx: DsContext, req: HttpRequest): Promise<Reply> {
  if (ctx.subscriptions === null) throw new SvcError('not_found', 'subscriptions are not enabled on this listener');
  const r = await ctx.subscriptions.handle({
    method: req.method,
    subpath: req.path.slice(SUBSCRIPTIONS_PREFIX.length),
    headers: { ...req.headers },
    body: req.body,
    streamBaseUrl: `http://${req.headers['host'] ?? 'localhost'}${STREAM_BASE}/`,
  });
  return { status: r.status, headers: Object.entries(r.headers), body: r.body };
}
