/**
 * The object cache (docs/objects.md, "The object cache"): checked ranges of objects, kept for
 * the reads that come back to them, bounded in bytes, least recently used evicted.
 *
 *   get(key, load) ──▶ held?        ──▶ the value (moved to the young end)
 *                  ──▶ in flight?   ──▶ the same promise (one fetch per range, however many readers)
 *                  ──▶ failed lately? ─▶ the same error until its back-off ends (a damaged range
 *                                       read in a loop is not fetched in a loop)
 *                  ──▶ else load()  ──▶ kept when it fits (a value above the whole budget is
 *                                       returned, not kept), the oldest evicted to make room
 *   prefetch(items) ──▶ get() of each not held, up to `maxInFlight` loads of this cache at once:
 *                       the read-ahead of a catch-up reader (its errors wait for a real read)
 *
 * `load` is the caller's: a ranged GET and the check of what came back (for a stream's frames,
 * src/shards/worker/remote-chunks.ts), so what is held was checked once. The key is the caller's
 * too (`rangeKey`: object, offset, length). Values are immutable: an object key is never rewritten
 * with other bytes (docs/objects.md, "Durability").
 *
 * The shard worker's cache of the ranges its adopted streams read (worker-main.ts, `--objects-cache-bytes`).
 */

/** The cache key of bytes off..off+len of object `o`. */
export function rangeKey(o: string, off: number, len: number): string {
  return `${o}\0${off}\0${len}`;
}

/** Failed ranges remembered at most. */
const MAX_FAILURES = 4096;

export interface RangeCacheOptions {
  /** Bytes held at most (0: nothing is kept; loads in flight are still shared). */
  budgetBytes: number;
  /** Size of a value in bytes. */
  sizeOf: (value: unknown) => number;
  /** A failed load is answered from memory for this long, then twice as long after each new failure (ms; default 30 s). */
  failureBackoffMs?: number;
  /** Most a back-off grows to (ms; default 5 min). */
  maxFailureBackoffMs?: number;
  /** Whether a failed load is remembered (default: every failure); one that is not is loaded again by the next get. */
  remember?: (err: unknown) => boolean;
  /** Loads started by prefetch at once, at most (default 4). */
  maxPrefetchInFlight?: number;
  now?: () => number;
}

export interface RangeCacheStats {
  hits: number;
  misses: number;
  /** Gets that joined a load already in flight. */
  joined: number;
  /** Gets answered with a remembered failure. */
  failedHits: number;
  evictions: number;
  prefetches: number;
  bytes: number;
  entries: number;
  inFlight: number;
}

interface Failure {
  err: unknown;
  until: number;
  backoffMs: number;
}

export class RangeCache<T> {
  readonly #budget: number;
  readonly #sizeOf: (value: T) => number;
  readonly #backoff0: number;
  readonly #backoffMax: number;
  readonly #maxPrefetch: number;
  readonly #remember: (err: unknown) => boolean;
  readonly #now: () => number;
  /** key → value; Map order is LRU order (oldest first). */
  readonly #held = new Map<string, { value: T; size: number }>();
  readonly #loading = new Map<string, Promise<T>>();
  readonly #failed = new Map<string, Failure>();
  #bytes = 0;
  #prefetching = 0;
  readonly #stats = { hits: 0, misses: 0, joined: 0, failedHits: 0, evictions: 0, prefetches: 0 };

  constructor(o: RangeCacheOptions) {
    this.#budget = Math.max(0, o.budgetBytes);
    this.#sizeOf = o.sizeOf as (value: T) => number;
    this.#backoff0 = o.failureBackoffMs ?? 30_000;
    this.#backoffMax = o.maxFailureBackoffMs ?? 300_000;
    this.#maxPrefetch = Math.max(1, o.maxPrefetchInFlight ?? 4);
    this.#remember = o.remember ?? (() => true);
    this.#now = o.now ?? Date.now;
  }

  get stats(): RangeCacheStats {
    return { ...this.#stats, bytes: this.#bytes, entries: this.#held.size, inFlight: this.#loading.size };
  }

  /** The value held for `key` (touched), without loading: what a synchronous read can use now. */
  peek(key: string): T | undefined {
    const h = this.#held.get(key);
    if (h === undefined) return undefined;
    this.#held.delete(key);
    this.#held.set(key, h);
    this.#stats.hits++;
    return h.value;
  }

  /** Whether `key` is held or being loaded. */
  has(key: string): boolean {
    return this.#held.has(key) || this.#loading.has(key);
  }

  /** The value of `key`: held, joined, a remembered failure, or loaded now (see the file comment). */
  get(key: string, load: () => Promise<T>): Promise<T> {
    const v = this.peek(key);
    if (v !== undefined) return Promise.resolve(v);
    const inFlight = this.#loading.get(key);
    if (inFlight !== undefined) {
      this.#stats.joined++;
      return inFlight;
    }
    const f = this.#failed.get(key);
    if (f !== undefined && this.#now() < f.until) {
      this.#stats.failedHits++;
      return Promise.reject(f.err);
    }
    this.#stats.misses++;
    const p = this.#load(key, load, f);
    this.#loading.set(key, p);
    return p;
  }

  /**
   * A miss's load, kept or remembered as failed (a method, not callbacks made per miss: V8 keeps
   * a closure's optimized code only while one of its closures lives, and compaction's misses,
   * hundreds a second, had them compiled again after every full collection).
   */
  async #load(key: string, load: () => Promise<T>, f: { backoffMs: number } | undefined): Promise<T> {
    // load() is called now, as the get is made; what it throws at once is handled as a rejection,
    // after the get has registered its promise (the catch below deletes that registration).
    let pending: Promise<T>;
    try {
      pending = load();
    } catch (err) {
      pending = Promise.reject(err);
    }
    let value: T;
    try {
      value = await pending;
    } catch (err) {
      this.#loading.delete(key);
      if (!this.#remember(err)) throw err;
      const backoffMs = f === undefined ? this.#backoff0 : Math.min(this.#backoffMax, f.backoffMs * 2);
      this.#failed.delete(key);
      this.#failed.set(key, { err, until: this.#now() + backoffMs, backoffMs });
      // Bounded: the oldest remembered failures go first (they are fetched again when read).
      for (const k of this.#failed.keys()) {
        if (this.#failed.size <= MAX_FAILURES) break;
        this.#failed.delete(k);
      }
      throw err;
    }
    this.#loading.delete(key);
    this.#failed.delete(key);
    this.#keep(key, value);
    return value;
  }

  /**
   * Start loading the items not held nor in flight, in order, while fewer than
   * `maxPrefetchInFlight` prefetches run; returns how many were started. Their failures are
   * remembered (and answered to the read that reaches them), never thrown here.
   */
  prefetch(items: ReadonlyArray<{ key: string; load: () => Promise<T> }>): number {
    let started = 0;
    for (const it of items) {
      if (this.#prefetching >= this.#maxPrefetch) break;
      if (this.has(it.key)) continue;
      const f = this.#failed.get(it.key);
      if (f !== undefined && this.#now() < f.until) continue;
      this.#prefetching++;
      this.#stats.prefetches++;
      started++;
      this.get(it.key, it.load)
        .catch(() => undefined)
        .finally(() => this.#prefetching--);
    }
    return started;
  }

  /** Forget `key` (held value and remembered failure): the ledger named it wrongly, say. */
  delete(key: string): void {
    const h = this.#held.get(key);
    if (h !== undefined) {
      this.#held.delete(key);
      this.#bytes -= h.size;
    }
    this.#failed.delete(key);
  }

  #keep(key: string, value: T): void {
    const size = this.#sizeOf(value);
    if (size > this.#budget) return;
    const old = this.#held.get(key);
    if (old !== undefined) {
      this.#held.delete(key);
      this.#bytes -= old.size;
    }
    for (const [k, h] of this.#held) {
      if (this.#bytes + size <= this.#budget) break;
      this.#held.delete(k);
      this.#bytes -= h.size;
      this.#stats.evictions++;
    }
    this.#held.set(key, { value, size });
    this.#bytes += size;
  }
}
