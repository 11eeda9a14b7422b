/**
 * The Kafka edge's front door (src/node.ts starts it):
 *
 *   Kafka client ──TCP──▶ server.ts (frames, order) ──▶ dispatch.ts (header, version) ──▶ apis/<api>.ts
 *                                                                                             │
 *                                        topics.ts (topic ⇄ streams) ◀────────────────────────┤
 *                                        ShardClient (append, read, head, create, delete) ◀───┤
 *                                        live-read registry (Fetch long-poll) ◀───────────────┘
 */
import { type MetaStore, ShareStates, membershipTimeouts } from '../actors';
import { type Logger } from '../log';
import { type Tracing } from '../tracing';
import { type ShardClient } from '../shards';
import { type KafkaAuthenticator } from './auth';
import { type KafkaContext, type LiveRegistry } from './context';
import { SERVED_APIS, countsByApi, dispatch } from './dispatch';
import type { GroupDoc } from '../gateway';
import { CONSUMER_GROUP_TIMEOUTS, type ConsumerGroupTimeouts, GroupCoordinator } from './groups';
import { groupViews } from './group-views';
import { KafkaShare } from './share';
import { type KafkaServerHandle, listenKafka, refusalLog } from './server';
import { TopicIndex } from './topics';
import { type PartitionTxns, TransactionCoordinator, mirrorPartitionTxns } from './txn';
import { type KafkaCluster } from './cluster';
import { SharedTopicConfigs } from './shared-topic-configs';
import { KafkaRelay } from './relay';
import { FramePool } from './frame-assembler';
import { type RecordValidation } from '../util/validation-rule';

export { type LiveRegistry } from './context';
export { type KafkaAuthenticator, kafkaAuthenticator } from './auth';
export { type KafkaCluster, kafkaCluster } from './cluster';
export { PartitionTxns, type PartitionTxnState } from './txn';
export { KafkaFront, type KafkaFrontOptions } from './thread-front';
export { KafkaRelay, type RelayReply } from './relay';
export { type KafkaToMain, type KafkaToThread, isKafkaToMain, isKafkaToThread } from './thread-messages';

/** Gateway threads that serve Kafka connections (thread-front.ts): the listener hands them the sockets it accepts. */
export interface KafkaThreads {
  /** Where the threads' requests go (relay.ts); called once, before the listener takes a connection. */
  attach(relay: KafkaRelay): void;
  /** The taker of the next accepted connection (its descriptor's duplicate and its id), or null to serve it on this thread. */
  taker(): ((fd: number, id: number) => void) | null;
  /** Connections the threads serve now. */
  connections(): number;
}

/**
 * The partitions' Kafka transaction state (open transactions, aborted ranges) restored from the
 * metadata store before any listener starts: HTTP and Durable Streams reads serve committed data
 * only from their first request (docs/kafka.md, "Transactions"). Hand it to startKafkaListener.
 */
export function committedReads(meta: MetaStore): PartitionTxns {
  return mirrorPartitionTxns(meta);
}

export interface KafkaListenerOptions {
  host: string;
  port: number;
  /** The address clients are told to connect to; null: the bound host and port. */
  advertised: { host: string; port: number } | null;
  /** Largest request frame (bytes). */
  maxRequestBytes: number;
  nodeId: number;
  shards: ShardClient;
  live: LiveRegistry;
  /** The metadata store: committed offsets of consumer groups (groups/offset-store.ts), transaction state (txn/store.ts). */
  meta: MetaStore;
  log: Logger;
  /** `--auth required`: checks a SASL/PLAIN password (an access token); null or absent: auth off. */
  authenticate?: KafkaAuthenticator | null;
  /** In a cluster: brokers, leaders, coordinators and placement (cluster.ts); null or absent: a single node. */
  cluster?: KafkaCluster | null;
  /** The partitions' transaction state (committedReads), shared with the HTTP readers; absent: restored here. */
  txnParts?: PartitionTxns;
  /** OpenTelemetry traces of Produce and Fetch (docs/metrics.md, "Traces"); null or absent: off. */
  tracing?: Tracing | null;
  /** Session timeout and heartbeat interval of consumer-protocol groups (KIP-848); absent: Kafka's defaults, 45 s and 5 s. */
  consumerGroupTimeouts?: ConsumerGroupTimeouts;
  /** Schema validation of produced records (the registry's); null or absent: none. */
  validation?: RecordValidation | null;
  /** Share groups' partition state, the one the Svc listener's `/_share/{stream}` uses (so both serve one group); absent: a store of its own over `meta`. */
  shareStates?: ShareStates;
  /** Gateway threads to serve the connections (a single node on the uws engine, node.ts); null or absent: this thread serves them all. */
  threads?: KafkaThreads | null;
}

export interface KafkaListener extends KafkaServerHandle {
  /** Requests accepted since start, by API name (only APIs asked for at least once), for the metrics. */
  requestsByApi(): Array<{ api: string; count: number }>;
  /** Groups of every kind with members, assignments and lag, computed when asked (the admin API); `only`: that group alone. */
  groups(only?: string): Promise<GroupDoc[]>;
}

/** Bytes of one read when a share fetch looks for records by seq. */
const SHARE_READ_BYTES = 1024 * 1024; // 1 MiB

/** Requests carry a few hundred bytes of headers and field framing around their record batches. */
const FRAME_OVERHEAD = 1024 * 1024; // 1 MiB

/** The largest request frame a listener (or a gateway thread's connections) takes, for a node's `--max-request-bytes`. */
export function maxKafkaFrameBytes(maxRequestBytes: number): number {
  return maxRequestBytes + FRAME_OVERHEAD;
}

export async function startKafkaListener(o: KafkaListenerOptions): Promise<KafkaListener> {
  const log = o.log.child({ module: 'kafka' });
  let bound = { host: o.host, port: o.port };
  // In a cluster one node coordinates each group (cluster.ts); the others answer NOT_COORDINATOR.
  const cluster = o.cluster ?? null;
  const timeouts = o.consumerGroupTimeouts ?? CONSUMER_GROUP_TIMEOUTS;
  // Every group's configs (share groups' settings, any group's membership timeouts) live in one record per group id.
  const shareStates = o.shareStates ?? new ShareStates(o.meta);
  const groups = new GroupCoordinator(
    o.meta,
    log,
    cluster === null ? undefined : (groupId) => cluster.coordinatorOf(groupId)?.nodeId === o.nodeId,
    (groupId) => membershipTimeouts(shareStates.config(groupId), 'consumer', timeouts),
  );
  const topics = new TopicIndex(o.shards, o.cluster ?? null);
  const share = new KafkaShare({
    shards: o.shards,
    states: shareStates,
    log,
    pageBytes: SHARE_READ_BYTES,
    sessionTimeoutMs: timeouts.sessionTimeoutMs,
    heartbeatIntervalMs: timeouts.heartbeatIntervalMs,
    coordinates: cluster === null ? () => true : (groupId) => cluster.coordinatorOf(groupId)?.nodeId === o.nodeId,
    otherKind: (groupId) => groups.known(groupId),
  });
  const ctx: KafkaContext = {
    shards: o.shards,
    live: o.live,
    topics,
    topicConfigs: cluster === null ? null : new SharedTopicConfigs(o.meta, cluster, o.shards, topics, o.nodeId, log),
    log,
    nodeId: o.nodeId,
    advertised: () => o.advertised ?? bound,
    groups,
    share,
    txns: new TransactionCoordinator(o.meta, o.shards, groups, log, { nodeId: o.nodeId, cluster, parts: o.txnParts }),
    apiVersions: SERVED_APIS,
    authenticate: o.authenticate ?? null,
    cluster: o.cluster ?? null,
    validation: o.validation ?? null,
    requestCounts: Array.from({ length: 128 }, () => 0),
    tracing: o.tracing ?? null,
  };
  // Large Produce frames go to the shard workers whole and come back for reuse (frame-assembler.ts).
  const framePool = new FramePool();
  o.shards.onReturnedBuffer((ab) => framePool.put(ab));
  const threads = o.threads ?? null;
  // The requests gateway threads leave to this thread run through the same dispatch (relay.ts).
  const refusals = refusalLog(log);
  threads?.attach(new KafkaRelay((frame, conn) => dispatch(ctx, frame, conn), ctx.authenticate !== null, refusals));
  const server = await listenKafka({
    host: o.host, port: o.port, maxFrameBytes: maxKafkaFrameBytes(o.maxRequestBytes), framePool, log, refusals, handle: (frame, conn) => dispatch(ctx, frame, conn),
    ...(threads === null ? {} : { handOff: () => threads.taker() }),
  });
  bound = { host: o.host, port: server.port };
  return {
    port: server.port,
    stopAccepting: () => server.stopAccepting(),
    connections: () => server.connections() + (threads?.connections() ?? 0),
    requestsByApi: () => countsByApi(ctx.requestCounts),
    groups: (only?: string) =>
      groupViews({ groups: ctx.groups, share: ctx.share, topics: ctx.topics, shards: o.shards, nodeId: o.nodeId, coordinatorOf: (id) => (cluster === null ? o.nodeId : (cluster.coordinatorOf(id)?.nodeId ?? null)) }, only),
    // Requests waiting in JoinGroup or SyncGroup are answered first, so the connections drain.
    close: (graceMs?: number) => {
      ctx.groups.close();
      ctx.txns.close();
      return server.close(graceMs);
    },
  };
}
