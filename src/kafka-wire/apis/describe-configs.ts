/**
 * DescribeConfigs (key 32), v0–4: a topic's configs are its streams' config (topic-configs.ts);
 * the broker's are read-only facts of this node; a group's are its share-group config
 * (group-configs.ts), answered for any group id as Kafka does (defaults until one is set). Other
 * resource types (broker loggers, client metrics) answer INVALID_REQUEST, as a Kafka broker does
 * for types it does not serve.
 */
import {
  type DescribeConfigsRequest,
  type DescribeConfigsResourceResult,
  type DescribeConfigsResponse,
  type DescribeConfigsResult,
  DESCRIBE_CONFIGS,
  decodeDescribeConfigsRequest,
  encodeDescribeConfigsResponse,
} from '../messages/describe-configs';
import { type ApiHandler } from '../handler';
import { KafkaError, kafkaErrorOf, messageOf } from '../error-codes';
import { allowed, groupAllowed } from '../auth';
import { RESOURCE_GROUP, describeGroupConfigs, groupNameProblem } from '../group-configs';
import { ConfigSource, type DescribedConfig, describeBrokerConfigs, describeTopicConfigs, describeValidationConfigs } from '../topic-configs';
import { RESOURCE_BROKER, RESOURCE_TOPIC } from './alter-configs';

/** Where a value comes from: a broker's are static; a topic's or group's are set for it, or defaults. */
function sourceOf(c: DescribedConfig, resourceType: number): number {
  if (resourceType === RESOURCE_BROKER) return ConfigSource.STATIC_BROKER_CONFIG;
  if (c.isDefault) return ConfigSource.DEFAULT_CONFIG;
  return resourceType === RESOURCE_GROUP ? ConfigSource.GROUP_CONFIG : ConfigSource.DYNAMIC_TOPIC_CONFIG;
}

function entry(c: DescribedConfig, resourceType: number, synonyms: boolean, docs: boolean): DescribeConfigsResourceResult {
  const configSource = sourceOf(c, resourceType);
  return {
    name: c.name,
    value: c.value,
    readOnly: c.readOnly,
    isDefault: c.isDefault,
    configSource,
    isSensitive: false,
    synonyms: synonyms ? [{ name: c.name, value: c.value, source: configSource }] : [],
    configType: c.type,
    documentation: docs ? c.doc : null,
  };
}

export const DESCRIBE_CONFIGS_HANDLER: ApiHandler<DescribeConfigsRequest, DescribeConfigsResponse> = {
  api: DESCRIBE_CONFIGS,
  decode: decodeDescribeConfigsRequest,
  encode: encodeDescribeConfigsResponse,
  async handle(ctx, req, _version, conn) {
    const results: DescribeConfigsResult[] = [];
    for (const r of req.resources) {
      const res = (errorCode: number, errorMessage: string | null, configs: DescribedConfig[] = []): void => {
        const keys = r.configurationKeys;
        const picked = keys === null || keys.length === 0 ? configs : configs.filter((c) => keys.includes(c.name));
        results.push({ errorCode, errorMessage, resourceType: r.resourceType, resourceName: r.resourceName, configs: picked.map((c) => entry(c, r.resourceType, req.includeSynonyms === true, req.includeDocumentation === true)) });
      };
      if (r.resourceType === RESOURCE_BROKER) {
        if (r.resourceName !== '' && r.resourceName !== String(ctx.nodeId)) res(KafkaError.INVALID_REQUEST, `broker ${r.resourceName} is not this node (${ctx.nodeId})`);
        else res(0, null, describeBrokerConfigs({}));
        continue;
      }
      if (r.resourceType === RESOURCE_GROUP) {
        const problem = groupNameProblem(r.resourceName);
        // Reading a group's configs is taking part in groups (the `read` op, as the group APIs).
        if (problem !== null) res(KafkaError.INVALID_REQUEST, problem);
        else if (!groupAllowed(ctx, conn)) res(KafkaError.GROUP_AUTHORIZATION_FAILED, 'the token does not allow describing groups');
        else {
          try {
            // The shared metadata store's record, after a quorum read in a cluster: any node answers.
            const config = await ctx.share.config(r.resourceName);
            res(0, null, describeGroupConfigs(config, ctx.share.storedConfigNames(r.resourceName), r.configurationKeys, ctx.share.nodeTimeouts));
          } catch (err) {
            res(kafkaErrorOf(err), messageOf(err));
          }
        }
        continue;
      }
      if (r.resourceType !== RESOURCE_TOPIC) {
        res(KafkaError.INVALID_REQUEST, `resource type ${r.resourceType} is not served (topics, brokers and groups are)`);
        continue;
      }
      const t = await ctx.topics.get(r.resourceName);
      const p0 = t?.partitions[0];
      if (t === undefined || p0 === undefined) {
        res(KafkaError.UNKNOWN_TOPIC_OR_PARTITION, `topic ${r.resourceName} does not exist`);
        continue;
      }
      if (!allowed(ctx, conn, 'head', p0)) {
        res(KafkaError.TOPIC_AUTHORIZATION_FAILED, 'the token does not allow describing this topic');
        continue;
      }
      try {
        // In a cluster: the shared record when the topic has one (set over Kafka on any node), else partition 0's
        // stream where this node owns it; elsewhere the defaults (a TTL set over HTTP only is described by its owner).
        const shared = ctx.topicConfigs === null ? null : await ctx.topicConfigs.current(t.name);
        const local = ctx.cluster === null || ctx.cluster.leaderOf(p0) === ctx.nodeId;
        res(0, null, [...describeTopicConfigs(shared ?? (local ? await ctx.shards.head(p0) : { ttlSeconds: null })), ...describeValidationConfigs(ctx.validation?.rule(p0) ?? null)]);
      } catch (err) {
        res(kafkaErrorOf(err), messageOf(err));
      }
    }
    return { throttleTimeMs: 0, results };
  },
};
