/**
 * Kafka topic configs ⇄ stream config (docs/kafka.md, "Topic configs"). A topic's configs are its
 * streams' config: every partition stream gets the same values, partition 0's are described.
 *
 *   retention.ms    ⇄ ttlSeconds (record retention): -1 = no TTL; other values in whole seconds,
 *                     rounded up (a record is never dropped before the asked time)
 *   cleanup.policy  = delete (compaction is not built: `compact` is refused with INVALID_CONFIG)
 *   flush.messages  ⇄ durability class: 1 = `sync` (acknowledged after fdatasync, as Kafka's
 *                     flush.messages=1 fsyncs every message); any larger value, Kafka's default
 *                     9223372036854775807 among them, = `async` (acknowledged once written,
 *                     synced within 100 ms: time-bounded, not per N messages); deleted = the
 *                     node's default (--durability)
 *   confluent.value.schema.validation, confluent.key.schema.validation (true/false),
 *   confluent.value.subject.name.strategy, confluent.key.subject.name.strategy (Confluent's
 *   strategy class names), svc.schema.validation.dead.letter (a topic, or a stream name with its
 *   leading /; empty: none)
 *                   ⇄ the streams' schema validation rule (util/validation-rule.ts; kept in the
 *                     metadata store, produce-validation.ts enforces it)
 *   the rest below  read-only facts of this node; setting one to its own value is accepted
 *
 * An unknown name is INVALID_CONFIG (40), as a Kafka broker answers "Unknown topic config name".
 */
import { type Durability, type StreamInfo } from '../shards';
import { type ValidationChange, type ValidationRule, NO_VALIDATION, parseStrategy, strategyClass } from '../util/validation-rule';
import { isValidKafkaTopic } from '../util/kafka-topic';

/** What a topic config change sets on the streams; `undefined`: left as it is. */
export interface StreamConfigChange {
  ttlSeconds?: number | null;
  /** null: back to the node's default. */
  durability?: Durability | null;
  /** Schema validation (the confluent.* configs); its absent fields stay as they are. */
  validation?: ValidationChange;
}

/** The schema validation configs, by name. */
export const VALIDATION_CONFIGS = {
  value: 'confluent.value.schema.validation',
  key: 'confluent.key.schema.validation',
  valueStrategy: 'confluent.value.subject.name.strategy',
  keyStrategy: 'confluent.key.subject.name.strategy',
  deadLetter: 'svc.schema.validation.dead.letter',
} as const;

/** Kafka's default flush.messages (never flush by count): what an `async` topic describes. */
const FLUSH_NEVER = '9223372036854775807';

/** DescribeConfigs ConfigSource values (KIP-226; GROUP_CONFIG, a config set for a group, KIP-848). */
export const ConfigSource = { DYNAMIC_TOPIC_CONFIG: 1, STATIC_BROKER_CONFIG: 4, DEFAULT_CONFIG: 5, GROUP_CONFIG: 8 } as const;
/** DescribeConfigs ConfigType values (KIP-336). */
export const ConfigType = { BOOLEAN: 1, STRING: 2, INT: 3, LONG: 5, LIST: 7 } as const;

export interface DescribedConfig {
  name: string;
  value: string;
  readOnly: boolean;
  isDefault: boolean;
  type: number;
  doc: string;
}

/** A refused config, with Kafka's message. */
export class ConfigProblem extends Error {}

const FIXED: ReadonlyArray<{ name: string; value: string; type: number; doc: string }> = [
  { name: 'retention.bytes', value: '-1', type: ConfigType.LONG, doc: 'size-based retention is not built; retention is by time (retention.ms)' },
  { name: 'compression.type', value: 'producer', type: ConfigType.STRING, doc: 'batches are stored as the producer compressed them' },
  { name: 'message.timestamp.type', value: 'CreateTime', type: ConfigType.STRING, doc: 'record timestamps are the producer\'s' },
  { name: 'min.insync.replicas', value: '1', type: ConfigType.INT, doc: 'one node holds a partition; acks=all waits for its fdatasync' },
  { name: 'unclean.leader.election.enable', value: 'false', type: ConfigType.BOOLEAN, doc: 'no replicas to elect' },
];

/**
 * Every config of a topic whose partition 0 is `info` (in a cluster, the topic's shared record,
 * which holds no durability class: objects mode has only `sync`).
 */
export function describeTopicConfigs(info: Pick<StreamInfo, 'ttlSeconds'> & Partial<Pick<StreamInfo, 'durability' | 'durabilityDefault'>>): DescribedConfig[] {
  const ttl = info.ttlSeconds;
  return [
    { name: 'retention.ms', value: ttl === null ? '-1' : String(ttl * 1000), readOnly: false, isDefault: ttl === null, type: ConfigType.LONG, doc: 'record retention (the streams\' TTL); -1: kept until trimmed or deleted' },
    { name: 'cleanup.policy', value: 'delete', readOnly: false, isDefault: true, type: ConfigType.LIST, doc: 'delete only: log compaction is not built' },
    {
      name: 'flush.messages',
      value: (info.durability ?? 'sync') === 'sync' ? '1' : FLUSH_NEVER,
      readOnly: false,
      isDefault: info.durabilityDefault ?? true,
      type: ConfigType.LONG,
      doc: 'the durability class: 1 = sync (acknowledged after fdatasync); larger = async (acknowledged once written, synced within 100 ms)',
    },
    ...FIXED.map((f) => ({ ...f, readOnly: true, isDefault: true })),
  ];
}

/** The configs DescribeConfigs shows for a topic's schema validation rule (null: none). */
export function describeValidationConfigs(rule: ValidationRule | null): DescribedConfig[] {
  const r = rule ?? NO_VALIDATION;
  const entry = (name: string, value: string, isDefault: boolean, type: number, doc: string): DescribedConfig => ({ name, value, readOnly: false, isDefault, type, doc });
  return [
    entry(VALIDATION_CONFIGS.value, String(r.value), !r.value, ConfigType.BOOLEAN, 'values other than null (tombstones) must carry a schema id registered under the subject the strategy names, and decode against it'),
    entry(VALIDATION_CONFIGS.key, String(r.key), !r.key, ConfigType.BOOLEAN, 'keys other than null likewise'),
    entry(VALIDATION_CONFIGS.valueStrategy, strategyClass(r.valueStrategy), r.valueStrategy === 'topic', ConfigType.STRING, 'how a value\'s subject is named'),
    entry(VALIDATION_CONFIGS.keyStrategy, strategyClass(r.keyStrategy), r.keyStrategy === 'topic', ConfigType.STRING, 'how a key\'s subject is named'),
    entry(VALIDATION_CONFIGS.deadLetter, r.deadLetter ?? '', r.deadLetter === null, ConfigType.STRING, 'the stream refused records go to instead of failing the produce; empty: they fail it (INVALID_RECORD)'),
  ];
}

function parseBoolean(name: string, value: string): boolean {
  if (value.toLowerCase() === 'true') return true;
  if (value.toLowerCase() === 'false') return false;
  throw new ConfigProblem(`Invalid value ${value} for configuration ${name}: true or false`);
}

/** A dead letter given as a topic names its partition 0's stream; a stream name starts with `/`. */
function parseDeadLetter(value: string): string | null {
  if (value === '') return null;
  if (value.startsWith('/') && value.length > 1) return value;
  if (isValidKafkaTopic(value)) return `/${value}`;
  throw new ConfigProblem(`Invalid value ${value} for configuration ${VALIDATION_CONFIGS.deadLetter}: a topic name, or a stream name starting with /`);
}

function parseValidationConfig(name: string, value: string | null): ValidationChange | null {
  const strategy = (v: string): NonNullable<ValidationChange['valueStrategy']> => {
    const s = parseStrategy(v);
    if (s === null) throw new ConfigProblem(`Invalid value ${v} for configuration ${name}: io.confluent.kafka.serializers.subject.TopicNameStrategy, RecordNameStrategy or TopicRecordNameStrategy`);
    return s;
  };
  switch (name) {
    case VALIDATION_CONFIGS.value:
      return { value: value === null ? null : parseBoolean(name, value) };
    case VALIDATION_CONFIGS.key:
      return { key: value === null ? null : parseBoolean(name, value) };
    case VALIDATION_CONFIGS.valueStrategy:
      return { valueStrategy: value === null ? null : strategy(value) };
    case VALIDATION_CONFIGS.keyStrategy:
      return { keyStrategy: value === null ? null : strategy(value) };
    case VALIDATION_CONFIGS.deadLetter:
      return { deadLetter: value === null ? null : parseDeadLetter(value) };
    default:
      return null;
  }
}

/** `part` merged into `into` (the validation fields merged, not replaced). */
export function mergeConfigChange(into: StreamConfigChange, part: StreamConfigChange): void {
  const { validation, ...rest } = part;
  Object.assign(into, rest);
  if (validation !== undefined) into.validation = { ...into.validation, ...validation };
}

/** The stream change one config entry asks for (value null: back to the default). Throws ConfigProblem. */
export function parseTopicConfig(name: string, value: string | null): StreamConfigChange {
  const validation = parseValidationConfig(name, value);
  if (validation !== null) return { validation };
  switch (name) {
    case 'retention.ms': {
      if (value === null || value === '-1') return { ttlSeconds: null };
      if (!/^[0-9]{1,15}$/.test(value)) throw new ConfigProblem(`Invalid value ${value} for configuration retention.ms: a whole number of milliseconds, or -1`);
      return { ttlSeconds: Math.ceil(Number(value) / 1000) };
    }
    case 'flush.messages': {
      if (value === null) return { durability: null };
      if (!/^[0-9]{1,19}$/.test(value) || BigInt(value) < 1n || BigInt(value) > BigInt(FLUSH_NEVER)) throw new ConfigProblem(`Invalid value ${value} for configuration flush.messages: a whole number from 1`);
      return { durability: value === '1' ? 'sync' : 'async' };
    }
    case 'cleanup.policy':
      if (value === null || value === 'delete') return {};
      throw new ConfigProblem(`cleanup.policy=${value} is not supported: log compaction is not built (only delete)`);
    default: {
      const fixed = FIXED.find((f) => f.name === name);
      if (fixed === undefined) throw new ConfigProblem(`Unknown topic config name: ${name}`);
      if (value === null || value === fixed.value) return {};
      throw new ConfigProblem(`${name} is fixed at ${fixed.value} on this node`);
    }
  }
}

/** Several entries merged into one change (later entries win). Throws ConfigProblem. */
export function parseTopicConfigs(entries: ReadonlyArray<{ name: string; value: string | null }>): StreamConfigChange {
  const out: StreamConfigChange = {};
  for (const e of entries) mergeConfigChange(out, parseTopicConfig(e.name, e.value));
  return out;
}

/** Read-only broker configs DescribeConfigs answers for this node (resource type BROKER). */
export function describeBrokerConfigs(o: { maxRecordBytes?: number }): DescribedConfig[] {
  const fixed = (name: string, value: string, type: number, doc: string): DescribedConfig => ({ name, value, readOnly: true, isDefault: false, type, doc });
  const out = [
    fixed('auto.create.topics.enable', 'true', ConfigType.BOOLEAN, 'Metadata creates a missing topic when the client allows it'),
    fixed('num.partitions', '1', ConfigType.INT, 'partitions of an auto-created topic'),
    fixed('default.replication.factor', '1', ConfigType.INT, 'one node holds a partition'),
    fixed('log.retention.ms', '-1', ConfigType.LONG, 'no retention unless a topic sets retention.ms'),
    fixed('log.cleanup.policy', 'delete', ConfigType.LIST, 'log compaction is not built'),
    fixed('transaction.max.timeout.ms', '900000', ConfigType.INT, 'longest transaction timeout a producer may ask for'),
  ];
  if (o.maxRecordBytes !== undefined) out.push(fixed('message.max.bytes', String(o.maxRecordBytes), ConfigType.INT, 'largest record'));
  return out;
}
