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
 *   the rest below  read-only facts of this node; setting one to its own value is accepted
 *
 * An unknown name is INVALID_CONFIG (40), as a Kafka broker answers "Unknown topic config name".
 */
import { type Durability, type StreamInfo } from '../shards';

/** What a topic config change sets on the streams; `undefined`: left as it is. */
export interface StreamConfigChange {
  ttlSeconds?: number | null;
  /** null: back to the node's default. */
  durability?: Durability | null;
}

/** Kafka's default flush.messages (never flush by count): what an `async` topic describes. */
const FLUSH_NEVER = '9223372036854775807';

/** DescribeConfigs ConfigSource values (KIP-226). */
export const ConfigSource = { DYNAMIC_TOPIC_CONFIG: 1, STATIC_BROKER_CONFIG: 4, DEFAULT_CONFIG: 5 } as const;
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

/** The stream change one config entry asks for (value null: back to the default). Throws ConfigProblem. */
export function parseTopicConfig(name: string, value: string | null): StreamConfigChange {
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
  for (const e of entries) Object.assign(out, parseTopicConfig(e.name, e.value));
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
