/**
 * Share groups' durable state (KIP-932 on the node; docs/protocol.md "Share groups"): one
 * SharePartition per (group, stream) and one config per group, in the metadata store — the
 * node's fsynced command log, or etcd in a cluster:
 *
 *   svc/share/<group>/config      ShareGroupConfig (Kafka's group config names, docs/protocol.md)
 *   svc/share/<group>/s/<stream>  SharePartitionRecord (runs of equal entries; share-partition.ts)
 *
 * `<group>` is encodeURIComponent of the name. Every change to a partition (an acquisition, an
 * acknowledgement, a lock that expired) is written before the call that made it is answered, so
 * a node killed at any point restarts with every answered acknowledgement kept, and with the
 * locks it had handed out still held until their deadline: a record is delivered again only if
 * its acknowledgement was never answered.
 *
 * Calls on one (group, stream) run one at a time, in call order (`run`), on the node that owns the
 * stream: a cluster sends every request for a stream to its owner, so the state has one writer.
 */
import { type MetaStore } from '../meta/meta-store';
import { SharePartition, type SharePartitionLimits, type SharePartitionRecord } from './share-partition';

/**
 * A group's settings, under Kafka's names (KIP-932, KIP-1191): the broker-level names where
 * Kafka has both (its group configs drop the `group.` prefix; the Kafka listener takes either).
 * Most are a share group's; the membership timeouts are any group's (Kafka's group configs are
 * per group id, whatever its kind), kept in the same record.
 */
export interface ShareGroupConfig {
  /** Default lock of an acquisition, ms (`group.share.record.lock.duration.ms`, Kafka default 30 s). */
  'group.share.record.lock.duration.ms': number;
  /** Deliveries before a record is archived (`group.share.delivery.count.limit`, Kafka default 5). */
  'group.share.delivery.count.limit': number;
  /** Most records locked at once per partition (`group.share.partition.max.record.locks`, default 2000). */
  'group.share.partition.max.record.locks': number;
  /** Where a new partition state starts: `latest` (the tail, Kafka's default) or `earliest`. */
  'share.auto.offset.reset': 'earliest' | 'latest';
  /** Stream that archived records (rejected, or past the delivery limit) are appended to; '' for none. */
  'errors.deadletterqueue.topic.name': string;
  /**
   * Kafka's group configs for the group's membership (KIP-848, KIP-932), ms; null: the node's
   * option (`--kafka-group-consumer-session-timeout-ms`, `--kafka-group-consumer-heartbeat-interval-ms`).
   * A consumer group uses the `consumer.*` pair, a share group the `share.*` pair.
   */
  'consumer.session.timeout.ms': number | null;
  'consumer.heartbeat.interval.ms': number | null;
  'share.session.timeout.ms': number | null;
  'share.heartbeat.interval.ms': number | null;
}

export const SHARE_GROUP_DEFAULTS: Readonly<ShareGroupConfig> = Object.freeze({
  'group.share.record.lock.duration.ms': 30_000, // 30 s
  'group.share.delivery.count.limit': 5,
  'group.share.partition.max.record.locks': 2000,
  'share.auto.offset.reset': 'latest',
  'errors.deadletterqueue.topic.name': '',
  'consumer.session.timeout.ms': null,
  'consumer.heartbeat.interval.ms': null,
  'share.session.timeout.ms': null,
  'share.heartbeat.interval.ms': null,
});

/** Bounds of each numeric config (Kafka's, where it has them). */
const BOUNDS: Record<string, [number, number]> = {
  'group.share.record.lock.duration.ms': [1000, 3_600_000],
  'group.share.delivery.count.limit': [2, 10],
  'group.share.partition.max.record.locks': [100, 10_000],
  // Wider than Kafka's broker bounds (45-60 s, 5-15 s), as the node options are: a test or a
  // latency-bound deployment may want a member gone within seconds.
  'consumer.session.timeout.ms': [1000, 1_800_000],
  'consumer.heartbeat.interval.ms': [100, 60_000],
  'share.session.timeout.ms': [1000, 1_800_000],
  'share.heartbeat.interval.ms': [100, 60_000],
};

/** The session timeout and heartbeat interval a group uses: its configs over the node's options. */
export function membershipTimeouts(c: ShareGroupConfig, kind: 'consumer' | 'share', node: { sessionTimeoutMs: number; heartbeatIntervalMs: number }): { sessionTimeoutMs: number; heartbeatIntervalMs: number } {
  return { sessionTimeoutMs: c[`${kind}.session.timeout.ms`] ?? node.sessionTimeoutMs, heartbeatIntervalMs: c[`${kind}.heartbeat.interval.ms`] ?? node.heartbeatIntervalMs };
}

/**
 * Validate a partial config (names → values, as JSON gives them): the problems, all at once,
 * or the changes. Values may be numbers or their decimal strings (Kafka sends strings).
 */
export function parseShareGroupConfig(doc: Record<string, unknown>): { changes: Partial<ShareGroupConfig>; problems: string[] } {
  const changes: Record<string, number | string> = {};
  const problems: string[] = [];
  for (const [name, raw] of Object.entries(doc)) {
    const bounds = BOUNDS[name];
    if (bounds !== undefined) {
      const n = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : raw;
      if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < bounds[0] || n > bounds[1]) problems.push(`${name}: an integer from ${bounds[0]} to ${bounds[1]}`);
      else changes[name] = n;
    } else if (name === 'share.auto.offset.reset') {
      if (raw !== 'earliest' && raw !== 'latest') problems.push(`${name}: earliest or latest`);
      else changes[name] = raw;
    } else if (name === 'errors.deadletterqueue.topic.name') {
      if (typeof raw !== 'string') problems.push(`${name}: a stream name, or "" for none`);
      else changes[name] = raw;
    } else problems.push(`${name}: not a share group config`);
  }
  return { changes: changes as Partial<ShareGroupConfig>, problems };
}

export const limitsOf = (c: ShareGroupConfig): SharePartitionLimits => ({ deliveryLimit: c['group.share.delivery.count.limit'], maxLocks: c['group.share.partition.max.record.locks'] });

const PREFIX = 'svc/share/';
const configKey = (group: string): string => `${PREFIX}${encodeURIComponent(group)}/config`;
const partitionPrefix = (group: string): string => `${PREFIX}${encodeURIComponent(group)}/s/`;
const partitionKey = (group: string, stream: string): string => `${partitionPrefix(group)}${stream}`;

export class ShareStates {
  readonly #meta: MetaStore;
  /** Partitions in memory, by key; loaded from the store on first use. */
  readonly #partitions = new Map<string, SharePartition>();
  /** The tail of each key's queue of calls. */
  readonly #queues = new Map<string, Promise<unknown>>();
  /** Groups being deleted (deleteGroup): settles when the delete is done, never rejects. */
  readonly #deleting = new Map<string, Promise<void>>();

  constructor(meta: MetaStore) {
    this.#meta = meta;
    // A partition deleted by another node (a cluster's group coordinator deleting its group) must
    // not live on in this node's memory, to be written back by the next call on it.
    meta.onChange((key, rec) => {
      if (rec === null) this.#partitions.delete(key);
    });
  }

  /** Groups with a stored partition state (a share group Kafka would know, with or without members). */
  groups(): string[] {
    const ids = new Set<string>();
    for (const r of this.#meta.list(PREFIX)) {
      const rest = r.key.slice(PREFIX.length);
      const slash = rest.indexOf('/');
      if (rest.startsWith('s/', slash + 1)) ids.add(decodeURIComponent(rest.slice(0, slash)));
    }
    return [...ids];
  }

  /** The streams the group has a stored partition state for. */
  streams(group: string): string[] {
    const prefix = partitionPrefix(group);
    return this.#meta.list(prefix).map((r) => r.key.slice(prefix.length));
  }

  /** Whether the group has a stored partition state (its config alone does not count). */
  hasGroup(group: string): boolean {
    return this.#meta.list(partitionPrefix(group)).length > 0;
  }

  /**
   * Forget every partition state of the group (DeleteGroups), each after the calls on it so far;
   * its config stays. Resolves with the number of partitions forgotten. Calls made meanwhile
   * (`run`: a member that joined, an HTTP lease) wait until it is done and then start on no
   * state: none of them writes a partition the delete then forgets under its records' locks.
   */
  deleteGroup(group: string): Promise<number> {
    const done = this.#deleteGroup(group);
    const gate = done.then(
      () => undefined,
      () => undefined,
    );
    this.#deleting.set(group, gate);
    // Registered before any waiter's: the gate is gone when they run again.
    void gate.then(() => this.#deleting.get(group) === gate && this.#deleting.delete(group));
    return done;
  }

  async #deleteGroup(group: string): Promise<number> {
    await this.#deleting.get(group); // a delete of the group already running
    await this.#meta.sync();
    const prefix = partitionPrefix(group);
    let n = 0;
    for (const r of this.#meta.list(prefix)) if (await this.delete(group, r.key.slice(prefix.length))) n++;
    return n;
  }

  /** The group's config: its stored changes over the defaults. */
  config(group: string): ShareGroupConfig {
    const stored = this.#meta.get<Partial<ShareGroupConfig>>(configKey(group))?.value ?? {};
    return { ...SHARE_GROUP_DEFAULTS, ...stored };
  }

  /** The names of the configs stored for the group (the others are at their defaults). */
  storedConfigNames(group: string): Array<keyof ShareGroupConfig> {
    return Object.keys(this.#meta.get<Partial<ShareGroupConfig>>(configKey(group))?.value ?? {}) as Array<keyof ShareGroupConfig>;
  }

  /** Wait until this node's view holds every change committed before the call (a cluster's quorum read; local: at once). */
  sync(): Promise<void> {
    return this.#meta.sync();
  }

  /** Store `changes` over the group's config (null for a name: back to its default). */
  async alterConfig(group: string, changes: Partial<Record<keyof ShareGroupConfig, unknown>>): Promise<ShareGroupConfig> {
    await this.#meta.sync();
    const stored: Record<string, unknown> = { ...(this.#meta.get<Partial<ShareGroupConfig>>(configKey(group))?.value ?? {}) };
    for (const [k, v] of Object.entries(changes)) {
      if (v === null) delete stored[k];
      else stored[k] = v;
    }
    await this.#meta.put(configKey(group), stored);
    return this.config(group);
  }

  /**
   * Run `fn` on (group, stream)'s partition, after every earlier call on it; `init` gives the
   * start of a partition the store has never seen. When `fn` returns `changed`, the partition is
   * written before `run` resolves; a failed `fn` or write drops it from memory (the next call
   * reloads what is durable).
   */
  run<T>(group: string, stream: string, init: () => Promise<number>, fn: (p: SharePartition, config: ShareGroupConfig) => Promise<{ result: T; changed: boolean }>): Promise<T> {
    // Not queued on the partition while its group is being deleted: the delete waits for that queue.
    const deleting = this.#deleting.get(group);
    if (deleting !== undefined) return deleting.then(() => this.run(group, stream, init, fn));
    const key = partitionKey(group, stream);
    const prev = this.#queues.get(key) ?? Promise.resolve();
    const step = prev.then(
      () => this.#runNow(key, group, init, fn),
      () => this.#runNow(key, group, init, fn),
    );
    // The queue moves on once `fn` ran and its write was issued: the next call works on the state
    // in memory while this write is on its way (writes reach the store in call order, so a call
    // is answered only once its state and every state before it are durable; the store's group
    // commit takes many calls' writes in one fsync).
    const done = step.then(() => undefined);
    this.#queues.set(key, done);
    void done.then(
      () => this.#queues.get(key) === done && this.#queues.delete(key),
      () => this.#queues.get(key) === done && this.#queues.delete(key),
    );
    return step.then(async ({ result, write }) => {
      await write;
      return result;
    });
  }

  /** The stored partition of (group, stream), or null (read-only: for describing). */
  peek(group: string, stream: string): SharePartition | null {
    const key = partitionKey(group, stream);
    const mem = this.#partitions.get(key);
    if (mem !== undefined) return mem;
    const rec = this.#meta.get<SharePartitionRecord>(key)?.value;
    return rec === undefined ? null : SharePartition.fromRecord(rec);
  }

  /** Forget (group, stream), after the calls on it so far: false when there was nothing. */
  async delete(group: string, stream: string): Promise<boolean> {
    const key = partitionKey(group, stream);
    await (this.#queues.get(key) ?? Promise.resolve()).catch(() => undefined);
    this.#partitions.delete(key);
    return this.#meta.delete(key);
  }

  async #runNow<T>(key: string, group: string, init: () => Promise<number>, fn: (p: SharePartition, config: ShareGroupConfig) => Promise<{ result: T; changed: boolean }>): Promise<{ result: T; write: Promise<unknown> }> {
    let p = this.#partitions.get(key);
    let created = false;
    if (p === undefined) {
      await this.#meta.sync();
      const rec = this.#meta.get<SharePartitionRecord>(key)?.value;
      if (rec !== undefined) p = SharePartition.fromRecord(rec);
      else {
        p = new SharePartition(await init());
        created = true;
      }
      this.#partitions.set(key, p);
    }
    let out: { result: T; changed: boolean };
    try {
      out = await fn(p, this.config(group));
    } catch (err) {
      this.#partitions.delete(key);
      throw err;
    }
    if (!out.changed && !created) return { result: out.result, write: Promise.resolve() };
    const write = this.#meta.put(key, p.toRecord());
    // A write that fails leaves memory ahead of the store: the next call reloads what is durable.
    write.catch(() => this.#partitions.get(key) === p && this.#partitions.delete(key));
    return { result: out.result, write };
  }
}
