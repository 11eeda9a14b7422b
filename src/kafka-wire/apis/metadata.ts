/**
 * Metadata (key 3), v0–12: this node is the only broker, the leader of every partition and the
 * controller. Topics asked for by name that do not exist are created when AllowAutoTopicCreation
 * is set (librdkafka producers set it, its consumers do not), with DEFAULT_PARTITIONS partitions.
 * v10+ carry topic ids (topics.ts); v10+ requests may name a topic by id alone.
 *
 * v0–3 (kafka-python 2.0.x sends v0 to probe and v1 after): they have no AllowAutoTopicCreation,
 * so a Kafka broker applies its `auto.create.topics.enable` (default true); this listener does the
 * same. In v0 an empty topic list means every topic (v1+ say that with null).
 */
import {
  type MetadataRequest,
  type MetadataResponse,
  type MetadataResponsePartition,
  type MetadataResponseTopic,
  METADATA,
  decodeMetadataRequest,
  encodeMetadataResponse,
} from '../messages/metadata';
import { ZERO_UUID } from '../protocol/uuid';
import { type ApiHandler } from '../handler';
import { type KafkaContext } from '../context';
import { KafkaError, autoCreateErrorOf } from '../error-codes';
import { type Topic, topicNameProblem } from '../topics';
import { DEFAULT_PARTITIONS, createTopic } from '../topic-admin';
import { streamOfPartition } from '../topics';
import { allowed } from '../auth';

/** Cluster id in Metadata: one node is one cluster for now. */
export const CLUSTER_ID = 'svc';
/** "Authorized operations were not requested" (Kafka's Integer.MIN_VALUE sentinel). */
export const NO_OPERATIONS = -2147483648;

export function describeTopic(ctx: KafkaContext, t: Topic): MetadataResponseTopic {
  const partitions: MetadataResponsePartition[] = [];
  t.partitions.forEach((stream, index) => {
    if (stream === undefined) return;
    // In a cluster the leader is the stream's owner (cluster.ts); a partition whose owner is down has no leader.
    const leader = ctx.cluster === null ? ctx.nodeId : (ctx.cluster.leaderOf(stream) ?? ctx.nodeId);
    const up = ctx.cluster === null || ctx.cluster.brokers().some((b) => b.nodeId === leader);
    partitions.push(
      up
        ? { errorCode: 0, partitionIndex: index, leaderId: leader, leaderEpoch: 0, replicaNodes: [leader], isrNodes: [leader], offlineReplicas: [] }
        : { errorCode: KafkaError.LEADER_NOT_AVAILABLE, partitionIndex: index, leaderId: -1, leaderEpoch: 0, replicaNodes: [leader], isrNodes: [], offlineReplicas: [leader] },
    );
  });
  return { errorCode: 0, name: t.name, topicId: t.id, isInternal: false, partitions, topicAuthorizedOperations: NO_OPERATIONS };
}

function missing(name: string | null, errorCode: number, topicId = ZERO_UUID): MetadataResponseTopic {
  return { errorCode, name, topicId, isInternal: false, partitions: [], topicAuthorizedOperations: NO_OPERATIONS };
}

/** A topic's partition-0 stream: the name its Metadata is authorized against. */
function firstStream(t: Topic): string {
  return t.partitions[0] ?? streamOfPartition(t.name, 0);
}

async function topicByName(ctx: KafkaContext, name: string, autoCreate: boolean, conn: object): Promise<MetadataResponseTopic> {
  const t = await ctx.topics.get(name);
  if (t !== undefined) return allowed(ctx, conn, 'head', firstStream(t)) ? describeTopic(ctx, t) : missing(name, KafkaError.TOPIC_AUTHORIZATION_FAILED);
  if (topicNameProblem(name) !== null) return missing(name, KafkaError.INVALID_TOPIC_EXCEPTION);
  if (!autoCreate) return missing(name, KafkaError.UNKNOWN_TOPIC_OR_PARTITION);
  // Auto-create is a create: without it the topic stays unknown, as if auto-create were off.
  if (!allowed(ctx, conn, 'create', streamOfPartition(name, 0))) return missing(name, KafkaError.TOPIC_AUTHORIZATION_FAILED);
  try {
    return describeTopic(ctx, await createTopic(ctx, name, DEFAULT_PARTITIONS));
  } catch (err) {
    ctx.log.warn({ topic: name, err: (err as Error).message }, 'kafka topic auto-create failed');
    return missing(name, autoCreateErrorOf(err));
  }
}

export const METADATA_HANDLER: ApiHandler<MetadataRequest, MetadataResponse> = {
  api: METADATA,
  decode: decodeMetadataRequest,
  encode: encodeMetadataResponse,
  async handle(ctx, req, version, conn) {
    const topics: MetadataResponseTopic[] = [];
    const autoCreate = req.allowAutoTopicCreation ?? true;
    if (req.topics === null || (version === 0 && req.topics.length === 0)) {
      // All topics: those the token may see (Kafka leaves unauthorized topics out of the list).
      for (const t of await ctx.topics.all()) if (allowed(ctx, conn, 'head', firstStream(t))) topics.push(describeTopic(ctx, t));
    } else {
      for (const q of req.topics) {
        if (q.name !== null) {
          topics.push(await topicByName(ctx, q.name, autoCreate, conn));
        } else {
          const t = q.topicId === undefined ? undefined : await ctx.topics.byId(q.topicId);
          if (t === undefined) topics.push(missing(null, KafkaError.UNKNOWN_TOPIC_ID, q.topicId));
          else topics.push(allowed(ctx, conn, 'head', firstStream(t)) ? describeTopic(ctx, t) : missing(null, KafkaError.TOPIC_AUTHORIZATION_FAILED, q.topicId));
        }
      }
    }
    const { host, port } = ctx.advertised();
    // Every live node is a broker in a cluster; the controller is the lowest live id (a name only: no controller work).
    const brokers = ctx.cluster === null ? [{ nodeId: ctx.nodeId, host, port, rack: null }] : ctx.cluster.brokers().map((b) => ({ ...b, rack: null }));
    return {
      throttleTimeMs: 0,
      brokers,
      clusterId: CLUSTER_ID,
      controllerId: brokers[0]?.nodeId ?? ctx.nodeId,
      topics,
      clusterAuthorizedOperations: NO_OPERATIONS,
    };
  },
};
