/**
 * Durable transaction coordinator state in the metadata store (so it survives restarts and is
 * shared by the nodes of a cluster that share the store). Key layout:
 *
 *   kafka/txn/<transactional id>      TxnRecord: producer id and epoch, state, timeout, partitions
 *                                     (with the first offset the transaction wrote to each), groups
 *                                     and the offsets committed inside the transaction
 *   kafka/txn-aborted/<stream>        aborted transactions of one partition: {pid, first, last}
 *
 * `<…>` is encodeURIComponent of the id or stream name. int64 values are decimal strings.
 */
import { type MetaStore } from '../../actors';

export type TxnState = 'Empty' | 'Ongoing' | 'PrepareCommit' | 'PrepareAbort' | 'CompleteCommit' | 'CompleteAbort';

export interface TxnPartition {
  topic: string;
  partition: number;
  stream: string;
  /** First offset the transaction wrote to this partition; null while it wrote nothing (or before that write was recorded). */
  firstOffset: number | null;
  /**
   * The partition's tail when it was added: a lower bound of anything the transaction wrote
   * there. It holds the LSO while the first write is in flight, and after a restart when that
   * write landed but was not recorded (aborted ranges are per producer id, so a range that starts
   * early hides nothing else).
   */
  addedAt: number;
}

export interface TxnOffset {
  group: string;
  topic: string;
  partition: number;
  offset: string;
  leaderEpoch: number;
  metadata: string | null;
}

export interface TxnRecord {
  transactionalId: string;
  producerId: string;
  producerEpoch: number;
  timeoutMs: number;
  state: TxnState;
  /** When the current transaction began (ms since the epoch); 0 when none is open. */
  startedAt: number;
  partitions: TxnPartition[];
  groups: string[];
  offsets: TxnOffset[];
}

export interface AbortedRange {
  pid: string;
  first: number;
  /** Offset of the abort marker. */
  last: number;
}

const TXN = 'kafka/txn/';
const ABORTED = 'kafka/txn-aborted/';

export class TxnStore {
  readonly #meta: MetaStore;

  constructor(meta: MetaStore) {
    this.#meta = meta;
  }

  all(): TxnRecord[] {
    return this.#meta.list<TxnRecord>(TXN).map((r) => r.value);
  }

  async put(t: TxnRecord): Promise<void> {
    await this.#meta.put(`${TXN}${encodeURIComponent(t.transactionalId)}`, t);
  }

  abortedAll(): Map<string, AbortedRange[]> {
    const out = new Map<string, AbortedRange[]>();
    for (const r of this.#meta.list<{ ranges: AbortedRange[] }>(ABORTED)) out.set(decodeURIComponent(r.key.slice(ABORTED.length)), r.value.ranges);
    return out;
  }

  async putAborted(stream: string, ranges: AbortedRange[]): Promise<void> {
    await this.#meta.put(`${ABORTED}${encodeURIComponent(stream)}`, { ranges });
  }
}
