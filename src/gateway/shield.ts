/**
 * The shield around every HTTP listener's handler (Svc, Durable Streams, admin): whatever a
 * handler throws, synchronously or from its promise, ends in an error reply, never in a crash.
 *
 *   engine ──▶ shield ──▶ auth guard ──▶ listener handler
 *                 └── throw / rejection ──▶ log (error, with a request id) ──▶ 500 `internal`
 *                                           in the listener's own shape, carrying the same id
 *
 * Expected failures (`SvcError`s other than `internal`) are answered by each listener's error
 * table; only bugs and `internal` errors reach here. A response already started cannot turn into
 * a 500: its connection is closed, so the client sees a truncated answer, not a wrong one.
 */
import { SvcError } from '../errors';
import { type HttpRequest, type HttpResponse, type RequestHandler } from './http/engine';
import { type Reply } from './kit';
import { newRequestId } from './request-log';

/** What the shield needs of a logger (the product's pino logger fits). */
export interface ShieldLog {
  error(obj: object, msg: string): void;
}

/** The listener's 500 `internal` reply naming `requestId` (its header and, where the shape allows, its body). */
export type InternalReply = (requestId: string) => Reply;

export { REQUEST_ID_HEADER } from './request-log';

export function shield(listener: 'svc' | 'ds' | 'admin' | 'registry', handler: RequestHandler, log: ShieldLog, internal: InternalReply): RequestHandler {
  return (req: HttpRequest, res: HttpResponse): void | Promise<void> => {
    const fail = (err: unknown): void => {
      const requestId = newRequestId();
      // The path is client input: cut, so a long one cannot flood the log.
      log.error({ err, requestId, listener, method: req.method, path: req.path.slice(0, 256) }, 'request failed with an internal error');
      if (res.aborted) return;
      if (res.sent) {
        res.destroy();
        return;
      }
      const r = internal(requestId);
      try {
        res.send(r.status, r.headers, req.method === 'HEAD' ? undefined : r.body);
      } catch {
        res.destroy(); // the engine refused even this reply: closing is all that is left
      }
    };
    let result: void | Promise<unknown>;
    try {
      result = handler(req, res);
    } catch (err) {
      fail(err);
      return;
    }
    if (result !== undefined && typeof result.then === 'function') return result.then(() => undefined, fail);
    return undefined;
  };
}

/** True for what the shield answers (a listener rethrows it): anything but an expected `SvcError`. */
export function isInternal(err: unknown): boolean {
  return !(err instanceof SvcError) || err.code === 'internal';
}
