/**
 * The buffers catch-up pages are rendered into: slabs of shared memory kept for the next pages
 * instead of fresh buffers per read (docs/storage.md, "Read page buffers").
 *
 *   take(n) ─▶ page rendered into a free slab ─▶ reply
 *      ▲                                           ├─ under 64 KiB: copied into the reply message;
 *      │                                           │    the slab is free at once ──────────────── give()
 *      │                                           └─ 64 KiB or more: the slab goes as shared memory
 *      │                                                (wire.ts, SHARED: its slab id with it) and is
 *      │                                                `out`; the gateway thread writes the page to
 *      │                                                the socket and, once the HTTP engine has
 *      │                                                finished with every byte, hands back the id
 *      └──────────── giveReturned(id) ◀── RETURNED_PAGE with the gateway's next message here
 *
 * Why shared memory: a page used to be a fresh buffer of up to 16 MiB per read, transferred to
 * the gateway thread and dropped there. V8 counts a buffer's bytes as the isolate's external
 * memory where it is made and again where a transfer lands, and runs full collections to bring
 * that down: with a page per read, collections every few reads, on both threads (W4 in perf/).
 * Moving the same buffer back and forth is no better, as every landing counts again (measured:
 * the collections moved from the gateway thread to the worker). Shared memory is counted by
 * neither side, so a slab reused by page after page costs the collectors nothing.
 *
 * Correctness over reuse: a slab is rendered into only while it is free. One that is out comes
 * back only by its id, from the gateway thread, which sends it only after the engine said it will
 * never read the body again (ShardClient.recycle), and only to the very worker thread that
 * rendered it. One never handed back (a client gone on node:http, a worker restarted meanwhile,
 * an error between the read and the reply) is never rendered into again: it is forgotten (after a
 * minute, or once 256 slabs or four budgets' bytes are out after it), and the memory goes when
 * both threads' objects for it are collected. Only reads whose caller hands the
 * body back (`ReadParams.pooled`) get slabs, so the slabs that are not handed back are few.
 *
 * Sizes are powers of two from 64 KiB to 32 MiB (a 16 MiB `--read-max-bytes` page of JSON needs
 * more than 16 MiB); a smaller page or a larger one gets an exact buffer of its own, as before.
 * At most the budget is held in free slabs, and all of them go after a minute without a take
 * (`trim`), so a burst of large reads does not keep its memory for ever.
 */
// By brand, not instanceof: a buffer posted from another thread may come from another realm's constructor (a test's vm context).
import { isSharedArrayBuffer } from 'node:util/types';
import { type ReadPoolStats } from '../types';
import { type PageBuffers } from '../render/json-records';

/** Smallest pooled size: pages below it are copied into the reply message (wire.ts, TRANSFER_MIN). */
const MIN_CLASS = 64 * 1024; // 64 KiB
/** Largest pooled size. */
const MAX_CLASS = 32 * 1024 * 1024; // 32 MiB

/** Slabs out at once that are remembered for reuse; beyond it (or four budgets' bytes) the oldest is forgotten. */
const OUT_MAX = 256;
/** A slab out longer than this is forgotten at the next trim. */
const OUT_MS = 60_000; // 1 min

type SlabState = 'lent' | 'free' | 'out';

/** Exact buffers of their own, nothing kept: reads whose body is not handed back. */
export const FRESH_PAGES: PageBuffers = { take: (n) => Buffer.allocUnsafe(n), give: () => {} };

export class PagePool implements PageBuffers {
  readonly #budget: number;
  /** Free slabs by size (index: log2 of the size). */
  readonly #free: SharedArrayBuffer[][] = Array.from({ length: 32 }, () => []);
  /** Every slab this pool made and still knows: its id and state. */
  readonly #slabs = new WeakMap<SharedArrayBuffer, { id: number; state: SlabState }>();
  /**
   * Slabs out on the gateway thread by id, oldest first, and when they went. Bounded (`OUT_MAX`,
   * and a minute at most): one never handed back is forgotten, not kept alive here.
   */
  readonly #out = new Map<number, { sab: SharedArrayBuffer; at: number }>();
  #nextId = 1;
  #bytes = 0;
  /** Bytes of the slabs in `#out`. */
  #outBytes = 0;
  #takenSinceTrim = false;
  readonly #stats: ReadPoolStats = { reused: 0, allocated: 0, returned: 0, bytes: 0 };

  /** `budgetBytes`: free bytes kept at most; 0 turns pooling off (every page gets an exact buffer of its own). */
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
   * A buffer of at least `n` bytes for a page: a whole free slab (its length is the pooled size),
   * or an exact buffer of its own when the pool is off or `n` is outside the pooled sizes.
   */
  take(n: number): Buffer {
    if (this.#budget === 0 || n < MIN_CLASS || n > MAX_CLASS) return Buffer.allocUnsafe(n);
    this.#takenSinceTrim = true;
    const k = Math.max(Math.ceil(Math.log2(n)), Math.log2(MIN_CLASS));
    let sab = this.#free[k]!.pop();
    if (sab !== undefined) {
      this.#bytes -= sab.byteLength;
      this.#slabs.get(sab)!.state = 'lent';
      this.#stats.reused++;
    } else {
      sab = new SharedArrayBuffer(2 ** k);
      this.#slabs.set(sab, { id: this.#nextId++, state: 'lent' });
      this.#stats.allocated++;
    }
    return Buffer.from(sab);
  }

  /** Whether `b` is in a slab lent for a page on this thread (not free, not out). */
  lent(b: Buffer): boolean {
    return isSharedArrayBuffer(b.buffer) && this.#slabs.get(b.buffer)?.state === 'lent';
  }

  /**
   * The page in `b` is done with on this thread (copied into a reply, outgrown, or never sent):
   * its slab is free again. Ignored for anything but a lent slab (an exact buffer, a slab out).
   */
  give(b: Buffer): void {
    const sab = b.buffer;
    if (!isSharedArrayBuffer(sab)) return;
    const s = this.#slabs.get(sab);
    if (s?.state === 'lent') this.#keep(sab, s);
  }

  /** The reply carries `sab` as shared memory (wire.ts): its id, and it is out until handed back; null when it is not a lent slab of this pool. */
  share(sab: SharedArrayBuffer): number | null {
    const s = this.#slabs.get(sab);
    if (s?.state !== 'lent') return null;
    s.state = 'out';
    this.#out.set(s.id, { sab, at: Date.now() });
    this.#outBytes += sab.byteLength;
    while (this.#out.size > OUT_MAX || (this.#outBytes > 4 * this.#budget && this.#out.size > 1)) this.#forget(this.#out.keys().next().value!);
    return s.id;
  }

  /** The gateway thread is done with slab `id` (RETURNED_PAGE): free again. Unknown ids are ignored. */
  giveReturned(id: number): void {
    const o = this.#out.get(id);
    if (o === undefined) return;
    this.#out.delete(id);
    this.#outBytes -= o.sab.byteLength;
    this.#stats.returned++;
    const s = this.#slabs.get(o.sab);
    if (s?.state === 'out') this.#keep(o.sab, s);
  }

  /**
   * Let every free slab go when none was taken since the last call (a timer's, once a minute),
   * and forget slabs out for longer than that (a page not handed back, or a very slow reader's:
   * either way never rendered into again).
   */
  trim(): void {
    if (!this.#takenSinceTrim) {
      for (const list of this.#free) {
        for (const sab of list) this.#slabs.delete(sab);
        list.length = 0;
      }
      this.#bytes = 0;
    }
    this.#takenSinceTrim = false;
    const old = Date.now() - OUT_MS;
    for (const [id, o] of this.#out) {
      if (o.at > old) break;
      this.#forget(id);
    }
  }

  #forget(id: number): void {
    const o = this.#out.get(id);
    if (o === undefined) return;
    this.#out.delete(id);
    this.#outBytes -= o.sab.byteLength;
    this.#slabs.delete(o.sab);
  }

  #keep(sab: SharedArrayBuffer, s: { state: SlabState }): void {
    if (this.#bytes + sab.byteLength > this.#budget) {
      // Over the budget: forgotten (never rendered into again).
      this.#slabs.delete(sab);
      return;
    }
    s.state = 'free';
    this.#free[Math.log2(sab.byteLength)]!.push(sab);
    this.#bytes += sab.byteLength;
  }
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
