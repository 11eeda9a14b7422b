/**
 * Every node's view of the partitions' transaction state (partition-state.ts), kept from the
 * metadata store: the holds of open transactions (`kafka/txn-first/…`, written by each partition's
 * owner before a transaction's first batch there) and the aborted lists (`kafka/txn-aborted/…`).
 * A node that becomes a partition's owner (transfer, failover, restart) so already knows its last
 * stable offset and aborted transactions, whoever wrote them.
 */
import { type MetaRecord, type MetaStore } from '../../actors';
import { PartitionTxns } from './partition-state';
import { ABORTED, FIRST, type AbortedRange, type TxnHold, TxnStore, parseHoldKey } from './store';

/** The partitions' state as the store holds it now, kept current by its changes. */
export function mirrorPartitionTxns(meta: MetaStore): PartitionTxns {
  const store = new TxnStore(meta);
  const parts = new PartitionTxns(store.abortedAll());
  for (const h of store.holds()) parts.open(h.stream, h.pid, h.hold.from);
  // Records written before holds existed kept the first offset in the transaction's record.
  for (const t of store.all()) {
    if (t.state !== 'Ongoing' && t.state !== 'PrepareCommit' && t.state !== 'PrepareAbort') continue;
    for (const p of t.partitions) {
      const from = p.firstOffset ?? p.addedAt;
      if (from !== undefined && from !== null && store.hold(p.stream, t.producerId) === null) parts.open(p.stream, t.producerId, from);
    }
  }
  meta.onChange((key: string, record: MetaRecord | null) => {
    if (key.startsWith(FIRST)) {
      const { stream, pid } = parseHoldKey(key);
      if (record === null) parts.close(stream, pid, null);
      else parts.open(stream, pid, (record.value as TxnHold).from);
    } else if (key.startsWith(ABORTED) && record !== null) {
      parts.setAborted(decodeURIComponent(key.slice(ABORTED.length)), (record.value as { ranges: AbortedRange[] }).ranges);
    }
  });
  return parts;
}
