/**
 * Kafka topic configs in a cluster (docs/cluster.md, "Schemas and topic configs"): what
 * AlterConfigs, IncrementalAlterConfigs and CreateTopics set is one record per topic in the shared
 * metadata, so DescribeConfigs answers the same on every node, and each partition's owner applies
 * it to its stream wherever the partition lives.
 *
 *   AlterConfigs on any node ──▶ kafka-topic-configs/<topic> {ttlSeconds}
 *        every node's watch ──▶ the partitions it owns: stream config (ttlSeconds)
 *   DescribeConfigs          ──▶ the record as of now (a quorum read first), else partition 0's stream
 *
 * An alter is answered once the record is written and this node's own partitions have it; other
 * owners apply it as their watch delivers it (milliseconds). A partition moving at that moment
 * keeps the config its stream had (the stream's config moves with it).
 */
import { type MetaStore, withinRequestDeadline } from '../actors';
import { type Logger } from '../log';
import { type ShardClient } from '../shards';
import { type KafkaCluster } from './cluster';
import { type StreamConfigChange } from './topic-configs';
import { type TopicIndex } from './topics';

export const TOPIC_CONFIG_PREFIX = 'kafka-topic-configs/';

/** A topic's configs as stored (the stream config they map to). */
export interface TopicConfigRecord {
  ttlSeconds: number | null;
}

export class SharedTopicConfigs {
  readonly #meta: MetaStore;
  readonly #cluster: KafkaCluster;
  readonly #shards: ShardClient;
  readonly #topics: TopicIndex;
  readonly #nodeId: number;
  readonly #log: Logger;
  /** Per topic, the application to this node's partitions in progress. */
  readonly #applying = new Map<string, Promise<void>>();

  constructor(meta: MetaStore, cluster: KafkaCluster, shards: ShardClient, topics: TopicIndex, nodeId: number, log: Logger) {
    this.#meta = meta;
    this.#cluster = cluster;
    this.#shards = shards;
    this.#topics = topics;
    this.#nodeId = nodeId;
    this.#log = log;
    meta.onChange((key, record) => {
      if (key.startsWith(TOPIC_CONFIG_PREFIX) && record !== null) this.#apply(key.slice(TOPIC_CONFIG_PREFIX.length), record.value as TopicConfigRecord);
    });
  }

  /**
   * The topic's record as of now (every write acknowledged before the call), or null when none was
   * written; a request's wait for etcd is bounded (storage_unavailable: DescribeConfigs answers
   * its retriable code).
   */
  async current(topic: string): Promise<TopicConfigRecord | null> {
    await withinRequestDeadline(this.#meta.sync(), `a read of topic ${topic}'s configs`);
    return this.#meta.get<TopicConfigRecord>(TOPIC_CONFIG_PREFIX + topic)?.value ?? null;
  }

  /** Record a change and apply it to this node's partitions; resolves once both are done. */
  async set(topic: string, change: StreamConfigChange): Promise<void> {
    if (change.ttlSeconds === undefined) return;
    await this.#meta.put<TopicConfigRecord>(TOPIC_CONFIG_PREFIX + topic, { ttlSeconds: change.ttlSeconds });
    // The write's own change was seen by this node's listener before put resolved: wait for it.
    await this.#applying.get(topic);
  }

  /** A deleted topic's record goes with it. */
  async forget(topic: string): Promise<void> {
    if (this.#meta.get(TOPIC_CONFIG_PREFIX + topic) === null) return;
    await this.#meta.delete(TOPIC_CONFIG_PREFIX + topic).catch(() => undefined);
  }

  #apply(topic: string, rec: TopicConfigRecord): void {
    const prev = this.#applying.get(topic) ?? Promise.resolve();
    const run = prev
      .then(async () => {
        const t = await this.#topics.get(topic);
        for (const stream of t?.partitions ?? []) {
          if (stream === undefined || this.#cluster.leaderOf(stream) !== this.#nodeId || this.#cluster.moving(stream)) continue;
          await this.#shards.configure({ name: stream, ttlSeconds: rec.ttlSeconds }).catch((err: unknown) => {
            this.#log.warn({ topic, stream, err: (err as Error).message }, 'applying a topic config to a partition failed');
          });
        }
      })
      .catch((err: unknown) => this.#log.warn({ topic, err: (err as Error).message }, 'applying a topic config failed'));
    this.#applying.set(topic, run);
    void run.finally(() => {
      if (this.#applying.get(topic) === run) this.#applying.delete(topic);
    });
  }
}
