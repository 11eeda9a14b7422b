/** Finding the stream of a (topic, partition) a request names. */
import { type KafkaContext } from './context';
import { type Topic } from './topics';

export type PartitionLookup = { stream: string; topic: Topic } | { stream: null; topic: Topic | undefined };

/** The stream of `partition` of topic `name` (or of the topic with id `topicId`), if both exist. */
export async function lookupPartition(ctx: KafkaContext, name: string | undefined, topicId: string | undefined, partition: number): Promise<PartitionLookup> {
  const topic = name !== undefined && name !== '' ? await ctx.topics.get(name) : topicId !== undefined ? await ctx.topics.byId(topicId) : undefined;
  const stream = topic === undefined || partition < 0 ? undefined : topic.partitions[partition];
  return stream === undefined ? { stream: null, topic } : { stream, topic: topic! };
}
