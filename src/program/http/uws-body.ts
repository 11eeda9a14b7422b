/**
 * A request body streamed from uWS (`ListenOptions.streamBodies`): each chunk uWS hands over is
 * copied (uWS reuses its memory when the callback returns) and pushed; when the reader falls
 * behind, `res.pause()` stops reading the socket, so an upload of any size holds at most a
 * stream's high-water mark plus one socket read in memory.
 */
import { Readable } from 'node:stream';
import { type RequestBody } from './engine';

/** The part of a uWS response that reads its request's body (uws-engine.ts alone imports uWS). */
export interface BodySource {
  onData(handler: (chunk: ArrayBuffer, isLast: boolean) => void): unknown;
  pause(): void;
  resume(): void;
}

/** What the body needs of its response: whether uWS still owns `res` (touching it after throws). */
export interface BodyOwner {
  readonly live: boolean;
}

export class UwsBody extends Readable implements RequestBody {
  readonly #res: BodySource;
  readonly #owner: BodyOwner;
  #paused = false;
  #complete = false;

  constructor(res: BodySource, owner: BodyOwner) {
    super({ highWaterMark: 256 * 1024 });
    this.#res = res;
    this.#owner = owner;
    res.onData((chunk, isLast) => {
      if (this.destroyed) return;
      if (chunk.byteLength > 0 && !this.push(Buffer.from(new Uint8Array(chunk))) && !isLast && this.#owner.live) {
        this.#paused = true;
        res.pause();
      }
      if (isLast) {
        this.#complete = true;
        this.push(null);
      }
    });
  }

  get complete(): boolean {
    return this.#complete;
  }

  /** Reading the socket is paused (`res.pause()`) until the reader catches up. */
  get paused(): boolean {
    return this.#paused;
  }

  override _read(): void {
    if (!this.#paused) return;
    this.#paused = false;
    if (this.#owner.live) this.#res.resume();
  }

  /** The client went away mid-body: readers see an error, as with node:http's 'aborted'. */
  aborted(): void {
    if (!this.#complete) this.destroy(Object.assign(new Error('the client closed the connection before the request body ended'), { code: 'ECONNRESET' }));
  }
}
