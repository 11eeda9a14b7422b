/**
 * A writer run's unrecorded tail (tail-recovery.ts): the group objects of a run above its `h/`
 * mark. They may hold parts acknowledged before the ledger recorded them — of a stream fenced
 * before its writer could record them (a run ends at such a fence, and its mark never passes
 * them), or of any stream of a writer that died — which only the new owner's tail walk records.
 * That walk reads the run's objects in order and stops at the first name it finds absent, so every
 * object of the tail must outlive it, whatever the object holds and whatever refers to it: one
 * reaped before it (its other streams' entries compacted away) is a gap that ends the walk short of
 * the acknowledged parts after it, which are then lost. The reaper and its orphan sweep keep them
 * (Reaper, `runTailPinMs`): a young one without looking, an older one for as long as a walk may
 * still need it (`TailNeeds`: an early part at or after it that its stream's ledger records do
 * not reach yet), however long that is.
 */
import { type GroupPart, readGroupObject } from './group-object';
import { type LedgerKeys, parseGroupObjectKey, writerObjectKey } from './ledger-keys';
import { LEDGER_DEADLINE_MS, type LedgerKv, type LedgerRead, type MaintenanceStore, scanPages } from './maintenance-ledger';
import { isObjectNotFound } from './object-store';

/** A run's `h/` mark: the run whose numbers start at `from` recorded every group it acknowledged up to `n`. */
export interface RunMark {
  from: number;
  n: number;
}

/** Of a writer's marks, the one of the run that number `at` belongs to (the newest run starting at or below it), or null. */
export function markOfRun(marks: Iterable<RunMark>, at: number): RunMark | null {
  let best: RunMark | null = null;
  for (const m of marks) if (m.from <= at && (best === null || m.from > best.from)) best = m;
  return best;
}

/** The marks of a writer's `h/` keys (`prefix`: the writer's, LedgerKeys.recordedRuns), skipping any that do not parse. */
export function parseMarks(prefix: string, kvs: Iterable<{ key: string; value: Buffer }>): RunMark[] {
  const out: RunMark[] = [];
  for (const kv of kvs) {
    const from = Number(kv.key.slice(prefix.length));
    const n = Number(kv.value.toString());
    if (Number.isSafeInteger(from) && Number.isSafeInteger(n)) out.push({ from, n });
  }
  return out;
}

/** Writers whose marks are remembered (RunTails): a few runs each. */
const WRITERS_KEPT = 10_000;
/** A writer's h/ keys read at most (one per run: a run ends at a fence or a restart). */
const MARKS_READ = 1_000;
/** Writers' marks read per etcd call (etcd's 128 operations a txn). */
const WRITERS_PER_READ = 128;

/**
 * Which group objects lie in their run's unrecorded tail. Marks only grow and a number's run never
 * changes (a new run starts above every number its writer used), so a number found at or below its
 * run's mark stays there: marks are remembered, and read again (one etcd call for up to 128
 * writers) only for objects the remembered ones do not cover.
 */
export class RunTails {
  readonly #kv: LedgerKv;
  readonly #keys: LedgerKeys;
  readonly #marks = new Map<string, RunMark[]>();

  constructor(kv: LedgerKv, keys: LedgerKeys) {
    this.#kv = kv;
    this.#keys = keys;
  }

  /** Of `objectKeys`, the group objects above their run's mark (a run with no mark yet: all of its objects). */
  async inTail(objectKeys: readonly string[]): Promise<Set<string>> {
    const unsure: Array<{ key: string; writer: string; n: number }> = [];
    for (const key of objectKeys) {
      const g = parseGroupObjectKey(key);
      if (g !== null && !this.#covered(g.writer, g.n)) unsure.push({ key, writer: g.writer, n: g.n });
    }
    const out = new Set<string>();
    if (unsure.length === 0) return out;
    const writers = [...new Set(unsure.map((u) => u.writer))];
    for (let i = 0; i < writers.length; i += WRITERS_PER_READ) {
      const batch = writers.slice(i, i + WRITERS_PER_READ);
      const reads: LedgerRead[] = batch.map((w) => {
        const prefix = this.#keys.recordedRuns(w);
        return { from: prefix, prefix, limit: MARKS_READ };
      });
      const { results } = await this.#kv.readMany(reads, LEDGER_DEADLINE_MS);
      batch.forEach((w, k) => this.#remember(w, parseMarks(this.#keys.recordedRuns(w), results[k]?.kvs ?? [])));
    }
    for (const u of unsure) if (!this.#covered(u.writer, u.n)) out.add(u.key);
    return out;
  }

  #covered(writer: string, n: number): boolean {
    const marks = this.#marks.get(writer);
    if (marks === undefined) return false;
    const m = markOfRun(marks, n);
    return m !== null && n <= m.n;
  }

  #remember(writer: string, marks: RunMark[]): void {
    this.#marks.delete(writer);
    if (this.#marks.size >= WRITERS_KEPT) this.#marks.delete(this.#marks.keys().next().value!);
    this.#marks.set(writer, marks);
  }
}

/** What a group object of a tail tells a check (TailNeeds): its early parts, or that a walk stops there. */
type TailObject = { kind: 'group'; early: GroupPart[] } | { kind: 'end' } | { kind: 'unknown' };

/** Parsed tail objects kept (an object never changes once written). */
const OBJECTS_KEPT = 10_000;

/**
 * Whether an old group object of a run's unrecorded tail may still be needed by a tail walk. A
 * walk of stream s reads its last writer's objects in order from where s's records end and stops
 * at the first absent name or fence marker, taking s's early parts (group-object.ts) as it goes.
 * So an object is needed while some object from it up to the stretch's end (the first absent
 * name or marker) holds an early part its stream's ledger records do not reach: the stream's
 * newest entry ends below the part's end, and its start (a trim's) is below it too. A stream
 * deleted needs nothing; one whose records reach past the part has it (recorded by its writer, a
 * walk or an indexer, or compacted since). Anything this cannot read — the store or etcd failing,
 * a damaged object, more objects than the check's budget — counts as needed: keeping an object
 * longer only costs storage. A stream deleted and created again under its name keeps the old
 * one's tail objects until the new one's records pass their parts (the part tables name streams,
 * not incarnations).
 */
export class TailNeeds {
  readonly #kv: LedgerKv;
  readonly #keys: LedgerKeys;
  readonly #store: Pick<MaintenanceStore, 'get'>;
  readonly #objects = new Map<string, TailObject>();

  constructor(kv: LedgerKv, keys: LedgerKeys, store: Pick<MaintenanceStore, 'get'>) {
    this.#kv = kv;
    this.#keys = keys;
    this.#store = store;
  }

  /** Of `objectKeys` (group objects of runs' tails), those a walk may still need; `budget`: objects read from the store at most. */
  async needed(objectKeys: readonly string[], budget: number): Promise<Set<string>> {
    const out = new Set<string>();
    const byWriter = new Map<string, Array<{ key: string; n: number }>>();
    for (const key of objectKeys) {
      const g = parseGroupObjectKey(key);
      if (g === null) continue;
      let list = byWriter.get(g.writer);
      if (list === undefined) byWriter.set(g.writer, (list = []));
      list.push({ key, n: g.n });
    }
    const ends = new Map<string, Promise<number | null>>();
    const recordedEnd = (stream: string): Promise<number | null> => {
      let p = ends.get(stream);
      if (p === undefined) ends.set(stream, (p = this.#recordedEnd(stream)));
      return p;
    };
    const reads = { left: budget };
    for (const [writer, list] of byWriter) {
      list.sort((a, b) => a.n - b.n);
      // A stretch: objects from `from` up to the first absent name or marker, read once for every key in it.
      let stretch: { to: number; neededFrom: number } | null = null;
      for (const { key, n } of list) {
        if (stretch === null || n >= stretch.to) stretch = await this.#stretch(writer, n, reads, recordedEnd);
        // Needed when an unreached early part lies at or after it (neededFrom: the highest such object's number + 1, or -1 when unsure).
        if (stretch.neededFrom < 0 || n < stretch.neededFrom) out.add(key);
      }
    }
    return out;
  }

  /**
   * Read `writer`'s objects from `from` on until a walk would stop (`to`: that number); `neededFrom` is one past the
   * last object holding an early part not reached yet (0 when none: nothing from `from` is
   * needed), or -1 when the stretch could not be read to its end.
   */
  async #stretch(writer: string, from: number, reads: { left: number }, recordedEnd: (stream: string) => Promise<number | null>): Promise<{ to: number; neededFrom: number }> {
    let neededFrom = 0;
    for (let n = from; ; n++) {
      const o = await this.#object(writerObjectKey(writer, n), reads);
      if (o.kind === 'unknown') return { to: Number.MAX_SAFE_INTEGER, neededFrom: -1 };
      if (o.kind === 'end') return { to: n, neededFrom };
      for (const part of o.early) {
        const end = await recordedEnd(part.stream).catch(() => -1);
        if (end !== null && end < part.to) neededFrom = n + 1;
      }
    }
  }

  async #object(key: string, reads: { left: number }): Promise<TailObject> {
    const kept = this.#objects.get(key);
    if (kept !== undefined) return kept;
    if (reads.left <= 0) return { kind: 'unknown' };
    reads.left--;
    let o: TailObject;
    try {
      const g = readGroupObject(await this.#store.get(key));
      o = g.kind === 'marker' ? { kind: 'end' } : { kind: 'group', early: g.parts.filter((p) => p.early) };
    } catch (err) {
      if (!isObjectNotFound(err)) return { kind: 'unknown' }; // the store failing, or a damaged object: kept, looked at again later
      return { kind: 'end' }; // absent (not kept: a late put may still fill the name)
    }
    if (this.#objects.size >= OBJECTS_KEPT) this.#objects.delete(this.#objects.keys().next().value!);
    this.#objects.set(key, o);
    return o;
  }

  /** The seq `stream`'s ledger records reach (its newest entry's end, or its start when that is above), or null when the stream is gone. */
  async #recordedEnd(stream: string): Promise<number | null> {
    // The fence is the stream's (a delete removes it); m/, when written, has its start.
    const { results } = await this.#kv.readMany([{ get: this.#keys.fence(stream) }, { get: this.#keys.meta(stream) }], LEDGER_DEADLINE_MS);
    if (results[0]!.kvs.length === 0) return null;
    const meta = results[1]!.kvs[0];
    let end = meta === undefined ? 0 : Number((JSON.parse(meta.value.toString('utf8')) as { startSeq?: unknown }).startSeq ?? 0);
    let last: Buffer | null = null;
    for await (const page of scanPages(this.#kv, this.#keys.entries(stream), 1000)) last = page[page.length - 1]!.value;
    if (last !== null) end = Math.max(end, Number((JSON.parse(last.toString('utf8')) as { to?: unknown }).to ?? 0));
    return Number.isSafeInteger(end) ? end : -1;
  }
}
