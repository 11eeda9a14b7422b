/**
 * Copying bytes that may live in shared memory (a read page from a shard worker's page pool is a
 * SharedArrayBuffer slab, worker/page-pool.ts).
 *
 * `Buffer.copy` and `Uint8Array.set` copy to or from shared memory with V8's relaxed-atomic
 * memmove, which goes byte by byte unless source and target are 8-byte aligned to each other:
 * about 4.5 GB/s here, against 13–38 GB/s for memcpy (perf/micro/page-copy.js). `Buffer.fill` with
 * a buffer as the value is Node's native fill, which copies the value with memcpy, once when the
 * range is exactly the value's length. Between plain buffers `set` is as fast and cheaper to call.
 * Source and target must not overlap (memcpy); read pages never share memory with what they are
 * built from.
 */
import { isSharedArrayBuffer } from 'node:util/types';

/** Copy `src[start, end)` into `dst` at `at`; returns the bytes copied. Throws unless `dst` has room for them. */
export function copyBytes(src: Uint8Array, dst: Buffer, at: number, start = 0, end = src.length): number {
  const n = end - start;
  if (n <= 0) return 0;
  if (at < 0 || at + n > dst.length || start < 0 || end > src.length) {
    throw new RangeError(`copyBytes: ${n} bytes from ${start} of ${src.length} do not fit at ${at} of ${dst.length}`);
  }
  const part = start === 0 && end === src.length ? src : src.subarray(start, end);
  if (isSharedArrayBuffer(dst.buffer) || isSharedArrayBuffer(src.buffer)) dst.fill(part, at, at + n);
  else dst.set(part, at);
  return n;
}
