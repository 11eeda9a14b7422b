/**
 * Objects mode's background work on the main thread (docs/cluster.md, "Compaction and the
 * reaper"), composed from the control plane (the maintenance lease, placement rows) and the
 * objects module (compaction, the reaper, the census):
 *
 *   every node ── Compactor: its placed streams (fence "<me>:<row epoch>") ──▶ c/ objects
 *   lease holder ── Reaper: o/ without r/ ──▶ d/ ──▶ store delete ──▶ d/ gone; orphans
 *   GET /admin/cluster, /metrics ── ObjectCensus: count-only reads of o/ and d/
 *
 * It has its own etcd link and object store (one per thread, as the design has it). The reaper's
 * fence is the maintenance record's version: a transaction compares `<prefix>/k/maintenance`'s
 * mod revision (the etcd store's record layout, src/actors/README.md) with the version this
 * node's view holds, so a deposed holder marks nothing.
 */
import { EtcdLink, MAINTENANCE_KEY, type MaintenanceLease, type Placement, parseEtcdUrl } from './actors';
import { type Logger } from './log';
import { type CompactionOptions, Compactor, LedgerKeys, ObjectCensus, type ObjectStoreStats, type PlacedStream, Reaper, type ReaperOptions, newObjectStoreStats, openObjectStore } from './objects';

export interface ObjectMaintenanceDeps {
  /** `--metadata etcd://…/<prefix>`. */
  metadataUrl: string;
  /** `--objects`. */
  objectsUrl: string;
  nodeId: number;
  lease: MaintenanceLease;
  placement: Placement;
  log: Logger;
  reaper?: ReaperOptions;
  compaction?: CompactionOptions;
}

export interface ObjectMaintenance {
  census: ObjectCensus;
  /** This thread's object store requests for compaction and the reaper (svc_object_store_*). */
  stats: ObjectStoreStats;
  close(): Promise<void>;
}

export function startObjectMaintenance(d: ObjectMaintenanceDeps): ObjectMaintenance {
  const target = parseEtcdUrl(d.metadataUrl);
  const link = new EtcdLink(target.endpoints);
  const keys = new LedgerKeys(target.prefix);
  const stats = newObjectStoreStats();
  const store = openObjectStore(d.objectsUrl, { stats });
  const log = d.log.child({ module: 'objects' });
  const holderKey = `${target.prefix}/k/${MAINTENANCE_KEY}`;

  const placed = (): PlacedStream[] =>
    d.placement
      .rows()
      .filter(({ row }) => row.nodeId === d.nodeId && row.state === 'placed')
      .map(({ name, row }) => ({ name, streamId: row.streamId, fence: { nodeId: d.nodeId, epoch: row.epoch } }));
  const compactor = new Compactor({ kv: link, keys, store, placed, log }, d.compaction);
  const reaper = new Reaper(
    {
      kv: link,
      keys,
      store,
      holder: () => {
        const v = d.lease.version();
        return v === null ? null : { key: holderKey, modRevision: v };
      },
      log,
    },
    d.reaper,
  );
  compactor.start();
  reaper.start();
  d.lease.onHolderChange((holder) => log.info({ holder }, holder ? 'object reaper running (this node holds the maintenance lease)' : 'object reaper idle (another node holds the maintenance lease)'));
  return {
    census: new ObjectCensus(link, keys),
    stats,
    async close(): Promise<void> {
      await Promise.all([compactor.stop(), reaper.stop()]);
      await store.close();
      link.close();
    },
  };
}
