/**
 * Groups as an operator sees them (the admin API's `/admin/groups`, the dashboard, `svc groups`):
 * every group of the three kinds — classic (group.ts), consumer groups of the KIP-848 protocol
 * (consumer-group.ts) and share groups (share/, over the state HTTP leases use too) — with its
 * state, members and their partitions, committed offsets and lag, and for a share group its
 * partitions' in-flight, pending and running totals. Computed only when asked: it keeps nothing
 * and adds nothing to the group protocols' path.
 *
 * Membership lives on the group's coordinator: a node that does not coordinate a group lists it
 * as its store knows it (Empty, no members) and names the coordinator.
 *
 * A classic group's assignments are opaque to the coordinator (the leader's bytes, handed to each
 * member); a `consumer` group's follow Kafka's ConsumerProtocolAssignment (KIP-429): version int16,
 * [topic string, [partition int32]], user data bytes. Anything else is shown as no assignment.
 */
import type { GroupDoc, GroupMemberDoc, GroupOffsetDoc, ShareGroupDoc, TopicPartitions } from '../gateway';
import { type ShardClient } from '../shards';
import { type GroupCoordinator } from './groups';
import { Reader } from './protocol/reader';
import { type KafkaShare } from './share';
import { type TopicIndex, partitionOfStream } from './topics';

/** A consumer-protocol assignment's topics and partitions, or [] when the bytes are not one. */
export function decodeAssignment(protocolType: string, bytes: Buffer): TopicPartitions[] {
  if (protocolType !== 'consumer' || bytes.length < 6) return [];
  try {
    const r = new Reader(bytes);
    r.int16();
    const n = r.int32();
    if (n < 0 || n > 100_000) return [];
    const out: TopicPartitions[] = [];
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

export interface GroupViewsInput {
  groups: GroupCoordinator;
  share: KafkaShare;
  topics: TopicIndex;
  shards: ShardClient;
  /** The node coordinating a group (null: none live), and this node's id. */
  coordinatorOf: (groupId: string) => number | null;
  nodeId: number;
}

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const named = (tps: ReadonlyArray<{ topicName: string; partitions: number[] }>): TopicPartitions[] => tps.map((t) => ({ topic: t.topicName, partitions: [...t.partitions] }));

/** Committed offsets of a classic or consumer group, with lag against the partitions' ends now. */
async function offsetsOf(o: GroupViewsInput, groupId: string): Promise<GroupOffsetDoc[]> {
  const offsets: GroupOffsetDoc[] = [];
  for (const [topic, parts] of o.groups.allCommitted(groupId)) {
    const t = await o.topics.get(topic);
    for (const [partition, c] of parts) {
      const stream = t?.partitions[partition];
      const end = stream === undefined ? null : await o.shards.head(stream).then((s) => s.nextSeq, () => null);
      const committed = Number(c.offset);
      offsets.push({ topic, partition, committed, end, lag: end === null ? null : Math.max(0, end - committed) });
    }
  }
  return offsets.sort((a, b) => byName(a.topic, b.topic) || a.partition - b.partition);
}

function classicMembers(o: GroupViewsInput, groupId: string): { doc: Pick<GroupDoc, 'state' | 'protocolType' | 'protocolName' | 'groupEpoch'>; members: GroupMemberDoc[] } {
  const g = o.groups.describe(groupId);
  return {
    doc: { state: g.state, protocolType: g.protocolType, protocolName: g.protocolName, groupEpoch: g.generationId > 0 ? g.generationId : null },
    members: g.members.map((m) => ({
      memberId: m.memberId,
      instanceId: m.groupInstanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      memberEpoch: null,
      subscribedTopics: null,
      assignment: decodeAssignment(g.protocolType, m.assignment),
      targetAssignment: null,
    })),
  };
}

function consumerMembers(o: GroupViewsInput, groupId: string): { doc: Pick<GroupDoc, 'state' | 'protocolType' | 'protocolName' | 'groupEpoch'>; members: GroupMemberDoc[] } {
  const g = o.groups.consumerDescribe(groupId);
  return {
    doc: { state: g.groupState === '' ? 'Empty' : g.groupState, protocolType: 'consumer', protocolName: g.assignorName, groupEpoch: g.groupEpoch },
    members: g.members.map((m) => ({
      memberId: m.memberId,
      instanceId: m.instanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      memberEpoch: m.memberEpoch,
      subscribedTopics: [...m.subscribedTopicNames],
      assignment: named(m.assignment.topicPartitions),
      targetAssignment: named(m.targetAssignment.topicPartitions),
    })),
  };
}

async function shareView(o: GroupViewsInput, groupId: string, now: number): Promise<ShareGroupDoc> {
  const partitions = (await o.share.partitionViews(groupId, now)).map(({ kafkaTopic, ...p }) => ({ ...p, ...partitionOfStream({ name: p.stream, kafkaTopic }) }));
  const sum = (f: (p: (typeof partitions)[number]) => number): number => partitions.reduce((n, p) => n + f(p), 0);
  return {
    partitions,
    inFlight: sum((p) => p.inFlight),
    redeliveryPending: sum((p) => p.redeliveryPending),
    lag: sum((p) => p.lag ?? 0),
    totals: { delivered: sum((p) => p.totals.delivered), redelivered: sum((p) => p.totals.redelivered), acknowledged: sum((p) => p.totals.acknowledged), archived: sum((p) => p.totals.archived) },
  };
}

/** Every group (or just `only`), sorted by id. */
export async function groupViews(o: GroupViewsInput, only?: string): Promise<GroupDoc[]> {
  const now = Date.now();
  const out: GroupDoc[] = [];
  const wanted = (id: string): boolean => only === undefined || id === only;
  const where = (groupId: string): Pick<GroupDoc, 'coordinator' | 'coordinatedHere'> => {
    const coordinator = o.coordinatorOf(groupId);
    return { coordinator, coordinatedHere: coordinator === o.nodeId };
  };
  for (const { groupId, groupType } of o.groups.list()) {
    if (!wanted(groupId)) continue;
    if (groupType === 'consumer') await o.groups.loadConsumer(groupId);
    const { doc, members } = groupType === 'consumer' ? consumerMembers(o, groupId) : classicMembers(o, groupId);
    out.push({ groupId, kind: groupType, ...doc, ...where(groupId), members, offsets: await offsetsOf(o, groupId), share: null });
  }
  const shareIds = o.share.allIds(now).filter(wanted);
  // What the share groups' assignments are named against (ids and partition counts), once per call.
  const topics = shareIds.length === 0 ? new Map() : new Map((await o.topics.all()).map((t) => [t.name, { id: t.id, partitions: t.partitions.length }]));
  for (const groupId of shareIds) {
    const d = o.share.describe(groupId, topics, now);
    const members: GroupMemberDoc[] = d.members.map((m) => ({
      memberId: m.memberId,
      instanceId: null,
      clientId: m.clientId,
      clientHost: m.clientHost,
      memberEpoch: m.memberEpoch,
      subscribedTopics: [...m.subscribedTopicNames],
      assignment: named(m.assignment.topicPartitions),
      targetAssignment: null,
    }));
    out.push({ groupId, kind: 'share', state: d.groupState === '' ? 'Empty' : d.groupState, protocolType: 'share', protocolName: 'simple', groupEpoch: d.groupEpoch > 0 ? d.groupEpoch : null, ...where(groupId), members, offsets: [], share: await shareView(o, groupId, now) });
  }
  return out.sort((a, b) => byName(a.groupId, b.groupId));
}
