/**
 * Remote chunks (docs/objects.md, "Reads from the object store"): the records of a stream that
 * this shard serves from the object store instead of its segment log — the stream's ledger
 * entries, each `(from, to) → (object key, offset, length)`.
 *
 *   ledger i/<stream>/… (write order) ──▶ data entries at or above the start, sorted by seq
 *                                      ──▶ find(seq): binary search on `to`
 *   compaction's new entry (same seqs) ──▶ replace(): the entries it covers swapped for it
 *   trim                               ──▶ trim(): entries wholly below the start dropped
 *   a fetched range                    ──▶ checkRemoteRange(): every frame whole (CRC-32C), DATA
 *                                          frames seq for seq across [from, to) → its batches
 *
 * Seqs from the first entry's `from` up to `end` (the last entry's `to` at the open) are remote; a
 * seq at or above `end` is in the local log (appends after the open). The end never moves: when
 * the ledger is read again, compaction may have joined remote entries with the entries of the
 * local appends into one (it takes runs of small entries whatever their epoch), so an entry may
 * reach past the end; its seqs from the end on are served from the local log, and the entries
 * starting at or past the end are left out. A hole between two entries (the
 * ledger lost one) is kept as an entry without object: a read that reaches it answers
 * `data_corrupt`, every other seq is served. Frames in an object carry the writer's stream id,
 * not this shard's, so the range check does not compare it; it checks the seqs instead.
 *
 * The shard's read of an adopted stream below its remote end reads through these (shard.ts, `read`; remote-reader.ts).
 */
import { SvcError } from '../../errors';
import { readBatchHeader } from '../../util/record-batch';
import { FRAME_HEADER, FrameType, frameProblem } from './frame';
import { type SealProducer } from './producers';

/** One ledger entry as the shard keeps it: bytes off..off+len of object `o` hold the frames of seqs [from, to). */
export interface RemoteEntry {
  readonly o: string;
  readonly off: number;
  readonly len: number;
  readonly from: number;
  readonly to: number;
}

/** A hole in the ledger's seqs: no object holds them. */
export const NO_OBJECT = '';

/** One DATA batch of a checked range: the RecordBatch bytes and its seqs. */
export interface RemoteBatch {
  readonly batch: Buffer;
  readonly baseSeq: number;
  readonly lastSeq: number;
}

export class RemoteChunks {
  readonly stream: string;
  #entries: RemoteEntry[];
  #end: number;

  /**
   * From the stream's entries in ledger (write) order and its start. Entries without data and
   * those wholly below the start are left out; an entry overlapping the one before is refused.
   */
  constructor(stream: string, entries: readonly RemoteEntry[], startSeq: number) {
    this.stream = stream;
    this.#entries = [];
    this.#end = startSeq;
    this.#load(entries, startSeq, Infinity);
  }

  /** The seq after the last remote record: seqs from here on are local. */
  get end(): number {
    return this.#end;
  }

  /** The first remote seq (the end when there is none). */
  get start(): number {
    return this.#entries[0]?.from ?? this.#end;
  }

  get size(): number {
    return this.#entries.length;
  }

  /** Every entry, in seq order (holes included, with object NO_OBJECT). */
  get entries(): readonly RemoteEntry[] {
    return this.#entries;
  }

  /**
   * Replace every entry (the ledger read again, in write order). The end stays: seqs local already
   * stay local. Entries starting at or past it are the local appends' and are left out; one that
   * starts below it and reaches past it (compaction joined remote and local records) is kept.
   */
  reset(entries: readonly RemoteEntry[], startSeq: number): void {
    this.#load(entries, startSeq, this.#end);
  }

  #load(entries: readonly RemoteEntry[], startSeq: number, below: number): void {
    const data = entries.filter((e) => e.from < e.to && e.to > startSeq && e.from < below);
    const out: RemoteEntry[] = [];
    let at = -1;
    for (const e of data) {
      if (!Number.isSafeInteger(e.from) || !Number.isSafeInteger(e.to) || e.len <= 0 || e.off < 0) {
        throw new SvcError('data_corrupt', `stream ${this.stream}: the ledger entry of records ${e.from}..${e.to - 1} in object ${e.o} is not a valid range`, entryDetails(this.stream, e));
      }
      if (at >= 0 && e.from < at) {
        throw new SvcError('data_corrupt', `stream ${this.stream}: the ledger entries overlap at seq ${e.from} (object ${e.o}): records ${e.from}..${at - 1} are named twice`, entryDetails(this.stream, e));
      }
      if (at >= 0 && e.from > at) out.push({ o: NO_OBJECT, off: 0, len: 0, from: at, to: e.from });
      out.push(e);
      at = e.to;
    }
    this.#entries = out;
    this.#end = Math.max(this.#end, Math.min(at, below));
  }

  /** Index of the entry holding `seq`, or -1 when `seq` is not remote (below the first entry, or at or past the end). */
  find(seq: number): number {
    const es = this.#entries;
    let lo = 0;
    let hi = es.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (es[mid]!.to <= seq) lo = mid + 1;
      else hi = mid;
    }
    return lo < es.length && es[lo]!.from <= seq ? lo : -1;
  }

  at(i: number): RemoteEntry | undefined {
    return this.#entries[i];
  }

  /** The entries after index `i`, up to `bytes` of them (at least one when there is one): what a sequential reader reads next. */
  ahead(i: number, bytes: number): RemoteEntry[] {
    const out: RemoteEntry[] = [];
    let n = 0;
    for (let j = i + 1; j < this.#entries.length; j++) {
      const e = this.#entries[j]!;
      if (e.o === NO_OBJECT) continue;
      if (out.length > 0 && n + e.len > bytes) break;
      out.push(e);
      n += e.len;
    }
    return out;
  }

  /** Drop the entries wholly below a new start. */
  trim(startSeq: number): void {
    let k = 0;
    while (k < this.#entries.length && this.#entries[k]!.to <= startSeq) k++;
    if (k > 0) this.#entries = this.#entries.slice(k);
  }

  /**
   * Compaction replaced the entries of seqs [e.from, e.to) by `e`. Swapped when those seqs are
   * exactly a run of whole entries here; false otherwise (then the caller reads the ledger again).
   */
  replace(e: RemoteEntry): boolean {
    if (!(e.from < e.to)) return false;
    const i = this.find(e.from);
    if (i < 0 || this.#entries[i]!.from !== e.from) return false;
    let j = i;
    while (j < this.#entries.length && this.#entries[j]!.to < e.to) j++;
    if (j >= this.#entries.length || this.#entries[j]!.to !== e.to) return false;
    this.#entries.splice(i, j - i + 1, e);
    return true;
  }
}

/** The `details` of an error about an entry: what a client and the log see (docs/cluster.md, "Damaged objects"). */
export function entryDetails(stream: string, e: RemoteEntry): Record<string, unknown> {
  return { stream, from_seq: e.from, to_seq: e.to - 1, object: e.o, offset: e.off, length: e.len };
}

/** A damaged or missing range: `data_corrupt` naming the stream, the seqs and the object. */
export function remoteCorrupt(stream: string, e: RemoteEntry, why: string): SvcError {
  const where = e.o === NO_OBJECT ? `no ledger entry holds them` : `object ${e.o} bytes ${e.off}..${e.off + e.len}`;
  return new SvcError('data_corrupt', `stream ${stream}: records ${e.from}..${e.to - 1} cannot be served (${where}): ${why}`, entryDetails(stream, e));
}

/**
 * Check a fetched range of entry `e` and return its DATA batches: every frame whole with its
 * CRC-32C, every DATA frame a RecordBatch v2, the batches seq for seq from `e.from` to `e.to`.
 * Other frames (TRIM, SEAL, CREATE, CONFIG, PAD) are skipped: their effect is in the `m/` record;
 * a SEAL frame's idempotent producer is added to `seals` when given (the producer replay's).
 * Anything else is a `data_corrupt` error for this entry's seqs (remoteCorrupt).
 */
export function checkRemoteRange(stream: string, e: RemoteEntry, buf: Buffer, seals?: SealProducer[]): RemoteBatch[] {
  if (e.o === NO_OBJECT) throw remoteCorrupt(stream, e, 'the ledger has a hole there');
  if (buf.length !== e.len) throw remoteCorrupt(stream, e, `the object store returned ${buf.length} bytes, not ${e.len}`);
  const out: RemoteBatch[] = [];
  let next = e.from;
  for (let pos = 0; pos < buf.length; ) {
    const problem = frameProblem(buf, pos);
    if (problem !== null) throw remoteCorrupt(stream, e, `the frame at byte ${e.off + pos} is damaged (${problem})`);
    const end = pos + 8 + buf.readUInt32BE(pos);
    if (buf[pos + 8] === FrameType.Data) {
      const batch = buf.subarray(pos + FRAME_HEADER, end);
      let base: number;
      let last: number;
      try {
        const h = readBatchHeader(batch, 0);
        if (h.magic !== 2 || h.lastOffsetDelta < 0 || h.batchLength + 12 !== batch.length) throw new Error('not a whole RecordBatch v2');
        base = h.baseOffset;
        last = h.baseOffset + h.lastOffsetDelta;
      } catch (err) {
        throw remoteCorrupt(stream, e, `the frame at byte ${e.off + pos} holds no RecordBatch (${(err as Error).message})`);
      }
      if (base !== next || last >= e.to) throw remoteCorrupt(stream, e, `a batch of seqs ${base}..${last} where seq ${next} was expected`);
      out.push({ batch, baseSeq: base, lastSeq: last });
      next = last + 1;
    } else if (buf[pos + 8] === FrameType.Seal && seals !== undefined && end > pos + FRAME_HEADER) {
      try {
        seals.push(JSON.parse(buf.subarray(pos + FRAME_HEADER, end).toString('utf8')) as SealProducer);
      } catch {
        throw remoteCorrupt(stream, e, `the SEAL frame at byte ${e.off + pos} names no producer (not JSON)`);
      }
    }
    pos = end;
  }
  if (next !== e.to) throw remoteCorrupt(stream, e, `the range ends at seq ${next}, not ${e.to}`);
  return out;
}
