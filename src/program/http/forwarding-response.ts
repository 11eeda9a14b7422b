/**
 * A response that passes every call on to another one. The layers around a listener's handler
 * (CORS, the request log, metrics) each change only the status line's way through; they extend
 * this and override `send` / `writeHead`, instead of each repeating the whole contract.
 */
import { type BodyDone, type HeaderList, type HttpResponse } from './engine';

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

  send(status: number, headers: HeaderList, body?: Uint8Array | string, done?: BodyDone): void {
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
}
