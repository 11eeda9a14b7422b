/**
 * Group-commit histograms (docs/metrics.md): each shard keeps plain bucket counts as it commits,
 * and the stats call carries them to the main thread at scrape time, so the worker's hot path
 * does a few additions and no messaging.
 */

/** Frames (appends and catalog changes) per group: upper bounds. */
export const COMMIT_FRAME_BOUNDS: readonly number[] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
/** Seconds from a group's write to its fdatasync done (and of an objects-mode ledger transaction): upper bounds. */
export const COMMIT_SECONDS_BOUNDS: readonly number[] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** One histogram: counts per bucket (not cumulative; the last is above every bound), their sum and count. */
export interface BucketCounts {
  counts: number[];
  sum: number;
  count: number;
}

export interface CommitStats {
  frames: BucketCounts;
  seconds: BucketCounts;
  /**
   * Objects mode: seconds from a group's ledger transaction sent to answered (the etcd leg of
   * the commit, object-commit.ts; retries included). Empty without a replicator.
   */
  ledger: BucketCounts;
  /**
   * fdatasyncs that made groups durable: one per group of a shard alone in its turn, one per
   * commit barrier of several shards (its sync journal's), counted on the barrier's first group
   * (commit-barrier.ts). Absent from a worker without a barrier (objects mode).
   */
  syncs: number;
}

const empty = (bounds: readonly number[]): BucketCounts => ({ counts: new Array<number>(bounds.length + 1).fill(0), sum: 0, count: 0 });

export function newCommitStats(): CommitStats {
  return { frames: empty(COMMIT_FRAME_BOUNDS), seconds: empty(COMMIT_SECONDS_BOUNDS), ledger: empty(COMMIT_SECONDS_BOUNDS), syncs: 0 };
}

export function observeBucket(b: BucketCounts, bounds: readonly number[], v: number): void {
  let i = 0;
  while (i < bounds.length && v > bounds[i]!) i++;
  b.counts[i]!++;
  b.sum += v;
  b.count++;
}

/** Add `from` into `into` (the shards' figures summed for the node). */
export function addCommitStats(into: CommitStats, from: CommitStats): void {
  for (const k of ['frames', 'seconds', 'ledger'] as const) {
    const a = into[k];
    const b = from[k];
    for (let i = 0; i < a.counts.length; i++) a.counts[i]! += b.counts[i] ?? 0;
    a.sum += b.sum;
    a.count += b.count;
  }
  into.syncs += from.syncs ?? 0;
}
