/**
 * ConsumerGroupHeartbeat (key 68), v0–1: the consumer group protocol (KIP-848). One request joins
 * (epoch 0), heartbeats (the member's epoch, with what changed: subscription, assignor, owned
 * partitions), or leaves (-1; -2 for a static member coming back). The coordinator answers the
 * member's epoch and, when it changed or the member sent its full state, its assignment
 * (groups/consumer-group.ts). v1 (KIP-1082): the member makes up its own member id.
 */
import {
  type ConsumerGroupHeartbeatRequest,
  type ConsumerGroupHeartbeatResponse,
  CONSUMER_GROUP_HEARTBEAT,
  decodeConsumerGroupHeartbeatRequest,
  encodeConsumerGroupHeartbeatResponse,
} from '../messages/consumer-group-heartbeat';
import { type ApiHandler } from '../handler';
import { type KafkaContext } from '../context';
import { groupAllowed } from '../auth';
import { GroupError, type TopicsSnapshot } from '../groups';
import { clientHostOf } from './join-group';

/** Every topic by name with its id and partition count: what the assignors see. */
export async function topicsSnapshot(ctx: KafkaContext): Promise<TopicsSnapshot> {
  const out = new Map<string, { id: string; partitions: number }>();
  for (const t of await ctx.topics.all()) out.set(t.name, { id: t.id, partitions: t.partitions.length });
  return out;
}

export const CONSUMER_GROUP_HEARTBEAT_HANDLER: ApiHandler<ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse> = {
  api: CONSUMER_GROUP_HEARTBEAT,
  decode: decodeConsumerGroupHeartbeatRequest,
  encode: encodeConsumerGroupHeartbeatResponse,
  async handle(ctx, req, version, conn) {
    if (!groupAllowed(ctx, conn)) {
      return { throttleTimeMs: 0, errorCode: GroupError.GROUP_AUTHORIZATION_FAILED, errorMessage: null, memberId: null, memberEpoch: -1, heartbeatIntervalMs: 0, assignment: null };
    }
    const r = await ctx.groups.consumerHeartbeat(
      req.groupId,
      {
        version,
        memberId: req.memberId,
        memberEpoch: req.memberEpoch,
        instanceId: req.instanceId,
        rackId: req.rackId,
        rebalanceTimeoutMs: req.rebalanceTimeoutMs,
        subscribedTopicNames: req.subscribedTopicNames,
        subscribedTopicRegex: req.subscribedTopicRegex,
        serverAssignor: req.serverAssignor,
        ownedPartitions: req.topicPartitions,
        clientId: conn.clientId ?? '',
        clientHost: clientHostOf(conn.remote),
      },
      await topicsSnapshot(ctx),
    );
    return { throttleTimeMs: 0, ...r };
  },
};
