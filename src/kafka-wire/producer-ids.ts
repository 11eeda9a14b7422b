/**
 * Producer ids for InitProducerId: unique across restarts without a stored counter. An id is
 * the allocation time in milliseconds times 4096 plus a counter within that millisecond (a
 * thousand-odd ids a millisecond at most; a busier millisecond borrows the next one), so an id
 * handed out after a restart is larger than every id handed out before it as long as the clock
 * does not go back. Ids stay below 2^62, the start of the HTTP producers' range
 * (shards/worker/producers.ts); with today's clock they are near 2^53, exact as bigint.
 */
const PER_MS = 4096n;

export class ProducerIds {
  #lastMs = 0;
  #counter = 0n;
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  next(): bigint {
    const ms = this.#now();
    if (ms > this.#lastMs) {
      this.#lastMs = ms;
      this.#counter = 0n;
    } else if (this.#counter + 1n >= PER_MS) {
      this.#lastMs++;
      this.#counter = 0n;
    } else {
      this.#counter++;
    }
    return BigInt(this.#lastMs) * PER_MS + this.#counter;
  }
}
