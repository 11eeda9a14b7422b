/**
 * Background work run on a timer, one pass at a time (compaction, the reaper): a tick that is
 * still running when the next is due is skipped rather than overlapped, a failed tick is logged
 * and retried at the next one, and stop() waits for the tick in progress.
 *
 * A tick whose result says more work is waiting (`again`: it spent its whole budget) is followed
 * at once by the next, without waiting out the interval: a budget per tick bounds how long one
 * pass holds the thread, not how much work gets done in a second. Compaction bounded to one
 * budget a second fell behind streams that gain entries faster (many streams each written a
 * little: docs/cluster.md, "Compaction and the reaper"), and its backlog in etcd then grew without end.
 */
export class Ticker<T = unknown> {
  readonly #tick: () => Promise<T>;
  readonly #intervalMs: number;
  readonly #onError: (err: unknown) => void;
  readonly #again: (result: T) => boolean;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<unknown> | null = null;

  constructor(tick: () => Promise<T>, intervalMs: number, onError: (err: unknown) => void, again: (result: T) => boolean = () => false) {
    this.#tick = tick;
    this.#intervalMs = intervalMs;
    this.#onError = onError;
    this.#again = again;
  }

  start(): void {
    if (this.#timer !== null) return;
    this.#timer = setInterval(() => this.#run(), this.#intervalMs);
    this.#timer.unref();
  }

  #run(): void {
    if (this.#running !== null || this.#timer === null) return;
    let more = false;
    this.#running = this.#tick()
      .then((r) => {
        more = this.#again(r);
      })
      .catch(this.#onError)
      .finally(() => {
        this.#running = null;
        // After the turn's other work (the thread's messages): a pass after a pass, not a loop that starves them.
        if (more && this.#timer !== null) setImmediate(() => this.#run());
      });
  }

  async stop(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    await this.#running;
  }
}
