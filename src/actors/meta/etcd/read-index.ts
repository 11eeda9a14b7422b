/**
 * sync()'s read index (etcd-meta-store.ts): a caller must wait for a head read sent after it
 * arrived — a read already in flight may predate a write acknowledged just before the call — so
 * callers gather into a cohort that shares the next read:
 *
 *   sync() ×N in one event-loop turn ──▶ cohort ──setImmediate──▶ one read (≤ MAX_IN_FLIGHT outstanding)
 *                                                                   └─▶ every caller of the cohort resolves
 *
 * Its latency (docs/metrics.md, `svc_metadata_sync_duration_seconds`) is kept per cohort, from its
 * first caller to its read applied (the longest wait of its callers): a few additions per etcd read,
 * nothing per caller.
 */
import { type BucketCounts } from '../../../shards';

/** Buckets of sync()'s latency (seconds): an etcd round trip is ~1 ms on a LAN, a failover seconds. */
export const SYNC_SECONDS_BOUNDS: readonly number[] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * Reads outstanding at once. A gRPC read costs the node ~100-200 µs of CPU here, so this bounds
 * the read index's CPU to two reads per etcd round trip however many requests arrive, while a
 * caller waits at most for one read in flight plus its own.
 */
const MAX_IN_FLIGHT = 2;

interface Cohort {
  /** performance.now() at the first caller. */
  since: number;
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class ReadIndex {
  readonly #read: () => Promise<void>;
  #cohort: Cohort | null = null;
  #scheduled = false;
  #inFlight = 0;
  /** Completed syncs' latency, one observation per cohort (failed reads are not observed). */
  readonly latency: BucketCounts = { counts: new Array<number>(SYNC_SECONDS_BOUNDS.length + 1).fill(0), sum: 0, count: 0 };

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
      this.#cohort = { since: performance.now(), promise, resolve, reject };
      this.#send();
    }
    return this.#cohort.promise;
  }

  #observe(seconds: number): void {
    let i = 0;
    while (i < SYNC_SECONDS_BOUNDS.length && seconds > SYNC_SECONDS_BOUNDS[i]!) i++;
    this.latency.counts[i]!++;
    this.latency.sum += seconds;
    this.latency.count++;
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
        .then(() => {
          this.#observe((performance.now() - cohort.since) / 1000);
          cohort.resolve();
        }, cohort.reject)
        .finally(() => {
          this.#inFlight--;
          this.#send();
        });
    });
  }
}
