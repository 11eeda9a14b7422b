/**
 * What read_committed fetches need of each partition (KIP-98): the first offset of every open
 * transaction that wrote to it — the last stable offset (LSO) is the smallest of them, or the
 * high watermark when none is open — and the aborted transactions, which a read_committed
 * consumer filters out using the list the Fetch answer carries.
 */
import { type AbortedRange } from './store';

/** Aborted ranges kept per partition (older ones are below any offset a consumer still reads, in practice). */
const MAX_ABORTED = 1000;

export class PartitionTxns {
  /** stream → producer id → first offset of its open transaction there. */
  readonly #open = new Map<string, Map<string, number>>();
  readonly #aborted: Map<string, AbortedRange[]>;

  constructor(aborted: Map<string, AbortedRange[]>) {
    this.#aborted = aborted;
  }

  /** Mark `pid`'s transaction open on `stream` from `offset` (keeps an earlier offset). */
  open(stream: string, pid: string, offset: number): void {
    let m = this.#open.get(stream);
    if (m === undefined) this.#open.set(stream, (m = new Map()));
    const known = m.get(pid);
    if (known === undefined || offset < known) m.set(pid, offset);
  }

  /** Lower an open transaction's first offset to the real one (or raise a conservative guess to it). */
  settle(stream: string, pid: string, offset: number): void {
    this.#open.get(stream)?.set(pid, offset);
  }

  /** The transaction ended on `stream`; an abort is remembered up to its marker. Returns the partition's new aborted list, or null when unchanged. */
  close(stream: string, pid: string, abortedUpTo: number | null): AbortedRange[] | null {
    const m = this.#open.get(stream);
    const first = m?.get(pid);
    m?.delete(pid);
    if (m !== undefined && m.size === 0) this.#open.delete(stream);
    if (abortedUpTo === null || first === undefined) return null;
    const list = [...(this.#aborted.get(stream) ?? []), { pid, first, last: abortedUpTo }];
    if (list.length > MAX_ABORTED) list.splice(0, list.length - MAX_ABORTED);
    this.#aborted.set(stream, list);
    return list;
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
