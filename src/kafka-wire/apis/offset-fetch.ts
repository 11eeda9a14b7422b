/**
 * OffsetFetch (key 9), v1–9: committed offsets from the metadata store. v9 names the member and
 * its epoch; in a group of the consumer group protocol they are checked (UNKNOWN_MEMBER_ID,
 * STALE_MEMBER_EPOCH for the group), unless the fetch names no member (epoch -1: an admin). A partition without a
 * commit answers offset -1 and metadata "" (Kafka's answer). Null topics (v2–7) or a group's
 * null topics (v8, which batches groups) mean every topic the group committed for.
 */
import {
  type OffsetFetchRequest,
  type OffsetFetchResponse,
  type OffsetFetchResponsePartitions,
  OFFSET_FETCH,
  decodeOffsetFetchRequest,
  encodeOffsetFetchResponse,
} from '../messages/offset-fetch';
import { type ApiHandler } from '../handler';
import { type KafkaContext } from '../context';
import { type CommittedOffset, GroupError } from '../groups';
import { allowed, groupAllowed } from '../auth';
import { streamOfPartition } from '../topics';

type Topics = Array<{ name: string; partitions: OffsetFetchResponsePartitions[] }>;

function row(partitionIndex: number, c: CommittedOffset | undefined): OffsetFetchResponsePartitions {
  return c === undefined
    ? { partitionIndex, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: GroupError.NONE }
    : { partitionIndex, committedOffset: c.offset, committedLeaderEpoch: c.leaderEpoch, metadata: c.metadata ?? '', errorCode: GroupError.NONE };
}

function fetchGroup(ctx: KafkaContext, conn: object, groupId: string, topics: ReadonlyArray<{ name: string; partitionIndexes: number[] }> | null): Topics {
  const readable = (topic: string, p: number): boolean => allowed(ctx, conn, 'read', streamOfPartition(topic, Math.max(0, p)));
  if (topics === null) {
    // All topics: those whose partitions the scope may not read are left out, as Metadata does.
    return [...ctx.groups.allCommitted(groupId)]
      .map(([name, parts]) => ({ name, partitions: [...parts].filter(([p]) => readable(name, p)).sort((a, b) => a[0] - b[0]).map(([p, c]) => row(p, c)) }))
      .filter((t) => t.partitions.length > 0);
  }
  return topics.map((t) => ({
    name: t.name,
    partitions: t.partitionIndexes.map((p) => (readable(t.name, p) ? row(p, ctx.groups.committed(groupId, t.name, p)) : { ...row(p, undefined), errorCode: GroupError.TOPIC_AUTHORIZATION_FAILED })),
  }));
}

export const OFFSET_FETCH_HANDLER: ApiHandler<OffsetFetchRequest, OffsetFetchResponse> = {
  api: OFFSET_FETCH,
  decode: decodeOffsetFetchRequest,
  encode: encodeOffsetFetchResponse,
  async handle(ctx, req, version, conn) {
    const denied = !groupAllowed(ctx, conn);
    for (const id of version >= 8 ? (req.groups ?? []).map((g) => g.groupId) : [req.groupId ?? '']) await ctx.groups.loadConsumer(id);
    if (version >= 8) {
      const groups = (req.groups ?? []).map((g) =>
{
        const errorCode = denied ? GroupError.GROUP_AUTHORIZATION_FAILED : ctx.groups.validateFetch(g.groupId, g.memberId ?? null, g.memberEpoch ?? -1);
        return errorCode !== GroupError.NONE ? { groupId: g.groupId, topics: [], errorCode } : { groupId: g.groupId, topics: fetchGroup(ctx, conn, g.groupId, g.topics), errorCode };
      });
      return { throttleTimeMs: 0, groups };
    }
    if (denied) return { throttleTimeMs: 0, errorCode: GroupError.GROUP_AUTHORIZATION_FAILED, topics: [] };
    const topics = fetchGroup(ctx, conn, req.groupId ?? '', req.topics ?? null);
    return { throttleTimeMs: 0, errorCode: GroupError.NONE, topics };
  },
};
