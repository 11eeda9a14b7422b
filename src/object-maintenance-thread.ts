/**
 * The object maintenance thread (object-maintenance.ts): compaction and the reaper, with their
 * own etcd link and object store. They read and rewrite megabytes a second under a steady load
 * (every run's frames are fetched, checked and written again), and on the main thread that work
 * and its garbage took the gateway away from requests for milliseconds at a time: the tail of
 * objects-mode appends (perf/README.md, "Objects mode").
 *
 * The main thread sends what only its view knows (the streams placed here, the maintenance
 * lease's fence) every half second and when the lease changes hands; the thread answers each
 * with its object store figures and sends its log lines.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { EtcdLink, parseEtcdUrl } from './actors';
import { type FromMaintenanceThread, type MaintenanceThreadConfig, type ToMaintenanceThread } from './object-maintenance-messages';
import { CompactedCounter, Compactor, type HolderCompare, Indexer, LedgerKeys, type MaintenanceLog, type PlacedStream, Reaper, newObjectStoreStats, openObjectStore, ownWriters } from './objects';
import { nameThread } from './util/libc';
import { testFault } from './util/test-fault';

// Named for per-thread CPU (top -H, perf/scaling.js), like the shard and gateway threads.
nameThread('svc-maintenance');

const port = parentPort;
if (port === null) throw new Error('object-maintenance-thread runs as a worker thread');
const config = workerData as MaintenanceThreadConfig;

const send = (m: FromMaintenanceThread): void => port.postMessage(m);

const line =
  (level: 'error' | 'warn' | 'info' | 'debug') =>
  (fields: object, msg?: string): void => {
    try {
      send({ type: 'log', level, fields, msg });
    } catch {
      // A field that cannot cross (a function, a socket): the line goes as text.
      send({ type: 'log', level, fields: { fields: String(fields) }, msg });
    }
  };
const log: MaintenanceLog = { error: line('error'), warn: line('warn'), info: line('info'), debug: line('debug') };

const target = parseEtcdUrl(config.metadataUrl, config.metadataCredentials);
const link = new EtcdLink(target.endpoints, { access: target.access });
const keys = new LedgerKeys(target.prefix);
const stats = newObjectStoreStats();
// Blocking: this thread has nothing else to do, and its I/O stays off the thread pool where the
// shard workers' commit syncs wait (src/objects/file-store.ts).
const store = openObjectStore(config.objectsUrl, { stats, blocking: true, pruneEmptyDirs: true });
let placed: PlacedStream[] = [];
let holder: HolderCompare | null = null;
let liveStarts: string[] = [];

// One counter of compacted objects' keys for compaction and the indexer: a key is never used twice.
const counter = new CompactedCounter();
const compactor = new Compactor({ kv: link, keys, store, placed: () => placed, log, counter }, config.compaction);
const reaper = new Reaper({ kv: link, keys, store, holder: () => holder, log }, config.reaper);
const indexNode = config.indexNode;
// Its writers are this node start's; those of the node's earlier starts are retired (their parts
// stranded). The maintenance lease holder also retires the writers of every start that is not a
// live node's current one: a node gone for good leaves part records that nobody else takes, and
// they keep their group objects (the reaper waits for the writer's index cursor) and their keys.
const retired = async (): Promise<string[]> => {
  const node = indexNode!.split('/').slice(0, 2).join('/') + '/';
  // The holder reads every writer once (its own node's among them), a node that is not the holder its own.
  const live = holder === null ? [] : liveStarts;
  const writers = await ownWriters(link, keys, live.length === 0 ? node : 'g/');
  return writers.filter((w) => !w.startsWith(indexNode!) && (w.startsWith(node) || !live.some((p) => w.startsWith(p))));
};
const indexer = indexNode === undefined ? null : new Indexer({ kv: link, keys, store, placed: () => placed, writers: () => ownWriters(link, keys, indexNode), retired, counter, log });

port.on('message', (m: ToMaintenanceThread) => {
  if (m.type === 'state') {
    // The thread's failure, for the test of its restart (src/util/test-fault.ts; inert otherwise).
    if (testFault('maintenance-thread')) throw new Error('injected object maintenance thread failure (test fault hook)');
    if (m.placed !== null) placed = m.placed;
    holder = m.holder;
    liveStarts = m.liveStarts;
    // The records format's indexer rewrites parts as compaction does: its bytes count with compaction's.
    const c = compactor.stats();
    const i = indexer?.stats();
    send({ type: 'stats', stats, compaction: i === undefined ? c : { ...c, readBytes: c.readBytes + i.readBytes, writtenBytes: c.writtenBytes + i.writtenBytes } });
    return;
  }
  // A deposed holder's last word would be stale: nothing is deleted once closing begins.
  holder = null;
  void Promise.all([compactor.stop(), reaper.stop(), indexer?.stop()])
    .then(() => store.close())
    .catch((err: unknown) => log.warn({ err }, 'closing the object maintenance thread'))
    .finally(() => {
      link.close();
      process.exit(0);
    });
});

compactor.start();
reaper.start();
indexer?.start();
