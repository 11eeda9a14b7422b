/**
 * The Kafka listener in a cluster (docs/cluster.md, "Kafka"; docs/kafka.md):
 *
 *   Metadata        every live node is a broker (its Kafka advertised address); each partition's
 *                   leader is the node that owns its stream (placement row)
 *   Produce, Fetch,
 *   ListOffsets     on a node that does not own the partition: NOT_LEADER_OR_FOLLOWER, so the client
 *                   refreshes its metadata and goes to the leader
 *   FindCoordinator the node that coordinates a group (or transactional id): rendezvous of the key
 *                   over the live nodes, the same answer on every node; committed offsets are in the
 *                   shared metadata, so a new coordinator sees them
 *   CreateTopics    each partition placed like any new stream; the owner creates it (placement row
 *                   with a create intent) and the create answers once every partition is placed
 *
 * With the embedded store `ctx.cluster` is null and this node is the only broker.
 */
import { type Membership, type Placement, type PlacementIntents, isMoving, rendezvous, withinRequestDeadline } from '../actors';

/**
 * How long a topic lookup waits for etcd before it answers from this node's view: short, so a
 * request that goes on to need etcd (a CreateTopics placing partitions) still answers within the
 * client's deadline when etcd has lost its quorum (docs/cluster.md, "When etcd loses its quorum").
 */
const TOPIC_SYNC_MS = 250;
/** After a lookup found etcd without an answer, lookups answer from the view for this long. */
const TOPIC_SYNC_RETRY_MS = 5_000;

export interface Broker {
  nodeId: number;
  host: string;
  port: number;
}

/** A partition stream to create somewhere in the cluster. */
export interface PartitionSpec {
  name: string;
  contentType: string;
  ttlSeconds: number | null;
  kafkaTopic: string | null;
}

export interface KafkaCluster {
  /** Objects mode (--objects): partitions' data is in the shared object store (replication-factor.ts). */
  readonly objects: boolean;
  /** The node owning `stream` (its partition's leader), or null when it has no placement row. */
  leaderOf(stream: string): number | null;
  /** The stream is moving (transfer, failover): no node leads it until the new owner has opened it. */
  moving(stream: string): boolean;
  /** Every live node with a Kafka listener, in id order. */
  brokers(): Broker[];
  /** The node coordinating `key` (a group id or a transactional id), or null when no node is live. */
  coordinatorOf(key: string): Broker | null;
  /**
   * Wait until this node's view of the placement holds every write made before the call (a topic
   * index miss); false when etcd did not answer within TOPIC_SYNC_MS (its quorum lost), and the
   * view is as it was.
   */
  sync(): Promise<boolean>;
  /** Changes of the placement rows this node has seen: the topic index rebuilds only when it moved. */
  rowChanges(): number;
  /** Every placed stream of the cluster, for the topic index, in name order. */
  streams(): Array<{ name: string; kafkaTopic: string | null; streamId: number }>;
  /** Place and create a partition stream on its owner; resolves with its cluster-wide id once placed. */
  create(spec: PartitionSpec): Promise<{ streamId: number }>;
  /** Have the owner delete a partition stream and free its name; resolves once the row is gone. */
  remove(stream: string): Promise<void>;
}

/** "host:port" (IPv6 in brackets) → its parts. */
function parseAddress(a: string): { host: string; port: number } {
  const i = a.lastIndexOf(':');
  const host = a.slice(0, i);
  return { host: host.startsWith('[') ? host.slice(1, -1) : host, port: Number(a.slice(i + 1)) };
}

/** `starting`: objects mode, true until the node reopened its local streams (docs/cluster.md, "Restart"). */
export function kafkaCluster(placement: Placement, intents: PlacementIntents, members: Membership, starting: () => boolean = () => false, objects = false): KafkaCluster {
  let syncFailedAt = -Infinity;
  const brokers = (): Broker[] => members.liveNodes().filter((n) => n.kafkaAddress !== '').map((n) => ({ nodeId: n.nodeId, ...parseAddress(n.kafkaAddress) }));
  return {
    objects,
    leaderOf: (stream) => placement.row(stream)?.row.nodeId ?? null,
    moving: (stream) => {
      const r = placement.row(stream);
      return r !== null && (isMoving(r.row) || (r.row.nodeId === members.nodeId && starting()));
    },
    brokers,
    coordinatorOf(key) {
      const live = brokers();
      // Every live node weighs the same here: a group's state is small; what matters is that all agree.
      const id = rendezvous(key, live.map((b) => ({ nodeId: b.nodeId, slots: 1 })));
      return live.find((b) => b.nodeId === id) ?? null;
    },
    rowChanges: () => placement.rowChanges(),
    streams: () => placement.placedStreams(),
    async sync() {
      // etcd did not answer a moment ago: the view answers at once, so a request that needs
      // several lookups does not wait for each.
      if (Date.now() - syncFailedAt < TOPIC_SYNC_RETRY_MS) return false;
      const ok = await withinRequestDeadline(placement.sync(), 'a read of the topic index', TOPIC_SYNC_MS).then(
        () => true,
        () => false,
      );
      if (!ok) syncFailedAt = Date.now();
      return ok;
    },
    remove: (stream) => intents.removeAndWait(stream),
    create: (spec) => intents.placeAndOpen(spec.name, { contentType: spec.contentType, ttlSeconds: spec.ttlSeconds, kafkaTopic: spec.kafkaTopic }),
  };
}
