/**
 * Group configs (ConfigResource type GROUP, 32; KIP-848, KIP-932) ⇄ a share group's config in
 * `src/actors/share` (`ShareStates.config`, the record `PATCH /_share/{stream}?group=` sets).
 * DescribeConfigs answers them for any group id, as Kafka does (a group's configs exist without
 * the group: defaults until one is set); IncrementalAlterConfigs and AlterConfigs set them.
 *
 * Names: Kafka's group configs (GroupConfig: `share.record.lock.duration.ms`, and since KIP-1240
 * `share.delivery.count.limit` and `share.partition.max.record.locks`) are what DescribeConfigs
 * answers; the HTTP API's names (`group.share.*`, Kafka's broker-level names of the same settings)
 * are taken too, when altering and in DescribeConfigs' ConfigurationKeys.
 *
 * `errors.deadletterqueue.topic.name` (KIP-1191) is a topic name on the Kafka wire and a stream
 * name in the store: a topic's records go to its partition-0 stream (`/<topic>`, topics.ts).
 *
 * `consumer.session.timeout.ms`, `consumer.heartbeat.interval.ms` (a consumer group's, KIP-848)
 * and `share.session.timeout.ms`, `share.heartbeat.interval.ms` (a share group's, KIP-932) default
 * to the node's options: DescribeConfigs shows the option's value as the default.
 */
import { type ShareGroupConfig, parseShareGroupConfig } from '../actors';
import { isValidKafkaTopic } from '../util/kafka-topic';
import { ConfigProblem, ConfigType, type DescribedConfig } from './topic-configs';
import { streamOfPartition } from './topics';

/** ConfigResource type GROUP (KIP-848). */
export const RESOURCE_GROUP = 32;

type Key = keyof ShareGroupConfig;

/** Each share-group config: Kafka's group config name, its ConfigType, and what it does here. */
const CONFIGS: ReadonlyArray<{ key: Key; kafka: string; type: number; doc: string }> = [
  { key: 'group.share.record.lock.duration.ms', kafka: 'share.record.lock.duration.ms', type: ConfigType.INT, doc: 'lock of an acquired record (ShareFetch) or of a lease that names no lock (HTTP), ms; 1000 to 3600000' },
  { key: 'group.share.delivery.count.limit', kafka: 'share.delivery.count.limit', type: ConfigType.INT, doc: 'deliveries after which a released or expired record is archived; 2 to 10' },
  { key: 'group.share.partition.max.record.locks', kafka: 'share.partition.max.record.locks', type: ConfigType.INT, doc: 'most records acquired at once per partition; 100 to 10000' },
  { key: 'share.auto.offset.reset', kafka: 'share.auto.offset.reset', type: ConfigType.STRING, doc: 'where the group starts on a partition it never saw: latest or earliest' },
  { key: 'errors.deadletterqueue.topic.name', kafka: 'errors.deadletterqueue.topic.name', type: ConfigType.STRING, doc: 'topic archived records are appended to (its partition 0); blank for none' },
  { key: 'consumer.session.timeout.ms', kafka: 'consumer.session.timeout.ms', type: ConfigType.INT, doc: 'a consumer group member with no heartbeat for this long is removed, ms; 1000 to 1800000 (default: --kafka-group-consumer-session-timeout-ms)' },
  { key: 'consumer.heartbeat.interval.ms', kafka: 'consumer.heartbeat.interval.ms', type: ConfigType.INT, doc: 'the interval a consumer group member is told to heartbeat at, ms; 100 to 60000 (default: --kafka-group-consumer-heartbeat-interval-ms)' },
  { key: 'share.session.timeout.ms', kafka: 'share.session.timeout.ms', type: ConfigType.INT, doc: 'a share group member with no heartbeat for this long is removed and its locks given back, ms; 1000 to 1800000 (default: --kafka-group-consumer-session-timeout-ms)' },
  { key: 'share.heartbeat.interval.ms', kafka: 'share.heartbeat.interval.ms', type: ConfigType.INT, doc: 'the interval a share group member is told to heartbeat at, ms; 100 to 60000 (default: --kafka-group-consumer-heartbeat-interval-ms)' },
];

/** Kafka group configs with no per-group setting here (node options, or not built): named in the refusal. */
const NOT_PER_GROUP: Readonly<Record<string, string>> = {
  'share.isolation.level': 'not settable here: share groups always read committed records',
};

/** The config a name (Kafka's group config name or the HTTP API's) stands for, or undefined. */
function configOf(name: string): (typeof CONFIGS)[number] | undefined {
  return CONFIGS.find((c) => c.kafka === name || c.key === name);
}

/** Why a group id cannot name a group resource, or null (the HTTP API's rule: 1-255 characters, no control characters). */
export function groupNameProblem(group: string): string | null {
  if (group.length === 0) return 'Group name must not be empty';
  if (group.length > 255 || [...group].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) return `group ${JSON.stringify(group)}: 1-255 characters, no control characters`;
  return null;
}

/** The stored dead-letter stream as Kafka sees it: the topic whose partition 0 it is, else the stream name. */
function deadLetterTopic(stream: string): string {
  const topic = stream.slice(1);
  return stream.startsWith('/') && isValidKafkaTopic(topic) ? topic : stream;
}

/**
 * The group's configs for DescribeConfigs, under the names asked for (`keys` null or empty: every
 * one, under Kafka's names); `stored` are the names set for the group (the others are defaults).
 */
export function describeGroupConfigs(config: ShareGroupConfig, stored: ReadonlyArray<Key>, keys: readonly string[] | null, node: { sessionTimeoutMs: number; heartbeatIntervalMs: number }): DescribedConfig[] {
  const asked = keys === null || keys.length === 0 ? CONFIGS.map((c) => c.kafka) : keys;
  const out: DescribedConfig[] = [];
  for (const name of asked) {
    const c = configOf(name);
    if (c === undefined) continue;
    // A membership timeout not set for the group is the node's option.
    const raw = config[c.key] ?? (c.key.endsWith('session.timeout.ms') ? node.sessionTimeoutMs : node.heartbeatIntervalMs);
    const value = c.key === 'errors.deadletterqueue.topic.name' ? deadLetterTopic(String(raw)) : String(raw);
    out.push({ name, value, readOnly: false, isDefault: !stored.includes(c.key), type: c.type, doc: c.doc });
  }
  return out;
}

/** A group config change as the wire gives it: a value, or null for back to the default. */
export interface GroupConfigEntry {
  name: string;
  value: string | null;
}

/** The changes of one group resource: config → value (null: back to default), and the dead-letter stream it names, if any. */
export interface GroupConfigChange {
  changes: Partial<Record<Key, unknown>>;
  deadLetterStream: string | null;
  /** The topic `deadLetterStream` is the partition 0 of. */
  deadLetterTopic: string | null;
}

/**
 * Validate a group resource's entries with the share-group validation (`parseShareGroupConfig`):
 * the changes, or a ConfigProblem naming the first refused entry (Kafka's INVALID_CONFIG).
 */
export function parseGroupConfigEntries(entries: readonly GroupConfigEntry[]): GroupConfigChange {
  const out: GroupConfigChange = { changes: {}, deadLetterStream: null, deadLetterTopic: null };
  for (const e of entries) {
    const c = configOf(e.name);
    if (c === undefined) {
      const why = NOT_PER_GROUP[e.name];
      throw new ConfigProblem(why === undefined ? `Unknown group config name: ${e.name}` : `${e.name} is ${why}`);
    }
    if (e.value === null) {
      out.changes[c.key] = null;
      continue;
    }
    if (c.key === 'errors.deadletterqueue.topic.name') {
      if (e.value === '') {
        out.changes[c.key] = '';
        out.deadLetterStream = out.deadLetterTopic = null;
        continue;
      }
      if (!isValidKafkaTopic(e.value)) throw new ConfigProblem(`Invalid value ${e.value} for configuration ${e.name}: a topic name (its partition 0 gets the archived records), or blank for none`);
      out.deadLetterTopic = e.value;
      out.deadLetterStream = out.changes[c.key] = streamOfPartition(e.value, 0);
      continue;
    }
    const { changes, problems } = parseShareGroupConfig({ [c.key]: e.value });
    // The validation names the stored key; the message names the name the client sent.
    if (problems.length > 0) throw new ConfigProblem(`Invalid value ${e.value} for configuration ${e.name}: ${problems[0]!.slice(problems[0]!.indexOf(':') + 2)}`);
    out.changes[c.key] = changes[c.key];
  }
  return out;
}

/** AlterConfigs replaces a resource's whole set: every config it leaves out goes back to its default. */
export function withResets(entries: readonly GroupConfigEntry[]): GroupConfigEntry[] {
  const given = new Set(entries.map((e) => configOf(e.name)?.key));
  return [...CONFIGS.filter((c) => !given.has(c.key)).map((c) => ({ name: c.kafka, value: null })), ...entries];
}

