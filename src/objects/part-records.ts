/**
 * The ledger's `records` format (docs/objects.md, "The ledger's
 * formats"): a writer records a ledger txn's parts in one key instead of an
 * entry and a reference per stream and group object, and indexes them per stream later, in runs.
 *
 *   q/<writer><record>            the parts one txn of the writer recorded under their streams'
 *                                 fences (PartRecord): pending, until indexed
 *   x/<writer>                    {q, o}: the writer's records up to and including `q` are indexed
 *                                 or stranded; its group objects numbered `o` and up may still be
 *                                 named by a pending record (the reaper keeps them)
 *   u/<stream>/<epoch>.<counter>  a stranded part: its stream was fenced away before the writer
 *                                 indexed it (EntryValue; with r/<object>/<stream>, which keeps the
 *                                 object): the stream's next opener records it as an entry
 *
 * Every acknowledged part is, at every revision, in at least one of q/ (above x/), i/ and u/: the
 * indexer writes its entries before it deletes the records, strands before it deletes, and an
 * opener reads all three in one read at one revision. A part in two of them is the same frames
 * twice, told apart by its seqs (`uncovered`).
 *
 * `<record>` is `<first object number:012d>.<txn:04d>`: a commit's txns name the first group object
 * of the commit, which is above every object of the writer's commits before, so records sort in
 * the order the writer wrote them.
 */
import { type EntryValue } from './ledger';

/** One part of a record: the frames of data seqs [from, to) of `stream` at bytes off..off+len of group object `o` (`size` bytes). */
export interface RecordedPart extends EntryValue {
  stream: string;
  /** The fence epoch and counter of the commit that recorded it: the name its entry takes. */
  epoch: number;
  counter: number;
}

/** `q/` values: parts as rows, [stream, epoch, counter, o, off, len, from, to, size]. */
type PartRow = [string, number, number, string, number, number, number, number, number];

export interface PartRecord {
  /** The record's name within its writer (`<first object>.<txn>`). */
  name: string;
  parts: RecordedPart[];
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** The name of txn `txn` of the commit whose first group object is number `firstObject`. */
export function recordName(firstObject: number, txn: number): string {
  return `${pad(firstObject, 12)}.${pad(txn, 4)}`;
}

/** A `q/` value. */
export function encodePartRecord(parts: readonly RecordedPart[]): Buffer {
  const rows: PartRow[] = [];
  for (const p of parts) rows.push([p.stream, p.epoch, p.counter, p.o, p.off, p.len, p.from, p.to, p.size ?? 0]);
  return Buffer.from(JSON.stringify(rows));
}

/** The parts of a `q/` value; throws on a value that is not one (damage: never skipped quietly). */
export function decodePartRecord(value: Buffer | string): RecordedPart[] {
  const rows = JSON.parse(typeof value === 'string' ? value : value.toString('utf8')) as unknown;
  if (!Array.isArray(rows)) throw new Error('ledger part record is not a list');
  return rows.map((r: unknown): RecordedPart => {
    const row = r as PartRow;
    const [stream, epoch, counter, o, off, len, from, to, size] = row;
    if (!Array.isArray(r) || r.length !== 9 || typeof stream !== 'string' || typeof o !== 'string' || ![epoch, counter, off, len, from, to, size].every(Number.isSafeInteger) || from > to || off < 0 || len < 0) {
      throw new Error(`ledger part record row ${JSON.stringify(r)} is not a part`);
    }
    return { stream, epoch, counter, o, off, len, from, to, ...(size > 0 ? { size } : {}) };
  });
}

/** `x/<writer>`: how far the writer's records are indexed. */
export interface IndexCursor {
  /** The last record indexed or stranded ('' for none). */
  q: string;
  /** The writer's group objects from this number on may be named by a pending record. */
  o: number;
}

export const NO_CURSOR: IndexCursor = { q: '', o: 0 };

export function encodeCursor(c: IndexCursor): Buffer {
  return Buffer.from(JSON.stringify(c));
}

export function decodeCursor(value: Buffer | string | null): IndexCursor {
  if (value === null) return NO_CURSOR;
  const c = JSON.parse(typeof value === 'string' ? value : value.toString('utf8')) as Partial<IndexCursor>;
  if (typeof c.q !== 'string' || !Number.isSafeInteger(c.o)) throw new Error(`ledger index cursor ${JSON.stringify(c)} is not one`);
  return { q: c.q, o: c.o! };
}

/** A range of seqs some entry holds. */
export interface SeqRange {
  from: number;
  to: number;
}

/**
 * Of `parts` (in any order), those whose seqs no range of `held` holds and no earlier part of the
 * list holds, in seq order: what a stream's opener records, given its entries (`held`). A part
 * overlapping a held range without lying inside it is damage (frames never split): it throws.
 */
export function uncovered<T extends SeqRange>(parts: readonly T[], held: readonly SeqRange[]): T[] {
  const ranges = held.filter((r) => r.to > r.from).map((r) => ({ from: r.from, to: r.to }));
  const out: T[] = [];
  for (const p of [...parts].sort((a, b) => a.from - b.from)) {
    if (p.to <= p.from) continue;
    const over = ranges.find((r) => r.from < p.to && p.from < r.to);
    if (over === undefined) {
      out.push(p);
      ranges.push({ from: p.from, to: p.to });
    } else if (p.from < over.from || p.to > over.to) {
      throw new Error(`part of seqs [${p.from}, ${p.to}) overlaps the range [${over.from}, ${over.to}) without lying inside it`);
    }
  }
  return out;
}

/** Parts by stream, each stream's in the order given. */
export function partsByStream(parts: Iterable<RecordedPart>): Map<string, RecordedPart[]> {
  const out = new Map<string, RecordedPart[]>();
  for (const p of parts) {
    let list = out.get(p.stream);
    if (list === undefined) out.set(p.stream, (list = []));
    list.push(p);
  }
  return out;
}
