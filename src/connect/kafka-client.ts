/**
 * The Kafka client behind one small interface. The only file under src/connect that imports
 * kafkajs (2.2.4, pure JS); it talks to a node's Kafka listener like any client (startup step
 * 2: connections are lazy, so a wrong bootstrap address shows as produce and fetch errors).
 */
import * as fs from 'node:fs';
import { type Consumer, Kafka, type KafkaConfig, type KafkaMessage, logLevel, type Producer, type SASLOptions } from 'kafkajs';
import type { ConnectorsConfig } from './config-schema';
import type { Logger } from './log';
import type { SinkRecord, SourceRecord } from './plugin-api';

export interface ProducePort {
  /**
   * Resolves once the node acknowledged every record (acks = all), with the base offset of the
   * last request per partition written; rejects otherwise.
   */
  send(topic: string, records: SourceRecord[], partition?: number): Promise<Record<string, string>>;
  close(): Promise<void>;
}

export interface FetchedBatch {
  topic: string;
  partition: number;
  records: SinkRecord[];
  /** The partition's end offset (high watermark) when the batch was fetched. */
  end: string;
  /** Time spent turning the fetched messages into records (stage `decode`). */
  decodeSeconds: number;
}

export interface ConsumePort {
  /**
   * Joins the group and calls `handle` for each fetched batch, one at a time per partition.
   * Nothing is committed unless `commit` is called. `events.joined` is called each time the
   * consumer has joined the group; `events.stopped` once when consuming stopped, because
   * `handle` rejected or the node could not be reached (the caller closes this consumer and
   * decides whether to join again; uncommitted records come again).
   */
  run(handle: (b: FetchedBatch, heartbeat: () => Promise<void>) => Promise<void>, events: ConsumerEvents): Promise<void>;
  /** Commits `offset` (the next one to read) for a partition. */
  commit(topic: string, partition: number, offset: string): Promise<void>;
  close(): Promise<void>;
}

export interface ConsumerEvents {
  joined(): void;
  stopped(err: Error): void;
}

/** Where a sink's group stands on one partition (lag = end - committed). */
export interface PartitionPosition {
  topic: string;
  partition: number;
  /** The group's committed offset (the next record to read); -1 when none. */
  committed: string;
  /** The partition's end offset (high watermark). */
  end: string;
}

/** True when `err` came from the Kafka client (the node or the connection), not from a plugin. */
export const isKafkaError = (err: unknown): boolean => err instanceof Error && (err.name.startsWith('KafkaJS') || (err.cause instanceof Error && err.cause.name.startsWith('KafkaJS')));

export interface ConsumeOptions {
  group: string;
  /** Topic names; patterns are resolved by the caller through `KafkaPort.topics()`. */
  topics: string[];
  fromBeginning: boolean;
  maxWaitMs: number;
  /** Most bytes per partition per fetch. */
  maxBytesPerPartition?: number;
}

export interface KafkaPort {
  producer(): Promise<ProducePort>;
  consumer(o: ConsumeOptions): Promise<ConsumePort>;
  /** The topics that exist on the node now (for sink patterns). */
  topics(): Promise<string[]>;
  /** How often a sink with a pattern looks for newly created topics (`properties.metadata_max_age_ms`). */
  readonly topicRefreshMs: number;
  /** The group's committed offset and the end offset of every partition of `topics` (for lag). */
  groupPositions(group: string, topics: string[]): Promise<PartitionPosition[]>;
  /** The end offset (high watermark) of every partition of `topic`. */
  endOffsets(topic: string): Promise<Record<string, string>>;
  /**
   * Reads each partition of `from` from its offset up to the end it has when the call starts,
   * calling `each` per record, in a group named `group` that commits nothing. Resolves true when
   * every partition was read to that end, false when `timeoutMs` passed first.
   */
  readRange(o: { group: string; topic: string; from: Record<string, string>; timeoutMs: number }, each: (r: SinkRecord) => void): Promise<boolean>;
}

function kafkaConfig(c: ConnectorsConfig['kafka'], log: Logger): KafkaConfig {
  const brokers = c.bootstrap_servers.split(',').map((s) => s.trim()).filter(Boolean);
  const p = c.properties;
  const cfg: KafkaConfig = {
    clientId: c.client_id,
    brokers,
    connectionTimeout: Number(p['connection_timeout_ms'] ?? 3000),
    requestTimeout: Number(p['request_timeout_ms'] ?? 30000),
    retry: { retries: Number(p['retries'] ?? 5), initialRetryTime: Number(p['retry_initial_ms'] ?? 100) },
    logLevel: logLevel.WARN,
    logCreator: () => (e) => log.debug({ kafka: e.log.message, namespace: e.namespace }, 'kafka client'),
  };
  if (c.security_protocol === 'ssl' || c.security_protocol === 'sasl_ssl') {
    const read = (f: string): Buffer | undefined => (f === '' ? undefined : fs.readFileSync(f));
    cfg.ssl = { ca: read(c.tls.ca_file), cert: read(c.tls.cert_file), key: read(c.tls.key_file), rejectUnauthorized: true, ...(c.tls.verify_hostname ? {} : { checkServerIdentity: () => undefined }) };
  }
  if (c.security_protocol.startsWith('sasl')) {
    cfg.sasl = { mechanism: c.sasl.mechanism.toLowerCase(), username: c.sasl.username, password: c.sasl.password } as SASLOptions;
  }
  return cfg;
}

const toRecord = (topic: string, partition: number, m: KafkaMessage): SinkRecord => {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(m.headers ?? {})) if (v !== undefined) headers[k] = Array.isArray(v) ? String(v[0]) : String(v);
  return { topic, partition, offset: m.offset, key: m.key, value: m.value ?? Buffer.alloc(0), timestamp: Number(m.timestamp), headers };
};

/** Most record bytes per produce request. */
const PRODUCE_BYTES = 512 * 1024;
const recordBytes = (r: SourceRecord): number => r.value.length + (r.key?.length ?? 0) + 64;

/** Default consumer session: long enough for a loaded machine, short enough that a restart after a crash waits little. */
const SESSION_TIMEOUT_MS = 10_000;

export function createKafka(c: ConnectorsConfig['kafka'], log: Logger): KafkaPort {
  const kafka = new Kafka(kafkaConfig(c, log));
  const sessionTimeout = Number(c.properties['session_timeout_ms'] ?? SESSION_TIMEOUT_MS);
  return {
    async producer(): Promise<ProducePort> {
      // Lazy (spec startup step 2): a wrong bootstrap address shows as produce errors, not a
      // refusal to start. A failed connect is tried again by the next send.
      const p: Producer = kafka.producer({ allowAutoTopicCreation: true });
      let connected: Promise<void> | null = null;
      return {
        async send(topic, records, partition) {
          connected ??= p.connect().catch((err: Error) => {
            connected = null;
            throw err;
          });
          await connected;
          const at: Record<string, string> = {};
          // A large batch goes out as several requests of at most PRODUCE_BYTES each (a node
          // refuses requests over its size limit); all of them are acknowledged before this resolves.
          for (let i = 0; i < records.length; ) {
            let bytes = 0;
            let j = i;
            while (j < records.length && (j === i || bytes + recordBytes(records[j]!) <= PRODUCE_BYTES)) bytes += recordBytes(records[j++]!);
            const meta = await p.send({
              topic,
              acks: -1,
              messages: records.slice(i, j).map((r) => ({ key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp === undefined ? undefined : String(r.timestamp), partition })),
            });
            for (const m of meta) if (m.baseOffset !== undefined) at[String(m.partition)] = m.baseOffset;
            i = j;
          }
          return at;
        },
        close: () => (connected === null ? Promise.resolve() : p.disconnect()),
      };
    },
    async topics(): Promise<string[]> {
      const admin = kafka.admin();
      await admin.connect();
      try {
        return await admin.listTopics();
      } finally {
        await admin.disconnect();
      }
    },
    topicRefreshMs: Number(c.properties['metadata_max_age_ms'] ?? 5000),
    async groupPositions(group, topics): Promise<PartitionPosition[]> {
      const admin = kafka.admin({ retry: { retries: 0 } });
      await admin.connect();
      try {
        const committed = await admin.fetchOffsets({ groupId: group, topics });
        const out: PartitionPosition[] = [];
        for (const t of committed) {
          const ends = new Map((await admin.fetchTopicOffsets(t.topic)).map((o) => [o.partition, o.high]));
          for (const p of t.partitions) out.push({ topic: t.topic, partition: p.partition, committed: p.offset, end: ends.get(p.partition) ?? '0' });
        }
        return out;
      } finally {
        await admin.disconnect();
      }
    },
    async endOffsets(topic): Promise<Record<string, string>> {
      const admin = kafka.admin();
      await admin.connect();
      try {
        return Object.fromEntries((await admin.fetchTopicOffsets(topic)).map((o) => [String(o.partition), o.high]));
      } finally {
        await admin.disconnect();
      }
    },
    async readRange(o, each): Promise<boolean> {
      const ends = await this.endOffsets(o.topic);
      const todo = new Map<number, { from: bigint; end: bigint }>();
      for (const [p, from] of Object.entries(o.from)) {
        const end = BigInt(ends[p] ?? '0');
        if (end > BigInt(from)) todo.set(Number(p), { from: BigInt(from), end });
      }
      if (todo.size === 0) return true;
      const consumer = kafka.consumer({ groupId: o.group, maxWaitTimeInMs: 100, retry: { retries: 2, restartOnFailure: async () => false } });
      let finished!: () => void;
      const done = new Promise<void>((resolve) => (finished = resolve));
      let timer: NodeJS.Timeout | undefined;
      try {
        await consumer.connect();
        await consumer.subscribe({ topics: [o.topic], fromBeginning: false });
        await consumer.run({
          autoCommit: false,
          eachBatch: async ({ batch }) => {
            const t = todo.get(batch.partition);
            if (t === undefined) return;
            for (const m of batch.messages) {
              const off = BigInt(m.offset);
              if (off >= t.from && off < t.end) each(toRecord(batch.topic, batch.partition, m));
            }
            const last = batch.messages[batch.messages.length - 1];
            if (last !== undefined && BigInt(last.offset) + 1n >= t.end) todo.delete(batch.partition);
            if (todo.size === 0) finished();
          },
        });
        for (const [partition, t] of todo) consumer.seek({ topic: o.topic, partition, offset: t.from.toString() });
        await Promise.race([done, new Promise<void>((resolve) => (timer = setTimeout(resolve, o.timeoutMs)))]);
        return todo.size === 0;
      } finally {
        clearTimeout(timer);
        await consumer.disconnect().catch(() => undefined);
      }
    },
    async consumer(o): Promise<ConsumePort> {
      const names = o.topics;
      // A member that died without leaving (SIGKILL, power loss) holds its partitions until its
      // session expires: a runtime restarted after a crash waits up to session_timeout_ms before
      // its sinks consume (docs/connectors.md "Restarts and the consumer group").
      const consumer: Consumer = kafka.consumer({ groupId: o.group, sessionTimeout, heartbeatInterval: Math.min(3000, Math.floor(sessionTimeout / 3)), maxWaitTimeInMs: o.maxWaitMs, maxBytesPerPartition: o.maxBytesPerPartition ?? 1024 * 1024, retry: { retries: 5, restartOnFailure: async () => false } });
      await consumer.connect();
      await consumer.subscribe({ topics: names, fromBeginning: o.fromBeginning });
      let events: ConsumerEvents | null = null;
      consumer.on(consumer.events.CRASH, (e) => events?.stopped(e.payload.error));
      consumer.on(consumer.events.GROUP_JOIN, () => events?.joined());
      return {
        async run(handle, ev) {
          events = ev;
          await consumer.run({
            autoCommit: false,
            eachBatchAutoResolve: false,
            eachBatch: async ({ batch, heartbeat, isRunning, isStale, resolveOffset }) => {
              if (!isRunning() || isStale() || batch.messages.length === 0) return;
              const t0 = process.hrtime.bigint();
              const records = batch.messages.map((m) => toRecord(batch.topic, batch.partition, m));
              await handle({ topic: batch.topic, partition: batch.partition, records, end: batch.highWatermark, decodeSeconds: Number(process.hrtime.bigint() - t0) / 1e9 }, heartbeat);
              // Only after the handler committed: the next fetch starts past this batch.
              resolveOffset(batch.messages[batch.messages.length - 1]!.offset);
            },
          });
        },
        commit: (topic, partition, offset) => consumer.commitOffsets([{ topic, partition, offset }]),
        close: () => consumer.disconnect(),
      };
    },
  };
}
