/**
 * A bound on the bytes per second of background I/O (compaction's object store reads and writes,
 * `--objects-compact-bytes-per-second`): each request asks for its bytes before it is sent, and
 * waits on a timer (never a busy loop) until granting them keeps the bytes granted in every window
 * of one second within the bound.
 *
 *   bytes granted in (t - 1 s, t]  ≤  bytesPerSecond     for every t
 *
 * A token bucket would not keep that: a full bucket plus what refills in a second lets two
 * seconds' worth through in one. So the grants of the last second are kept (summed per 10 ms slot,
 * so at most ~100 records whatever the request sizes) and a request waits until enough of them have
 * aged out of the window. A slot leaves the window at its end plus one second, never before each
 * of its grants is a second old, so the bound holds and the rate reached is within 1% of it.
 *
 * A request larger than the bound can never fit a second: it waits for an empty window and then
 * occupies it for `bytes / bytesPerSecond` seconds, so the average still holds. Compaction keeps
 * its runs to half the bound so that this does not happen (compaction.ts).
 *
 * Requests are granted in the order they asked (a large one is not overtaken by small ones). The
 * clock is injected, so tests drive it without real sleeps.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** Where the limiter reads the time and waits (ms); tests pass a fake one. */
export interface ByteRateClock {
  now(): number;
  /** Resolves after `ms`, or rejects once `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

/** The process clock; waits hold no reference, so a background wait never keeps a thread alive. */
export const realClock: ByteRateClock = {
  now: () => Date.now(),
  sleep: (ms, signal) => sleep(ms, undefined, { signal, ref: false }),
};

/** What a take came to: the bytes may go, or the wait was given up (the caller is stopping). */
export type Take = 'granted' | 'stopped';

/** The window the bound holds over (ms). */
const WINDOW_MS = 1_000;
/** Grants are summed per slot of this length (ms): bounds the records kept to WINDOW_MS / SLOT_MS + 1. */
const SLOT_MS = 10;

export class ByteRate {
  readonly #bytesPerSecond: number;
  readonly #clock: ByteRateClock;
  /** The grants still in the window, oldest first: bytes, and when (ms) they leave it. */
  readonly #granted: Array<{ until: number; bytes: number }> = [];
  /** The bytes in #granted. */
  #inWindow = 0;
  /** The take before this one: takes are granted one after another, in order. */
  #queue: Promise<unknown> = Promise.resolve();
  #grantedBytes = 0;
  #waitedMs = 0;

  /** `bytesPerSecond` > 0: the bound (bytes in any one second). */
  constructor(bytesPerSecond: number, clock: ByteRateClock = realClock) {
    if (!(bytesPerSecond > 0) || !Number.isFinite(bytesPerSecond)) throw new RangeError(`ByteRate: bytesPerSecond must be a positive number (got ${bytesPerSecond})`);
    this.#bytesPerSecond = bytesPerSecond;
    this.#clock = clock;
  }

  /** The bytes granted so far. */
  get grantedBytes(): number {
    return this.#grantedBytes;
  }

  /** Time takes spent waiting for the window so far (ms), whether or not they were then granted. */
  get waitedMs(): number {
    return this.#waitedMs;
  }

  /**
   * Resolves 'granted' once `bytes` may be sent now (and counts them in the window), or 'stopped'
   * once `signal` aborts, whichever comes first (rejects only if the clock's sleep fails otherwise).
   * Zero bytes are granted at once.
   */
  take(bytes: number, signal: AbortSignal): Promise<Take> {
    const turn = this.#queue.then(() => this.#take(bytes, signal));
    // A clock that fails rejects this take alone; the next one still gets its turn.
    this.#queue = turn.catch(() => undefined);
    return turn;
  }

  async #take(bytes: number, signal: AbortSignal): Promise<Take> {
    if (signal.aborted) return 'stopped';
    if (bytes <= 0) return 'granted';
    const started = this.#clock.now();
    try {
      for (;;) {
        const now = this.#clock.now();
        this.#expire(now);
        const waitUntil = this.#fitsAt(bytes);
        if (waitUntil <= now) {
          this.#grant(bytes, now);
          return 'granted';
        }
        try {
          await this.#clock.sleep(waitUntil - now, signal);
        } catch (err) {
          if (signal.aborted) return 'stopped';
          throw err;
        }
      }
    } finally {
      this.#waitedMs += this.#clock.now() - started;
    }
  }

  /** Drop the grants that have left the window at `now`. */
  #expire(now: number): void {
    let drop = 0;
    while (drop < this.#granted.length && this.#granted[drop]!.until <= now) this.#inWindow -= this.#granted[drop++]!.bytes;
    if (drop > 0) this.#granted.splice(0, drop);
  }

  /** The time from which `bytes` fit the window (given what is in it now); ≤ now when they fit at once. */
  #fitsAt(bytes: number): number {
    // Larger than the bound: only an empty window takes it.
    const room = bytes > this.#bytesPerSecond ? 0 : this.#bytesPerSecond - bytes;
    let left = this.#inWindow;
    if (left <= room) return -Infinity;
    for (const g of this.#granted) {
      left -= g.bytes;
      if (left <= room) return g.until;
    }
    return -Infinity; // not reached: an empty window has room
  }

  #grant(bytes: number, now: number): void {
    // A request larger than the bound holds the window for as long as its bytes take at the bound.
    const hold = Math.max(WINDOW_MS, (bytes / this.#bytesPerSecond) * 1_000);
    // The end of the grant's slot plus the hold: never before the grant itself is `hold` old.
    const until = (Math.floor(now / SLOT_MS) + 1) * SLOT_MS + hold;
    const last = this.#granted[this.#granted.length - 1];
    if (last !== undefined && last.until === until) last.bytes += bytes;
    else this.#granted.push({ until, bytes });
    this.#inWindow += bytes;
    this.#grantedBytes += bytes;
  }
}
