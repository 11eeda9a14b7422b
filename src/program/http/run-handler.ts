/**
 * The floor under every request: both engines call handlers through `runHandler`, so a handler
 * that throws, or whose promise rejects, never escapes into uWS's native callback (which would end
 * the process) or becomes an unhandled rejection (which also ends it, Node ≥ 15).
 *
 * The gateway's shield (gateway/shield.ts) answers such failures in each protocol's own shape and
 * logs them with a request id; this floor only catches what gets past it: a plain 500 if nothing
 * was sent yet, else the connection is closed (a half-sent response cannot be finished honestly).
 */
import { type HttpRequest, type HttpResponse, type RequestHandler } from './engine';

export function runHandler(handler: RequestHandler, req: HttpRequest, res: HttpResponse): void {
  let result: void | Promise<unknown>;
  try {
    result = handler(req, res);
  } catch (err) {
    lastResort(res, err);
    return;
  }
  if (result !== undefined && typeof result.then === 'function') result.then(undefined, (err: unknown) => lastResort(res, err));
}

function lastResort(res: HttpResponse, err: unknown): void {
  // No logger at this layer: stderr via the warning channel, so the failure is not silent.
  const why = err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.emitWarning(`a request handler failed outside the gateway's shield: ${why}`, { code: 'SVC_HANDLER_FAILED' });
  try {
    if (res.aborted) return;
    if (res.sent) res.destroy();
    else res.send(500, [['content-type', 'text/plain; charset=utf-8'], ['connection', 'close']], 'internal error');
  } catch {
    try {
      res.destroy();
    } catch {
      // The response is already gone: nothing is left to close.
    }
  }
}
