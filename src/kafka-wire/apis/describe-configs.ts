/**
 * DescribeConfigs (key 32), v0–4: a topic's configs are its streams' config (topic-configs.ts);
 * the broker's are read-only facts of this node. Other resource types (broker loggers, groups,
 * client metrics) answer INVALID_REQUEST, as a Kafka broker does for types it does not serve.
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
import { allowed } from '../auth';
import { ConfigSource, type DescribedConfig, describeBrokerConfigs, describeTopicConfigs, describeValidationConfigs } from '../topic-configs';
import { RESOURCE_BROKER, RESOURCE_TOPIC } from './alter-configs';

function entry(c: DescribedConfig, broker: boolean, synonyms: boolean, docs: boolean): DescribeConfigsResourceResult {
  const configSource = broker ? ConfigSource.STATIC_BROKER_CONFIG : c.isDefault ? ConfigSource.DEFAULT_CONFIG : ConfigSource.DYNAMIC_TOPIC_CONFIG;
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
        const broker = r.resourceType === RESOURCE_BROKER;
        results.push({ errorCode, errorMessage, resourceType: r.resourceType, resourceName: r.resourceName, configs: picked.map((c) => entry(c, broker, req.includeSynonyms === true, req.includeDocumentation === true)) });
      };
      if (r.resourceType === RESOURCE_BROKER) {
        if (r.resourceName !== '' && r.resourceName !== String(ctx.nodeId)) res(KafkaError.INVALID_REQUEST, `broker ${r.resourceName} is not this node (${ctx.nodeId})`);
        else res(0, null, describeBrokerConfigs({}));
        continue;
      }
      if (r.resourceType !== RESOURCE_TOPIC) {
        res(KafkaError.INVALID_REQUEST, `resource type ${r.resourceType} is not served (topics and brokers are)`);
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
