/**
 * The protocol listener's request handler: route by method and path, run the handler,
 * write the reply or the error in the protocol's JSON shape.
 */
import { SvcError } from '../../errors';
import { type HttpRequest, type HttpResponse, type RequestHandler } from '../http/engine';
import { type InFlight } from '../in-flight';
import { type SvcContext } from './context';
import { type Reply, parseStreamName, toHttpError } from '../kit';
import { STREAMS_PATH, routeStreamConfig } from './config-handlers';
import { SCHEMAS_PATH, routeSchemas } from './schema-handlers';
import { OFFSETS_PATH, routeOffsets } from './offset-handlers';
import { SHARE_PATH, routeShare } from './share-handlers';
import { headStream, listStreams, readStream } from './read-handlers';
import { appendOrTrim, createStream, deleteStream } from './write-handlers';

const STREAM_METHODS = 'GET, HEAD, PUT, POST, DELETE';

export function createSvcHandler(ctx: SvcContext, inFlight: InFlight): RequestHandler {
  return (req: HttpRequest, res: HttpResponse): void | Promise<void> => {
    if (inFlight.closing) {
      const e = toHttpError(new SvcError('shutting_down', 'the node is shutting down'));
      res.send(e.status, [...e.headers, ['connection', 'close']], e.body);
      return;
    }
    inFlight.begin();
    // Returned, so the shield (gateway/shield.ts) answers and logs whatever escapes: a bug, an
    // `internal` error, or a reply the engine refuses to write.
    return inFlight.answer(routeOf, ctx, req, res, write, writeError);
  };
}

function writeError(res: HttpResponse, req: HttpRequest, err: unknown): void {
  const e = toHttpError(err);
  write(res, req, { status: e.status, headers: e.headers, body: e.body });
}

/** `r` null: a live read wrote the response itself (or the client left). */
function write(res: HttpResponse, req: HttpRequest, r: Reply | null): void {
  if (r === null) return;
  // Never given to the engine: nothing reads the body again.
  if (res.aborted) return r.bodyDone?.();
  // HEAD answers carry no body, errors included.
  res.send(r.status, r.headers, req.method === 'HEAD' ? undefined : r.body, r.bodyDone);
}

/** Not `async`: a throw while routing is the request's rejection (InFlight.answer). */
function routeOf(ctx: SvcContext, req: HttpRequest, res: HttpResponse): Promise<Reply | null> {
  if (req.path === '/') {
    if (req.method === 'GET' || req.method === 'HEAD') return listStreams(ctx, req);
    throw new SvcError('method_not_allowed', `${req.method} is not allowed on /`, { 'header:allow': 'GET, HEAD' });
  }
  // The reserved `_` names: the schema registry, stream config, named offsets and share groups (docs/protocol.md "Schemas", "Stream config", "Named offsets", "Share groups").
  if (req.path.charCodeAt(1) === UNDERSCORE) {
    if (isUnder(req.path, SCHEMAS_PATH)) return routeSchemas(ctx, req);
    if (isUnder(req.path, STREAMS_PATH)) return routeStreamConfig(ctx, req);
    if (isUnder(req.path, OFFSETS_PATH)) {
      if (ctx.offsets === null) throw new SvcError('not_found', 'named offsets are not kept by this node');
      return routeOffsets(ctx, ctx.offsets, req);
    }
    if (isUnder(req.path, SHARE_PATH)) {
      if (ctx.share === undefined || ctx.share === null) throw new SvcError('not_found', 'share groups are not kept by this node');
      return routeShare(ctx, ctx.share, req);
    }
  }
  const name = parseStreamName(req.path, ctx.limits.maxStreamNameBytes);
  switch (req.method) {
    case 'PUT':
      return createStream(ctx, name, req);
    case 'POST':
      return appendOrTrim(ctx, name, req);
    case 'GET':
      return readStream(ctx, name, req, res);
    case 'HEAD':
      return headStream(ctx, name);
    case 'DELETE':
      return deleteStream(ctx, name);
    default:
      throw new SvcError('method_not_allowed', `${req.method} is not allowed on a stream`, { 'header:allow': STREAM_METHODS });
  }
}

const UNDERSCORE = 0x5f;

/** `prefix` itself or anything below it (`/_schemas`, `/_schemas/x`; not `/_schemasx`). */
function isUnder(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(prefix + '/');
}
