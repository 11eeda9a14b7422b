/**
 * The records a node keeps in the metadata (docs/cluster.md):
 *
 *   nodes/<id>   NodeRecord: identity, advertised addresses, slots; written at every start (nodeEpoch + 1)
 *   live/<id>    LiveRecord on the node's liveness lease (etcd): present while the node is alive
 */

/** `nodes/<id>`: what other nodes need to send clients here, and this node's placement weight. */
export interface NodeRecord {
  nodeId: number;
  /** Grows by one at every start of the node. */
  nodeEpoch: number;
  /** host:port of the protocol listener, as clients reach it (`--advertise`). */
  advertisedAddress: string;
  /** What the protocol listener speaks (`--protocol`). */
  protocol: 'svc' | 'ds';
  /** host:port of the Durable Streams listener beside it (`--ds-listen`, `--ds-advertise`), or null. */
  dsAddress: string | null;
  /** host:port of the Kafka listener, as clients reach it (`--kafka-advertised-listen`). */
  kafkaAddress: string;
  /** host:port of the admin listener, or null with --no-admin. */
  adminAddress: string | null;
  /** Weight for new placements (POST /admin/nodes/{id}); 0 takes no new streams. */
  slots: number;
  /** Set by a graceful stop (handoff.ts): the node takes no streams (placement, failover, rebalance) until its next start clears it. */
  stopping?: true;
  /** This node's storage objects, published every few seconds so every node's /admin/cluster can add them up. */
  objectCount?: number;
  destroyedObjectBacklog?: number;
}

/** `live/<id>`: the node incarnation the liveness lease belongs to. */
export interface LiveRecord {
  nodeId: number;
  nodeEpoch: number;
}

export const nodeKey = (id: number): string => `nodes/${id}`;
export const liveKey = (id: number): string => `live/${id}`;
export const NODES_PREFIX = 'nodes/';
export const LIVE_PREFIX = 'live/';
/** Placement weight of a node until an operator sets it. */
export const DEFAULT_SLOTS = 1024;
