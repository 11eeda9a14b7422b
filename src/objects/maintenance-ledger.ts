/**
 * The object ledger as compaction and the reaper see it (docs/cluster.md, "Stream data in object
 * storage"): the key layout under `<metadata prefix>.objects/`, the entry value, and the few etcd
 * operations maintenance needs. Keys are read with range reads when needed, never watched.
 *
 *   f/<stream>                         fence "<nodeId>:<epoch>"
 *   i/<stream>/<epoch:010d>.<ctr:012d> {o, off, len, from, to}: bytes off..off+len of object o
 *   r/<objectKey>/<stream>             1: a reference (same txn as the i/ entry)
 *   o/<objectKey>                      {bytes, at}: the object exists and is known
 *   d/<objectKey>                      {at}: destroyed, the store object waits for deletion
 *
 * `LedgerKv` is the part of the project's etcd link (src/actors/meta/etcd/etcd-link.ts) used
 * here, declared structurally so that this module does not import the control plane.
 */

/** A precondition of a ledger transaction (a subset of the etcd link's compares). */
export type LedgerCompare =
  | { key: string; modRevision: number }
  | { key: string; absent: true }
  | { key: string; present: true }
  | { key: string; value: Buffer }
  | { prefix: string; empty: true };

export type LedgerOp = { put: string; value: Buffer } | { delete: string };

export interface LedgerPair {
  key: string;
  value: Buffer;
  modRevision: number;
}

export interface LedgerKv {
  rangePage(from: string, prefix: string, limit: number, deadlineMs: number, options?: { keysOnly?: boolean }): Promise<{ revision: number; kvs: LedgerPair[]; more: boolean }>;
  countPrefix(prefix: string, deadlineMs: number): Promise<number>;
  get(key: string, deadlineMs: number): Promise<{ revision: number; kv: LedgerPair | null }>;
  txnOnce(compare: readonly LedgerCompare[], success: readonly LedgerOp[], failure: readonly LedgerOp[]): Promise<{ succeeded: boolean; revision: number }>;
}

/** Deadline of one ledger read or write by maintenance (retried over the members within it). */
export const LEDGER_DEADLINE_MS = 5_000;

/** One `i/` entry: where a run of a stream's frames is, and the data seqs [from, to) it holds. */
export interface LedgerEntry {
  o: string;
  off: number;
  len: number;
  from: number;
  to: number;
}

/** The keys of one ledger, rooted at `<metadata prefix>.objects/`. */
export class LedgerKeys {
  readonly root: string;

  constructor(root: string) {
    this.root = root.endsWith('/') ? root : `${root}/`;
  }

  /** A stream name as one key segment: names may hold `/`, which would make one stream's prefix cover another's. */
  static streamPart(stream: string): string {
    return encodeURIComponent(stream);
  }

  fence(stream: string): string {
    return `${this.root}f/${LedgerKeys.streamPart(stream)}`;
  }
  meta(stream: string): string {
    return `${this.root}m/${LedgerKeys.streamPart(stream)}`;
  }
  entries(stream: string): string {
    return `${this.root}i/${LedgerKeys.streamPart(stream)}/`;
  }
  entry(stream: string, epoch: number, counter: number): string {
    return `${this.entries(stream)}${entrySuffix(epoch, counter)}`;
  }
  refs(objectKey: string): string {
    return `${this.root}r/${objectKey}/`;
  }
  ref(objectKey: string, stream: string): string {
    return `${this.refs(objectKey)}${LedgerKeys.streamPart(stream)}`;
  }
  objects(): string {
    return `${this.root}o/`;
  }
  object(objectKey: string): string {
    return `${this.root}o/${objectKey}`;
  }
  destroyedAll(): string {
    return `${this.root}d/`;
  }
  destroyed(objectKey: string): string {
    return `${this.root}d/${objectKey}`;
  }
}

export const entrySuffix = (epoch: number, counter: number): string => `${String(epoch).padStart(10, '0')}.${String(counter).padStart(12, '0')}`;

const ENTRY_SUFFIX = /^\d{10}\.\d{12}$/;

/** The entry a pair under `entries(stream)` holds, or null when the key is not an entry key of it. */
export function parseEntry(prefix: string, key: string, value: Buffer): LedgerEntry | null {
  if (!key.startsWith(prefix) || !ENTRY_SUFFIX.test(key.slice(prefix.length))) return null;
  const e = JSON.parse(value.toString('utf8')) as Partial<LedgerEntry>;
  if (typeof e.o !== 'string' || typeof e.off !== 'number' || typeof e.len !== 'number' || typeof e.from !== 'number' || typeof e.to !== 'number') {
    throw new Error(`ledger entry ${key}: not {o, off, len, from, to}`);
  }
  return { o: e.o, off: e.off, len: e.len, from: e.from, to: e.to };
}

export const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v), 'utf8');

/** Every pair under `prefix`, page by page (each page linearizable; not one snapshot). */
export async function* scanPrefix(kv: LedgerKv, prefix: string, pageSize: number, options: { keysOnly?: boolean; from?: string } = {}): AsyncGenerator<LedgerPair> {
  let from = options.from ?? prefix;
  for (;;) {
    const page = await kv.rangePage(from, prefix, pageSize, LEDGER_DEADLINE_MS, { keysOnly: options.keysOnly === true });
    for (const p of page.kvs) yield p;
    const last = page.kvs[page.kvs.length - 1];
    if (!page.more || last === undefined) return;
    from = `${last.key}\0`;
  }
}

/** Run `fn` over `items`, at most `limit` at a time; resolves when all are done (first error rejects). */
export async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(lanes);
}

/** The part of the object store (src/objects/index.ts, `ObjectStore`) maintenance uses. */
export interface MaintenanceStore {
  put(key: string, body: Buffer | readonly Buffer[]): Promise<void>;
  get(key: string, range?: { offset: number; length: number }): Promise<Buffer>;
  delete(key: string): Promise<void>;
  list(prefix: string): AsyncIterable<{ key: string; size: number }>;
}
