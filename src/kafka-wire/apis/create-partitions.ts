/**
 * CreatePartitions (key 37), v0–3: grows a topic to `count` partitions by creating the streams
 * `/T/<n>` (kafkaTopic T, topics.ts) with partition 0's TTL. Fewer or as many partitions as the
 * topic has is INVALID_PARTITIONS (37), as in Kafka (partitions are never removed); replica
 * assignments are accepted and ignored (one node holds every partition).
 */
import {
  type CreatePartitionsRequest,
  type CreatePartitionsResponse,
  type CreatePartitionsTopicResult,
  CREATE_PARTITIONS,
  decodeCreatePartitionsRequest,
  encodeCreatePartitionsResponse,
} from '../messages/create-partitions';
import { type ApiHandler } from '../handler';
import { leaderError } from '../partitions';
import { KafkaError, createErrorOf, messageOf } from '../error-codes';
import { allowed } from '../auth';
import { streamOfPartition } from '../topics';
import { KAFKA_CONTENT_TYPE, MAX_PARTITIONS } from '../topic-admin';

export const CREATE_PARTITIONS_HANDLER: ApiHandler<CreatePartitionsRequest, CreatePartitionsResponse> = {
  api: CREATE_PARTITIONS,
  decode: decodeCreatePartitionsRequest,
  encode: encodeCreatePartitionsResponse,
  async handle(ctx, req, _version, conn) {
    const results: CreatePartitionsTopicResult[] = [];
    for (const q of req.topics) {
      const res = (errorCode: number, errorMessage: string | null): number => results.push({ name: q.name, errorCode, errorMessage });
      const t = await ctx.topics.get(q.name);
      const p0 = t?.partitions[0];
      if (t === undefined || p0 === undefined) {
        res(KafkaError.UNKNOWN_TOPIC_OR_PARTITION, `topic ${q.name} does not exist`);
        continue;
      }
      const current = t.partitions.length;
      if (q.count <= current) {
        res(KafkaError.INVALID_PARTITIONS, `Topic currently has ${current} partitions, which is higher than or equal to the requested ${q.count}.`);
        continue;
      }
      if (q.count > MAX_PARTITIONS) {
        res(KafkaError.INVALID_PARTITIONS, `a topic has at most ${MAX_PARTITIONS} partitions`);
        continue;
      }
      const added: string[] = [];
      for (let p = current; p < q.count; p++) added.push(streamOfPartition(t.name, p));
      if (!added.every((s) => allowed(ctx, conn, 'create', s))) {
        res(KafkaError.TOPIC_AUTHORIZATION_FAILED, 'the token does not allow creating the new partitions\' streams');
        continue;
      }
      if (req.validateOnly) {
        res(0, null);
        continue;
      }
      try {
        // In a cluster partition 0 may live elsewhere: the new partitions then start without its retention.
        const first = leaderError(ctx, p0) !== 0 ? { ttlSeconds: null } : await ctx.shards.head(p0);
        for (let p = current; p < q.count; p++) {
          const name = streamOfPartition(t.name, p);
          if (ctx.cluster !== null) await ctx.cluster.create({ name, contentType: KAFKA_CONTENT_TYPE, ttlSeconds: first.ttlSeconds, kafkaTopic: t.name });
          else await ctx.shards.create({ name, contentType: KAFKA_CONTENT_TYPE, ttlSeconds: first.ttlSeconds, expiresAtMs: null, closed: false, records: [], kafkaTopic: t.name });
        }
        // The new partitions validate as partition 0 does (its rule is in the metadata store, seen by every node).
        const rule = ctx.validation?.rule(p0) ?? null;
        if (rule !== null) await ctx.validation!.change(added, t.name, rule);
        await ctx.topics.rebuild();
        ctx.log.info({ topic: t.name, from: current, to: q.count }, 'kafka partitions created');
        res(0, null);
      } catch (err) {
        res(createErrorOf(err), messageOf(err));
      }
    }
    return { throttleTimeMs: 0, results };
  },
};
