/**
 * One origin fetch of an object shared by every reader that misses it while it runs
 * (coalescing). Bytes are kept in arrival order; each reader streams its own byte window
 * from them as they arrive, so a cold GET starts answering as soon as the origin does and
 * a range reader waits only for the bytes it needs.
 *
 *   origin GET ──▶ Fill ──┬─▶ reader (client 1, whole object)
 *                         ├─▶ reader (client 2, bytes=100-199)
 *                         └─▶ disk writer / memory tier (when complete)
 */
import { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { type ObjectMeta } from './entry';

export type FillHead =
  /** 200 from the origin; the body is being collected. */
  | { kind: 'object'; meta: ObjectMeta }
  /** 304 to a revalidation: the cached version is still current. */
  | { kind: 'not-modified' }
  /** Anything else the origin said (404, 403, 5xx...), body buffered for every waiter. */
  | { kind: 'status'; status: number; headers: IncomingHttpHeaders; body: Buffer }
  /** Too big (or unsized) to keep: only one reader may take the origin response; the others fetch their own. */
  | { kind: 'passthrough'; meta: ObjectMeta | undefined; take(): IncomingMessage | undefined };

export class Fill {
  readonly head: Promise<FillHead>;
  /** Invalidation generation of the key when the fill started; a fill from an older generation is never stored. */
  readonly generation: number;
  /** Readers joined after the first (for metrics). */
  joined = 0;
  #resolve!: (h: FillHead) => void;
  #reject!: (e: Error) => void;
  readonly #chunks: Buffer[] = [];
  #received = 0;
  #done = false;
  #error: Error | undefined;
  readonly #wakers = new Set<() => void>();

  constructor(generation: number) {
    this.generation = generation;
    this.head = new Promise<FillHead>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // A fill whose head nobody awaited must not raise an unhandled rejection.
    this.head.catch(() => {});
  }

  answer(h: FillHead): void {
    this.#resolve(h);
  }

  data(b: Buffer): void {
    this.#chunks.push(b);
    this.#received += b.length;
    this.#wake();
  }

  end(): void {
    this.#done = true;
    this.#wake();
  }

  fail(err: Error): void {
    this.#error = err;
    this.#reject(err);
    this.#wake();
  }

  get received(): number {
    return this.#received;
  }

  get failed(): boolean {
    return this.#error !== undefined;
  }

  /** The whole body, once complete. */
  body(): Buffer {
    return Buffer.concat(this.#chunks, this.#received);
  }

  #wake(): void {
    const w = [...this.#wakers];
    this.#wakers.clear();
    for (const f of w) f();
  }

  /** Streams bytes [start, end) as they arrive. */
  reader(start: number, end: number): Readable {
    let pos = start;
    let idx = 0;
    let base = 0; // offset of chunk idx
    let waiting = false;
    const stream = new Readable({
      read: () => pump(),
      destroy: (err, cb) => {
        this.#wakers.delete(pump);
        cb(err);
      },
    });
    const pump = (): void => {
      waiting = false;
      for (;;) {
        if (pos >= end) {
          stream.push(null);
          return;
        }
        while (idx < this.#chunks.length && base + this.#chunks[idx]!.length <= pos) base += this.#chunks[idx++]!.length;
        if (idx < this.#chunks.length) {
          const c = this.#chunks[idx]!;
          const from = pos - base;
          const to = Math.min(c.length, end - base);
          pos += to - from;
          if (!stream.push(from === 0 && to === c.length ? c : c.subarray(from, to))) return;
          continue;
        }
        if (this.#error) {
          stream.destroy(this.#error);
          return;
        }
        if (this.#done) {
          stream.destroy(new Error(`origin body ended at ${this.#received} bytes, before byte ${pos}`));
          return;
        }
        if (!waiting) {
          waiting = true;
          this.#wakers.add(pump);
        }
        return;
      }
    };
    return stream;
  }
}
