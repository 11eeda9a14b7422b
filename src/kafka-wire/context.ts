/**
 * What the Kafka APIs see of the node: the data plane, the live-read registry the HTTP listeners
 * share (passed in by src/node.ts; only its types come from the gateway's front door, and eslint
 * allows no more: edges never import each other's code), the topic index, and the address clients
 * are told to connect to.
 */
import type { LiveWaiters, Waiter } from '../gateway';
import { type Logger } from '../log';
import { type Tracing } from '../tracing';
import { type ShardClient } from '../shards';
import { type GroupCoordinator } from './groups';
import { type KafkaShare } from './share';
import { type TopicIndex } from './topics';
import { type KafkaAuthenticator } from './auth';
import { type TransactionCoordinator } from './txn';
import { type KafkaCluster } from './cluster';
import { type SharedTopicConfigs } from './shared-topic-configs';
import { type RecordValidation } from '../util/validation-rule';

/** A reader waiting for a stream's tail to pass `seq` (the gateway kit's `Waiter`). */
export type TailWaiter = Waiter;

/** The live-read registry (the gateway kit's LiveWaiters): watches streams on the shards and wakes waiters when a tail moves. */
export type LiveRegistry = LiveWaiters;

export interface KafkaContext {
  readonly shards: ShardClient;
  readonly live: LiveRegistry;
  readonly topics: TopicIndex;
  readonly log: Logger;
  /** This node's broker id in Metadata and FindCoordinator. */
  readonly nodeId: number;
  /** host:port clients connect to (Metadata brokers, FindCoordinator). */
  advertised(): { host: string; port: number };
  /** Consumer groups and their committed offsets (groups/). */
  readonly groups: GroupCoordinator;
  /** Share groups (KIP-932, share/): members, share sessions, and the share partitions HTTP leases from too. */
  readonly share: KafkaShare;
  /** Transactions (txn/): transactional ids, open transactions per partition, aborted ranges. */
  readonly txns: TransactionCoordinator;
  /** What ApiVersions advertises. */
  readonly apiVersions: ReadonlyArray<{ apiKey: number; minVersion: number; maxVersion: number }>;
  /** `--auth required`: SASL/PLAIN with an access token (auth.ts); null: auth off. */
  readonly authenticate: KafkaAuthenticator | null;
  /** In a cluster: topic configs in the shared metadata (shared-topic-configs.ts); null: the streams' own config. */
  readonly topicConfigs: SharedTopicConfigs | null;
  /** Schema validation of produced records (produce-validation.ts; the registry's, from src/node.ts); null: none. */
  readonly validation: RecordValidation | null;
  /** The other nodes (brokers, partition leaders, coordinators: cluster.ts), or null for a single node. */
  readonly cluster: KafkaCluster | null;
  /** Requests accepted since start, indexed by API key: plain numbers, read at scrape time (docs/metrics.md). */
  readonly requestCounts: number[];
  /** OpenTelemetry traces of Produce and Fetch (docs/metrics.md, "Traces"), or null: off. */
  readonly tracing: Tracing | null;
}

/** Per-connection facts an API may need. */
export interface ConnectionInfo {
  readonly id: number;
  readonly remote: string;
  readonly clientId: string | null;
}
