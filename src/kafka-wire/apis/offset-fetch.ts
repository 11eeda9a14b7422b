/**
 * OffsetFetch (key 9), v1–8: committed offsets from the metadata store. A partition without a
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

type Topics = Array<{ name: string; partitions: OffsetFetchResponsePartitions[] }>;

function row(partitionIndex: number, c: CommittedOffset | undefined): OffsetFetchResponsePartitions {
  return c === undefined
    ? { partitionIndex, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: GroupError.NONE }
    : { partitionIndex, committedOffset: c.offset, committedLeaderEpoch: c.leaderEpoch, metadata: c.metadata ?? '', errorCode: GroupError.NONE };
}

function fetchGroup(ctx: KafkaContext, groupId: string, topics: ReadonlyArray<{ name: string; partitionIndexes: number[] }> | null): Topics {
  if (topics === null) {
    return [...ctx.groups.allCommitted(groupId)].map(([name, parts]) => ({
      name,
      partitions: [...parts].sort((a, b) => a[0] - b[0]).map(([p, c]) => row(p, c)),
    }));
  }
  return topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((p) => row(p, ctx.groups.committed(groupId, t.name, p))) }));
}

export const OFFSET_FETCH_HANDLER: ApiHandler<OffsetFetchRequest, OffsetFetchResponse> = {
  api: OFFSET_FETCH,
  decode: decodeOffsetFetchRequest,
  encode: encodeOffsetFetchResponse,
  async handle(ctx, req, version) {
    if (version >= 8) {
      return { throttleTimeMs: 0, groups: (req.groups ?? []).map((g) => ({ groupId: g.groupId, topics: fetchGroup(ctx, g.groupId, g.topics), errorCode: GroupError.NONE })) };
    }
    const topics = fetchGroup(ctx, req.groupId ?? '', req.topics ?? null);
    return { throttleTimeMs: 0, errorCode: GroupError.NONE, topics };
  },
};
