/**
 * svc-cache's side of one HTTP response, over the engine contract (src/program/http): uWS or
 * node:http alike. It keeps what the read and forward paths ask of a response — the status for
 * the metrics, whether the head went out — and pipes streamed bodies with backpressure.
 */
import { type OutgoingHttpHeaders } from 'node:http';
import { type Readable } from 'node:stream';
import { type HeaderList, type HttpResponse } from '../program/http';
import { type Metrics } from './metrics';

/** Response headers: a ready list (the hit path builds one directly) or node's header object. */
export type Headers = HeaderList | OutgoingHttpHeaders;

/** node's header object as a list (array values become repeated headers). */
export function headerList(h: OutgoingHttpHeaders): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const name in h) {
    const v = h[name];
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const one of v) out.push([name, one]);
    else out.push([name, String(v)]);
  }
  return out;
}

export class Reply {
  readonly #res: HttpResponse;
  readonly #metrics: Metrics;
  readonly #op: string;
  readonly #started: bigint;
  #status = 0;
  #ended = false;
  #closeCbs: Array<() => void> | undefined;

  /** The request's op and start time go to the latency histogram once the response is handed over whole. */
  constructor(res: HttpResponse, metrics: Metrics, op: string, started: bigint) {
    this.#res = res;
    this.#metrics = metrics;
    this.#op = op;
    this.#started = started;
  }

  get headersSent(): boolean {
    return this.#status !== 0;
  }

  get statusCode(): number {
    return this.#status;
  }

  /** A complete response in one go (one write on uWS). */
  send(status: number, headers: Headers, body?: Uint8Array | string, close = false): void {
    this.#status = status;
    const list = Array.isArray(headers) ? (headers as HeaderList) : headerList(headers as OutgoingHttpHeaders);
    this.#res.send(status, close ? [...list, ['connection', 'close']] : list, body);
    this.#finish();
  }

  writeHead(status: number, headers: Headers): void {
    this.#status = status;
    this.#res.writeHead(status, Array.isArray(headers) ? (headers as HeaderList) : headerList(headers as OutgoingHttpHeaders));
  }

  write(chunk: Uint8Array): boolean {
    return this.#res.write(chunk);
  }

  end(chunk?: Uint8Array | string): void {
    this.#res.end(chunk);
    this.#finish();
  }

  writeContinue(): void {
    this.#res.writeContinue?.();
  }

  /** Cut the connection: a response that cannot be finished honestly (its source failed). */
  destroy(): void {
    this.#res.destroy();
    this.#close();
  }

  onWritable(cb: () => void): void {
    this.#res.onWritable(cb);
  }

  /** `cb` runs once when the response is over: ended, destroyed, or the client went away. */
  onClose(cb: () => void): void {
    if (this.#ended || this.#res.aborted) {
      cb();
      return;
    }
    if (this.#closeCbs === undefined) {
      this.#closeCbs = [];
      this.#res.onAborted(() => this.#close());
    }
    this.#closeCbs.push(cb);
  }

  #finish(): void {
    if (this.#ended) return;
    if (!this.#res.aborted) this.#metrics.request(this.#op, this.#status, Number(process.hrtime.bigint() - this.#started) / 1e9);
    this.#close();
  }

  #close(): void {
    this.#ended = true;
    const cbs = this.#closeCbs;
    this.#closeCbs = undefined;
    if (cbs !== undefined) for (const cb of cbs) cb();
  }
}

/**
 * Streams `src` into the response (after its head): paused while the client does not keep up,
 * ended with the source; a source that fails cuts the connection (the head promised bytes that
 * will not come), a client that leaves destroys the source.
 */
export function pipeBody(src: Readable, reply: Reply, onChunk?: (n: number) => void): void {
  reply.onWritable(() => src.resume());
  src.on('data', (b: Buffer) => {
    onChunk?.(b.length);
    if (!reply.write(b)) src.pause();
  });
  src.once('end', () => reply.end());
  src.once('error', () => reply.destroy());
  reply.onClose(() => {
    if (!src.readableEnded) src.destroy();
  });
}
