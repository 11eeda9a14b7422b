/**
 * The ledger's format is the cluster's (docs/objects.md, "The ledger's formats"): a node of one
 * format does not read what a node of the other records, so every node must run the same. The
 * first node in objects mode writes it (`<prefix>.objects/format`, create-only); every later node
 * reads it. A ledger from before the key says which it is by its keys: part records or index
 * cursors (`q/`, `x/`) are the records format's, streams (`f/`, `m/`) without them the entries
 * format's (the only one there was before the records format). `--objects-ledger cluster` (the
 * default) takes the cluster's; `entries` or `records` must match it, or the node does not start.
 */
import { type LedgerKv } from './maintenance-ledger';
import { type LedgerKeys } from './ledger-keys';

export type LedgerFormat = 'entries' | 'records';

/**
 * What a new cluster (an empty ledger) is given when the node does not say: `records`, whose
 * appends cost less node CPU and etcd writes than `entries` (docs/objects.md, "The ledger's
 * formats"). A cluster that has a format keeps it.
 */
export const NEW_CLUSTER_FORMAT: LedgerFormat = 'records';

const DEADLINE_MS = 5_000;

/** The cluster's format, written first when the ledger has none (`wanted`: the node's `--objects-ledger`, `cluster` to take the cluster's). */
export async function clusterLedgerFormat(kv: LedgerKv, keys: LedgerKeys, wanted: LedgerFormat | 'cluster'): Promise<{ format: LedgerFormat; written: boolean }> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const cur = await kv.get(keys.format, DEADLINE_MS);
    if (cur.kv !== null) return { format: parse(cur.kv.value.toString()), written: false };
    const format = (await formatOfKeys(kv, keys)) ?? (wanted === 'cluster' ? NEW_CLUSTER_FORMAT : wanted);
    const r = await kv.txnOnce([{ key: keys.format, absent: true }], [{ put: keys.format, value: Buffer.from(format) }], []);
    if (r.succeeded) return { format, written: true };
    // Another node wrote it first: read it.
  }
  throw new Error('the object ledger\'s format could not be read or written');
}

/** The format a ledger without the key is in, from its keys; null when it holds no stream. */
async function formatOfKeys(kv: LedgerKv, keys: LedgerKeys): Promise<LedgerFormat | null> {
  const [records, cursors, fences, metas] = await Promise.all([keys.partRecords(''), keys.indexCursor(''), keys.fences, keys.metas].map((p) => kv.countPrefix(p, DEADLINE_MS)));
  if (records! + cursors! > 0) return 'records';
  return fences! + metas! > 0 ? 'entries' : null;
}

function parse(v: string): LedgerFormat {
  if (v === 'entries' || v === 'records') return v;
  throw new Error(`the object ledger's format is "${v}", which this node does not know (entries, records)`);
}
