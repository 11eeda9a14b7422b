/**
 * Background work run on a timer, one pass at a time (compaction, the reaper): a tick that is
 * still running when the next is due is skipped rather than overlapped, a failed tick is logged
 * and retried at the next one, and stop() waits for the tick in progress.
 */
export class Ticker {
  readonly #tick: () => Promise<unknown>;
  readonly #intervalMs: number;
  readonly #onError: (err: unknown) => void;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<unknown> | null = null;

  constructor(tick: () => Promise<unknown>, intervalMs: number, onError: (err: unknown) => void) {
    this.#tick = tick;
    this.#intervalMs = intervalMs;
    this.#onError = onError;
  }

  start(): void {
    if (this.#timer !== null) return;
    this.#timer = setInterval(() => {
      if (this.#running !== null) return;
      this.#running = this.#tick()
        .catch(this.#onError)
        .finally(() => (this.#running = null));
    }, this.#intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    await this.#running;
  }
}
