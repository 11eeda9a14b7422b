/**
 * This node's membership of the cluster (docs/cluster.md, "Nodes"):
 *
 *   start ──▶ nodes/<id>: nodeEpoch + 1, advertised addresses (compare-and-set, so epochs only grow)
 *         ──▶ live/<id> {nodeId, nodeEpoch} on a liveness lease (etcd; --node-lease-ttl), kept alive by the store
 *   stop  ──▶ the lease is revoked: live/<id> disappears from every view at once
 *
 * A node is live while its `live/<id>` exists. `registered` is true while this incarnation's own
 * live record is in the view (a later start of the same id, or an expired lease, makes it false).
 * With the embedded store there is one node: it is live and registered while it runs.
 */
import { type Logger } from '../../log';
import { type MetaRecord, type MetaStore, MetaConflictError } from '../meta/meta-store';
import { DEFAULT_SLOTS, LIVE_PREFIX, type LiveRecord, NODES_PREFIX, type NodeRecord, liveKey, nodeKey } from './node-record';

/** Seconds a node stays live after its last lease renewal (renewed every third of it): `--node-lease-ttl`'s default. */
export const DEFAULT_LIVE_TTL_S = 5;
/** How often this node publishes its storage figures into its node record, when they changed (ms). */
const PUBLISH_MS = 5_000;

export interface NodeAddresses {
  advertisedAddress: string;
  protocol: 'svc' | 'ds';
  dsAddress: string | null;
  kafkaAddress: string;
  adminAddress: string | null;
}

export class Membership {
  readonly nodeId: number;
  /** This start's epoch; 0 until register() has written it. */
  nodeEpoch = 0;
  /** True with etcd: nodes come and go, leases say who is live. */
  readonly clustered: boolean;
  readonly #meta: MetaStore;
  readonly #log: Logger;
  #leaseLost = false;
  #publisher: NodeJS.Timeout | null = null;
  /** The liveness lease's TTL (seconds, `--node-lease-ttl`). */
  readonly leaseTtlS: number;

  constructor(meta: MetaStore, nodeId: number, log: Logger, leaseTtlS = DEFAULT_LIVE_TTL_S) {
    this.#meta = meta;
    this.nodeId = nodeId;
    this.leaseTtlS = leaseTtlS;
    this.clustered = meta.putLive !== undefined;
    this.#log = log;
  }

  /** Write this node's record with a new epoch (compare-and-set, so epochs only grow), then its live record. */
  async register(addresses: NodeAddresses): Promise<void> {
    const meta = this.#meta;
    const nodeId = this.nodeId;
    if (this.clustered) await meta.sync();
    let record: NodeRecord;
    for (;;) {
      const prev = meta.get<NodeRecord>(nodeKey(nodeId));
      // A start clears the mark a graceful stop left (`stopping`): the node takes streams again.
      const { stopping: _stopped, ...kept } = prev?.value ?? ({} as Partial<NodeRecord>);
      record = { ...kept, nodeId, nodeEpoch: (prev?.value.nodeEpoch ?? 0) + 1, ...addresses, slots: prev?.value.slots ?? DEFAULT_SLOTS };
      try {
        await meta.put(nodeKey(nodeId), record, prev === null ? { absent: true } : { version: prev.version });
        break;
      } catch (err) {
        // Changed under us (slots set from another node): read it again.
        if (!(err instanceof MetaConflictError)) throw err;
      }
    }
    this.nodeEpoch = record.nodeEpoch;
    if (meta.putLive !== undefined) {
      const live: LiveRecord = { nodeId, nodeEpoch: record.nodeEpoch };
      await meta.putLive(liveKey(nodeId), live, this.leaseTtlS, (lost) => (this.#leaseLost = lost));
    }
    meta.onChange((key, rec) => {
      if (key !== liveKey(nodeId) || rec === null) return;
      const epoch = (rec.value as LiveRecord).nodeEpoch;
      if (epoch > this.nodeEpoch) this.#log.error({ nodeId, nodeEpoch: this.nodeEpoch, newerEpoch: epoch }, 'another process registered as this node id; this one is no longer registered');
    });
  }

  /** This incarnation's live record is in the view (spec: `registered`). */
  get registered(): boolean {
    if (this.nodeEpoch === 0) return false;
    if (!this.clustered) return true;
    if (this.#leaseLost) return false;
    return (this.#meta.get<LiveRecord>(liveKey(this.nodeId))?.value.nodeEpoch ?? -1) === this.nodeEpoch;
  }

  /** Every node record, in id order. */
  nodes(): NodeRecord[] {
    return this.#meta
      .list<NodeRecord>(NODES_PREFIX)
      .map((r) => r.value)
      .filter((n) => n.nodeEpoch > 0)
      .sort((a, b) => a.nodeId - b.nodeId);
  }

  node(id: number): NodeRecord | null {
    const r = this.#meta.get<NodeRecord>(nodeKey(id))?.value ?? null;
    return r === null || r.nodeEpoch === 0 ? null : r;
  }

  /** The node has a live record (local: only this node, always). */
  isLive(id: number): boolean {
    if (!this.clustered) return id === this.nodeId;
    return this.#meta.get(liveKey(id)) !== null;
  }

  /** Live nodes, in id order. */
  liveNodes(): NodeRecord[] {
    if (!this.clustered) return this.nodes().filter((n) => n.nodeId === this.nodeId);
    const live = new Set(this.#meta.list<LiveRecord>(LIVE_PREFIX).map((r) => r.value.nodeId));
    return this.nodes().filter((n) => live.has(n.nodeId));
  }

  /**
   * Live nodes as placement weighs them, in id order: a node that is stopping (its record says so)
   * counts with 0 slots, so no new stream, failover or rebalance move goes to it while it hands
   * its streams off and drains.
   */
  placeableNodes(): NodeRecord[] {
    return this.liveNodes().map((n) => (n.stopping === true ? { ...n, slots: 0 } : n));
  }

  /** Mark this node stopping in its record (a graceful stop, before its handoff); the next start clears it. */
  async markStopping(): Promise<void> {
    for (;;) {
      const cur = this.#meta.get<NodeRecord>(nodeKey(this.nodeId));
      if (cur === null || cur.value.stopping === true) return;
      try {
        await this.#meta.put(nodeKey(this.nodeId), { ...cur.value, stopping: true }, { version: cur.version });
        return;
      } catch (err) {
        if (!(err instanceof MetaConflictError)) throw err;
      }
    }
  }

  /** Set a node's slots (POST /admin/nodes/{id}); null when there is no such node. */
  async setSlots(id: number, slots: number): Promise<NodeRecord | null> {
    for (;;) {
      const cur = this.#meta.get<NodeRecord>(nodeKey(id));
      if (cur === null || cur.value.nodeEpoch === 0) return null;
      const next = { ...cur.value, slots };
      try {
        await this.#meta.put(nodeKey(id), next, { version: cur.version });
        return next;
      } catch (err) {
        if (!(err instanceof MetaConflictError)) throw err;
      }
    }
  }

  /**
   * Publish this node's storage figures into its record every PUBLISH_MS when they changed, so that
   * every node's /admin/cluster adds up the same numbers (clustered only).
   */
  publishStorage(read: () => Promise<{ objectCount: number; destroyedObjectBacklog: number }>): void {
    if (!this.clustered) return;
    const tick = async (): Promise<void> => {
      try {
        const s = await read();
        const cur = this.#meta.get<NodeRecord>(nodeKey(this.nodeId)) as MetaRecord<NodeRecord> | null;
        if (cur === null || (cur.value.objectCount === s.objectCount && cur.value.destroyedObjectBacklog === s.destroyedObjectBacklog)) return;
        await this.#meta.put(nodeKey(this.nodeId), { ...cur.value, ...s }, { version: cur.version });
      } catch (err) {
        if (!(err instanceof MetaConflictError)) this.#log.warn({ err: (err as Error).message }, 'publishing storage figures failed');
      }
    };
    const loop = (): void => {
      this.#publisher = setTimeout(() => void tick().finally(() => this.#publisher !== null && loop()), PUBLISH_MS);
      this.#publisher.unref();
    };
    void tick();
    loop();
  }

  /** Stop publishing (the store's close revokes the lease). */
  stop(): void {
    if (this.#publisher !== null) clearTimeout(this.#publisher);
    this.#publisher = null;
  }
}
