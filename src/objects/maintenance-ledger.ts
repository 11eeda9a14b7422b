/**
 * What compaction and the reaper share (docs/cluster.md, "Compaction and the reaper"): the part
 * of the etcd link they use, the part of the object store they use, paged scans of ledger keys
 * (ledger-keys.ts) and a bounded-concurrency loop. Maintenance reads ledger keys with range
 * reads when it needs them, never with a watch.
 */
import { type EtcdLink } from '../actors';

/** The etcd operations maintenance uses (the project's etcd link; tests pass the same). */
export type LedgerKv = Pick<EtcdLink, 'rangePage' | 'countPrefix' | 'get' | 'txnOnce'>;

/** The part of the object store (`ObjectStore`, src/objects/index.ts) maintenance uses. */
export interface MaintenanceStore {
  put(key: string, body: Buffer | readonly Buffer[]): Promise<void>;
  get(key: string, range?: { offset: number; length: number }): Promise<Buffer>;
  delete(key: string): Promise<void>;
  list(prefix: string): AsyncIterable<{ key: string; size: number }>;
}

/** Deadline of one ledger read by maintenance (retried over the members within it). */
export const LEDGER_DEADLINE_MS = 5_000; // 5 s

export const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v), 'utf8');

/** Every pair under `prefix`, page by page (each page linearizable; not one snapshot). */
export async function* scanPrefix(
  kv: LedgerKv,
  prefix: string,
  pageSize: number,
  options: { keysOnly?: boolean } = {},
): AsyncGenerator<{ key: string; value: Buffer; modRevision: number }> {
  let from = prefix;
  for (;;) {
    const page = await kv.rangePage(from, prefix, pageSize, LEDGER_DEADLINE_MS, { keysOnly: options.keysOnly === true });
    for (const p of page.kvs) yield p;
    const last = page.kvs[page.kvs.length - 1];
    if (!page.more || last === undefined) return;
    from = `${last.key}\0`;
  }
}

/** Run `fn` over `items`, at most `limit` at a time; resolves when all are done (the first error rejects). */
export async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(lanes);
}
