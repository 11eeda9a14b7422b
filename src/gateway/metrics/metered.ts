/**
 * Counts and times every request of an HTTP listener (docs/metrics.md): the handler sees a thin
 * response that notes the status and the time of the first status line (a complete reply or a
 * streamed head), once, and passes everything on. Outside the shield, so its 500s count too.
 */
import { type BodyDone, type HeaderList, type HttpRequest, type HttpResponse, type RequestHandler, type ResponseBody } from '../http/engine';
import { ForwardingResponse } from '../http/forwarding-response';
import { type HttpListener, type RequestCounts, type RequestSeries } from './request-counts';

/** Index in HTTP_OPS of a Svc or Durable Streams request's op, from its method alone. */
export function streamOp(method: string): number {
  switch (method) {
    case 'GET':
      return 0; // read
    case 'HEAD':
      return 1; // head
    case 'POST':
      return 2; // append (trim and close too: bounded labels over exact ones)
    case 'PUT':
      return 3; // create
    case 'DELETE':
      return 4; // delete
    case 'PATCH':
      return 5; // config
    default:
      return 7; // other
  }
}

/** Admin requests: read (GET, HEAD) or write. */
const adminOp = (method: string): number => (method === 'GET' || method === 'HEAD' ? 0 : 6);

class MeteredResponse extends ForwardingResponse {
  readonly #metrics: RequestCounts;
  readonly #series: RequestSeries;
  readonly #start: number;
  #counted = false;

  constructor(res: HttpResponse, metrics: RequestCounts, series: RequestSeries, start: number) {
    super(res);
    this.#metrics = metrics;
    this.#series = series;
    this.#start = start;
  }

  #count(status: number): void {
    if (this.#counted) return;
    this.#counted = true;
    this.#metrics.observe(this.#series, status, (performance.now() - this.#start) / 1000);
  }

  send(status: number, headers: HeaderList, body?: ResponseBody, done?: BodyDone): void {
    if (!this.inner.aborted && !this.inner.sent) this.#count(status);
    this.inner.send(status, headers, body, done);
  }

  writeHead(status: number, headers: HeaderList): void {
    if (!this.inner.aborted && !this.inner.sent) this.#count(status);
    this.inner.writeHead(status, headers);
  }
}

export function metered(listener: HttpListener, metrics: RequestCounts, handler: RequestHandler): RequestHandler {
  const opOf = listener === 'admin' ? adminOp : streamOp;
  // Series are bound once per op here, not per request.
  const byOp: Array<RequestSeries | undefined> = [];
  return (req: HttpRequest, res: HttpResponse): void | Promise<unknown> => {
    const op = opOf(req.method);
    const series = byOp[op] ?? (byOp[op] = metrics.series(listener, op));
    return handler(req, new MeteredResponse(res, metrics, series, performance.now()));
  };
}
