/**
 * Topics are streams (docs/kafka.md, "Topics and streams"):
 *
 *   topic T, partition 0  ──  the stream whose effective topic is T (its `kafkaTopic`, or the topic
 *                             derived from its name: `/orders` → `orders`, `/orders/eu` → `orders.eu`)
 *   topic T, partition n≥1 ── the stream `<name>/<n>` whose `kafkaTopic` is set explicitly to T
 *                             (created over Kafka as `/T/<n>`)
 *
 * A topic created over Kafka is the stream `/T` (the derivation gives `T` back for every valid
 * topic) and, with more partitions, `/T/1`, `/T/2`, … with `kafkaTopic: T`. Names Kafka allows but
 * streams reserve (a first character `_`) are refused with INVALID_TOPIC_EXCEPTION.
 *
 * The index maps topics to streams by listing every stream: it is rebuilt when a lookup misses
 * (at most every MISS_REFRESH_MS; in a cluster on every miss, after reading the placement rows as of
 * now) and when it is older than MAX_AGE_MS, and updated at once by the
 * listener's own creates and deletes. Topic ids (KIP-516) are derived from the partition-0 stream's
 * id and the topic name, so they are stable across restarts and new when a topic is deleted and
 * created again.
 */
import { createHash } from 'node:crypto';
import { type ShardClient, type StreamInfo } from '../shards';
import { deriveKafkaTopic, isValidKafkaTopic } from '../util/kafka-topic';
import { uuidFromBytes } from './protocol/uuid';
import { type KafkaCluster } from './cluster';

/** A miss rebuilds the index at most this often (ms): a client polling for a missing topic does not list every stream each time. */
const MISS_REFRESH_MS = 250;
/** An index older than this is rebuilt before use (ms), so streams created or deleted over HTTP show up. */
const MAX_AGE_MS = 2_000;
/** Streams listed per shard call while rebuilding. */
const LIST_PAGE = 1000;

export interface Topic {
  readonly name: string;
  /** Canonical UUID string (KIP-516 topic id). */
  readonly id: string;
  /** Stream name of each partition; index = partition. A hole (a missing partition) is undefined. */
  readonly partitions: ReadonlyArray<string | undefined>;
}

/** The Kafka partition a stream is: its topic and partition index. */
export function partitionOfStream(info: Pick<StreamInfo, 'name' | 'kafkaTopic'>): { topic: string; partition: number } {
  const topic = info.kafkaTopic ?? deriveKafkaTopic(info.name);
  if (info.kafkaTopic !== null) {
    const m = /\/([1-9][0-9]{0,8})$/.exec(info.name);
    if (m !== null) return { topic, partition: Number(m[1]) };
  }
  return { topic, partition: 0 };
}

/** The stream name of partition `p` of a topic created over Kafka. */
export function streamOfPartition(topic: string, p: number): string {
  return p === 0 ? `/${topic}` : `/${topic}/${p}`;
}

/** Why a topic name cannot be created here, or null. */
export function topicNameProblem(topic: string): string | null {
  if (!isValidKafkaTopic(topic)) return `topic ${JSON.stringify(topic)} is not a valid Kafka topic name (1-249 characters of a-z A-Z 0-9 . _ -, not "." or "..")`;
  if (topic.startsWith('_')) return `topic ${topic}: names starting with "_" are reserved`;
  return null;
}

/** Stable topic id: SHA-256 of the partition-0 stream's id and the topic name, as a version-8 UUID. */
export function topicIdOf(streamId: number, topic: string): string {
  const h = createHash('sha256').update(`svc-topic:${streamId}:${topic}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x80; // version 8 (RFC 9562: custom)
  h[8] = (h[8]! & 0x3f) | 0x80; // variant 10
  return uuidFromBytes(h, 0);
}

export class TopicIndex {
  readonly #shards: ShardClient;
  /** In a cluster the index is built from the placement rows (every node's streams), not this node's shards. */
  readonly #cluster: KafkaCluster | null;
  #byName = new Map<string, Topic>();
  #byId = new Map<string, Topic>();
  #builtAt = 0;
  /** In a cluster: the placement's row changes the index was built from; -1 when edited since (added, removed). */
  #builtFromRows = -1;
  #building: Promise<void> | null = null;

  constructor(shards: ShardClient, cluster: KafkaCluster | null = null) {
    this.#shards = shards;
    this.#cluster = cluster;
  }

  /** Every topic, from a fresh enough index. */
  async all(): Promise<Topic[]> {
    if (this.#cluster !== null) {
      // In a cluster the index is the placement rows, in memory: read as of now, it costs one quorum
      // read (without etcd's quorum, this node's view answers).
      await this.#cluster.sync();
      await this.#rebuildIfRowsChanged();
    } else if (Date.now() - this.#builtAt > MAX_AGE_MS) await this.rebuild();
    return [...this.#byName.values()];
  }

  /** The topic named `name`, or undefined. */
  async get(name: string): Promise<Topic | undefined> {
    const age = Date.now() - this.#builtAt;
    let t = this.#byName.get(name);
    if (t === undefined && this.#cluster !== null) {
      // In a cluster the placement rows are the index: a miss reads them as of now (a topic set on another node a moment ago).
      await this.#cluster.sync();
      await this.#rebuildIfRowsChanged();
      return this.#byName.get(name);
    }
    if (age > MAX_AGE_MS || (t === undefined && age > MISS_REFRESH_MS)) {
      await this.rebuild();
      t = this.#byName.get(name);
    }
    return t;
  }

  async byId(id: string): Promise<Topic | undefined> {
    const age = Date.now() - this.#builtAt;
    let t = this.#byId.get(id);
    if (age > MAX_AGE_MS || (t === undefined && age > MISS_REFRESH_MS)) {
      await this.rebuild();
      t = this.#byId.get(id);
    }
    return t;
  }

  /** In a cluster: rebuild from the placement rows when they changed since the last build (or this index was edited). */
  #rebuildIfRowsChanged(): Promise<void> {
    return this.#cluster!.rowChanges() === this.#builtFromRows ? Promise.resolve() : this.rebuild();
  }

  /** The listener created these streams (partition 0 first): known at once. */
  added(topic: string, streams: ReadonlyArray<{ name: string; streamId: number }>): Topic {
    const t: Topic = { name: topic, id: topicIdOf(streams[0]!.streamId, topic), partitions: streams.map((s) => s.name) };
    this.#put(t);
    return t;
  }

  /** A topic's streams are gone (deleted here, or found missing). */
  removed(topic: string): void {
    const t = this.#byName.get(topic);
    if (t === undefined) return;
    this.#builtFromRows = -1;
    this.#byName.delete(topic);
    this.#byId.delete(t.id);
  }

  /**
   * List every stream and rebuild the maps; concurrent callers share one rebuild. When the listing
   * fails (a shard worker is down) and an index was built before, that index stays in use and the
   * next lookup tries again: a request for a partition on a healthy shard is still answered, and
   * one on the failed shard gets its storage error from the append or read itself.
   */
  rebuild(): Promise<void> {
    this.#building ??= this.#build()
      .catch((err: unknown) => {
        if (this.#builtAt === 0) throw err;
      })
      .finally(() => (this.#building = null));
    return this.#building;
  }

  async #build(): Promise<void> {
    const started = Date.now();
    const rows = this.#cluster?.rowChanges() ?? -1;
    const found = new Map<string, { p0: { streamId: number } | null; parts: Array<string | undefined> }>();
    let startAfter = '';
    for (;;) {
      const page = this.#cluster !== null ? { streams: this.#cluster.streams(), hasMore: false } : await this.#shards.list({ prefix: '', startAfter, limit: LIST_PAGE });
      for (const s of page.streams) {
        const { topic, partition } = partitionOfStream(s);
        let e = found.get(topic);
        if (e === undefined) found.set(topic, (e = { p0: null, parts: [] }));
        // Two streams claiming one partition (derived names can collide): the first by name keeps it.
        if (e.parts[partition] !== undefined) continue;
        e.parts[partition] = s.name;
        if (partition === 0) e.p0 = s;
      }
      if (!page.hasMore || page.streams.length === 0) break;
      startAfter = page.streams[page.streams.length - 1]!.name;
    }
    const byName = new Map<string, Topic>();
    const byId = new Map<string, Topic>();
    for (const [name, e] of found) {
      // Partitions beyond 0 without their partition 0 are not a topic.
      if (e.p0 === null) continue;
      const t: Topic = { name, id: topicIdOf(e.p0.streamId, name), partitions: e.parts };
      byName.set(name, t);
      byId.set(t.id, t);
    }
    this.#byName = byName;
    this.#byId = byId;
    this.#builtAt = started;
    this.#builtFromRows = rows;
  }

  #put(t: Topic): void {
    this.#builtFromRows = -1;
    const old = this.#byName.get(t.name);
    if (old !== undefined) this.#byId.delete(old.id);
    this.#byName.set(t.name, t);
    this.#byId.set(t.id, t);
  }
}
