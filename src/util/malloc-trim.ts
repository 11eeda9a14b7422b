/**
 * Gives the memory the C heap holds free back to the kernel, every `intervalMs`.
 *
 * glibc returns freed memory to the kernel only from the top of a heap; a free block in the middle
 * (a read cache entry evicted, a page buffer dropped, a RocksDB block let go) stays resident, to be
 * reused by the next malloc of the same arena. Under a steady load the holes are reused; after a
 * burst, or with blocks of many sizes freed in an order unlike the one they were made in (an LRU
 * cache's), they add up, and an idle node kept what its busiest minute took (docs/operations.md,
 * "Memory"). malloc_trim(0) releases every whole free page of every arena (madvise); it runs on a
 * thread of libuv's pool, so neither the gateway nor a shard worker waits for it, and each arena is
 * locked only while it is walked.
 */
import { mallocTrim } from './libc';

export interface MallocTrimmer {
  stop(): void;
}

/** Trim every `intervalMs` (0: never). A trim still running when the next is due is not doubled. */
export function startMallocTrim(intervalMs: number): MallocTrimmer {
  if (intervalMs <= 0) return { stop: () => {} };
  let running = false;
  let stopped = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    mallocTrim().then(
      (r) => {
        running = false;
        // No malloc_trim in this C library: nothing to do, ever.
        if (r === null) stopped = true;
        if (stopped) clearInterval(timer);
      },
      () => {
        running = false;
      },
    );
  }, intervalMs);
  timer.unref();
  return {
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
