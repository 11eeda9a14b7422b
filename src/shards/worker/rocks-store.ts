/**
 * The only file that imports RocksDB. It adapts `@nxtedition/rocksdb` (an abstract-level store
 * with synchronous batch and iterator calls) to the shard's KvStore contract.
 */
import { RocksLevel } from '@nxtedition/rocksdb';
import { type KvOp, type KvStore, prefixEnd } from './kv-store';

/**
 * abstract-level registers every batch and iterator with the database until it is closed, and a
 * batch keeps a copy of its operations: the synchronous calls below skip that bookkeeping, so each
 * batch and iterator is closed through `close()` (native handle freed at once, deregistered on the
 * next tick). Without it every index write ever made stayed reachable.
 */
interface SyncBatch {
  /**
   * The binding's own put and del, below abstract-level's `put`/`del`: those look up encodings,
   * spread two option objects and keep a copy of every operation in the batch, per key
   * (`perf/micro/index-write.js`: 1.3 µs of a W2 chunk's 3.9 µs of puts). Keys and values here are
   * always Buffers, which is all the binding's methods take without converting.
   */
  _put(key: Buffer, value: Buffer): void;
  _del(key: Buffer): void;
  _writeSync(options: { sync?: boolean }): void;
  close(): Promise<void>;
}
interface SyncIterator {
  _nextvSync(size: number, options: object): { rows: Buffer[]; finished: boolean };
  close(): Promise<void>;
}
interface RocksDb {
  open(): Promise<void>;
  close(): Promise<void>;
  batch(): SyncBatch;
  iterator(options: object): SyncIterator;
}

/**
 * Memory RocksDB may take per shard. The index lives here, not in the heap, so these bound what
 * a large index costs: memtables of memtableMemoryBudget/4 each (RocksDB's default is 64 MiB,
 * up to two per shard; with `level` compaction up to six, flushed two at a time), and a block
 * cache of `cacheSize` for index pages read back.
 */
const MEMTABLE_BUDGET_BYTES = 8 * 1024 * 1024; // 8 MiB: 2 MiB memtables
const BLOCK_CACHE_BYTES = 4 * 1024 * 1024; // 4 MiB

/**
 * The memtable budget of the store at `spread` (0 to 1): from 3/4 to 5/4 of MEMTABLE_BUDGET_BYTES.
 * A node's shards take about the same index writes, so with one size their memtables fill in step
 * and all flush at once: the C heap swung by ~30 MiB every few minutes under an even load
 * (docs/operations.md, "Memory"), and the flushes and compactions came together. Sizes apart by
 * up to a factor 5/3 drift out of step within a few flushes; the budget on average is the same.
 */
export function memtableBudget(spread: number): number {
  const f = Math.min(1, Math.max(0, spread));
  return Math.round((MEMTABLE_BUDGET_BYTES * (3 + 2 * f)) / 4 / 4096) * 4096;
}

/** `spread`: where this store's memtable size lies in the node's range (`memtableBudget`); a lone store takes the middle. */
export async function openRocksStore(location: string, spread = 0.5): Promise<KvStore> {
  const Rocks = RocksLevel as unknown as new (location: string, options: object) => RocksDb;
  const db = new Rocks(location, {
    keyEncoding: 'buffer',
    valueEncoding: 'buffer',
    compaction: 'level',
    memtableMemoryBudget: memtableBudget(spread),
    cacheSize: BLOCK_CACHE_BYTES,
    // Index and filter blocks of the table files count against the block cache instead of growing with the data.
    cacheIndexAndFilterBlocks: true,
    // The binding compresses its write-ahead log with ZSTD by default: CPU on every checkpoint
    // for a log that only a crash reads, of records of a few KB (perf/micro/index-write.js).
    walCompression: false,
  });
  try {
    await db.open();
  } catch (err) {
    throw openError(location, err);
  }
  return {
    write(ops: readonly KvOp[], sync: boolean): void {
      if (ops.length === 0) return;
      const batch = db.batch();
      for (const op of ops) {
        if (op.type === 'put') batch._put(op.key, op.value);
        else batch._del(op.key);
      }
      try {
        batch._writeSync({ sync });
      } finally {
        void batch.close();
      }
    },
    scan(prefix: Buffer): Array<[Buffer, Buffer]> {
      const options: Record<string, unknown> = { gte: prefix, keyEncoding: 'buffer', valueEncoding: 'buffer' };
      const end = prefixEnd(prefix);
      if (end.length > 0) options['lt'] = end;
      const it = db.iterator(options);
      const out: Array<[Buffer, Buffer]> = [];
      try {
        for (;;) {
          const { rows, finished } = it._nextvSync(1000, {});
          for (let i = 0; i + 1 < rows.length; i += 2) out.push([rows[i]!, rows[i + 1]!]);
          if (finished || rows.length === 0) break;
        }
      } finally {
        void it.close();
      }
      return out;
    },
    range(gte: Buffer, lt: Buffer, limit: number, reverse = false): Array<[Buffer, Buffer]> {
      if (limit <= 0) return [];
      const options: Record<string, unknown> = { gte, limit, reverse, keyEncoding: 'buffer', valueEncoding: 'buffer' };
      if (lt.length > 0) options['lt'] = lt;
      const it = db.iterator(options);
      const out: Array<[Buffer, Buffer]> = [];
      try {
        while (out.length < limit) {
          const { rows, finished } = it._nextvSync(limit - out.length, {});
          for (let i = 0; i + 1 < rows.length; i += 2) out.push([rows[i]!, rows[i + 1]!]);
          if (finished || rows.length === 0) break;
        }
      } finally {
        void it.close();
      }
      return out;
    },
    close: () => db.close(),
  };
}

/**
 * abstract-level reports every failed open as "Database is not open" and keeps RocksDB's own
 * reason in `cause`: the refusal names both, the directory and what to do (docs/storage.md).
 */
function openError(location: string, err: unknown): Error {
  const chain: string[] = [];
  for (let e: unknown = err; e instanceof Error && chain.length < 4; e = e.cause) chain.push(e.message);
  const why = chain.join(': ');
  const full = /no space|ENOSPC/i.test(why);
  const remedy = full
    ? 'the disk is full: free space on it and start again'
    : /lock/i.test(why)
      ? 'another process holds it (is a node or `svc check` already running on this data directory?)'
      : 'if the disk is full, free space; if the index is damaged, run `svc repair --data-dir <data dir>`, which moves it aside so the shard rebuilds it from its segments';
  return new Error(`the index ${location} cannot be opened (${why}); ${remedy}`, { cause: err });
}
