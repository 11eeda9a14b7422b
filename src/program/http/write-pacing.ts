/**
 * Write pacing and the write-idle timeout, shared by both engines (README.md, "Write pacing and
 * the idle timeout").
 *
 * A response whose bytes the client has not taken yet (the socket pushed back) is *paced*: every
 * PACE_MS the engine offers the socket what is waiting and notes whether the client took any of
 * it. Such a response is never cut while its client reads, however slowly; it is cut only when the
 * client has taken nothing for the listener's write-idle timeout (`ListenOptions.writeIdleMs`,
 * default WRITE_IDLE_MS), and that cut is logged with its reason. uWS's own timeout (a fixed 10 s,
 * re-armed only by failed writes and disarmed only by writable events) would otherwise close a
 * connection whose client was still reading when the kernel signalled no writable event for 8–12 s
 * (it does so only once a third of the socket's send buffer is free).
 */

/** A client that takes no byte of a waiting response for this long is cut (60 s). */
export const WRITE_IDLE_MS = 60_000;
/** How often waiting responses are paced. Under uWS's timer tick (4 s), so its 10 s timeout never fires while paced. */
export const PACE_MS = 2_000;

/** Where an engine reports what it cut (the product's pino logger fits). */
export interface EngineLog {
  warn(obj: object, msg: string): void;
}

/** A response cut by the engine, as logged. */
export interface WriteCut {
  /** Always `write_idle` for now: the client took no byte for `idleMs`. */
  reason: 'write_idle';
  /** The listener (`ListenOptions.name`), when it has one. */
  listener?: string;
  idleMs: number;
  /** Body bytes the client had taken. */
  sentBytes: number;
  /** Bytes still waiting for it (the engine's and the socket's), where known; -1 when not. */
  pendingBytes: number;
}

export const CUT_MESSAGE = 'response cut: the client took no byte of it for the write-idle timeout';

/** Logs a cut on `log`. */
export function logCut(log: EngineLog, cut: WriteCut): void {
  log.warn(cut, CUT_MESSAGE);
}

/**
 * What a paced response does on each tick: returns false once it need not be paced any more.
 * `stalled`: this thread did not run for a while (the tick is late), so the client's progress in
 * that time has not been seen yet (its writable events come after the timers): no cut this tick.
 */
export interface Paced {
  pace(now: number, stalled: boolean): boolean;
}

/** One interval per thread for every paced response, running only while there is one. */
export class Pacer {
  readonly #paced = new Set<Paced>();
  #timer: NodeJS.Timeout | undefined;
  #lastTick = 0;

  add(r: Paced): void {
    this.#paced.add(r);
    if (this.#timer === undefined) {
      this.#lastTick = performance.now();
      this.#timer = setInterval(() => this.#tick(), PACE_MS);
      // A paced response's socket keeps the process alive by itself.
      this.#timer.unref();
    }
  }

  delete(r: Paced): void {
    this.#paced.delete(r);
  }

  get size(): number {
    return this.#paced.size;
  }

  #tick(): void {
    const now = performance.now();
    const stalled = now - this.#lastTick > 2 * PACE_MS;
    this.#lastTick = now;
    for (const r of this.#paced) {
      let keep = false;
      try {
        keep = r.pace(now, stalled);
      } catch {
        // A response that throws here (its socket gone underneath) is simply dropped.
      }
      if (!keep) this.#paced.delete(r);
    }
    if (this.#paced.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }
}

/** The pacer of this thread (each I/O thread has its own module instance). */
export const pacer = new Pacer();
