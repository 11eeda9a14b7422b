/**
 * AlterConfigs (key 33), v0–2, and IncrementalAlterConfigs (key 44), v0–1: topic configs become
 * stream config (topic-configs.ts) on every partition stream. AlterConfigs replaces the whole set,
 * as in Kafka: a config it leaves out goes back to its default (retention.ms → no TTL).
 * IncrementalAlterConfigs SETs or DELETEs (back to default) single configs; APPEND/SUBTRACT apply
 * only to list configs (cleanup.policy, whose one value is `delete`). A refused config is
 * INVALID_CONFIG (40) and changes nothing of its resource; broker configs are read-only here
 * (POLICY_VIOLATION, 44); other resource types are INVALID_REQUEST (42).
 *
 * A group's configs (type GROUP, 32) are its share-group config (group-configs.ts), stored in the
 * metadata store, so any node takes them: SET and DELETE; APPEND and SUBTRACT are INVALID_REQUEST,
 * as Kafka answers them for a config that is not a list.
 */
import {
  type AlterConfigsRequest,
  type AlterConfigsResourceResponse,
  type AlterConfigsResponse,
  ALTER_CONFIGS,
  decodeAlterConfigsRequest,
  encodeAlterConfigsResponse,
} from '../messages/alter-configs';
import {
  type IncrementalAlterConfigsRequest,
  type IncrementalAlterConfigsResponse,
  INCREMENTAL_ALTER_CONFIGS,
  decodeIncrementalAlterConfigsRequest,
  encodeIncrementalAlterConfigsResponse,
} from '../messages/incremental-alter-configs';
import { type ApiHandler } from '../handler';
import { type ConnectionInfo, type KafkaContext } from '../context';
import { KafkaError, kafkaErrorOf, messageOf } from '../error-codes';
import { allowed } from '../auth';
import { type GroupConfigChange, RESOURCE_GROUP, groupNameProblem, parseGroupConfigEntries, withResets } from '../group-configs';
import { configureTopic } from '../topic-admin';
import { ConfigProblem, type StreamConfigChange, VALIDATION_CONFIGS, mergeConfigChange, parseTopicConfig } from '../topic-configs';

/** ConfigResource types (kafka.apache.org: DescribeConfigs / AlterConfigs ResourceType). */
export const RESOURCE_TOPIC = 2;
export const RESOURCE_BROKER = 4;

const OP_SET = 0;
const OP_DELETE = 1;
const OP_APPEND = 2;
const OP_SUBTRACT = 3;

/** An operation a group config does not take (APPEND, SUBTRACT: no group config is a list): Kafka's INVALID_REQUEST. */
class NotAListConfig extends Error {}

/** The topic configs AlterConfigs resets when they are left out. */
const RESETTABLE = ['retention.ms', 'flush.messages', ...Object.values(VALIDATION_CONFIGS)];

type Entry = { name: string; value: string | null };

async function alterOne(ctx: KafkaContext, conn: ConnectionInfo, type: number, name: string, entries: () => Entry[], validateOnly: boolean): Promise<AlterConfigsResourceResponse> {
  const res = (errorCode: number, errorMessage: string | null): AlterConfigsResourceResponse => ({ errorCode, errorMessage, resourceType: type, resourceName: name });
  if (type === RESOURCE_BROKER) return res(KafkaError.POLICY_VIOLATION, 'broker configs are read-only on this node (docs/kafka.md, "Topic configs")');
  if (type === RESOURCE_GROUP) return alterGroup(ctx, conn, name, entries, validateOnly, res);
  if (type !== RESOURCE_TOPIC) return res(KafkaError.INVALID_REQUEST, `resource type ${type} is not served (topics and groups are)`);
  const t = await ctx.topics.get(name);
  if (t === undefined) return res(KafkaError.UNKNOWN_TOPIC_OR_PARTITION, `topic ${name} does not exist`);
  if (!t.partitions.every((s) => s === undefined || allowed(ctx, conn, 'create', s))) return res(KafkaError.TOPIC_AUTHORIZATION_FAILED, 'the token does not allow configuring this topic');
  const change: StreamConfigChange = {};
  try {
    for (const e of entries()) mergeConfigChange(change, parseTopicConfig(e.name, e.value));
  } catch (err) {
    if (err instanceof ConfigProblem) return res(KafkaError.INVALID_CONFIG, err.message);
    throw err;
  }
  if (validateOnly) return res(0, null);
  try {
    await configureTopic(ctx, t, change);
    return res(0, null);
  } catch (err) {
    return res(kafkaErrorOf(err), messageOf(err));
  }
}

/**
 * A group's configs. Altering them is configuring, as the HTTP API's PATCH is (`create`, on the
 * write side of the stream group; a group names no stream, so none is matched), and naming a
 * dead-letter topic also needs `create` and `append` on its partition-0 stream, which must exist.
 */
async function alterGroup(ctx: KafkaContext, conn: ConnectionInfo, name: string, entries: () => Entry[], validateOnly: boolean, res: (code: number, message: string | null) => AlterConfigsResourceResponse): Promise<AlterConfigsResourceResponse> {
  const problem = groupNameProblem(name);
  if (problem !== null) return res(KafkaError.INVALID_REQUEST, problem);
  if (!allowed(ctx, conn, 'create')) return res(KafkaError.GROUP_AUTHORIZATION_FAILED, 'the token does not allow configuring groups');
  let change: GroupConfigChange;
  try {
    change = parseGroupConfigEntries(entries());
  } catch (err) {
    if (err instanceof NotAListConfig) return res(KafkaError.INVALID_REQUEST, err.message);
    if (err instanceof ConfigProblem) return res(KafkaError.INVALID_CONFIG, err.message);
    throw err;
  }
  try {
    if (change.deadLetterStream !== null) {
      const dlq = change.deadLetterStream;
      if (!allowed(ctx, conn, 'create', dlq) || !allowed(ctx, conn, 'append', dlq)) return res(KafkaError.TOPIC_AUTHORIZATION_FAILED, `the token does not allow appending to the dead-letter topic ${change.deadLetterTopic}`);
      if ((await ctx.topics.get(change.deadLetterTopic!)) === undefined) return res(KafkaError.INVALID_CONFIG, `Invalid value ${change.deadLetterTopic} for configuration errors.deadletterqueue.topic.name: topic ${change.deadLetterTopic} does not exist (create it first)`);
    }
    if (!validateOnly) await ctx.share.alterConfig(name, change.changes);
    return res(0, null);
  } catch (err) {
    return res(kafkaErrorOf(err), messageOf(err));
  }
}

export const ALTER_CONFIGS_HANDLER: ApiHandler<AlterConfigsRequest, AlterConfigsResponse> = {
  api: ALTER_CONFIGS,
  decode: decodeAlterConfigsRequest,
  encode: encodeAlterConfigsResponse,
  async handle(ctx, req, _version, conn) {
    const responses: AlterConfigsResourceResponse[] = [];
    for (const r of req.resources) {
      const entries = (): Entry[] => {
        const given = r.configs.map((c) => ({ name: c.name, value: c.value }));
        // A full replace: what is left out goes back to its default.
        if (r.resourceType === RESOURCE_GROUP) return withResets(given);
        for (const name of RESETTABLE) if (!given.some((g) => g.name === name)) given.unshift({ name, value: null });
        return given;
      };
      responses.push(await alterOne(ctx, conn, r.resourceType, r.resourceName, entries, req.validateOnly));
    }
    return { throttleTimeMs: 0, responses };
  },
};

export const INCREMENTAL_ALTER_CONFIGS_HANDLER: ApiHandler<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse> = {
  api: INCREMENTAL_ALTER_CONFIGS,
  decode: decodeIncrementalAlterConfigsRequest,
  encode: encodeIncrementalAlterConfigsResponse,
  async handle(ctx, req, _version, conn) {
    const responses: AlterConfigsResourceResponse[] = [];
    for (const r of req.resources) {
      const entries = (): Entry[] =>
        r.configs.map((c) => {
          if (c.configOperation === OP_SET) return { name: c.name, value: c.value };
          if (c.configOperation === OP_DELETE) return { name: c.name, value: null };
          if (r.resourceType === RESOURCE_GROUP) {
            const op = c.configOperation === OP_APPEND ? 'append' : c.configOperation === OP_SUBTRACT ? 'subtract' : null;
            throw new NotAListConfig(op === null ? `operation ${c.configOperation} on ${c.name}: not SET (0), DELETE (1), APPEND (2) or SUBTRACT (3)` : `Config value ${op} is not allowed for config key: ${c.name}`);
          }
          if (c.configOperation === OP_APPEND && c.name === 'cleanup.policy') return { name: c.name, value: c.value };
          throw new ConfigProblem(`operation ${c.configOperation} on ${c.name}: APPEND and SUBTRACT apply to list configs, and cleanup.policy can only be delete`);
        });
      responses.push(await alterOne(ctx, conn, r.resourceType, r.resourceName, entries, req.validateOnly));
    }
    return { throttleTimeMs: 0, responses };
  },
};
