/**
 * sync()'s read index (etcd-meta-store.ts): a caller must wait for a head read sent after it
 * arrived — a read already in flight may predate a write acknowledged just before the call — so
 * callers gather into a cohort that shares the next read:
 *
 *   sync() ×N in one event-loop turn ──▶ cohort ──setImmediate──▶ one read (≤ MAX_IN_FLIGHT outstanding)
 *                                                                   └─▶ every caller of the cohort resolves
 */

/**
 * Reads outstanding at once. A gRPC read costs the node ~100-200 µs of CPU here, so this bounds
 * the read index's CPU to two reads per etcd round trip however many requests arrive, while a
 * caller waits at most for one read in flight plus its own.
 */
const MAX_IN_FLIGHT = 2;

interface Cohort {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class ReadIndex {
  readonly #read: () => Promise<void>;
  #cohort: Cohort | null = null;
  #scheduled = false;
  #inFlight = 0;

  /** `read`: one linearizable read of the head revision, then a wait until the view applied it. */
  constructor(read: () => Promise<void>) {
    this.#read = read;
  }

  /** Resolves after a read sent after this call has been applied to the view. */
  sync(): Promise<void> {
    if (this.#cohort === null) {
      let resolve!: () => void;
      let reject!: (err: Error) => void;
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      this.#cohort = { promise, resolve, reject };
      this.#send();
    }
    return this.#cohort.promise;
  }

  /** Send the waiting cohort's read at the end of this turn, if a slot is free. */
  #send(): void {
    if (this.#cohort === null || this.#scheduled || this.#inFlight >= MAX_IN_FLIGHT) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      const cohort = this.#cohort;
      if (cohort === null || this.#inFlight >= MAX_IN_FLIGHT) return;
      this.#cohort = null;
      this.#inFlight++;
      this.#read()
        .then(cohort.resolve, cohort.reject)
        .finally(() => {
          this.#inFlight--;
          this.#send();
        });
    });
  }
}
