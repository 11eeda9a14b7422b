/**
 * CreateTopics (key 19), v2–7: topic T becomes stream `/T` (partition 0) and `/T/1`… (topics.ts).
 * The replication factor is checked as Kafka checks it (replication-factor.ts: at most the live
 * brokers; on local disk 1) and reported back; replica assignments are accepted and ignored;
 * topic configs are applied as AlterConfigs would (topic-configs.ts; a refused one fails the topic
 * with INVALID_CONFIG). validateOnly checks the name, partition count and configs.
 */
import {
  type CreatableTopicResult,
  type CreateTopicsRequest,
  type CreateTopicsResponse,
  CREATE_TOPICS,
  decodeCreateTopicsRequest,
  encodeCreateTopicsResponse,
} from '../messages/create-topics';
import { ZERO_UUID } from '../protocol/uuid';
import { type ApiHandler } from '../handler';
import { KafkaError, createErrorOf, messageOf } from '../error-codes';
import { streamOfPartition, topicNameProblem } from '../topics';
import { allowed } from '../auth';
import { DEFAULT_PARTITIONS, MAX_PARTITIONS, createTopic } from '../topic-admin';
import { effectiveReplicationFactor, replicationFactorProblem } from '../replication-factor';
import { ConfigProblem, type StreamConfigChange, parseTopicConfigs } from '../topic-configs';

export const CREATE_TOPICS_HANDLER: ApiHandler<CreateTopicsRequest, CreateTopicsResponse> = {
  api: CREATE_TOPICS,
  decode: decodeCreateTopicsRequest,
  encode: encodeCreateTopicsResponse,
  async handle(ctx, req, _version, conn) {
    const results: CreatableTopicResult[] = [];
    for (const t of req.topics) {
      const fail = (errorCode: number, errorMessage: string): void => {
        results.push({ name: t.name, topicId: ZERO_UUID, errorCode, errorMessage, numPartitions: -1, replicationFactor: -1, configs: [] });
      };
      const partitions = t.numPartitions === -1 ? (t.assignments.length > 0 ? t.assignments.length : DEFAULT_PARTITIONS) : t.numPartitions;
      const problem = topicNameProblem(t.name);
      if (problem !== null) {
        fail(KafkaError.INVALID_TOPIC_EXCEPTION, problem);
        continue;
      }
      if (!allowed(ctx, conn, 'create', streamOfPartition(t.name, 0))) {
        fail(KafkaError.TOPIC_AUTHORIZATION_FAILED, `the token does not allow creating ${streamOfPartition(t.name, 0)}`);
        continue;
      }
      if (partitions < 1 || partitions > MAX_PARTITIONS) {
        fail(KafkaError.INVALID_PARTITIONS, `a topic has 1 to ${MAX_PARTITIONS} partitions`);
        continue;
      }
      // With explicit assignments (replicationFactor -1) the factor is the replicas each lists.
      const asked = t.assignments.length > 0 ? (t.assignments[0]?.brokerIds.length ?? -1) : t.replicationFactor;
      const rfProblem = replicationFactorProblem(asked, ctx.cluster?.brokers().length ?? 1, ctx.cluster?.objects ?? false);
      if (rfProblem !== null) {
        fail(KafkaError.INVALID_REPLICATION_FACTOR, rfProblem);
        continue;
      }
      const factor = effectiveReplicationFactor(asked);
      let config: StreamConfigChange;
      try {
        config = parseTopicConfigs(t.configs);
      } catch (err) {
        if (!(err instanceof ConfigProblem)) throw err;
        fail(KafkaError.INVALID_CONFIG, err.message);
        continue;
      }
      if ((await ctx.topics.get(t.name)) !== undefined) {
        fail(KafkaError.TOPIC_ALREADY_EXISTS, `topic ${t.name} already exists`);
        continue;
      }
      if (req.validateOnly) {
        results.push({ name: t.name, topicId: ZERO_UUID, errorCode: 0, errorMessage: null, numPartitions: partitions, replicationFactor: factor, configs: [] });
        continue;
      }
      try {
        const created = await createTopic(ctx, t.name, partitions, config);
        results.push({ name: t.name, topicId: created.id, errorCode: 0, errorMessage: null, numPartitions: partitions, replicationFactor: factor, configs: [] });
      } catch (err) {
        fail(createErrorOf(err), messageOf(err));
      }
    }
    return { throttleTimeMs: 0, topics: results };
  },
};
