/**
 * The small key-value contract the shard needs from its index database.
 * RocksDB implements it (rocks-store.ts); memory-store.ts is the in-memory twin for fast tests.
 * All calls are synchronous on purpose: they run on the shard's own worker thread, where
 * a RocksDB write without sync costs tens of µs, and keeping them synchronous keeps the
 * checkpoint atomic with the in-memory state it describes.
 */
import { keyAfterPrefix } from '../../util/prefix-end';
export type KvOp = { type: 'put'; key: Buffer; value: Buffer } | { type: 'del'; key: Buffer };

export interface KvStore {
  /** Apply the ops atomically; `sync` waits for the write-ahead log to reach the disk. */
  write(ops: readonly KvOp[], sync: boolean): void;
  /** Every entry whose key starts with `prefix`, in key order. */
  scan(prefix: Buffer): Array<[Buffer, Buffer]>;
  /**
   * Up to `limit` entries with `gte <= key < lt`, in key order, or from the end backwards when
   * `reverse`: the chunk index reads a page at a time instead of holding every entry.
   */
  range(gte: Buffer, lt: Buffer, limit: number, reverse?: boolean): Array<[Buffer, Buffer]>;
  close(): Promise<void>;
}

/** The first key after every key starting with `prefix` (for range ends; empty when there is none). */
export function prefixEnd(prefix: Buffer): Buffer {
  return keyAfterPrefix(prefix) ?? Buffer.alloc(0);
}
