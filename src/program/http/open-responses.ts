/** Counts responses that have not ended, so an engine's `close()` can wait for them. Shared by both engines. */
export class OpenResponses {
  #count = 0;
  #waiters: Array<() => void> = [];

  /** Registers one request; the returned function settles it (idempotent). */
  add(): () => void {
    this.#count++;
    let settled = false;
    return () => {
      if (settled) return;
      settled = true;
      if (--this.#count === 0) for (const wake of this.#waiters.splice(0)) wake();
    };
  }

  idle(): Promise<void> {
    return this.#count === 0 ? Promise.resolve() : new Promise((resolve) => this.#waiters.push(resolve));
  }
}
