/**
 * Durable transaction state in the metadata store, shared by the nodes of a cluster (docs/kafka.md,
 * "Transactions"; docs/cluster.md, "Kafka transactions"). Key layout:
 *
 *   kafka/txn/<transactional id>          TxnRecord: producer id and epoch, state, the open
 *                                         transaction's number, partitions and groups. Written by
 *                                         the id's coordinator only, each write a compare-and-set
 *   kafka/txn-first/<stream>/<pid>        an open transaction's hold on one partition: a lower
 *                                         bound of its first offset there (the LSO). Written by the
 *                                         partition's owner before its first batch is appended,
 *                                         deleted after its marker
 *   kafka/txn-offsets/<txn id>/<group>    offsets committed inside the transaction (TxnOffsetCommit,
 *                                         on the group's coordinator)
 *   kafka/txn-done/<txn id>/<participant> a participant finished its part of a decided transaction:
 *                                         `p:<stream>` wrote its marker, `g:<group>` applied (or
 *                                         dropped) the offsets
 *   kafka/txn-aborted/<stream>            aborted transactions of one partition: {pid, first, last}
 *
 * `<…>` is encodeURIComponent of the id, stream or group. int64 values are decimal strings.
 */
import { type MetaRecord, type MetaStore } from '../../actors';

export type TxnState = 'Empty' | 'Ongoing' | 'PrepareCommit' | 'PrepareAbort' | 'CompleteCommit' | 'CompleteAbort';

export interface TxnPartition {
  topic: string;
  partition: number;
  stream: string;
  /** Records written before this field was dropped may carry it: the transaction's first offset there. */
  firstOffset?: number | null;
  /** Likewise: the partition's tail when it was added (records of an earlier version). */
  addedAt?: number;
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
  /**
   * The number of the id's current (or last) transaction, raised when one begins: what a
   * participant's `txn-done` record and the offsets of TxnOffsetCommit are matched against.
   * Absent in records of an earlier version (0).
   */
  txnSeq?: number;
  /** When the current transaction began (ms since the epoch); 0 when none is open. */
  startedAt: number;
  partitions: TxnPartition[];
  groups: string[];
  /** Records of an earlier version kept the offsets here; now they are under `kafka/txn-offsets/`. */
  offsets?: TxnOffset[];
}

export interface AbortedRange {
  pid: string;
  first: number;
  /** Offset of the abort marker. */
  last: number;
}

/** An open transaction's hold on a partition. */
export interface TxnHold {
  /** A lower bound of the transaction's first offset on the partition. */
  from: number;
  transactionalId: string;
  txnSeq: number;
}

/** Offsets committed inside transaction `txnSeq` of an id, for one group. */
export interface TxnGroupOffsets {
  txnSeq: number;
  offsets: TxnOffset[];
}

/** A participant's part of a decided transaction is done. */
export interface TxnDone {
  txnSeq: number;
  commit: boolean;
}

export const TXN = 'kafka/txn/';
export const FIRST = 'kafka/txn-first/';
export const OFFSETS = 'kafka/txn-offsets/';
export const DONE = 'kafka/txn-done/';
export const ABORTED = 'kafka/txn-aborted/';

const enc = encodeURIComponent;

export const txnKey = (id: string): string => `${TXN}${enc(id)}`;
export const holdKey = (stream: string, pid: string): string => `${FIRST}${enc(stream)}/${pid}`;
export const groupOffsetsKey = (id: string, group: string): string => `${OFFSETS}${enc(id)}/${enc(group)}`;
export const doneKey = (id: string, participant: string): string => `${DONE}${enc(id)}/${participant}`;
export const abortedKey = (stream: string): string => `${ABORTED}${enc(stream)}`;
/** A participant's name in `txn-done` keys. */
export const partitionParticipant = (stream: string): string => `p:${enc(stream)}`;
export const groupParticipant = (group: string): string => `g:${enc(group)}`;

/** `kafka/txn-first/<stream>/<pid>` → its stream and producer id. */
export function parseHoldKey(key: string): { stream: string; pid: string } {
  const rest = key.slice(FIRST.length);
  const slash = rest.lastIndexOf('/');
  return { stream: decodeURIComponent(rest.slice(0, slash)), pid: rest.slice(slash + 1) };
}

export const txnSeqOf = (t: TxnRecord): number => t.txnSeq ?? 0;

export class TxnStore {
  readonly #meta: MetaStore;

  constructor(meta: MetaStore) {
    this.#meta = meta;
  }

  get meta(): MetaStore {
    return this.#meta;
  }

  all(): TxnRecord[] {
    return this.#meta.list<TxnRecord>(TXN).map((r) => r.value);
  }

  record(id: string): MetaRecord<TxnRecord> | null {
    return this.#meta.get<TxnRecord>(txnKey(id));
  }

  /** Write `t` if its record is still at `version` (null: absent); rejects with MetaConflictError otherwise. */
  async put(t: TxnRecord, version: number | null): Promise<MetaRecord<TxnRecord>> {
    return this.#meta.put(txnKey(t.transactionalId), t, version === null ? { absent: true } : { version });
  }

  abortedAll(): Map<string, AbortedRange[]> {
    const out = new Map<string, AbortedRange[]>();
    for (const r of this.#meta.list<{ ranges: AbortedRange[] }>(ABORTED)) out.set(decodeURIComponent(r.key.slice(ABORTED.length)), r.value.ranges);
    return out;
  }

  async putAborted(stream: string, ranges: AbortedRange[]): Promise<void> {
    await this.#meta.put(abortedKey(stream), { ranges });
  }

  holds(): Array<{ stream: string; pid: string; hold: TxnHold }> {
    return this.#meta.list<TxnHold>(FIRST).map((r) => ({ ...parseHoldKey(r.key), hold: r.value }));
  }

  hold(stream: string, pid: string): TxnHold | null {
    return this.#meta.get<TxnHold>(holdKey(stream, pid))?.value ?? null;
  }

  async putHold(stream: string, pid: string, hold: TxnHold): Promise<void> {
    await this.#meta.put(holdKey(stream, pid), hold);
  }

  async deleteHold(stream: string, pid: string): Promise<void> {
    await this.#meta.delete(holdKey(stream, pid));
  }

  groupOffsets(id: string, group: string): MetaRecord<TxnGroupOffsets> | null {
    return this.#meta.get<TxnGroupOffsets>(groupOffsetsKey(id, group));
  }

  async putGroupOffsets(id: string, group: string, value: TxnGroupOffsets, version: number | null): Promise<void> {
    await this.#meta.put(groupOffsetsKey(id, group), value, version === null ? { absent: true } : { version });
  }

  done(id: string, participant: string): TxnDone | null {
    return this.#meta.get<TxnDone>(doneKey(id, participant))?.value ?? null;
  }

  async putDone(id: string, participant: string, value: TxnDone): Promise<void> {
    await this.#meta.put(doneKey(id, participant), value);
  }
}
