/**
 * Objects mode's background work (docs/cluster.md, "Compaction and the reaper"), composed from
 * the control plane (the maintenance lease, placement rows) and the objects module (compaction,
 * the reaper, the census):
 *
 *   every node ── Compactor: its placed streams (fence "<me>:<row epoch>") ──▶ c/ objects   ┐ the object
 *   lease holder ── Reaper: o/ without r/ ──▶ d/ ──▶ store delete ──▶ d/ gone; orphans      ┘ maintenance thread
 *   GET /admin/cluster, /metrics ── ObjectCensus: count-only reads of o/ and d/               (main thread)
 *
 * Compaction and the reaper run on a thread of their own (object-maintenance-thread.ts, its own
 * etcd link and object store): they move megabytes a second under load, and the gateway thread
 * is the one every request waits for. The reaper's fence is the maintenance record's version: a
 * transaction compares `<prefix>/k/maintenance`'s mod revision (the etcd store's record layout,
 * src/actors/README.md) with the version this node's view holds, so a deposed holder marks
 * nothing. A thread that fails is started again; its jobs pick up from the ledger.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { type EtcdCredentials, EtcdLink, MAINTENANCE_KEY, type MaintenanceLease, type Placement, parseEtcdUrl } from './actors';
import { type Logger } from './log';
import { type FromMaintenanceThread, type MaintenanceThreadConfig, type ToMaintenanceThread } from './object-maintenance-messages';
import { type CompactionOptions, type CompactionStats, type HolderCompare, LedgerKeys, ObjectCensus, type ObjectStoreStats, type PlacedStream, type ReaperOptions, addObjectStoreStats, newObjectStoreStats } from './objects';

export interface ObjectMaintenanceDeps {
  /** `--metadata etcd://…/<prefix>`. */
  metadataUrl: string;
  /** `--metadata-ca|cert|key|user|password`. */
  metadataCredentials?: EtcdCredentials;
  /** `--objects`. */
  objectsUrl: string;
  nodeId: number;
  lease: MaintenanceLease;
  placement: Placement;
  log: Logger;
  reaper?: ReaperOptions;
  compaction?: CompactionOptions;
  /** the `records` ledger format: this node start's writers, whose part records the thread indexes (MaintenanceThreadConfig). */
  indexNode?: string;
  /** The live nodes' current starts, `g/<nodeId>/<nodeEpoch>/` (the records format: ToMaintenanceThread). */
  liveStarts?: () => string[];
}

export interface ObjectMaintenance {
  census: ObjectCensus;
  /** The maintenance thread's object store requests (svc_object_store_*), over every thread it ran. */
  stats(): ObjectStoreStats;
  /** Compaction's bytes read and written and its time throttled (svc_objects_compaction_*), over every thread it ran. */
  compactionStats(): CompactionStats;
  close(): Promise<void>;
}

/** How often the thread hears the main thread's view (placed streams, the lease's fence). */
const STATE_MS = 500;
/** A thread that failed is started again after this long. */
const RESTART_MS = 1_000;
/** close() waits this long for the thread's tick in progress, then ends it. */
const CLOSE_MS = 10_000;

export function startObjectMaintenance(d: ObjectMaintenanceDeps): ObjectMaintenance {
  const target = parseEtcdUrl(d.metadataUrl, d.metadataCredentials);
  const link = new EtcdLink(target.endpoints, { access: target.access });
  const keys = new LedgerKeys(target.prefix);
  const log = d.log.child({ module: 'objects' });
  const holderKey = `${target.prefix}/k/${MAINTENANCE_KEY}`;
  const config: MaintenanceThreadConfig = { metadataUrl: d.metadataUrl, metadataCredentials: d.metadataCredentials, objectsUrl: d.objectsUrl, reaper: d.reaper, compaction: d.compaction, ...(d.indexNode !== undefined ? { indexNode: d.indexNode } : {}) };

  // A loop, not filter/map callbacks: this runs over every placement row when one changed (at
  // most twice a second), and V8 compiled callbacks made per call again after each full
  // collection (perf/README.md).
  const placed = (): PlacedStream[] => {
    const out: PlacedStream[] = [];
    for (const { name, row } of d.placement.rows()) {
      if (row.nodeId === d.nodeId && row.state === 'placed') out.push({ name, streamId: row.streamId, fence: { nodeId: d.nodeId, epoch: row.epoch } });
    }
    return out;
  };
  const holder = (): HolderCompare | null => {
    const v = d.lease.version();
    return v === null ? null : { key: holderKey, modRevision: v };
  };

  // The figures of threads that ended, and the running thread's latest.
  const ended = newObjectStoreStats();
  let latest = newObjectStoreStats();
  const noCompaction = (): CompactionStats => ({ readBytes: 0, writtenBytes: 0, throttledMs: 0 });
  const endedCompaction = noCompaction();
  let latestCompaction = noCompaction();
  let thread: Worker | null = null;
  let closing = false;
  let restartTimer: NodeJS.Timeout | null = null;

  // The placed streams go to the thread only when a placement row changed since it last heard
  // them (or it is a new thread): the list is O(streams), its copy between threads too.
  let told: { thread: Worker; rowChanges: number } | null = null;
  const tell = (): void => {
    if (thread === null) return;
    const rowChanges = d.placement.rowChanges();
    const same = told !== null && told.thread === thread && told.rowChanges === rowChanges;
    const m: ToMaintenanceThread = { type: 'state', placed: same ? null : placed(), holder: holder(), liveStarts: d.liveStarts?.() ?? [] };
    told = { thread, rowChanges };
    thread.postMessage(m);
  };
  const start = (): void => {
    const w = new Worker(path.join(__dirname, 'object-maintenance-thread.js'), { workerData: config });
    thread = w;
    w.unref();
    w.on('message', (m: FromMaintenanceThread) => {
      if (m.type === 'stats') {
        latest = m.stats;
        latestCompaction = m.compaction;
      } else log[m.level](m.fields, m.msg);
    });
    w.on('error', (err) => log.error({ err }, 'the object maintenance thread failed; starting it again'));
    w.once('exit', (code) => {
      addObjectStoreStats(ended, latest);
      latest = newObjectStoreStats();
      endedCompaction.readBytes += latestCompaction.readBytes;
      endedCompaction.writtenBytes += latestCompaction.writtenBytes;
      endedCompaction.throttledMs += latestCompaction.throttledMs;
      latestCompaction = noCompaction();
      if (thread === w) thread = null;
      if (closing) return;
      log.warn({ code }, 'the object maintenance thread ended; starting it again');
      restartTimer = setTimeout(() => {
        restartTimer = null;
        if (!closing) start();
      }, RESTART_MS);
      restartTimer.unref();
    });
    tell();
  };
  start();
  const timer = setInterval(tell, STATE_MS);
  timer.unref();
  d.lease.onHolderChange((h) => {
    tell();
    log.info({ holder: h }, h ? 'object reaper running (this node holds the maintenance lease)' : 'object reaper idle (another node holds the maintenance lease)');
  });

  return {
    census: new ObjectCensus(link, keys),
    stats(): ObjectStoreStats {
      const total = newObjectStoreStats();
      addObjectStoreStats(total, ended);
      addObjectStoreStats(total, latest);
      return total;
    },
    compactionStats(): CompactionStats {
      return {
        readBytes: endedCompaction.readBytes + latestCompaction.readBytes,
        writtenBytes: endedCompaction.writtenBytes + latestCompaction.writtenBytes,
        throttledMs: endedCompaction.throttledMs + latestCompaction.throttledMs,
      };
    },
    async close(): Promise<void> {
      closing = true;
      clearInterval(timer);
      if (restartTimer !== null) clearTimeout(restartTimer);
      const w = thread;
      if (w !== null) {
        const exited = new Promise<void>((r) => w.once('exit', () => r()));
        const m: ToMaintenanceThread = { type: 'close' };
        w.postMessage(m);
        const late = setTimeout(() => void w.terminate(), CLOSE_MS);
        await exited;
        clearTimeout(late);
      }
      link.close();
    },
  };
}
