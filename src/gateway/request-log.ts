/**
 * Request ids for error replies (docs/operations.md, "Logs"): every 4xx/5xx answer of the Svc,
 * Durable Streams and admin listeners carries an `Svc-Request-Id` header, and the node logs one
 * line with the same id, so an operator can grep a client's error for its log line.
 *
 *   engine ──▶ metered ──▶ requestLog ──▶ CORS ──▶ shield ──▶ auth guard ──▶ listener handler
 *
 * - The id is made only when an error is answered: a successful request gets no id, no log line
 *   and no string work; its only cost is this thin response object.
 * - A reply that already names an id (the shield's 500, whose `error` line holds the cause) keeps
 *   it, so the shield's line and this one share the id.
 * - Bodies keep the spec's shapes (stream-service.md, "Error body": the Svc body has `error`,
 *   `message`, `next_seq` and no more, the admin body only `error`; Durable Streams has its own),
 *   so the id travels in the header; the shield's 500 names it in its `message` as well.
 * - 5xx lines are logged at `warn`, 4xx at `info`: a client's mistake is not the node's.
 */
import { randomFillSync } from 'node:crypto';
import { type BodyDone, type HeaderList, type HttpRequest, type HttpResponse, type RequestHandler, type ResponseBody, wholeBody } from './http/engine';
import { ForwardingResponse } from './http/forwarding-response';

/** The header that carries the request id of a failed request, on every listener. */
export const REQUEST_ID_HEADER = 'svc-request-id';

/** Random bytes for request ids, taken 8 at a time (newRequestId). */
const idPool = Buffer.alloc(4096);
let idsAt = idPool.length;

/** 16 hex chars: unique enough to find one failure in the log, short enough to read over the phone. */
export function newRequestId(): string {
  // From a pool refilled 512 ids at a time: one randomBytes call per id was 7% of a 404's CPU
  // on the gateway thread.
  if (idsAt + 8 > idPool.length) {
    randomFillSync(idPool);
    idsAt = 0;
  }
  idsAt += 8;
  return idPool.toString('hex', idsAt - 8, idsAt);
}

/** What the layer needs of a logger (the product's pino logger fits). */
export interface RequestLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

type Listener = 'svc' | 'ds' | 'admin';

export function requestLog(listener: Listener, log: RequestLog, handler: RequestHandler): RequestHandler {
  return (req: HttpRequest, res: HttpResponse): void | Promise<unknown> => handler(req, new LoggedResponse(req, res, listener, log));
}

/** The id a reply already names, if any. */
function idIn(headers: HeaderList): string | undefined {
  for (const [k, v] of headers) if (k.toLowerCase() === REQUEST_ID_HEADER) return v;
  return undefined;
}

function isJson(headers: HeaderList): boolean {
  for (const [k, v] of headers) if (k.toLowerCase() === 'content-type') return v.startsWith('application/json');
  return false;
}

/** The error code and message of a JSON body, or the start of a text one, for the log line. */
function describe(body: string | undefined, json: boolean): { error?: unknown; message?: unknown } {
  if (body === undefined || body.length === 0) return {};
  if (!json) return { message: body.slice(0, 200) };
  try {
    const j = JSON.parse(body) as { error?: unknown; message?: unknown };
    return { error: j.error, message: j.message };
  } catch {
    return { message: body.slice(0, 200) };
  }
}

class LoggedResponse extends ForwardingResponse {
  readonly #req: HttpRequest;
  readonly #listener: Listener;
  readonly #log: RequestLog;

  constructor(req: HttpRequest, res: HttpResponse, listener: Listener, log: RequestLog) {
    super(res);
    this.#req = req;
    this.#listener = listener;
    this.#log = log;
  }

  send(status: number, headers: HeaderList, body?: ResponseBody, done?: BodyDone): void {
    if (status < 400 || this.inner.aborted || this.inner.sent) {
      this.inner.send(status, headers, body, done);
      return;
    }
    const json = isJson(headers);
    const whole = wholeBody(body);
    const text = whole === undefined || typeof whole === 'string' ? whole : Buffer.from(whole.buffer, whole.byteOffset, whole.byteLength).toString();
    const id = this.#note(status, headers, describe(text, json));
    this.inner.send(status, idIn(headers) === undefined ? headers.concat([[REQUEST_ID_HEADER, id]]) : headers, body, done);
  }

  writeHead(status: number, headers: HeaderList): void {
    if (status < 400 || this.inner.aborted || this.inner.sent) {
      this.inner.writeHead(status, headers);
      return;
    }
    const id = this.#note(status, headers, {});
    this.inner.writeHead(status, idIn(headers) === undefined ? headers.concat([[REQUEST_ID_HEADER, id]]) : headers);
  }

  /** Logs the error reply and returns its id. */
  #note(status: number, headers: HeaderList, what: { error?: unknown; message?: unknown }): string {
    const requestId = idIn(headers) ?? newRequestId();
    const req = this.#req;
    // The path is client input: cut, so a long one cannot flood the log.
    const line = { requestId, listener: this.#listener, method: req.method, path: req.path.slice(0, 256), status, ...what };
    if (status >= 500) this.#log.warn(line, 'request answered with an error');
    else this.#log.info(line, 'request answered with an error');
    return requestId;
  }
}

/**
 * The engine's refusal of an oversized body (it answers before any handler runs, so the layer above
 * never sees it): the same id in the header and the same log line.
 */
export function refusalWithId<R extends { status: number; headers: HeaderList; body: string }>(listener: Listener, log: RequestLog, req: Omit<HttpRequest, 'body'>, reply: R): R {
  const requestId = newRequestId();
  log.info({ requestId, listener, method: req.method, path: req.path.slice(0, 256), status: reply.status, message: reply.body.slice(0, 200) }, 'request answered with an error');
  return { ...reply, headers: reply.headers.concat([[REQUEST_ID_HEADER, requestId]]) };
}
