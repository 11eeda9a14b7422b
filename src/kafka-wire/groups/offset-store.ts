/**
 * Committed offsets of consumer groups, kept in the node's metadata store (fsynced before an
 * OffsetCommit is answered, so an acknowledged commit survives a crash). Key layout:
 *
 *   kafka/offsets/<group>/<topic>   {partitions: {"<p>": {offset, leaderEpoch, metadata, committedAt}}}
 *   kafka/groups/<group>            {protocolType, groupType?}   (what DescribeGroups/ListGroups show after a restart;
 *                                   groupType "consumer": a group of the consumer group protocol, KIP-848)
 *
 * `<group>` is encodeURIComponent of the group id, so a `/` inside a group id cannot make one
 * group's prefix match another's; topic names have no `/` (1-249 of a-z A-Z 0-9 . _ -).
 * `offset` is a decimal string (int64 on the wire). One record per (group, topic) keeps a commit
 * of every partition of a topic atomic; the puts of one OffsetCommit are issued in one event-loop
 * turn, so the store writes them with one fdatasync.
 */
import { type MetaStore } from '../../actors';

export interface CommittedOffset {
  readonly offset: bigint;
  readonly leaderEpoch: number;
  readonly metadata: string | null;
  /** When the commit was accepted (ms since the epoch). */
  readonly committedAt: number;
}

interface StoredPartition {
  offset: string;
  leaderEpoch: number;
  metadata: string | null;
  committedAt: number;
}

interface StoredTopic {
  partitions: Record<string, StoredPartition>;
}

/** A group's protocol: classic (JoinGroup/SyncGroup) or consumer (ConsumerGroupHeartbeat, KIP-848). */
export type GroupType = 'classic' | 'consumer';

interface StoredGroup {
  protocolType: string;
  /** Absent: classic (records written before the consumer protocol). */
  groupType?: GroupType;
}

export interface OffsetToCommit {
  readonly topic: string;
  readonly partition: number;
  readonly offset: CommittedOffset;
}

const OFFSETS = 'kafka/offsets/';
const GROUPS = 'kafka/groups/';

const enc = (group: string): string => encodeURIComponent(group);

function fromStored(p: StoredPartition): CommittedOffset {
  return { offset: BigInt(p.offset), leaderEpoch: p.leaderEpoch, metadata: p.metadata, committedAt: p.committedAt };
}

export class OffsetStore {
  readonly #meta: MetaStore;
  /**
   * Topic records written but not yet applied to the view: the base of the next merge, so two
   * commits in flight on one (group, topic) both land (the store applies puts in call order).
   */
  readonly #pending = new Map<string, StoredTopic>();

  constructor(meta: MetaStore) {
    this.#meta = meta;
  }

  /** The committed offset of one partition, or undefined. */
  get(group: string, topic: string, partition: number): CommittedOffset | undefined {
    const p = this.#meta.get<StoredTopic>(`${OFFSETS}${enc(group)}/${topic}`)?.value.partitions[String(partition)];
    return p === undefined ? undefined : fromStored(p);
  }

  /** Every committed offset of a group, by topic then partition. */
  all(group: string): Map<string, Map<number, CommittedOffset>> {
    const prefix = `${OFFSETS}${enc(group)}/`;
    const out = new Map<string, Map<number, CommittedOffset>>();
    for (const rec of this.#meta.list<StoredTopic>(prefix)) {
      const parts = new Map<number, CommittedOffset>();
      for (const [p, v] of Object.entries(rec.value.partitions)) parts.set(Number(p), fromStored(v));
      if (parts.size > 0) out.set(rec.key.slice(prefix.length), parts);
    }
    return out;
  }

  /** Whether the store knows the group (offsets or a protocol type). */
  has(group: string): boolean {
    return this.#meta.get(`${GROUPS}${enc(group)}`) !== null || this.#meta.list(`${OFFSETS}${enc(group)}/`).length > 0;
  }

  /** Group ids with committed offsets or a stored protocol type. */
  groups(): string[] {
    const ids = new Set<string>();
    for (const r of this.#meta.list(GROUPS)) ids.add(decodeURIComponent(r.key.slice(GROUPS.length)));
    for (const r of this.#meta.list(OFFSETS)) {
      const rest = r.key.slice(OFFSETS.length);
      ids.add(decodeURIComponent(rest.slice(0, rest.indexOf('/'))));
    }
    return [...ids];
  }

  protocolType(group: string): string | null {
    return this.#meta.get<StoredGroup>(`${GROUPS}${enc(group)}`)?.value.protocolType ?? null;
  }

  groupType(group: string): GroupType {
    return this.#meta.get<StoredGroup>(`${GROUPS}${enc(group)}`)?.value.groupType ?? 'classic';
  }

  /** Remember a group's protocol type and group type (a write only when one changes). */
  async setProtocolType(group: string, protocolType: string, groupType: GroupType = 'classic'): Promise<void> {
    if (this.protocolType(group) === protocolType && this.groupType(group) === groupType) return;
    await this.#meta.put<StoredGroup>(`${GROUPS}${enc(group)}`, groupType === 'classic' ? { protocolType } : { protocolType, groupType });
  }

  /** Durably record `offsets`; resolves once every one is on disk. */
  async commit(group: string, offsets: ReadonlyArray<OffsetToCommit>): Promise<void> {
    const byTopic = new Map<string, Record<string, StoredPartition>>();
    for (const o of offsets) {
      let t = byTopic.get(o.topic);
      if (t === undefined) byTopic.set(o.topic, (t = {}));
      t[String(o.partition)] = { offset: o.offset.offset.toString(), leaderEpoch: o.offset.leaderEpoch, metadata: o.offset.metadata, committedAt: o.offset.committedAt };
    }
    const writes: Array<Promise<unknown>> = [];
    for (const [topic, updates] of byTopic) {
      const key = `${OFFSETS}${enc(group)}/${topic}`;
      const base = this.#pending.get(key) ?? this.#meta.get<StoredTopic>(key)?.value ?? { partitions: {} };
      const next: StoredTopic = { partitions: { ...base.partitions, ...updates } };
      this.#pending.set(key, next);
      const settled = (): void => {
        if (this.#pending.get(key) === next) this.#pending.delete(key);
      };
      writes.push(this.#meta.put(key, next).then(settled, (err: unknown) => {
        settled();
        throw err;
      }));
    }
    await Promise.all(writes);
  }

  /** Forget a group: its committed offsets and protocol type (DeleteGroups). */
  async deleteGroup(group: string): Promise<void> {
    const keys = this.#meta.list(`${OFFSETS}${enc(group)}/`).map((r) => r.key);
    keys.push(`${GROUPS}${enc(group)}`);
    await Promise.all(keys.map((k) => this.#meta.delete(k)));
  }

  /** Forget the committed offsets of some partitions of one topic (OffsetDelete). */
  async deletePartitions(group: string, topic: string, partitions: ReadonlyArray<number>): Promise<void> {
    const key = `${OFFSETS}${enc(group)}/${topic}`;
    const base = this.#pending.get(key) ?? this.#meta.get<StoredTopic>(key)?.value;
    if (base === undefined) return;
    const next: StoredTopic = { partitions: { ...base.partitions } };
    for (const p of partitions) delete next.partitions[String(p)];
    if (Object.keys(next.partitions).length === 0) await this.#meta.delete(key);
    else await this.#meta.put(key, next);
  }
}
