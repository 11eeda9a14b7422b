/** In-memory twin of the RocksDB store, for tests that exercise shard logic without disk. */
import { type KvOp, type KvStore } from './kv-store';

export function openMemoryStore(): KvStore {
  const map = new Map<string, Buffer>();
  return {
    write(ops: readonly KvOp[]): void {
      for (const op of ops) {
        if (op.type === 'put') map.set(op.key.toString('latin1'), Buffer.from(op.value));
        else map.delete(op.key.toString('latin1'));
      }
    },
    scan(prefix: Buffer): Array<[Buffer, Buffer]> {
      const p = prefix.toString('latin1');
      return [...map.keys()]
        .filter((k) => k.startsWith(p))
        .sort((a, b) => Buffer.compare(Buffer.from(a, 'latin1'), Buffer.from(b, 'latin1')))
        .map((k) => [Buffer.from(k, 'latin1'), map.get(k)!]);
    },
    close: async () => {},
  };
}
