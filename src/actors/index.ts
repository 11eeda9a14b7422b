/** The control plane's front door: everything outside src/actors imports from here only. */
import { LocalMetaStore, type LocalMetaStoreOptions } from './meta/local-meta-store';
import { type MetaStore } from './meta/meta-store';
import { EtcdMetaStore } from './meta/etcd/etcd-meta-store';
import { type EtcdCredentials, parseEtcdUrl } from './meta/etcd/etcd-url';
import { type Logger } from '../log';

export { type Expect, MetaConflictError, type MetaRecord, type MetaStore } from './meta/meta-store';
export { type LocalMetaStoreOptions } from './meta/local-meta-store';
export * from './auth';
export { type EtcdMetaStoreOptions, type EtcdMetaStoreStats } from './meta/etcd/etcd-meta-store';
export { SYNC_SECONDS_BOUNDS } from './meta/etcd/read-index';
export { REQUEST_METADATA_MS, withinRequestDeadline } from './meta/request-deadline';

/**
 * Open the metadata store that `--metadata` names: `local` (the embedded store in `localDir`)
 * or `etcd[s]://host:port[,host:port…]/<prefix>` (docs/config.md), reached with `credentials`.
 */
export async function openMetaStore(url: string, localDir: string, options: { log?: Logger; credentials?: EtcdCredentials } = {}): Promise<MetaStore> {
  if (url === 'local') return LocalMetaStore.open(localDir, options);
  return EtcdMetaStore.open(parseEtcdUrl(url, options.credentials), options);
}

/** Why `--metadata` is not usable, or null (config validation calls it). */
export function metadataUrlProblem(url: string): string | null {
  if (url === 'local') return null;
  try {
    parseEtcdUrl(url);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * Open the embedded metadata store in `dir` (created if missing), e.g. `<dataDir>/meta`.
 * One process may have it open at a time; `close()` it on shutdown after the last write.
 */
export function openLocalMetaStore(dir: string, options?: LocalMetaStoreOptions): Promise<MetaStore> {
  return LocalMetaStore.open(dir, options);
}

export { resolveNodeId } from './cluster/node-id';
export { DEFAULT_LIVE_TTL_S, Membership, type NodeAddresses } from './cluster/membership';
export { DEFAULT_SLOTS, type LiveRecord, type NodeRecord, liveKey, nodeKey } from './cluster/node-record';
export { type OpenSpec, type Owner, PLACEMENT_PREFIX, Placement, type PlacementRow, isMoving, placementKey } from './cluster/placement';
export { rendezvous } from './cluster/rendezvous';
export { PlacementIntents } from './cluster/intents';
export { MAINTENANCE_KEY, MaintenanceLease, type MaintenanceRecord } from './cluster/maintenance-lease';
export { type PendingTransfer, type TransferResult, Transfers } from './cluster/transfers';
export { FailoverDriver } from './cluster/failover';
export { type NodeLoad, type PlacedStream, type PlannedMove, leastLoaded, planRebalance } from './cluster/balance';
export { type RebalanceOptions, type RebalanceStatus, Rebalancer } from './cluster/rebalance';
export { handOffStreams } from './cluster/handoff';
export { type MoveStorage, StreamOpener } from './cluster/moves';
export { EtcdAccessError, EtcdLink, type EtcdCompare, type EtcdKv, type EtcdOp, type EtcdTxnResult, EtcdUnavailableError } from './meta/etcd/etcd-link';
export { type EtcdAccess, type EtcdCredentials, type EtcdTarget, parseEtcdUrl } from './meta/etcd/etcd-url';
export { type NamedOffset, NamedOffsets } from './offsets/named-offsets';
export * from './share';
