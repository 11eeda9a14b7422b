/**
 * The response a handler on the main thread gets for a request that arrived on an I/O thread
 * (io-threads.ts): every call becomes an operation in that thread's batch for this turn, and the
 * thread applies them, in order, to the real uWS response. What the engine contract lets a handler
 * observe is kept here, synchronously: `aborted`, `sent`, the errors of a second status line or of
 * a bad header; backpressure is the thread's, reported back one hop later (`blocked`, `writable`).
 */
import { type BodyDone, type HeaderList, type HttpResponse, type ResponseBody, isParts, wholeBody } from './engine';
import { Op, type OpBatch } from './io-wire';
import { checkHead } from './uws-engine';

/** Where a RemoteResponse sends its operations: its thread's batch for this turn. */
export interface OpSink {
  batch(): OpBatch;
}

export class RemoteResponse implements HttpResponse {
  readonly id: number;
  readonly #sink: OpSink;
  readonly #onSettled: () => void;
  #aborted = false;
  #started = false;
  #ended = false;
  /** The thread had to buffer a write: writes return false until it reports the socket drained. */
  #blocked = false;
  /** A write returned false: onWritable's callback is owed when the thread drains. */
  #owed = false;
  #abortCb: (() => void) | undefined;
  #writableCb: (() => void) | undefined;

  constructor(id: number, sink: OpSink, onSettled: () => void) {
    this.id = id;
    this.#sink = sink;
    this.#onSettled = onSettled;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get sent(): boolean {
    return this.#ended || this.#started;
  }

  /** Whether the thread still expects operations for this response. */
  get open(): boolean {
    return !this.#ended && !this.#aborted;
  }

  onAborted(cb: () => void): void {
    if (this.#aborted) cb();
    else this.#abortCb = cb;
  }

  onWritable(cb: () => void): void {
    this.#writableCb = cb;
  }

  send(status: number, headers: HeaderList, body?: ResponseBody, done?: BodyDone): void {
    if (this.#ended || this.#aborted) return done?.();
    if (this.#started) throw new Error('send() after writeHead()');
    checkHead(status, headers);
    // Parts are joined: the I/O thread gets one copy of the body, so they are free at once.
    const parts = isParts(body);
    this.#sink.batch().add(Op.Send, this.id, wholeBody(body), { status, headers });
    this.#settle();
    if (parts) done?.();
  }

  /** Answers a request the I/O thread found too large, and closes its connection. */
  refuse(response: { status: number; headers: HeaderList; body: string }): void {
    if (this.#ended || this.#aborted) return;
    checkHead(response.status, response.headers);
    this.#sink.batch().add(Op.Refuse, this.id, undefined, response);
    this.#settle();
  }

  writeHead(status: number, headers: HeaderList): void {
    if (this.#ended || this.#aborted) return;
    if (this.#started) throw new Error('writeHead() called twice');
    checkHead(status, headers);
    this.#started = true;
    this.#sink.batch().add(Op.Head, this.id, undefined, { status, headers });
  }

  write(chunk: Uint8Array | string): boolean {
    if (this.#ended || this.#aborted) return false;
    if (!this.#started) this.writeHead(200, []);
    this.#sink.batch().add(Op.Write, this.id, chunk);
    if (!this.#blocked) return true;
    this.#owed = true;
    return false;
  }

  end(chunk?: Uint8Array | string): void {
    if (this.#ended || this.#aborted) return;
    if (!this.#started) {
      this.send(200, [], chunk);
      return;
    }
    this.#sink.batch().add(Op.End, this.id, chunk);
    this.#settle();
  }

  destroy(): void {
    if (this.#ended || this.#aborted) return;
    this.#sink.batch().add(Op.Destroy, this.id);
    this.#settle();
  }

  /** The thread saw the client go away. */
  abortedByPeer(): void {
    if (this.#aborted || this.#ended) return;
    this.#aborted = true;
    this.#onSettled();
    this.#abortCb?.();
  }

  /** The thread had to buffer a write for this response. */
  blockedByPeer(): void {
    this.#blocked = true;
  }

  /** The thread's socket drained after backpressure. */
  writableAgain(): void {
    this.#blocked = false;
    if (!this.#owed || this.#ended || this.#aborted) return;
    this.#owed = false;
    this.#writableCb?.();
  }

  #settle(): void {
    this.#ended = true;
    this.#onSettled();
  }
}
