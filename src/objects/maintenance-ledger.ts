/**
 * What compaction and the reaper share (docs/cluster.md, "Compaction and the reaper"): the part
 * of the etcd link they use, the part of the object store they use, paged scans of ledger keys
 * (ledger-keys.ts), the frame check and a bounded-concurrency loop. Maintenance reads ledger keys
 * with range reads when it needs them, never with a watch.
 *
 * The etcd link (src/actors/meta/etcd/etcd-link.ts) and the logger are declared here by the
 * shapes used, so that this module imports no other part of the node (src/objects/README.md).
 */
import { crc32cRange } from '../util/crc32c';

/** A precondition of a ledger transaction (the etcd link's `EtcdCompare`, the kinds used here). */
export type LedgerCompare = { key: string; modRevision: number } | { key: string; absent: true } | { key: string; present: true } | { key: string; value: Buffer } | { prefix: string; empty: true; from?: string };

/** An operation of a ledger transaction (the etcd link's `EtcdOp`, the kinds used here). */
export type LedgerOp = { put: string; value: Buffer } | { delete: string } | { deleteFrom: string; to: string };

/** One read of `LedgerKv.readMany` (the etcd link's `EtcdRead`): a key, or up to `limit` pairs of `prefix` from `from` on. */
export type LedgerRead = { get: string } | { from: string; prefix: string; limit: number };

export interface LedgerPair {
  key: string;
  value: Buffer;
  modRevision: number;
  /** The revision the key was created at (etcd's create_revision: a key deleted and put again is created again). */
  createRevision?: number;
}

/** The etcd operations maintenance uses: the project's `EtcdLink` has them. */
export interface LedgerKv {
  rangePage(from: string, prefix: string, limit: number, deadlineMs: number, options?: { keysOnly?: boolean }): Promise<{ revision: number; kvs: LedgerPair[]; more: boolean }>;
  countPrefix(prefix: string, deadlineMs: number): Promise<number>;
  get(key: string, deadlineMs: number): Promise<{ revision: number; kv: LedgerPair | null }>;
  /** Several reads in one round trip, each answer in order (a `get`'s: its pair or none). */
  readMany(reads: readonly LedgerRead[], deadlineMs: number): Promise<{ revision: number; results: Array<{ kvs: LedgerPair[]; more: boolean }> }>;
  txnOnce(compare: readonly LedgerCompare[], success: readonly LedgerOp[], failure: readonly LedgerOp[]): Promise<{ succeeded: boolean; revision: number }>;
}

type LogLine = (fields: object, msg?: string) => void;
/** The node's logger (src/program/logger.ts), the calls used. */
export interface MaintenanceLog {
  error: LogLine;
  warn: LogLine;
  info: LogLine;
  debug: LogLine;
}

/** The part of the object store (`ObjectStore`, src/objects/index.ts) maintenance uses. */
export interface MaintenanceStore {
  /** The store honours `ifAbsent` (ObjectStore.createOnly); absent: it does not. */
  readonly createOnly?: boolean;
  /** `ifAbsent`: create-only, fails with code `PreconditionFailed` when the key exists (ObjectStore.put). */
  put(key: string, body: Buffer | readonly Buffer[], options?: { ifAbsent?: boolean }): Promise<void>;
  get(key: string, range?: { offset: number; length: number }): Promise<Buffer>;
  delete(key: string): Promise<void>;
  list(prefix: string, startAfter?: string): AsyncIterable<{ key: string; size: number }>;
}

/** Deadline of one ledger read by maintenance (retried over the members within it). */
export const LEDGER_DEADLINE_MS = 5_000; // 5 s

export const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v), 'utf8');

/**
 * Every pair under `prefix`, a page at a time (each page linearizable; not one snapshot). The
 * loops that run every tick walk pages: a pair at a time from an async generator costs a promise
 * and a result object each.
 */
export async function* scanPages(
  kv: LedgerKv,
  prefix: string,
  pageSize: number,
  options: { keysOnly?: boolean; from?: string } = {},
): AsyncGenerator<readonly LedgerPair[]> {
  let from = options.from ?? prefix;
  for (;;) {
    const page = await kv.rangePage(from, prefix, pageSize, LEDGER_DEADLINE_MS, { keysOnly: options.keysOnly === true });
    if (page.kvs.length > 0) yield page.kvs;
    const last = page.kvs[page.kvs.length - 1];
    if (!page.more || last === undefined) return;
    from = `${last.key}\0`;
  }
}

/** Every pair under `prefix`, one at a time (scanPages), for the scans that run seldom. */
export async function* scanPrefix(
  kv: LedgerKv,
  prefix: string,
  pageSize: number,
  options: { keysOnly?: boolean; from?: string } = {},
): AsyncGenerator<LedgerPair> {
  for await (const page of scanPages(kv, prefix, pageSize, options)) yield* page;
}

/** Run `fn` over `items`, at most `limit` at a time; resolves when all are done (the first error rejects). */
export async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(lanes);
}

/**
 * Why `buf` is not a run of whole frames with valid CRCs, or null. Frames as the shard writes
 * them (src/shards/worker/frame.ts): u32 length of the bytes after the 8-byte prefix, u32
 * CRC-32C of those bytes, then type (1 byte), stream id (4 bytes) and payload.
 */
export function framesProblem(buf: Buffer): string | null {
  for (let pos = 0; pos < buf.length; ) {
    if (pos + 13 > buf.length) return `a frame cut short at byte ${pos} of the range`;
    const len = buf.readUInt32BE(pos);
    if (len < 5 || pos + 8 + len > buf.length) return `impossible frame length ${len} at byte ${pos} of the range`;
    if (crc32cRange(buf, pos + 8, pos + 8 + len) !== buf.readUInt32BE(pos + 4)) return `CRC mismatch at byte ${pos} of the range`;
    pos += 8 + len;
  }
  return null;
}
