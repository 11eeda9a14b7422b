/**
 * OffsetCommit (key 8), v2–9: the member and generation are checked first (UNKNOWN_MEMBER_ID,
 * ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS for every partition; in a group of the consumer group
 * protocol the generation is the member epoch: STALE_MEMBER_EPOCH, and a member's commit needs v9,
 * else UNSUPPORTED_VERSION, as Kafka answers); then each partition must exist
 * (UNKNOWN_TOPIC_OR_PARTITION) and its metadata fit (OFFSET_METADATA_TOO_LARGE). The accepted
 * offsets are fsynced to the metadata store before the answer (groups/offset-store.ts).
 * v2–4's retention time is accepted and ignored: committed offsets do not expire.
 */
import {
  type OffsetCommitRequest,
  type OffsetCommitResponse,
  type OffsetCommitResponseTopic,
  OFFSET_COMMIT,
  decodeOffsetCommitRequest,
  encodeOffsetCommitResponse,
} from '../messages/offset-commit';
import { type ApiHandler } from '../handler';
import { GroupError, MAX_OFFSET_METADATA } from '../groups';
import { allowed, groupAllowed } from '../auth';
import { streamOfPartition } from '../topics';

export const OFFSET_COMMIT_HANDLER: ApiHandler<OffsetCommitRequest, OffsetCommitResponse> = {
  api: OFFSET_COMMIT,
  decode: decodeOffsetCommitRequest,
  encode: encodeOffsetCommitResponse,
  async handle(ctx, req, version, conn) {
    await ctx.groups.loadConsumer(req.groupId);
    const groupError = groupAllowed(ctx, conn) ? ctx.groups.validateCommit(req.groupId, req.memberId, req.generationIdOrMemberEpoch, version, req.topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex })))) : GroupError.GROUP_AUTHORIZATION_FAILED;
    const topics: OffsetCommitResponseTopic[] = req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: groupError })) }));
    if (groupError !== GroupError.NONE) return { throttleTimeMs: 0, topics };
    const now = Date.now();
    const accepted: Array<{ topic: string; partition: number; slot: { errorCode: number }; offset: { offset: bigint; leaderEpoch: number; metadata: string; committedAt: number } }> = [];
    for (const [ti, t] of req.topics.entries()) {
      const topic = await ctx.topics.get(t.name);
      for (const [pi, p] of t.partitions.entries()) {
        const slot = topics[ti]!.partitions[pi]!;
        if (!allowed(ctx, conn, 'read', streamOfPartition(t.name, Math.max(0, p.partitionIndex)))) slot.errorCode = GroupError.TOPIC_AUTHORIZATION_FAILED;
        else if (topic === undefined || p.partitionIndex < 0 || topic.partitions[p.partitionIndex] === undefined) slot.errorCode = GroupError.UNKNOWN_TOPIC_OR_PARTITION;
        else if (p.committedMetadata !== null && p.committedMetadata.length > MAX_OFFSET_METADATA) slot.errorCode = GroupError.OFFSET_METADATA_TOO_LARGE;
        // Kafka stores a null metadata as the empty string.
        else accepted.push({ topic: t.name, partition: p.partitionIndex, slot, offset: { offset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch ?? -1, metadata: p.committedMetadata ?? '', committedAt: now } });
      }
    }
    if (accepted.length > 0) {
      const errorCode = await ctx.groups.commit(req.groupId, accepted);
      for (const a of accepted) a.slot.errorCode = errorCode;
    }
    return { throttleTimeMs: 0, topics };
  },
};
