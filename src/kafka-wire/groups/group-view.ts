/**
 * Consumer groups as an operator sees them (the admin dashboard's `/admin/groups`): state,
 * members with the partitions assigned to them, and per committed partition the offset, the
 * partition's end and the lag. Computed only when asked: it keeps nothing and adds nothing to
 * the group protocol's path.
 *
 * Assignments are opaque to the coordinator (the leader's bytes, handed to each member); a
 * `consumer` group's follow Kafka's ConsumerProtocolAssignment (KIP-429): version int16,
 * [topic string, [partition int32]], user data bytes. Anything else is shown as no assignment.
 */
import { type ShardClient } from '../../shards';
import { Reader } from '../protocol/reader';
import { type TopicIndex } from '../topics';
import { type GroupCoordinator } from './coordinator';

export interface GroupView {
  groupId: string;
  state: string;
  protocolType: string;
  protocolName: string;
  members: Array<{ memberId: string; clientId: string; clientHost: string; assignment: Array<{ topic: string; partitions: number[] }> }>;
  /** Committed offsets; `end` is the partition's next offset and `lag` end − committed (null when the partition is unknown). */
  offsets: Array<{ topic: string; partition: number; committed: number; end: number | null; lag: number | null }>;
}

/** A consumer-protocol assignment's topics and partitions, or [] when the bytes are not one. */
export function decodeAssignment(protocolType: string, bytes: Buffer): Array<{ topic: string; partitions: number[] }> {
  if (protocolType !== 'consumer' || bytes.length < 6) return [];
  try {
    const r = new Reader(bytes);
    r.int16();
    const n = r.int32();
    if (n < 0 || n > 100_000) return [];
    const out: Array<{ topic: string; partitions: number[] }> = [];
    for (let i = 0; i < n; i++) {
      const topic = r.string();
      const k = r.int32();
      if (k < 0 || k > 1_000_000) return [];
      const partitions: number[] = [];
      for (let j = 0; j < k; j++) partitions.push(r.int32());
      out.push({ topic, partitions });
    }
    return out;
  } catch {
    return [];
  }
}

/** Every group the coordinator knows, with lag against the partitions' ends now. */
export async function groupViews(groups: GroupCoordinator, topics: TopicIndex, shards: ShardClient): Promise<GroupView[]> {
  const out: GroupView[] = [];
  for (const { groupId } of groups.list()) {
    const g = groups.describe(groupId);
    const offsets: GroupView['offsets'] = [];
    for (const [topic, parts] of groups.allCommitted(groupId)) {
      const t = await topics.get(topic);
      for (const [partition, c] of parts) {
        const stream = t?.partitions[partition];
        let end: number | null = null;
        if (stream !== undefined) end = await shards.head(stream).then((s) => s.nextSeq, () => null);
        const committed = Number(c.offset);
        offsets.push({ topic, partition, committed, end, lag: end === null ? null : Math.max(0, end - committed) });
      }
    }
    offsets.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
    out.push({
      groupId,
      state: g.state,
      protocolType: g.protocolType,
      protocolName: g.protocolName,
      members: g.members.map((m) => ({ memberId: m.memberId, clientId: m.clientId, clientHost: m.clientHost, assignment: decodeAssignment(g.protocolType, m.assignment) })),
      offsets,
    });
  }
  return out.sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
}
