/**
 * A request span around every request of the Svc and Durable Streams listeners (docs/metrics.md,
 * "Traces"), installed by src/node.ts only when traces are on. Outside the request log, so the
 * span sees the `Svc-Request-Id` an error reply carries:
 *
 *   engine ──▶ metered ──▶ traced ──▶ requestLog ──▶ CORS ──▶ shield ──▶ guard ──▶ handler ──▶ shards (hop spans)
 *
 * The span is named `<listener> <op>` (`svc append`, `ds read`; the op as in metrics, from the
 * method) and ends at the status line, or at a streamed reply's head (SSE, a long-poll's answer).
 * A request whose client left before any status line ends its span when its handler is done.
 */
import { type RequestSpan, type Tracing } from '../../tracing';
import { type BodyDone, type HeaderList, type HttpRequest, type HttpResponse, type RequestHandler, type ResponseBody } from '../http/engine';
import { ForwardingResponse } from '../http/forwarding-response';
import { REQUEST_ID_HEADER } from '../request-log';
import { HTTP_OPS } from './request-counts';
import { streamOp } from './metered';

class TracedResponse extends ForwardingResponse {
  readonly #span: RequestSpan;

  constructor(res: HttpResponse, span: RequestSpan) {
    super(res);
    this.#span = span;
  }

  #end(status: number, headers: HeaderList): void {
    if (this.#span.ended || this.inner.aborted || this.inner.sent) return;
    this.#span.set('http.response.status_code', status);
    for (const [k, v] of headers) if (k.toLowerCase() === REQUEST_ID_HEADER) this.#span.set('svc.request_id', v);
    // A server span is in error for 5xx only (OpenTelemetry HTTP semantic conventions): a 4xx is the client's.
    this.#span.end(status >= 500 ? String(status) : null);
  }

  send(status: number, headers: HeaderList, body?: ResponseBody, done?: BodyDone): void {
    this.#end(status, headers);
    this.inner.send(status, headers, body, done);
  }

  writeHead(status: number, headers: HeaderList): void {
    this.#end(status, headers);
    this.inner.writeHead(status, headers);
  }
}

export function traced(listener: 'svc' | 'ds', tracing: Tracing, handler: RequestHandler): RequestHandler {
  return (req: HttpRequest, res: HttpResponse): void | Promise<unknown> => {
    // Not sampled: the request runs as if traces were off.
    const parent = tracing.parentOf(req.headers);
    if (parent === null) return handler(req, res);
    return tracing.request(
      `${listener} ${HTTP_OPS[streamOp(req.method)]}`,
      { 'svc.listener': listener, 'http.request.method': req.method, 'url.path': req.path.slice(0, 256), 'http.request.body.size': req.body.length },
      parent,
      (span) => {
        const r = handler(req, new TracedResponse(res, span));
        if (r instanceof Promise) {
          const done = (): void => {
            if (span.ended) return;
            span.set('svc.aborted', true);
            span.end(null);
          };
          void r.then(done, done);
        } else if (!span.ended && res.aborted) {
          span.set('svc.aborted', true);
          span.end(null);
        }
        return r;
      },
    );
  };
}
