/**
 * A response that passes every call on to another one. The layers around a listener's handler
 * (CORS, the request log, metrics) each change only the status line's way through; they extend
 * this and override `send` / `writeHead`, instead of each repeating the whole contract.
 */
import { type BodyDone, type HeaderList, type HttpResponse, type ResponseBody } from './engine';

export class ForwardingResponse implements HttpResponse {
  protected readonly inner: HttpResponse;

  constructor(inner: HttpResponse) {
    this.inner = inner;
  }

  get aborted(): boolean {
    return this.inner.aborted;
  }

  get sent(): boolean {
    return this.inner.sent;
  }

  onAborted(cb: () => void): void {
    this.inner.onAborted(cb);
  }

  send(status: number, headers: HeaderList, body?: ResponseBody, done?: BodyDone): void {
    this.inner.send(status, headers, body, done);
  }

  writeHead(status: number, headers: HeaderList): void {
    this.inner.writeHead(status, headers);
  }

  write(chunk: Uint8Array | string): boolean {
    return this.inner.write(chunk);
  }

  onWritable(cb: () => void): void {
    this.inner.onWritable(cb);
  }

  end(chunk?: Uint8Array | string): void {
    this.inner.end(chunk);
  }

  destroy(): void {
    this.inner.destroy();
  }

  writeContinue(): void {
    this.inner.writeContinue?.();
  }
}

/** What a wrapper does instead of `send`, given the response it wraps. */
export type SendHook = (inner: HttpResponse, status: number, headers: HeaderList, body?: ResponseBody, done?: BodyDone) => void;

/**
 * `inner` with its `send` replaced by `hook`, everything else passed on: for the wrappers made per
 * request (the owner check, a tenant token's names), where a Proxy cost a trap and a bound
 * function on every member the handler touched.
 */
export function withSend(inner: HttpResponse, hook: SendHook): HttpResponse {
  return new HookedResponse(inner, hook);
}

class HookedResponse extends ForwardingResponse {
  readonly #hook: SendHook;

  constructor(inner: HttpResponse, hook: SendHook) {
    super(inner);
    this.#hook = hook;
  }

  override send(status: number, headers: HeaderList, body?: ResponseBody, done?: BodyDone): void {
    this.#hook(this.inner, status, headers, body, done);
  }
}
