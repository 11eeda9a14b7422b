/**
 * The protocol listener's request handler: route by method and path, run the handler,
 * write the reply or the error in the protocol's JSON shape.
 */
import { SvcError } from '../../errors';
import { type HttpRequest, type HttpResponse, type RequestHandler } from '../http/engine';
import { type InFlight } from '../in-flight';
import { type SvcContext } from './context';
import { toHttpError } from './http-errors';
import { parseStreamName } from './params';
import { headStream, listStreams, readStream } from './read-handlers';
import { type Reply, appendOrTrim, createStream, deleteStream } from './write-handlers';

const STREAM_METHODS = 'GET, HEAD, PUT, POST, DELETE';

export function createSvcHandler(ctx: SvcContext, inFlight: InFlight): RequestHandler {
  return (req: HttpRequest, res: HttpResponse): void => {
    if (inFlight.closing) {
      const e = toHttpError(new SvcError('shutting_down', 'the node is shutting down'));
      res.send(e.status, [...e.headers, ['connection', 'close']], e.body);
      return;
    }
    inFlight.begin();
    route(ctx, req).then(
      (r) => write(res, req, r),
      (err: unknown) => {
        const e = toHttpError(err);
        write(res, req, { status: e.status, headers: e.headers, body: e.body });
      },
    ).finally(() => inFlight.end());
  };
}

function write(res: HttpResponse, req: HttpRequest, r: Reply): void {
  if (res.aborted) return;
  // HEAD answers carry no body, errors included.
  res.send(r.status, r.headers, req.method === 'HEAD' ? undefined : r.body);
}

async function route(ctx: SvcContext, req: HttpRequest): Promise<Reply> {
  if (req.path === '/') {
    if (req.method === 'GET' || req.method === 'HEAD') return listStreams(ctx, req);
    throw new SvcError('method_not_allowed', `${req.method} is not allowed on /`, { 'header:allow': 'GET, HEAD' });
  }
  const name = parseStreamName(req.path, ctx.limits.maxStreamNameBytes);
  switch (req.method) {
    case 'PUT':
      return createStream(ctx, name, req);
    case 'POST':
      return appendOrTrim(ctx, name, req);
    case 'GET':
      return readStream(ctx, name, req);
    case 'HEAD':
      return headStream(ctx, name);
    case 'DELETE':
      return deleteStream(ctx, name);
    default:
      throw new SvcError('method_not_allowed', `${req.method} is not allowed on a stream`, { 'header:allow': STREAM_METHODS });
  }
}
