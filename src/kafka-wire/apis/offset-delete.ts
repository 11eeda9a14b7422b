/**
 * OffsetDelete (key 47), v0: drops a group's committed offsets of some partitions. While the group
 * has members it answers GROUP_SUBSCRIBED_TO_TOPIC (86) per partition (subscriptions are opaque
 * member metadata here, so any member counts as subscribed); an unknown group is
 * GROUP_ID_NOT_FOUND (69).
 */
import {
  type OffsetDeleteRequest,
  type OffsetDeleteResponse,
  type OffsetDeleteResponseTopic,
  OFFSET_DELETE,
  decodeOffsetDeleteRequest,
  encodeOffsetDeleteResponse,
} from '../messages/offset-delete';
import { type ApiHandler } from '../handler';
import { KafkaError } from '../error-codes';
import { GroupError } from '../groups/errors';
import { groupAllowed } from '../auth';

export const OFFSET_DELETE_HANDLER: ApiHandler<OffsetDeleteRequest, OffsetDeleteResponse> = {
  api: OFFSET_DELETE,
  decode: decodeOffsetDeleteRequest,
  encode: encodeOffsetDeleteResponse,
  async handle(ctx, req, _version, conn) {
    if (!groupAllowed(ctx, conn)) return { errorCode: KafkaError.GROUP_AUTHORIZATION_FAILED, throttleTimeMs: 0, topics: [] };
    if (!ctx.groups.known(req.groupId)) return { errorCode: GroupError.GROUP_ID_NOT_FOUND, throttleTimeMs: 0, topics: [] };
    const topics: OffsetDeleteResponseTopic[] = [];
    for (const t of req.topics) {
      const code = await ctx.groups.deleteOffsets(req.groupId, t.name, t.partitions.map((p) => p.partitionIndex));
      topics.push({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code })) });
    }
    return { errorCode: 0, throttleTimeMs: 0, topics };
  },
};
