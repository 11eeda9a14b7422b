/**
 * A writer run's unrecorded tail (tail-recovery.ts): the group objects of a run above its `h/`
 * mark. They may hold parts acknowledged before the ledger recorded them — of a stream fenced
 * before its writer could record them (a run ends at such a fence, and its mark never passes
 * them), or of any stream of a writer that died — which only the new owner's tail walk records.
 * That walk reads the run's objects in order and stops at the first name it finds absent, so every
 * object of the tail must outlive it, whatever the object holds and whatever refers to it: one
 * reaped before it (its other streams' entries compacted away) is a gap that ends the walk short of
 * the acknowledged parts after it, which are then lost. The reaper and its orphan sweep keep them
 * (Reaper, `runTailPinMs`).
 */
import { type LedgerKeys, parseGroupObjectKey } from './ledger-keys';
import { LEDGER_DEADLINE_MS, type LedgerKv, type LedgerRead } from './maintenance-ledger';

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
