/**
 * The first key after every key that starts with `prefix`, in byte order (the end of a prefix's
 * range), or null when there is none: a prefix of only 0xff bytes runs to the end of the key space.
 * Callers say what "no end" is in their store (RocksDB ranges: an empty key; etcd: `\0`).
 */
export function keyAfterPrefix(prefix: Uint8Array): Buffer | null {
  for (let i = prefix.length - 1; i >= 0; i--) {
    if (prefix[i]! < 0xff) {
      const end = Buffer.from(prefix.subarray(0, i + 1));
      end[i]!++;
      return end;
    }
  }
  return null;
}
