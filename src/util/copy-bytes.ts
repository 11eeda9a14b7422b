/**
 * Copying into read pages, which may live in shared memory (a page from a shard worker's page pool
 * is a SharedArrayBuffer slab, worker/page-pool.ts).
 *
 * `Buffer.copy` and `Uint8Array.set` copy into shared memory with V8's relaxed-atomic memmove, which
 * goes byte by byte unless source and target are 8-byte aligned to each other: about 5 GB/s here,
 * against about 25 GB/s for memcpy (perf/micro/page-copy.js). `Buffer.fill` with a buffer as the
 * value is Node's native fill, which copies the value with memcpy, once when the range is exactly
 * the value's length. Source and target must not overlap (memcpy); read pages never share memory
 * with what they are built from.
 */

/** Copy `src[start, end)` into `dst` at `at`; returns the bytes copied. `dst` must have room for them. */
export function copyBytes(src: Uint8Array, dst: Buffer, at: number, start = 0, end = src.length): number {
  const n = end - start;
  if (n <= 0) return 0;
  // fill() reads a whole Uint8Array value: a view of exactly the bytes to copy.
  const part = start === 0 && end === src.length ? src : src.subarray(start, end);
  dst.fill(part, at, at + n);
  return n;
}
