/**
 * Server-side assignors of the consumer group protocol (KIP-848, "Assignor Selection"): the
 * coordinator computes each member's target assignment; the member never sees the others'.
 *
 * - `uniform` (the default, first of Kafka's group.consumer.assignors): every subscribed partition
 *   spread evenly over the members subscribed to its topic, sticky — a member keeps the partitions
 *   it holds as long as that does not unbalance the group, so a join or a leave moves only the
 *   partitions that must move.
 * - `range`: per topic, the members subscribed to it sorted by member id, each given a contiguous
 *   range of partitions (the first `partitions % members` one more), as the client-side range
 *   assignor does; co-partitioned topics land on the same member.
 *
 * A partition is the key `<topicId>:<partition>` (partitionKey); topic ids are uuids.
 */

/** One member as an assignor sees it. */
export interface AssignorMember {
  readonly memberId: string;
  /** Topic ids the member is subscribed to (names and regex resolved). */
  readonly topics: ReadonlySet<string>;
  /** The member's current target (stickiness), as partition keys. */
  readonly current: ReadonlySet<string>;
}

/** Members, and the partition count of every topic any of them subscribes to, by topic id. */
export interface AssignorInput {
  readonly members: ReadonlyArray<AssignorMember>;
  readonly partitions: ReadonlyMap<string, number>;
}

export type Assignor = (input: AssignorInput) => Map<string, Set<string>>;

export const partitionKey = (topicId: string, partition: number): string => `${topicId}:${partition}`;

export function splitKey(key: string): { topicId: string; partition: number } {
  const i = key.lastIndexOf(':');
  return { topicId: key.slice(0, i), partition: Number(key.slice(i + 1)) };
}

const byId = (a: { memberId: string }, b: { memberId: string }): number => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0);

function uniform({ members, partitions }: AssignorInput): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>(members.map((m) => [m.memberId, new Set<string>()]));
  const sorted = [...members].sort(byId);
  const active = sorted.filter((m) => m.topics.size > 0);
  const all: string[] = [];
  for (const [topicId, n] of [...partitions].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    if (!active.some((m) => m.topics.has(topicId))) continue;
    for (let p = 0; p < n; p++) all.push(partitionKey(topicId, p));
  }
  if (active.length === 0) return out;
  const minQuota = Math.floor(all.length / active.length);
  let extras = all.length % active.length;
  const exists = new Set(all);
  const taken = new Set<string>();
  const give = (m: AssignorMember, key: string): void => {
    out.get(m.memberId)!.add(key);
    taken.add(key);
  };
  const keepable = (m: AssignorMember): string[] => [...m.current].filter((k) => exists.has(k) && !taken.has(k) && m.topics.has(splitKey(k).topicId)).sort();
  // Sticky: each member keeps up to the minimum quota of what it holds, then one more while extras last.
  for (const m of active) for (const k of keepable(m).slice(0, minQuota)) give(m, k);
  for (const m of active) {
    if (extras === 0) break;
    const more = keepable(m);
    if (more.length > 0 && out.get(m.memberId)!.size === minQuota) {
      give(m, more[0]!);
      extras--;
    }
  }
  // The rest to the least loaded eligible member, within quota while the subscriptions allow.
  for (const k of all) {
    if (taken.has(k)) continue;
    const topicId = splitKey(k).topicId;
    const eligible = active.filter((m) => m.topics.has(topicId));
    const load = (m: AssignorMember): number => out.get(m.memberId)!.size;
    let pick = eligible.filter((m) => load(m) < minQuota).sort((a, b) => load(a) - load(b))[0];
    if (pick === undefined && extras > 0) {
      pick = eligible.filter((m) => load(m) === minQuota).sort((a, b) => load(a) - load(b))[0];
      if (pick !== undefined) extras--;
    }
    pick ??= [...eligible].sort((a, b) => load(a) - load(b))[0];
    if (pick !== undefined) give(pick, k);
  }
  return out;
}

function range({ members, partitions }: AssignorInput): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>(members.map((m) => [m.memberId, new Set<string>()]));
  for (const [topicId, n] of partitions) {
    const subs = members.filter((m) => m.topics.has(topicId)).sort(byId);
    if (subs.length === 0) continue;
    const base = Math.floor(n / subs.length);
    const extra = n % subs.length;
    let p = 0;
    subs.forEach((m, i) => {
      const count = base + (i < extra ? 1 : 0);
      for (let j = 0; j < count; j++) out.get(m.memberId)!.add(partitionKey(topicId, p++));
    });
  }
  return out;
}

/** The served assignors by name; the first is the default (group.consumer.assignors). */
export const ASSIGNORS: ReadonlyMap<string, Assignor> = new Map<string, Assignor>([
  ['uniform', uniform],
  ['range', range],
]);

export const DEFAULT_ASSIGNOR = 'uniform';
