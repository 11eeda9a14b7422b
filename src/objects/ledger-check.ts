/**
 * The offline check of the object store (docs/objects.md, "Damaged ranges"): every range the
 * ledger names is read back and checked as a read from the object store checks it, without a
 * node, and nothing is written.
 *
 *   m/<stream> (each, or those asked for) ──▶ i/<stream>/… entries, in key order, and (the records
 *       format, part-records.ts) the stream's parts not indexed yet: pending in a writer's q/
 *       records (all read once) and stranded in u/<stream>/, and the entries of a recovery plan
 *       not finished yet (recovery-plan.ts), those the entries do not hold
 *       entries wholly below the start: counted, not read (no read reaches them)
 *       a seq between two entries that no entry holds ──▶ damage "hole"
 *       GET each range (≤ `concurrency` at once) ──▶ missing object     ──▶ damage "missing"
 *                                               ──▶ fewer bytes        ──▶ damage "short"
 *                                               ──▶ a frame's length or CRC-32C wrong ──▶ damage "frames"
 *                                               ──▶ any other store error ──▶ unreadable (the check is incomplete)
 *       p/<stream> naming an object ──▶ GET it ──▶ missing, or not the JSON snapshot of the seq named ──▶ damage "producers"
 *                                       (a new owner then replays every entry instead: slower, not wrong)
 *
 * Each damage names the stream, the entry's seqs, the object and its byte range: what a read that
 * reaches it answers (`data_corrupt`).
 */
import { type LedgerKeys, streamOfSegment } from './ledger-keys';
import { planOfKey } from './recovery-plan';
import { eachLimited, framesProblem, type LedgerKv, scanPrefix } from './maintenance-ledger';
import { type RecordedPart, decodePartRecord, partsByStream, uncovered } from './part-records';
import { isObjectNotFound } from './object-store';

/** One damaged range, named as a read that reaches it names it. */
export interface ObjectDamage {
  stream: string;
  from_seq: number;
  /** Inclusive. */
  to_seq: number;
  /** Empty for a hole (no entry holds the seqs). */
  object: string;
  offset: number;
  length: number;
  /** `producers`: the stream's producer snapshot object (from_seq = to_seq = its seq; no records are damaged). */
  kind: 'missing' | 'short' | 'frames' | 'hole' | 'producers';
  reason: string;
}

export interface LedgerCheckResult {
  streams: number;
  /** Entries read back and checked (and, in the records format, parts not indexed yet). */
  entries: number;
  /** Entries below their stream's start, not read. */
  skipped: number;
  bytes: number;
  damaged: ObjectDamage[];
  /** Ranges the store did not answer (not damage: the check could not look at them). */
  unreadable: Array<{ stream: string; object: string; reason: string }>;
}

export interface LedgerCheckOptions {
  /** Only these streams (default: every stream with an `m/` record). */
  streams?: readonly string[];
  /** Range reads at once (default 8). */
  concurrency?: number;
}

interface Entry {
  o: string;
  off: number;
  len: number;
  from: number;
  to: number;
}

/** Check the ranges the ledger under `keys` names in `store` (see the file comment). */
export async function checkObjectLedger(
  kv: LedgerKv,
  keys: LedgerKeys,
  store: { get(key: string, range?: { offset: number; length: number }): Promise<Buffer> },
  options: LedgerCheckOptions = {},
): Promise<LedgerCheckResult> {
  const out: LedgerCheckResult = { streams: 0, entries: 0, skipped: 0, bytes: 0, damaged: [], unreadable: [] };
  const names = options.streams ?? (await streamsOf(kv, keys));
  const concurrency = Math.max(1, options.concurrency ?? 8);
  const pending = await pendingParts(kv, keys, out);
  for (const stream of names) {
    const m = await kv.get(keys.meta(stream), 5_000);
    if (m.kv === null) continue;
    out.streams++;
    const startSeq = (JSON.parse(m.kv.value.toString()) as { startSeq?: number }).startSeq ?? 0;
    const entries: Entry[] = [];
    for await (const p of scanPrefix(kv, keys.entries(stream), 512)) entries.push(JSON.parse(p.value.toString()) as Entry);
    // The records format: parts not indexed yet, which a read of the stream reaches as well.
    const parts: Entry[] = [...(pending.get(stream) ?? [])];
    for await (const p of scanPrefix(kv, keys.strandedParts(stream), 512)) parts.push(JSON.parse(p.value.toString()) as Entry);
    // A recovery's plan its opener did not finish (recovery-plan.ts): the stream's next opener records its entries.
    for await (const p of scanPrefix(kv, keys.recoveryTokens(stream), 64)) {
      try {
        for (const e of planOfKey(p.key.slice(keys.recoveryTokens(stream).length), p.value)?.entries ?? []) parts.push(e);
      } catch (err) {
        out.unreadable.push({ stream, object: p.key.slice(keys.root.length), reason: (err as Error).message });
      }
    }
    let notIndexed: Entry[];
    try {
      notIndexed = uncovered(parts, entries);
    } catch {
      notIndexed = parts; // a part overlapping an entry: both read, the holes judged by the entries alone
    }
    const live: Entry[] = [];
    for (const e of entries) {
      if (e.from < e.to && e.to <= startSeq) out.skipped++;
      else live.push(e);
    }
    for (const e of notIndexed) if (e.to > startSeq) live.push(e);
    if (notIndexed.length > 0) live.sort((a, b) => a.from - b.from);
    // Holes: seqs between data entries that no entry holds (in seq order: entries are in write order).
    let at = -1;
    for (const e of live) {
      if (!(e.from < e.to)) continue;
      if (at >= 0 && e.from > at && e.from > startSeq) {
        const from = Math.max(at, startSeq);
        out.damaged.push({ stream, from_seq: from, to_seq: e.from - 1, object: '', offset: 0, length: 0, kind: 'hole', reason: `no ledger entry holds records ${from}..${e.from - 1}` });
      }
      at = Math.max(at, e.to);
    }
    await eachLimited(live, concurrency, async (e) => {
      const d = (kind: ObjectDamage['kind'], reason: string): void => {
        out.damaged.push({ stream, from_seq: e.from, to_seq: e.to - 1, object: e.o, offset: e.off, length: e.len, kind, reason });
      };
      out.entries++;
      let buf: Buffer;
      try {
        buf = await store.get(e.o, { offset: e.off, length: e.len });
      } catch (err) {
        if (isObjectNotFound(err)) d('missing', 'the object is missing from the object store');
        else out.unreadable.push({ stream, object: e.o, reason: (err as Error).message });
        return;
      }
      out.bytes += buf.length;
      if (buf.length !== e.len) return d('short', `the object store returned ${buf.length} bytes, not ${e.len}`);
      const problem = framesProblem(buf);
      if (problem !== null) d('frames', problem);
    });
    await checkSnapshot(kv, keys, store, stream, out);
  }
  out.damaged.sort((a, b) => (a.stream < b.stream ? -1 : a.stream > b.stream ? 1 : a.from_seq - b.from_seq));
  return out;
}

/** The stream's producer snapshot object, when `p/<stream>` names one: there, whole, and a snapshot of the seq named. */
async function checkSnapshot(kv: LedgerKv, keys: LedgerKeys, store: { get(key: string, range?: { offset: number; length: number }): Promise<Buffer> }, stream: string, out: LedgerCheckResult): Promise<void> {
  const p = await kv.get(keys.producers(stream), 5_000);
  if (p.kv === null) return;
  const rec = JSON.parse(p.kv.value.toString()) as { seq: number; o?: string; bytes?: number };
  if (rec.o === undefined) return;
  const o = rec.o;
  const length = rec.bytes ?? 0;
  const d = (reason: string): void => void out.damaged.push({ stream, from_seq: rec.seq, to_seq: rec.seq, object: o, offset: 0, length, kind: 'producers', reason: `the producer snapshot ${reason}` });
  let buf: Buffer;
  try {
    buf = await store.get(o);
  } catch (err) {
    if (isObjectNotFound(err)) d('is missing from the object store');
    else out.unreadable.push({ stream, object: o, reason: (err as Error).message });
    return;
  }
  out.bytes += buf.length;
  if (buf.length !== length) return d(`has ${buf.length} bytes, the ledger names ${length}`);
  let v: { seq?: unknown; producers?: unknown };
  try {
    v = JSON.parse(buf.toString('utf8')) as typeof v;
  } catch {
    return d('is not JSON');
  }
  if (v.seq !== rec.seq || !Array.isArray(v.producers)) d(`is not a snapshot as of seq ${rec.seq}`);
}

/** The parts every writer's q/ records name (the records format: pending until indexed), by stream. */
async function pendingParts(kv: LedgerKv, keys: LedgerKeys, result: LedgerCheckResult): Promise<Map<string, Entry[]>> {
  const parts: RecordedPart[] = [];
  for await (const p of scanPrefix(kv, keys.partRecords(''), 256)) {
    try {
      parts.push(...decodePartRecord(p.value));
    } catch (err) {
      // Not a record this check can read: the parts it names are not looked at (the check is incomplete).
      result.unreadable.push({ stream: '', object: p.key.slice(keys.root.length), reason: (err as Error).message });
    }
  }
  return partsByStream(parts);
}

/** Every stream with an `m/` record, in key order. */
async function streamsOf(kv: LedgerKv, keys: LedgerKeys): Promise<string[]> {
  const prefix = `${keys.root}m/`;
  const out: string[] = [];
  for await (const p of scanPrefix(kv, prefix, 1000, { keysOnly: true })) out.push(streamOfSegment(p.key.slice(prefix.length)));
  return out;
}
