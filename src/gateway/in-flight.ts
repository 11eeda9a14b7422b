/** Counts requests being handled so a graceful shutdown can wait for them. */
export class InFlight {
  #count = 0;
  #closing = false;
  #waiters: Array<() => void> = [];

  get closing(): boolean {
    return this.#closing;
  }

  begin(): void {
    this.#count++;
  }

  end(): void {
    this.#count--;
    if (this.#count === 0 && this.#closing) for (const w of this.#waiters.splice(0)) w();
  }

  /** Refuse new requests from now on; resolves when the ones in flight are done. */
  drain(): Promise<void> {
    this.#closing = true;
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
}
