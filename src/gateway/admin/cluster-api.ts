/**
 * The admin API's cluster documents (spec "Cluster overview", "Node", "Stream detail"), answered
 * from this node's view of the metadata (docs/cluster.md):
 *
 *   GET /admin/cluster          overview; clustered: streamCount = placement rows, objectCount and
 *                               destroyedObjectBacklog = the object ledger's o/ and d/ records in
 *                               objects mode, else the sums every node publishes in its record
 *   GET /admin/nodes[/{id}]     every registered node, `live` from its lease, counts from placement rows
 *   POST /admin/nodes/{id}      {slots}: the node's weight for new placements (0: none)
 *   GET /admin/streams/{name}   placement row + the owner's storage facts (read from the owner's
 *                               admin listener when it is another node; `available: false` while
 *                               the owner is down; objects mode: until failover moves them)
 *
 * Only identity fields (nodeId, nodeEpoch, advertisedAddress, registered, appliedIndex,
 * leaseHolder) and `local` differ between nodes.
 */
import { type Membership, type NodeRecord, type Placement, type Transfers, isMoving } from '../../actors';
import { SvcError } from '../../errors';
import { type ShardClient } from '../../shards';
import { type HttpRequest } from '../http/engine';

export interface ClusterDeps {
  shards: ShardClient;
  members: Membership;
  /** Null with the embedded store: one node owns every stream in its data directory. */
  placement: Placement | null;
  /** Pending transfers (stream detail's pendingTransfer); null with the embedded store. */
  transfers?: Transfers | null;
  /** Objects mode: the cluster's object figures, counted in the object ledger (src/objects/object-census.ts). */
  objects?: ObjectFigures | null;
}

/** `objectCount` and `destroyedObjectBacklog` as the object ledger counts them (cached a moment). */
export interface ObjectFigures {
  counts(): Promise<{ objectCount: number; destroyedObjectBacklog: number }>;
}

export function nodeDoc(d: ClusterDeps, rec: NodeRecord, localStreams: number): unknown {
  const counts = d.placement === null ? { opening: 0, placed: rec.nodeId === d.members.nodeId ? localStreams : 0 } : d.placement.countsOf(rec.nodeId);
  return {
    nodeId: rec.nodeId,
    nodeEpoch: rec.nodeEpoch,
    advertisedAddress: rec.advertisedAddress,
    slots: rec.slots,
    openingCount: counts.opening,
    placedCount: counts.placed,
    local: rec.nodeId === d.members.nodeId,
    // Beyond the spec's fields: liveness and the other listeners' addresses (docs/cluster.md).
    live: d.members.isLive(rec.nodeId),
    protocol: rec.protocol,
    dsAddress: rec.dsAddress,
    kafkaAddress: rec.kafkaAddress,
    adminAddress: rec.adminAddress,
  };
}

/** Figures of GET /admin/cluster that the cluster shares (the rest are this node's identity). */
export async function clusterFigures(d: ClusterDeps): Promise<{ streamCount: number; objectCount: number; destroyedObjectBacklog: number; appliedChanges: number }> {
  const s = await d.shards.stats();
  if (d.placement === null) return { streamCount: s.streamCount, objectCount: s.objectCount, destroyedObjectBacklog: s.destroyedObjectBacklog, appliedChanges: s.appliedChanges };
  if (d.objects !== undefined && d.objects !== null) {
    // Objects mode: the ledger's o/ and d/ records are the cluster's real figures (count-only reads).
    const c = await d.objects.counts().catch((err: unknown) => {
      throw new SvcError('storage_unavailable', `the object ledger could not be counted: ${(err as Error).message}`);
    });
    return { streamCount: d.placement.count(), objectCount: c.objectCount, destroyedObjectBacklog: c.destroyedObjectBacklog, appliedChanges: s.appliedChanges };
  }
  let objectCount = 0;
  let destroyedObjectBacklog = 0;
  for (const n of d.members.nodes()) {
    objectCount += n.objectCount ?? 0;
    destroyedObjectBacklog += n.destroyedObjectBacklog ?? 0;
  }
  return { streamCount: d.placement.count(), objectCount, destroyedObjectBacklog, appliedChanges: s.appliedChanges };
}

/** GET /admin/streams/{name} in a cluster. */
export async function streamDetail(d: ClusterDeps, placement: Placement, name: string, req: HttpRequest): Promise<unknown> {
  const found = placement.row(name);
  const self = d.members.nodeId;
  if (found === null || found.row.nodeId === self) {
    // Here, or without a row (created before this node joined a cluster): the shard knows it.
    const me = d.members.node(self);
    if (found !== null && isMoving(found.row)) {
      // Moving here and not imported yet: the storage facts come once it is placed.
      const info = await d.shards.head(name).catch(() => null);
      if (info === null) {
        const { row } = found;
        return { name, contentType: null, ttlSeconds: null, expiresAtMs: null, closed: false, startOffset: null, endOffset: null, streamId: row.streamId, ownerNodeId: self, ownerAdvertisedAddress: me?.advertisedAddress ?? null, ownerLocal: true, state: row.state, epoch: row.epoch, nodeId: row.nodeId, pendingTransfer: d.transfers?.pendingOf(name) ?? null, available: true };
      }
    }
    const info = await d.shards.head(name);
    return {
      ...storageFacts(info),
      ownerNodeId: self,
      ownerAdvertisedAddress: me?.advertisedAddress ?? null,
      ownerLocal: true,
      state: found?.row.state ?? 'placed',
      epoch: found?.row.epoch ?? null,
      nodeId: found?.row.nodeId ?? self,
      streamId: found !== null && found.row.streamId !== 0 ? found.row.streamId : info.streamId,
      pendingTransfer: d.transfers?.pendingOf(name) ?? null,
      available: true,
    };
  }
  const { row } = found;
  const owner = d.members.node(row.nodeId);
  const live = d.members.isLive(row.nodeId);
  const placementFields = {
    name,
    streamId: row.streamId,
    ownerNodeId: row.nodeId,
    ownerAdvertisedAddress: owner?.advertisedAddress ?? null,
    ownerLocal: false,
    state: row.state,
    epoch: row.epoch,
    nodeId: row.nodeId,
    pendingTransfer: d.transfers?.pendingOf(name) ?? null,
  };
  const unknown = { contentType: null, ttlSeconds: null, expiresAtMs: null, closed: false, startOffset: null, endOffset: null };
  if (!live || owner === null) {
    return { ...unknown, ...placementFields, available: false, unavailableReason: `owner node ${row.nodeId} is down: its streams are unavailable until it is back` };
  }
  if (owner.adminAddress === null) return { ...unknown, ...placementFields, available: true };
  // The storage facts live with the owner: ask its admin listener, with the caller's credential.
  const headers: Record<string, string> = {};
  if (req.headers['authorization'] !== undefined) headers['authorization'] = req.headers['authorization'];
  const r = await fetch(`http://${owner.adminAddress}${req.path}`, { headers, signal: AbortSignal.timeout(5_000) }).catch((err: unknown) => {
    throw new SvcError('storage_unavailable', `the owner node ${row.nodeId} did not answer: ${(err as Error).message}`);
  });
  if (r.status === 404) throw new SvcError('not_found', `no stream ${name}`);
  if (r.status !== 200) throw new SvcError('storage_unavailable', `the owner node ${row.nodeId} answered ${r.status}`);
  const doc = (await r.json()) as Record<string, unknown>;
  return { ...unknown, ...pick(doc, ['contentType', 'ttlSeconds', 'expiresAtMs', 'closed', 'startOffset', 'endOffset']), ...placementFields, available: true };
}

function storageFacts(info: Awaited<ReturnType<ShardClient['head']>>): Record<string, unknown> {
  return {
    name: info.name,
    contentType: info.contentType,
    ttlSeconds: info.ttlSeconds,
    expiresAtMs: info.expiresAtMs,
    closed: info.closed,
    startOffset: info.startSeq,
    endOffset: info.nextSeq,
  };
}

function pick(doc: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (k in doc) out[k] = doc[k];
  return out;
}
