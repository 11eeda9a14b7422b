/** Finding the stream of a (topic, partition) a request names. */
import { type KafkaContext } from './context';
import { KafkaError } from './error-codes';
import { type Topic } from './topics';

export type PartitionLookup = { stream: string; topic: Topic } | { stream: null; topic: Topic | undefined };

/** The stream of `partition` of topic `name` (or of the topic with id `topicId`), if both exist. */
export async function lookupPartition(ctx: KafkaContext, name: string | undefined, topicId: string | undefined, partition: number): Promise<PartitionLookup> {
  const topic = name !== undefined && name !== '' ? await ctx.topics.get(name) : topicId !== undefined ? await ctx.topics.byId(topicId) : undefined;
  const stream = topic === undefined || partition < 0 ? undefined : topic.partitions[partition];
  return stream === undefined ? { stream: null, topic } : { stream, topic: topic! };
}

/**
 * 0 when this node leads the partition whose stream is `stream`, else NOT_LEADER_OR_FOLLOWER: in a
 * cluster the owner of the stream leads it, and a client told so refreshes its metadata and goes
 * there (docs/cluster.md, "Kafka").
 */
export function leaderError(ctx: KafkaContext, stream: string): number {
  if (ctx.cluster === null) return 0;
  // Moving (docs/cluster.md, "Transfers"): the client retries after a metadata refresh until the new owner serves it.
  if (ctx.cluster.moving(stream)) return KafkaError.NOT_LEADER_OR_FOLLOWER;
  const leader = ctx.cluster.leaderOf(stream);
  return leader === null || leader === ctx.nodeId ? 0 : KafkaError.NOT_LEADER_OR_FOLLOWER;
}
