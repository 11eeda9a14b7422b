/**
 * The buffers read pages are rendered into, kept for the next page instead of dropped
 * (docs/storage.md, "Read page buffers").
 *
 *   take(n) ─▶ page rendered into a pooled buffer ─▶ reply
 *      ▲                                               ├─ under 64 KiB: copied into the reply message,
 *      │                                               │    the buffer is free at once ──────────────── give()
 *      │                                               └─ 64 KiB or more: moved to the gateway thread, which
 *      │                                                    writes it to the socket; once the engine has
 *      │                                                    finished with every byte (ShardClient.recycle)
 *      └──────────── giveReturned() ◀── moved back with the gateway's next message to this worker
 *
 * A page used to be a fresh buffer of up to 16 MiB per read, transferred to the gateway thread and
 * dropped there: external memory that grew by the page size with every read and made V8 run full
 * collections on both threads to reclaim it (W4 in perf/: the collector's helper threads took more
 * CPU per MB than the read itself). A buffer handed back is reused as it is.
 *
 * Correctness over reuse: a buffer comes back to the pool only when nothing can read it any more.
 * On this thread that is a buffer this pool lent (`give` checks it is one of its own: a cache
 * entry's buffer must never be written over) whose page was copied into the reply. From the
 * gateway it is a buffer that was moved there and moved back, so no other thread holds it; the
 * gateway sends it only once the HTTP engine says it will never read it again. A buffer that is
 * never handed back (a shared long-poll page, a client gone on node:http, a worker restarted
 * meanwhile) is simply left to the garbage collector, and the pool allocates another.
 *
 * Sizes are powers of two from 64 KiB to 32 MiB (a 16 MiB `--read-max-bytes` page of JSON needs
 * more than 16 MiB); a smaller page gets an exact buffer of its own as before, a larger one too.
 * The pool holds at most its budget in idle buffers, and lets all of them go after a minute
 * without a take (`trim`), so a burst of large reads does not keep its memory for ever.
 */

import { type ReadPoolStats } from '../types';

/** Smallest pooled size: pages below it are copied into the reply message (wire.ts, TRANSFER_MIN). */
const MIN_CLASS = 64 * 1024; // 64 KiB
/** Largest pooled size. */
const MAX_CLASS = 32 * 1024 * 1024; // 32 MiB


export class PagePool {
  readonly #budget: number;
  /** Idle buffers by size class (index: log2 of the size). */
  readonly #free: ArrayBuffer[][] = Array.from({ length: 32 }, () => []);
  /** Buffers lent by `take` that are still on this thread (not moved away). */
  #lent = new WeakSet<ArrayBuffer>();
  #bytes = 0;
  #takenSinceTrim = false;
  readonly #stats: ReadPoolStats = { reused: 0, allocated: 0, returned: 0, bytes: 0 };

  /** `budgetBytes`: idle bytes kept at most; 0 turns pooling off (every page gets an exact buffer of its own). */
  constructor(budgetBytes: number) {
    this.#budget = budgetBytes;
  }

  get enabled(): boolean {
    return this.#budget > 0;
  }

  get stats(): ReadPoolStats {
    return { ...this.#stats, bytes: this.#bytes };
  }

  /**
   * A buffer of at least `n` bytes for a page (its whole length is the pooled size); an exact
   * one, not pooled, when the pool is off or `n` is outside the pooled sizes.
   */
  take(n: number): Buffer {
    if (this.#budget === 0 || n < MIN_CLASS || n > MAX_CLASS) return Buffer.allocUnsafe(n);
    this.#takenSinceTrim = true;
    const k = classOf(n);
    let ab = this.#free[k]!.pop();
    if (ab !== undefined) {
      this.#bytes -= ab.byteLength;
      this.#stats.reused++;
    } else {
      // Its own ArrayBuffer (never Node's shared 8 KiB pool): it is transferred whole.
      const b = Buffer.allocUnsafeSlow(2 ** k);
      this.#stats.allocated++;
      this.#lent.add(b.buffer as ArrayBuffer);
      return b;
    }
    this.#lent.add(ab);
    return Buffer.from(ab);
  }

  /** Whether `b` is a buffer this pool lent and still on this thread. */
  lent(b: Buffer): boolean {
    return b.buffer instanceof ArrayBuffer && this.#lent.has(b.buffer);
  }

  /**
   * A buffer `take` lent, no longer read or written by anyone on this thread (its page was copied
   * into the reply, or outgrown): kept for the next page. Anything else is ignored.
   */
  give(b: Buffer): void {
    const ab = b.buffer;
    if (!(ab instanceof ArrayBuffer) || !this.#lent.delete(ab)) return;
    this.#keep(ab);
  }

  /**
   * A page's buffer moved back by the gateway thread (Returned): it was moved there and back, so
   * nothing else holds it. Kept when it has a pooled size and the budget allows.
   */
  giveReturned(ab: ArrayBuffer): void {
    this.#stats.returned++;
    this.#keep(ab);
  }

  /** Let every idle buffer go when none was taken since the last call (a timer's, once a minute). */
  trim(): void {
    if (!this.#takenSinceTrim) {
      for (const list of this.#free) list.length = 0;
      this.#bytes = 0;
    }
    this.#takenSinceTrim = false;
  }

  #keep(ab: ArrayBuffer): void {
    const size = ab.byteLength;
    if (size < MIN_CLASS || size > MAX_CLASS || (size & (size - 1)) !== 0) return;
    if (this.#bytes + size > this.#budget) return;
    this.#free[Math.log2(size)]!.push(ab);
    this.#bytes += size;
  }
}

/** log2 of the smallest pooled size holding `n` bytes. */
function classOf(n: number): number {
  return Math.max(Math.ceil(Math.log2(n)), Math.log2(MIN_CLASS));
}

/**
 * This thread's pool: one per shard worker, set up by worker-main.ts (off until then, and in
 * every other thread, so the read path used elsewhere allocates as before).
 */
let current = new PagePool(0);

export function pagePool(): PagePool {
  return current;
}

export function setPagePool(pool: PagePool): void {
  current = pool;
}
