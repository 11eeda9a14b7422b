/**
 * A tail recovery's plan (tail-recovery.ts): the entries a stream's opener records for the parts
 * it recovered, when they take more than one ledger txn.
 *
 *   k/t/<stream>/<epoch:010d>.plan = {e: [[o, size, counter, off, len, from, to], …], u: [u/ keys]}
 *
 * One txn after another (each ≤ 32 objects) cost a stream's first move after heavy writes in the
 * records format a round trip per 32 pending parts, most of the open (hundreds of ms for a few
 * hundred parts). Sent at once, they may land in any order, and a recovery cut short would leave
 * a hole in the stream's entries that its next opener could not tell from damage. So the plan is
 * written first, under the opener's fence, then the txns go at once, then the stranded parts it
 * names go, then the plan. Whoever opens the stream and finds a plan (its opener's retry, or a
 * later opener after that one died or lost the fence) first finishes it: puts the same entries,
 * under the same names, again. That is safe because a plan still there means its epoch's opener
 * never served the stream (it drops the plan before it does): nothing compacted, trimmed or
 * removed those entries since, and nobody else writes them.
 */
import { type EntryValue } from './ledger';
import { RECOVERY_PLAN_SUFFIX } from './ledger-keys';

/** An entry of a plan: named `<plan epoch>.<counter>`; `size`: bytes of the whole object. */
export interface PlannedEntry extends EntryValue {
  counter: number;
}

export interface RecoveryPlan {
  /** The fence epoch of the opener that wrote it: its entries are named under it. */
  epoch: number;
  /** In counter order, which is seq order. */
  entries: PlannedEntry[];
  /** The stream's stranded parts (`u/` keys) the entries hold: dropped once they are recorded. */
  stranded: string[];
}

/** Entries per txn of a plan: o/, i/ and r/ each at most, within etcd's 128 operations. */
export const PLAN_ENTRIES_PER_TXN = 40;

/** Txns of a plan in flight at once. */
export const PLAN_TXNS_IN_FLIGHT = 16;

/** A plan larger than this is recorded one txn after another, as before (an etcd value stays well under its 1.5 MiB limit). */
export const PLAN_MAX_ENTRIES = 8192;

type Row = [string, number, number, number, number, number, number];

export function encodeRecoveryPlan(plan: Omit<RecoveryPlan, 'epoch'>): Buffer {
  const e: Row[] = plan.entries.map((x) => [x.o, x.size ?? 0, x.counter, x.off, x.len, x.from, x.to]);
  return Buffer.from(JSON.stringify({ e, u: plan.stranded }));
}

/** A plan's value; throws on one that is not a plan (damage: an opener never guesses what a plan held). */
function decodeRecoveryPlan(epoch: number, value: Buffer): RecoveryPlan {
  const v = JSON.parse(value.toString('utf8')) as { e?: unknown; u?: unknown };
  if (!Array.isArray(v.e) || !Array.isArray(v.u) || !v.u.every((k) => typeof k === 'string')) throw new Error('recovery plan is not a plan');
  const entries = v.e.map((r: unknown): PlannedEntry => {
    const [o, size, counter, off, len, from, to] = r as Row;
    if (!Array.isArray(r) || r.length !== 7 || typeof o !== 'string' || ![size, counter, off, len, from, to].every(Number.isSafeInteger)) throw new Error(`recovery plan row ${JSON.stringify(r)} is not an entry`);
    return { o, counter, off, len, from, to, ...(size > 0 ? { size } : {}) };
  });
  return { epoch, entries, stranded: v.u as string[] };
}

/** The plan a key under `k/t/<stream>/` holds (`name`: the key after that prefix), or null when the key is not a plan's (the recovery's commit token). */
export function planOfKey(name: string, value: Buffer): RecoveryPlan | null {
  if (!name.endsWith(RECOVERY_PLAN_SUFFIX)) return null;
  const epoch = Number(name.slice(0, -RECOVERY_PLAN_SUFFIX.length));
  return Number.isSafeInteger(epoch) ? decodeRecoveryPlan(epoch, value) : null;
}
