/**
 * Where a sink stands on each partition it reads: the group's committed offset, the
 * partition's end, and from them its lag in records and in seconds (GET /stats, /metrics).
 *
 * Fed from two sides: every fetched batch and commit (exact while the sink consumes), and a
 * poll of the node every few seconds (so a sink that is stuck or cannot reach the node still
 * shows its lag growing rather than the last value it saw).
 */
import type { PartitionPosition } from './kafka-client';
import type { SinkRecord } from './plugin-api';

/** One partition as GET /stats shows it. */
export interface PartitionProgress {
  topic: string;
  partition: number;
  /** The next offset the sink will read (the committed offset); -1 when the group has none yet. */
  committed_offset: string;
  /** The partition's end offset (high watermark) last seen. */
  end_offset: string;
  /** Records written to the partition and not yet committed by the sink. */
  lag_records: number;
  /**
   * How far behind in time, seconds: the age of the oldest record fetched and not yet
   * committed; when none is in hand, the time since the lag was last zero. 0 when caught up.
   */
  lag_seconds: number;
}

interface Entry {
  topic: string;
  partition: number;
  committed: bigint;
  end: bigint;
  /** Timestamp (ms) of the oldest fetched record not yet committed, or null. */
  pendingTs: number | null;
  /** When this partition was last seen with no lag (ms since epoch). */
  caughtUpAt: number;
}

export class SinkProgress {
  readonly #parts = new Map<string, Entry>();
  readonly #startedAt = Date.now();

  #entry(topic: string, partition: number): Entry {
    const id = `${topic}/${partition}`;
    let e = this.#parts.get(id);
    if (e === undefined) {
      e = { topic, partition, committed: -1n, end: 0n, pendingTs: null, caughtUpAt: this.#startedAt };
      this.#parts.set(id, e);
    }
    return e;
  }

  /** A batch was fetched: its end offset, and its first record's time as the oldest pending. */
  fetched(topic: string, partition: number, end: string, records: SinkRecord[]): void {
    const e = this.#entry(topic, partition);
    e.end = BigInt(end);
    e.pendingTs ??= records[0]?.timestamp ?? null;
    this.#settle(e);
  }

  /** `offset` (the next to read) was committed; `next` is the record at it when the batch holds it. */
  committed(topic: string, partition: number, offset: string, next: SinkRecord | undefined): void {
    const e = this.#entry(topic, partition);
    e.committed = BigInt(offset);
    e.pendingTs = next?.timestamp ?? null;
    this.#settle(e);
  }

  /** Positions read from the node (the poll). */
  polled(positions: PartitionPosition[]): void {
    for (const p of positions) {
      const e = this.#entry(p.topic, p.partition);
      const committed = BigInt(p.committed);
      if (committed > e.committed) e.committed = committed;
      e.end = BigInt(p.end);
      this.#settle(e);
    }
  }

  #settle(e: Entry): void {
    if (this.#lag(e) === 0) {
      e.caughtUpAt = Date.now();
      e.pendingTs = null;
    }
  }

  #lag(e: Entry): number {
    const from = e.committed < 0n ? 0n : e.committed;
    return e.end > from ? Number(e.end - from) : 0;
  }

  snapshot(now = Date.now()): PartitionProgress[] {
    return [...this.#parts.values()]
      .sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1))
      .map((e) => {
        const lag = this.#lag(e);
        const since = e.pendingTs ?? e.caughtUpAt;
        return { topic: e.topic, partition: e.partition, committed_offset: e.committed.toString(), end_offset: e.end.toString(), lag_records: lag, lag_seconds: lag === 0 ? 0 : Math.max(0, (now - since) / 1000) };
      });
  }
}
