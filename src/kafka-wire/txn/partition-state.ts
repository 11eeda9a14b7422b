/**
 * What read_committed fetches need of each partition (KIP-98): the first offset of every open
 * transaction that wrote to it — the last stable offset (LSO) is the smallest of them, or the
 * high watermark when none is open — and the aborted transactions, which a read_committed
 * consumer filters out using the list the Fetch answer carries.
 */
import { type AbortedRange } from './store';

/** Aborted ranges kept per partition (older ones are below any offset a consumer still reads, in practice). */
const MAX_ABORTED = 1000;

/** One partition's state as sent to a copy on another thread (a gateway thread's readers, `PartitionTxns.apply`). */
export interface PartitionTxnState {
  /** Producer id → first offset of its open transaction here. */
  open: Array<[pid: string, first: number]>;
  aborted: AbortedRange[];
}

export class PartitionTxns {
  /** stream → producer id → first offset of its open transaction there. */
  readonly #open = new Map<string, Map<string, number>>();
  readonly #aborted: Map<string, AbortedRange[]>;
  /** Told when a transaction ended on a stream (its marker is appended): HTTP and DS readers may see more. */
  readonly #ended: Array<(stream: string) => void> = [];
  /** Told of every change of a stream's state; what each returns resolves once its copies have it (`mirrored`). */
  readonly #copies: Array<(stream: string) => Promise<void>> = [];
  /** Resolves once the copies have every change made so far. */
  #mirrored: Promise<void> = Promise.resolve();

  constructor(aborted: Map<string, AbortedRange[]>) {
    this.#aborted = aborted;
  }

  onEnded(fn: (stream: string) => void): void {
    this.#ended.push(fn);
  }

  /**
   * Copies of this state on other threads (the gateway threads' readers, node.ts): `send` is told
   * of each stream whose state changed and resolves once every copy has it (`state(stream)`).
   */
  copyTo(send: (stream: string) => Promise<void>): void {
    this.#copies.push(send);
  }

  /**
   * Resolves once every copy has every change made so far: a transaction's first batch on a
   * partition is appended only after (coordinator.ts, `admit`), so no reader on another thread
   * sees it before it knows the transaction is open there.
   */
  mirrored(): Promise<void> {
    return this.#mirrored;
  }

  /** Every stream with state (open transactions or aborted ranges), for a new copy. */
  streams(): string[] {
    return [...new Set([...this.#open.keys(), ...this.#aborted.keys()])];
  }

  /** A stream's state, for a copy (`apply`). */
  state(stream: string): PartitionTxnState {
    return { open: [...(this.#open.get(stream) ?? [])], aborted: this.#aborted.get(stream) ?? [] };
  }

  /** A copy: take a stream's state as the original holds it now. */
  apply(stream: string, s: PartitionTxnState): void {
    if (s.open.length === 0) this.#open.delete(stream);
    else this.#open.set(stream, new Map(s.open));
    if (s.aborted.length === 0) this.#aborted.delete(stream);
    else this.#aborted.set(stream, s.aborted);
    this.#tell(stream);
  }

  #changed(stream: string): void {
    if (this.#copies.length === 1) this.#mirrored = this.#copies[0]!(stream);
    else if (this.#copies.length > 1) this.#mirrored = Promise.all(this.#copies.map((send) => send(stream))).then(() => undefined);
  }

  /**
   * What HTTP and Durable Streams readers of `stream` reading from `from` may see (docs/kafka.md,
   * "Transactions"): no further than the last stable offset, without the aborted transactions
   * that end at or after `from`; null when nothing is hidden.
   */
  visibility(stream: string, from: number): { stableSeq: number | null; aborted: Array<{ producerId: string; first: number; last: number }> } | null {
    const stableSeq = this.stableSeq(stream);
    const aborted: Array<{ producerId: string; first: number; last: number }> = [];
    for (const a of this.#aborted.get(stream) ?? []) if (a.last >= from) aborted.push({ producerId: a.pid, first: a.first, last: a.last });
    return stableSeq === null && aborted.length === 0 ? null : { stableSeq, aborted };
  }

  /** The first offset of the oldest open transaction on `stream`, or null when none is open. */
  stableSeq(stream: string): number | null {
    let lso: number | null = null;
    for (const first of this.#open.get(stream)?.values() ?? []) if (lso === null || first < lso) lso = first;
    return lso;
  }

  /** Mark `pid`'s transaction open on `stream` from `offset` (keeps an earlier offset). */
  open(stream: string, pid: string, offset: number): void {
    let m = this.#open.get(stream);
    if (m === undefined) this.#open.set(stream, (m = new Map()));
    const known = m.get(pid);
    if (known === undefined || offset < known) {
      m.set(pid, offset);
      this.#changed(stream);
    }
  }

  /** Lower an open transaction's first offset to the real one (or raise a conservative guess to it). */
  settle(stream: string, pid: string, offset: number): void {
    const m = this.#open.get(stream);
    if (m === undefined || !m.has(pid)) return;
    m.set(pid, offset);
    this.#changed(stream);
  }

  /** The partition's aborted list as its owner recorded it (the metadata store's `kafka/txn-aborted/<stream>`). */
  setAborted(stream: string, ranges: AbortedRange[]): void {
    this.#aborted.set(stream, ranges);
    this.#changed(stream);
  }

  /** The transaction ended on `stream`; an abort is remembered up to its marker. Returns the partition's new aborted list, or null when unchanged. */
  close(stream: string, pid: string, abortedUpTo: number | null): AbortedRange[] | null {
    const m = this.#open.get(stream);
    const first = m?.get(pid);
    m?.delete(pid);
    if (m !== undefined && m.size === 0) this.#open.delete(stream);
    if (abortedUpTo === null || first === undefined) {
      if (first !== undefined) this.#changed(stream);
      this.#tell(stream);
      return null;
    }
    const list = [...(this.#aborted.get(stream) ?? []), { pid, first, last: abortedUpTo }];
    if (list.length > MAX_ABORTED) list.splice(0, list.length - MAX_ABORTED);
    this.#aborted.set(stream, list);
    this.#changed(stream);
    this.#tell(stream);
    return list;
  }

  #tell(stream: string): void {
    for (const fn of this.#ended) fn(stream);
  }

  /** The last stable offset of `stream` whose high watermark is `hw`. */
  lastStable(stream: string, hw: number): number {
    let lso = hw;
    for (const first of this.#open.get(stream)?.values() ?? []) if (first < lso) lso = first;
    return lso;
  }

  /** Aborted transactions that overlap [from, to). */
  abortedIn(stream: string, from: number, to: number): Array<{ producerId: bigint; firstOffset: bigint }> {
    const out: Array<{ producerId: bigint; firstOffset: bigint }> = [];
    for (const a of this.#aborted.get(stream) ?? []) if (a.last >= from && a.first < to) out.push({ producerId: BigInt(a.pid), firstOffset: BigInt(a.first) });
    return out;
  }

  /** Open transactions of one stream: producer id → first offset (DescribeProducers). */
  openOn(stream: string): ReadonlyMap<string, number> {
    return this.#open.get(stream) ?? new Map();
  }
}
