/** Creating and deleting topics (their streams), shared by CreateTopics, DeleteTopics and Metadata auto-create. */
import { SvcError } from '../errors';
import { type KafkaContext } from './context';
import { type Topic, streamOfPartition, topicNameProblem } from './topics';
import { type StreamConfigChange } from './topic-configs';
import { type ValidationChange } from '../util/validation-rule';

/** The media type of streams created over Kafka: records are opaque bytes. */
export const KAFKA_CONTENT_TYPE = 'application/octet-stream';
/** Partitions of a topic created with numPartitions -1 (the broker default) or auto-created. */
export const DEFAULT_PARTITIONS = 1;
/** Most partitions a topic may be created with. */
export const MAX_PARTITIONS = 10_000;

/**
 * Create topic `name` with `partitions` partitions: stream `/T`, then `/T/1`… with their topic set
 * explicitly. Creates are idempotent per stream, so a retry after a partial failure completes it.
 * Throws SvcError (invalid_parameter for a bad name, conflict when a stream of that name exists with another media type).
 */
export async function createTopic(ctx: KafkaContext, name: string, partitions: number, config: StreamConfigChange = {}): Promise<Topic> {
  const problem = topicNameProblem(name);
  if (problem !== null) throw new SvcError('invalid_parameter', problem);
  const streams: Array<{ name: string; streamId: number }> = [];
  for (let p = 0; p < partitions; p++) {
    const stream = streamOfPartition(name, p);
    if (ctx.cluster !== null) {
      if (config.durability !== undefined && config.durability !== null) throw new SvcError('invalid_parameter', 'flush.messages at topic creation is not taken in a cluster: create the topic, then set it with AlterConfigs');
      // Placed like any new stream; its owner creates it (docs/cluster.md, "Kafka").
      const placed = await ctx.cluster.create({ name: stream, contentType: KAFKA_CONTENT_TYPE, ttlSeconds: config.ttlSeconds ?? null, kafkaTopic: p === 0 ? null : name });
      streams.push({ name: stream, streamId: placed.streamId });
      continue;
    }
    const r = await ctx.shards.create({
      name: stream,
      contentType: KAFKA_CONTENT_TYPE,
      ttlSeconds: config.ttlSeconds ?? null,
      expiresAtMs: null,
      closed: false,
      records: [],
      kafkaTopic: p === 0 ? null : name,
      durability: config.durability ?? null,
    });
    streams.push({ name: stream, streamId: r.info.streamId });
  }
  if (config.validation !== undefined) await changeValidation(ctx, name, streams.map((s) => s.name), config.validation);
  // In a cluster the topic's configs are also its shared record, so every node describes them (shared-topic-configs.ts).
  if (ctx.topicConfigs !== null) {
    if (config.ttlSeconds !== undefined) await ctx.topicConfigs.set(name, config);
    else await ctx.topicConfigs.forget(name);
  }
  ctx.log.info({ topic: name, partitions }, 'kafka topic created');
  return ctx.topics.added(name, streams);
}

/** Delete every partition stream of `t`. */
export async function deleteTopic(ctx: KafkaContext, t: Topic): Promise<void> {
  for (const stream of t.partitions) {
    if (stream === undefined) continue;
    if (ctx.cluster !== null) {
      // Its owner deletes it and frees the name (docs/cluster.md, "Kafka").
      await ctx.cluster.remove(stream);
      continue;
    }
    try {
      await ctx.shards.delete(stream);
    } catch (err) {
      if (!(err instanceof SvcError && err.code === 'not_found')) throw err;
    }
  }
  ctx.topics.removed(t.name);
  await ctx.topicConfigs?.forget(t.name);
  await ctx.validation?.forget(t.partitions.filter((s): s is string => s !== undefined));
  ctx.log.info({ topic: t.name }, 'kafka topic deleted');
}

/** Set a topic's schema validation rule on its partitions (kept in the metadata store, shared by a cluster). */
async function changeValidation(ctx: KafkaContext, topic: string, streams: string[], change: ValidationChange): Promise<void> {
  if (ctx.validation === null) throw new SvcError('invalid_parameter', 'schema validation is not available on this node');
  await ctx.validation.change(streams, topic, change);
  ctx.log.info({ topic, ...change }, 'kafka topic schema validation changed');
}

/** Apply a topic config change (topic-configs.ts) to every partition stream of `t`. */
export async function configureTopic(ctx: KafkaContext, t: Topic, change: StreamConfigChange): Promise<void> {
  if (change.validation !== undefined) await changeValidation(ctx, t.name, t.partitions.filter((s): s is string => s !== undefined), change.validation);
  if (change.ttlSeconds === undefined && change.durability === undefined) return;
  // In a cluster the partitions' owners apply it from the shared record (shared-topic-configs.ts:
  // the retention; CreateTopics refuses flush.messages there, docs/kafka.md).
  if (ctx.topicConfigs !== null) await ctx.topicConfigs.set(t.name, change);
  else for (const stream of t.partitions) if (stream !== undefined) await ctx.shards.configure({ name: stream, ...change });
  ctx.log.info({ topic: t.name, ...change }, 'kafka topic configs altered');
}
