/**
 * Recovery of a stream's unrecorded tail (docs/cluster.md, "Objects mode: where data lives"):
 * with a create-only object store, a group is acknowledged once its object is durable, and the
 * ledger records it behind. Whoever takes a stream's fence (a node opening a moved stream, or a
 * shard worker started again on its owner) first finds the groups its last writer acknowledged
 * and the ledger does not name yet, in that writer's objects, and records them under its fence:
 *
 *   w/<stream> = g/<writer>/<n>, the stream's newest entry in <writer>, h/<writer>/<from> of the
 *   run those are in
 *     ──▶ from the number after all three: GET g/<writer>/<k>, k = start, start + 1, …
 *           a group object ──▶ its part table names the stream in a part acknowledged before it
 *                              was recorded? an entry to record (a part recorded before it was
 *                              acknowledged is skipped: its writer acknowledges it only if its own
 *                              record succeeds, which our fence now prevents)
 *           a fence marker ──▶ stop (someone fenced the writer here before)
 *           absent         ──▶ put a fence marker there, create-only ──▶ stop
 *                              (the put found it taken: the writer's own put won; read it, go on)
 *     ──▶ t/<stream>/<epoch> = {w: writer, after: start, end: the marker's number}, under our fence
 *     ──▶ record the entries found under our fence (commitObjects, ≤ 32 objects per commit, under
 *         the recovery's commit token k/t/<stream>/<epoch>, dropped after: ledger.ts, CommitToken)
 *
 * Why this finds every acknowledged group: the writer acknowledges group k only once its object
 * and every object before it are durable, and it records groups in order; h/ moves only with
 * all of a commit's streams recorded (and a run that sees a stream fenced ends: the writer starts
 * a new run above a gap, so h/ of a run never passes a group of a fenced stream that the ledger
 * does not name). So an acknowledged group of the stream that the ledger does not name lies in an
 * unbroken run of objects from `start`, and the first gap comes after it. The marker fills that
 * gap before the writer can: its own put of that name fails, and it acknowledges nothing from
 * there on (object-commit.ts moves to fresh numbers and records again, under the fence, which it
 * no longer holds for this stream). Nothing else may make a gap in that stretch first: the
 * reaper keeps every object of a run above its h/ mark while a walk may need it, though their
 * other streams' entries let go of them (run-tails.ts).
 *
 * The walk's record (`t/`) is written before the entries: the old owner may hold an append whose
 * group object lies in the walked range although it could not answer it yet (its writer switched
 * runs before the group's turn came); it reads the record to answer the truth — acknowledged
 * when the walk took the group, `moved` when it did not (object-commit.ts).
 */
import { phaseTimer } from '../util/phase-timer';
import { type Ledger, type LedgerEntry, OBJECTS_PER_COMMIT } from './ledger';
import { type Fence, parseGroupObjectKey, writerObjectKey } from './ledger-keys';
import { fenceMarker, readGroupObject } from './group-object';
import { type RecordedPart } from './part-records';
import { PLAN_MAX_ENTRIES } from './recovery-plan';
import { type ObjectStore, isObjectNotFound } from './object-store';

/** Objects of the writer's run read at once. */
const READ_AHEAD = 4;

/** The records format (part-records.ts): null when the ledger is not in it; `own`: the caller's writer, whose records its indexer takes. */
export type TailRecords = { own: string | null } | null;

/** What recovery needs of the store: a whole-object read and a create-only put. */
export type TailStore = Pick<ObjectStore, 'get' | 'put' | 'createOnly'>;

export interface RecoveredTail {
  /** Group objects of the writer read (markers included). */
  read: number;
  /** Entries recorded for the stream. */
  recorded: number;
  /**
   * The stream's entries once its tail is recorded, in order: those the ledger held and those
   * recorded here (their `key` unset). Under the caller's fence nobody else records any, so this
   * is what reading them again would give; null when the store has no tail to recover (not read).
   */
  entries: Array<Omit<LedgerEntry, 'key'>> | null;
}

/**
 * Find and record the stream's unrecorded tail under `fence` (which the caller holds); `phases`
 * gets how long reading the ledger, walking the objects and recording took (ms). Rejects
 * when the store or etcd fails, when an object in the run is not a group object (damaged), or
 * when the fence moved on meanwhile.
 */
export async function recoverTail(ledger: Ledger, store: TailStore, stream: string, fence: Fence, phases?: Record<string, number>, records: TailRecords = null): Promise<RecoveredTail> {
  const phase = phaseTimer(phases);
  const out: RecoveredTail = { read: 0, recorded: 0, entries: null };
  // Groups are acknowledged only once recorded without create-only puts: only the records format has a tail then.
  if (!store.createOnly && records === null) return out;
  // Read at once (round trips are most of a move's open): under our fence none of them changes meanwhile.
  const [pos, listed, walks, plans] = await Promise.all([ledger.position(stream), ledger.entries(stream), ledger.tailWalks(stream), ledger.recoveryPlans(stream)]);
  if (plans.length > 0) {
    // An earlier opener's recovery cut short after it planned its entries (recovery-plan.ts): they
    // may have landed in part, a hole in the entries. Finished first, then everything read again.
    for (const plan of plans) if (!(await ledger.finishRecoveryPlan(stream, fence, plan, records !== null))) throw fencedOn(stream, fence);
    phase('tailPlans');
    return recoverTail(ledger, store, stream, fence, phases, records);
  }
  let entries = listed;
  out.entries = entries;
  const at = pos === null ? null : parseGroupObjectKey(pos);
  if (at === null) return out; // no place in a create-only writer: no group of the stream went early
  // The records format (part-records.ts): the parts its writer recorded and did not index yet,
  // and those stranded, read with the entries at one revision, are recorded here first. Not
  // those of the caller's own writer (a shard worker reopening a stream it wrote): its indexer
  // takes them, under the fence they were recorded under, which is still this one.
  let pending: RecordedPart[] = [];
  let stranded: string[] = [];
  if (records !== null && at.writer !== records.own) ({ entries, pending, stranded } = await ledger.pendingOf(stream, at.writer));
  out.entries = entries;
  let start = at.n;
  for (const e of [...entries, ...pending]) {
    const g = parseGroupObjectKey(e.o);
    if (g !== null && g.writer === at.writer) start = Math.max(start, g.n);
  }
  phase('tailLedger');
  let counter = 0;
  for (const e of entries) if (e.epoch === fence.epoch) counter = Math.max(counter, e.counter + 1);
  // The tail continues the recorded entries' seqs: a gap or an overlap is damage, never served.
  let seq = entries.length === 0 ? null : entries[entries.length - 1]!.to;
  const found: Array<{ o: string; bytes: number; counter: number; off: number; len: number; from: number; to: number }> = [];
  for (const p of pending) {
    if (seq !== null && p.from !== seq) throw new Error(`recovering ${stream}: a recorded part in object ${p.o} holds seqs ${p.from}..${p.to}, the stream's entries end at ${seq}`);
    seq = p.to;
    found.push({ o: p.o, bytes: p.size ?? 0, counter: counter++, off: p.off, len: p.len, from: p.from, to: p.to });
  }
  // A store without create-only puts: groups are acknowledged only once recorded, so there is
  // nothing to walk (the records format has its pending parts, above).
  if (store.createOnly) {
    // The h/ mark of the run the walk starts in (a later run began above a gap the walk stops at).
    const h = await ledger.recordedThrough(at.writer, start + 1);
    if (h !== null) start = Math.max(start, h.n);
    // Objects are read READ_AHEAD at a time (a walk is a few objects, and each read a round trip
    // to the store). One read early is as good as one read late: a group object never changes, and
    // the marker's create-only put settles an absent one either way.
    const ahead = new Map<number, Promise<Buffer | null>>();
    const read = (n: number): Promise<Buffer | null> => {
      let p = ahead.get(n);
      if (p === undefined) {
        p = getOrNull(store, writerObjectKey(at.writer, n));
        p.catch(() => undefined); // a read past the end that fails is never awaited
        ahead.set(n, p);
      }
      return p;
    };
    let k = start + 1;
    for (; ; k++) {
      const key = writerObjectKey(at.writer, k);
      for (let n = k; n < k + READ_AHEAD; n++) void read(n);
      let body = await read(k);
      ahead.delete(k);
      if (body === null) {
        try {
          await store.put(key, fenceMarker(fence), { ifAbsent: true });
          break;
        } catch (err) {
          if ((err as { code?: string }).code !== 'PreconditionFailed') throw err;
          body = await store.get(key); // the writer's own put landed first
        }
      }
      out.read++;
      let g;
      try {
        g = readGroupObject(body);
      } catch (err) {
        throw new Error(`recovering ${stream}: object ${key}: ${(err as Error).message}`, { cause: err });
      }
      if (g.kind === 'marker') break;
      const part = g.parts.find((p) => p.stream === stream);
      if (part === undefined || !part.early) continue;
      if (seq !== null && part.from !== seq) throw new Error(`recovering ${stream}: object ${key} holds seqs ${part.from}..${part.to}, the stream's recorded entries end at ${seq}`);
      seq = part.to;
      found.push({ o: key, bytes: body.length, counter: counter++, off: part.off, len: part.len, from: part.from, to: part.to });
    }
    phase('tailWalk');
    // The walk is recorded before what it found: whoever finds the record knows what is taken.
    if (!(await ledger.recordTailWalk(stream, fence, { w: at.writer, after: start, end: k }, walks))) throw fencedOn(stream, fence);
  }
  const pendingObjects = records !== null;
  if (found.length > OBJECTS_PER_COMMIT && found.length <= PLAN_MAX_ENTRIES) {
    // More than one txn: planned, then sent at once (recovery-plan.ts); the plan drops the stranded parts too.
    const plan = { entries: found.map(({ bytes, ...e }) => ({ ...e, ...(bytes > 0 ? { size: bytes } : {}) })), stranded };
    if (!(await ledger.writeRecoveryPlan(stream, fence, plan))) throw fencedOn(stream, fence);
    if (!(await ledger.finishRecoveryPlan(stream, fence, { epoch: fence.epoch, ...plan }, pendingObjects))) throw fencedOn(stream, fence);
    out.recorded = found.length;
  } else {
    if (found.length > 0) {
      // A commit sent again after its answer was lost must not put entries a second time (ledger.ts, CommitToken).
      const token = await ledger.recoveryToken(stream, fence);
      for (let i = 0; i < found.length; i += OBJECTS_PER_COMMIT) {
        const chunk = found.slice(i, i + OBJECTS_PER_COMMIT);
        const objects = new Map(chunk.map((f) => [f.o, f.bytes]));
        const r = await ledger.commitObjects(objects, [{ stream, fence, entries: chunk.map(({ bytes: _, ...e }) => e) }], undefined, { token, pendingObjects });
        if (r.fenced.length > 0 || (r.unknown?.length ?? 0) > 0) throw fencedOn(stream, fence);
        out.recorded += chunk.length;
      }
      await ledger.dropToken(token).catch(() => undefined);
    }
    // Stranded parts are entries now (or were already): their u/ copies go.
    if (stranded.length > 0 && !(await ledger.dropStranded(stream, fence, stranded))) throw fencedOn(stream, fence);
  }
  phase('tailRecord');
  out.entries = [...entries, ...found.map(({ o, off, len, from, to, bytes, counter: c }) => ({ o, off, len, from, to, size: bytes, epoch: fence.epoch, counter: c }))];
  return out;
}

function fencedOn(stream: string, fence: Fence): Error {
  return new Error(`recovering ${stream}: its fence moved on from ${fence.nodeId}:${fence.epoch}`);
}

async function getOrNull(store: TailStore, key: string): Promise<Buffer | null> {
  try {
    return await store.get(key);
  } catch (err) {
    if (isObjectNotFound(err)) return null;
    throw err;
  }
}
