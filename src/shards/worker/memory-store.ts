/** In-memory twin of the RocksDB store, for tests that exercise shard logic without disk. */
import { type KvOp, type KvStore } from './kv-store';

export function openMemoryStore(): KvStore {
  const map = new Map<string, Buffer>();
  /** Keys in byte order, rebuilt lazily after a write. */
  let sorted: string[] | null = null;
  const keys = (): string[] => (sorted ??= [...map.keys()].sort(compareLatin1));
  /** Index of the first sorted key >= k. */
  const lowerBound = (ks: string[], k: string): number => {
    let lo = 0;
    let hi = ks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareLatin1(ks[mid]!, k) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return {
    write(ops: readonly KvOp[]): void {
      for (const op of ops) {
        if (op.type === 'put') map.set(op.key.toString('latin1'), Buffer.from(op.value));
        else map.delete(op.key.toString('latin1'));
      }
      if (ops.length > 0) sorted = null;
    },
    scan(prefix: Buffer): Array<[Buffer, Buffer]> {
      const p = prefix.toString('latin1');
      return keys()
        .filter((k) => k.startsWith(p))
        .map((k) => [Buffer.from(k, 'latin1'), map.get(k)!]);
    },
    range(gte: Buffer, lt: Buffer, limit: number, reverse = false): Array<[Buffer, Buffer]> {
      const ks = keys();
      const lo = lowerBound(ks, gte.toString('latin1'));
      const hi = lt.length === 0 ? ks.length : lowerBound(ks, lt.toString('latin1'));
      const picked = reverse ? ks.slice(Math.max(lo, hi - limit), hi).reverse() : ks.slice(lo, Math.min(hi, lo + limit));
      return picked.map((k) => [Buffer.from(k, 'latin1'), map.get(k)!]);
    },
    close: async () => {},
  };
}

/** Byte order of latin1-encoded keys (each char is one byte). */
function compareLatin1(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
