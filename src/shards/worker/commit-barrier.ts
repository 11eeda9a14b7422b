/**
 * The worker-wide commit barrier: the groups its shards start in one event-loop turn are made
 * durable together, so appends spread over many shards cost about what appends to one shard
 * cost (docs/storage.md, "Commit barrier and sync journal").
 *
 *   shard k's group commit ──writer(bufs)──▶ SegmentLog.write(journaled: no fdatasync), at once
 *                                              │ (positions laid out synchronously, as before)
 *   end of the turn (setImmediate) ──▶ the turn's groups:
 *       small groups (< JOURNAL_MAX_BYTES) of several shards ──▶ one record per group in the
 *           worker's sync journal, one write + one fdatasync for all of them (sync-journal.ts);
 *           acknowledged after it
 *       the small groups of one shard alone, the journal idle ──▶ fdatasync of that shard's
 *           segments, as without a barrier (one sync either way; the journal would add a write)
 *       a large group, at once ──▶ fdatasync of its own segments, as without a barrier (copying
 *           megabytes into the journal would double the disk's write load where the fdatasync no
 *           longer dominates)
 *
 * A shard's fdatasync also makes its earlier journaled bytes durable (small groups are written
 * on the worker's thread, so they are in the file by then): a log's durable bytes stay a prefix.
 *
 * Journal barriers run one at a time (a journal's records must be acknowledged in file order:
 * its recovery stops at the first torn record), so the groups arriving while one is in flight
 * gather into the next: group commit at the level of the worker. When the journal passes
 * ROTATE_BYTES, every log written through it is synced and the journal emptied, before the
 * next barrier.
 *
 * A group whose own write failed is answered with that error; the others of its barrier are not
 * held back by it. A journal write error fails every group of the barrier (their shards stop
 * the worker, group-commit.ts), and the journal is cut back so none of them is replayed.
 */
import { type CommitStats } from '../commit-stats';
import { type Location, type SegmentLog } from './segment-log';
import { type JournalRecord, ROTATE_BYTES, type SyncJournal } from './sync-journal';

/** A group of at least this many bytes is made durable by its own segments' fdatasync, not through the journal. */
export const JOURNAL_MAX_BYTES = 64 * 1024; // 64 KiB

export interface LogWrite {
  locations: Location[];
  end: Location;
}

/** Writes one group's frames to a shard's log and resolves once they are durable. */
export type LogWriter = (bufs: readonly Buffer[]) => Promise<LogWrite>;

interface Member {
  shard: number;
  log: SegmentLog;
  stats: CommitStats;
  bufs: readonly Buffer[];
  bytes: number;
  written: Promise<LogWrite>;
  resolve(w: LogWrite): void;
  reject(err: Error): void;
}

export class CommitBarrier {
  readonly #journal: SyncJournal;
  #batch: Member[] = [];
  #scheduled = false;
  /** A journal barrier is in flight (or the journal is being rotated): the next batch waits. */
  #busy = false;
  /** Logs written through the journal since it was last emptied. */
  readonly #journaled = new Set<SegmentLog>();
  /** A rotation failed: the journal's state is unknown, nothing more is acknowledged through it. */
  #failed: Error | null = null;

  constructor(journal: SyncJournal) {
    this.#journal = journal;
  }

  /** The writer of one shard's group commit; `stats.syncs` counts the fdatasyncs that made its groups durable. */
  writer(shard: number, log: SegmentLog, stats: CommitStats): LogWriter {
    return (bufs) => {
      const written = log.write(bufs, { journaled: true });
      let bytes = 0;
      for (const b of bufs) bytes += b.length;
      // Handled where the batch runs; a rejection seen before then is not unhandled.
      written.catch(() => undefined);
      return new Promise<LogWrite>((resolve, reject) => {
        const m: Member = { shard, log, stats, bufs, bytes, written, resolve, reject };
        if (bytes >= JOURNAL_MAX_BYTES) return this.#direct(m);
        this.#batch.push(m);
        this.#schedule();
      });
    };
  }

  /**
   * Run the batch at the end of this turn: after the groups of every shard touched in it have
   * been started, including those the barrier just finished lets go (their replies, then their
   * next groups, run in microtasks of the same turn).
   */
  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#run();
    });
  }

  #run(): void {
    if (this.#busy || this.#batch.length === 0) return;
    const batch = this.#batch;
    this.#batch = [];
    if (this.#failed !== null) {
      for (const m of batch) m.reject(this.#failed);
      return;
    }
    const first = batch[0]!.log;
    if (batch.every((m) => m.log === first)) {
      for (const m of batch) this.#direct(m);
      return;
    }
    this.#busy = true;
    void this.#viaJournal(batch).finally(() => {
      this.#busy = false;
      if (this.#batch.length > 0) this.#schedule();
    });
  }

  /** A large group, or one shard alone: its segments' own fdatasync, as without a barrier. */
  #direct(m: Member): void {
    m.written
      .then(async (w) => {
        await m.log.sync(new Set(w.locations.map((l) => l.segId)));
        m.stats.syncs++;
        return w;
      })
      .then(m.resolve, m.reject);
  }

  async #viaJournal(batch: Member[]): Promise<void> {
    const settled = await Promise.allSettled(batch.map((m) => m.written));
    const records: JournalRecord[] = [];
    const ok: Array<[Member, LogWrite]> = [];
    batch.forEach((m, i) => {
      const r = settled[i]!;
      if (r.status === 'rejected') return m.reject(r.reason as Error);
      ok.push([m, r.value]);
      addRecords(records, m.shard, m.bufs, r.value.locations);
    });
    if (ok.length === 0) return;
    const start = this.#journal.size;
    try {
      await this.#journal.append(records);
    } catch (err) {
      this.#journal.cutBack(start);
      for (const [m] of ok) m.reject(err as Error);
      return;
    }
    ok[0]![0].stats.syncs++;
    for (const [m] of ok) this.#journaled.add(m.log);
    for (const [m, w] of ok) m.resolve(w);
    if (this.#journal.size >= ROTATE_BYTES) await this.#rotate();
  }

  /** Sync every log the journal covers, then empty it. */
  async #rotate(): Promise<void> {
    try {
      const logs = [...this.#journaled];
      this.#journaled.clear();
      await Promise.all(logs.map((l) => l.syncJournaled()));
      this.#journal.reset();
    } catch (err) {
      this.#failed = err as Error;
    }
  }

  close(): void {
    this.#journal.close();
  }
}

/** One record per run of a group's buffers laid out back to back in one segment. */
function addRecords(out: JournalRecord[], shard: number, bufs: readonly Buffer[], locations: readonly Location[]): void {
  let cur: { shard: number; segId: number; pos: number; bufs: Buffer[] } | null = null;
  let next = -1;
  for (let i = 0; i < bufs.length; i++) {
    const loc = locations[i]!;
    const b = bufs[i]!;
    if (cur === null || loc.segId !== cur.segId || loc.pos !== next) {
      cur = { shard, segId: loc.segId, pos: loc.pos, bufs: [] };
      out.push(cur);
    }
    cur.bufs.push(b);
    next = loc.pos + b.length;
  }
}
