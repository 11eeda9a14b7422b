/**
 * Entry point of a shard worker thread. Hosts several shards; receives packed request
 * batches from the gateway thread (see ../wire.ts), decodes each request with its operation's
 * codec and dispatches it through a table typed by the same operation map (../protocol.ts),
 * starts one group commit per shard touched by the batch, and writes the replies into one
 * outgoing message per event-loop turn.
 *
 * A storage failure (a log or index write error, a full disk, any exception escaping a timer)
 * stops the thread on purpose (`die`): the shards still healthy finish what they have in
 * flight, every file is closed (RocksDB's lock with it), `fatal` goes to the main thread and
 * the thread exits. The main thread fails its calls and starts it again (../worker-pool.ts),
 * and the new thread recovers its shards from their logs.
 */
import * as path from 'node:path';
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { ready as compressionReady } from '../../util/compression';
import { type ErrorData, SvcError } from '../../errors';
import { type SchemaControl, type SchemaDocument, SchemaRegistry, applySchemaControl } from '../schema-registry';
import { type BatchLimits, type Durability, type TailEvent } from '../types';
import { RETURNED_PAGE, Status, TRANSFER_MIN, Writer, type Reader, readEntries } from '../wire';
import { type Codec, OPS, type OpName, type Req, type Res, errorBody, opOf, returnedBody, tailBody } from '../protocol';
import { type PackedWithExtras, packedOf } from '../worker-messages';
import { openRocksStore } from './rocks-store';
import { SegmentLog } from './segment-log';
import { type RemoteReads, type Reply, Shard } from './shard';
import { type RemoteBatch } from './remote-chunks';
import { rememberDamage } from './remote-reader';
import { type KvStore } from './kv-store';
import { armTestFaults } from './test-faults';
import { type LedgerCredentials, type ObjectStore, type ObjectStoreStats, Ledger, RangeCache, newObjectStoreStats, openObjectStore } from '../../objects';
import { ObjectCommit } from './object-commit';
import { type Replicator } from './group-commit';
import { SharedReplicator } from './shared-replicator';
import { CommitBarrier } from './commit-barrier';
import { LENT_BASE, ReadCache } from './read-cache';
import { SyncJournal, replayJournal } from './sync-journal';
import { PagePool, pagePool, setPagePool } from './page-pool';
import { shardOf } from '../placement';
import { nameThread } from '../../util/libc';
import { type WorkerLogLevel, workerLogTo } from './worker-log';

export interface WorkerConfig {
  dataDir: string;
  shardIds: number[];
  shardCount: number;
  segmentBytes: number;
  /** Durability class of streams without their own (--durability); absent: `sync`. */
  durability?: Durability;
  maxChunkBytes: number;
  limits: BatchLimits;
  retentionIntervalMs: number;
  reaperIntervalMs: number;
  /** Chunk index entries cached in memory per shard; absent: the default. */
  indexCacheChunks?: number;
  /** This worker's read cache (read-cache.ts), in bytes; absent or 0: none. */
  readCacheBytes?: number;
  /** Idle read page buffers this worker keeps for reuse (page-pool.ts), in bytes; absent or 0: none. */
  readPoolBytes?: number;
  /** Registered schemas at start (schema-store.ts); changes arrive as `schemas` control messages. */
  schemas?: SchemaDocument[];
  /** First tail-event version (Shard option): above every version a previous thread of these shards sent. */
  tailVersionBase?: number;
  /** The disk is full (../space-guard.ts): creates and appends are refused; changes arrive as `space` control messages. */
  lowSpace?: boolean;
  /** Objects mode only (docs/cluster.md, "Objects mode: where data lives"); absent: the local log is the durable copy. */
  objects?: WorkerObjectsConfig;
  /** This worker's sync journal (sync-journal.ts), replayed before its shards open; absent: no commit barrier (objects mode). */
  journalFile?: string;
}

/** What a shard worker needs for objects mode: the store, the ledger's etcd, and this node start's identity. */
export interface WorkerObjectsConfig {
  /** `--objects`: the object store URL (credentials come from the environment). */
  url: string;
  /** `--metadata etcd://…/<prefix>`: the ledger lives under `<prefix>.objects/`. */
  metadataUrl: string;
  /** `--metadata-ca|cert|key|user|password` (TLS and etcd auth of the ledger's link). */
  metadataCredentials?: LedgerCredentials;
  nodeId: number;
  /** This start of the node: group object keys never repeat across starts. */
  nodeEpoch: number;
  /** `--objects-flush-ms`. */
  flushMs: number;
  /** `--objects-puts-in-flight` (absent: ObjectCommit's default). */
  putsInFlight?: number;
  /**
   * `--objects-cache-bytes` (the node's, split by ShardClient over its workers: this worker's):
   * the object range cache of adopted streams' reads from the object store.
   */
  cacheBytes?: number;
  /** the `records` ledger format: the writer's commits put part records (src/objects/part-records.ts). */
  records?: boolean;
}

/**
 * Control messages travel outside the packed batches; those with an `id` are answered with a
 * `control-reply`. `attach` gives the worker a channel to one more client (a gateway thread's
 * ShardClient, docs/config.md `--gateway-threads`): its requests are answered, and the tail events
 * of the streams it watches sent, on that channel; `detach` ends it.
 */
export type ControlMessage =
  | { type: 'close' }
  | { type: 'space'; low: boolean }
  | (SchemaControl & { id: number })
  | { type: 'attach'; client: number; port: MessagePort }
  | { type: 'detach'; client: number };
export type WorkerEvent =
  | { type: 'ready'; recovery: Array<{ shardId: number; replayedFrames: number; truncatedBytes: number; streams: number }> }
  | { type: 'failed'; message: string; code: string | null }
  /** The thread stops after a storage failure (it exits right after this message). */
  | { type: 'fatal'; message: string; code: string | null; shardId: number | null }
  | { type: 'closed' }
  /** A line for the node's log: the thread has no logger of its own (worker-log.ts). */
  | { type: 'log'; level: WorkerLogLevel; msg: string; fields: Record<string, unknown> }
  | { type: 'control-reply'; id: number; result?: unknown; error?: ErrorData };

const port = parentPort!;
/** Lines for the node's log (worker-log.ts). */
const workerLog = workerLogTo(port);
const cfg: WorkerConfig = workerData;
const shards = new Map<number, Shard>();
/** Every schema, compiled once for this thread; shards validate appends with it. */
const schemaRegistry = new SchemaRegistry(cfg.schemas ?? []);
/**
 * Each client's replies (and tail events) of this turn; read pages are moved with them, or shared
 * (page-pool.ts), not copied. Client 0 is the main thread's ShardClient (on parentPort); the
 * others are gateway threads' (`attach`), each on its own channel.
 */
const outboxes = new Map<number, Writer>();
/** The channel of each client but the main thread's. */
const clients = new Map<number, MessagePort>();
/** Which clients watch each watched stream: a tail event goes to each of them, and the shard unwatches when none is left. */
const watchers = new Map<string, Set<number>>();

function outboxOf(client: number): Writer | null {
  let o = outboxes.get(client);
  if (o === undefined) {
    if (client !== 0 && !clients.has(client)) return null; // detached meanwhile: nobody to answer
    o = new Writer(
      true,
      (sab) => pagePool().share(sab),
      (parts) => readCache?.lend(parts) ?? null,
    );
    outboxes.set(client, o);
  }
  return o;
}
/** The worker's read cache, shared by its shards (set up with them): it lends pages of parts (ReadResult.parts). */
let readCache: ReadCache | null = null;
/** Creates and appends are refused while the disk is full (deletes and trims free space). */
let lowSpace = cfg.lowSpace === true;
let sendScheduled = false;
/** Retention and reaper intervals, stopped on close and on a storage failure. */
let timers: NodeJS.Timeout[] = [];
/** How often idle page buffers are let go when no read took one meanwhile (page-pool.ts). */
const POOL_TRIM_MS = 60_000; // 1 min
/** The shard that reports the worker's own stats (the page pool's). */
let firstShard: Shard | null = null;

function scheduleFlush(): void {
  if (!sendScheduled) {
    sendScheduled = true;
    setImmediate(flushOutbox);
  }
}

function flushOutbox(): void {
  sendScheduled = false;
  for (const [client, outbox] of outboxes) {
    if (outbox.empty) continue;
    const to = client === 0 ? port : clients.get(client);
    const { message, transferMessage, extras, shared } = outbox.take();
    if (to === undefined) continue;
    const transfer = transferMessage ? [message, ...extras] : extras;
    if (extras.length === 0 && shared.length === 0) to.postMessage(message, transfer);
    else to.postMessage({ packed: message, extras, ...(shared.length > 0 ? { shared } : {}) } satisfies PackedWithExtras, transfer);
  }
}

/** Set once the thread is stopping after a storage failure: requests still arriving fail at once. */
let dying: SvcError | null = null;
/** How long the healthy shards get to finish their writes before the thread exits anyway. */
const DIE_GRACE_MS = 5000; // 5 s

/** Stop this thread after a storage failure (see the file comment). */
function die(err: unknown, shardId: number | null): void {
  if (dying !== null) return;
  const e: NodeJS.ErrnoException = err instanceof Error ? err : new Error(String(err));
  // RocksDB reports a full disk in its message only.
  const code = typeof e.code === 'string' ? e.code : /no space left on device/i.test(e.message) ? 'ENOSPC' : null;
  dying = new SvcError('storage_unavailable', `the shard worker is stopping after a storage failure: ${e.message}`);
  for (const t of timers) clearInterval(t);
  timers = [];
  const closed = Promise.allSettled([...shards.values()].map((s) => s.close()));
  const grace = new Promise((resolve) => setTimeout(resolve, DIE_GRACE_MS).unref());
  void Promise.race([closed, grace]).then(() => {
    flushOutbox();
    port.postMessage({ type: 'fatal', message: e.message, code, shardId } satisfies WorkerEvent);
    process.exit(1);
  });
}

// Anything escaping a timer or a promise (a checkpoint's RocksDB write error, say) would end the
// thread with its calls unanswered: stop in order instead.
process.on('uncaughtException', (err) => die(err, null));
process.on('unhandledRejection', (err) => die(err, null));

/** Write one reply entry to `client`; a body that cannot be written becomes an error reply instead. */
function send<T>(client: number, id: number, status: Status, shard: number, codec: Codec<T>, body: T): void {
  const outbox = outboxOf(client);
  if (outbox === null) return;
  const mark = outbox.beginEntry(id, status, shard);
  try {
    codec.write(outbox, body);
    outbox.endEntry(mark);
  } catch (err) {
    outbox.rollback(mark);
    if (status === Status.Error) throw err;
    return fail(client, id, shard, err);
  }
  scheduleFlush();
}

/** A buffer the gateway gave up (a Kafka request frame) goes back with the replies of the turn, moved. */
function returnBuffer(ab: ArrayBuffer): void {
  if (ab.byteLength < TRANSFER_MIN || dying !== null) return;
  // Only the main thread's client (the Kafka listener) gives buffers up.
  send(0, 0, Status.Returned, 0, returnedBody, Buffer.from(ab));
}

/**
 * Tail events of watched streams go out with the replies of the same turn, after them (live
 * reads), each to the clients that watch its stream.
 */
function onTail(events: TailEvent[]): void {
  if (clients.size === 0) return send(0, 0, Status.Tail, 0, tailBody, events);
  const byClient = new Map<number, TailEvent[]>();
  for (const e of events) {
    for (const c of watchers.get(e.name) ?? []) {
      let list = byClient.get(c);
      if (list === undefined) byClient.set(c, (list = []));
      list.push(e);
    }
  }
  for (const [c, list] of byClient) send(c, 0, Status.Tail, 0, tailBody, list);
}

function fail(client: number, id: number, shard: number, err: unknown): void {
  const e = err instanceof SvcError ? err : new SvcError('internal', err instanceof Error ? err.message : String(err));
  send(client, id, Status.Error, shard, errorBody, e.toData());
}

/** `client` watches (or stops watching) `name`; the shard watches while any client does. Returns the tail now. */
function watchFor(client: number, s: Shard, name: string, on: boolean): TailEvent {
  let set = watchers.get(name);
  if (on) {
    if (set === undefined) watchers.set(name, (set = new Set()));
    set.add(client);
  } else if (set !== undefined) {
    set.delete(client);
    if (set.size === 0) watchers.delete(name);
  }
  return s.watch(name, watchers.has(name));
}

/** One entry per operation: the shard's method for it, typed by the operation's request and result; `client` is who asked. */
type Handler<K extends OpName> = (shard: Shard, req: Req<K>, reply: Reply<Res<K>>, client: number) => void;

const HANDLERS: { readonly [K in OpName]: Handler<K> } = {
  create: (s, p, reply) => s.create(p, reply),
  append: (s, p, reply) => s.append(p, reply),
  trim: (s, p, reply) => s.trim(p, reply),
  delete: (s, p, reply) => s.delete(p.name, reply),
  read: (s, p, reply) =>
    // Answered in this turn, except a read of an adopted stream's records the object cache does not hold yet (Shard.readAsync).
    s.readAsync(p, (err, r) => {
      if (err !== null) return reply(err);
      reply(null, r);
      // A pooled page copied into the reply message is free again now; one shared with the gateway
      // (out) comes back from there (RETURNED_PAGE) once its HTTP response has sent it, or never.
      if (r !== undefined) pagePool().give(r.body);
    }),
  head: (s, p, reply) => reply(null, s.head(p)),
  list: (s, p, reply) => reply(null, s.list(p)),
  stats: (s, _p, reply) => {
    const st = s.stats();
    // The pool is the worker's: reported once, with its first shard's stats (as the read cache).
    reply(null, s === firstShard && pagePool().enabled ? { ...st, readPool: pagePool().stats } : st);
  },
  configure: (s, p, reply) => s.configure(p, reply),
  watch: (s, p, reply, client) => reply(null, watchFor(client, s, p.name, true)),
  unwatch: (s, p, reply, client) => reply(null, watchFor(client, s, p.name, false)),
  importBegin: (s, p, reply) => s.importBegin(p, reply),
  importFrames: (s, p, reply) => s.importFrames(p, reply),
  importEnd: (s, p, reply) => s.importEnd(p, reply),
  importAbort: (s, p, reply) => s.importAbort(p, reply),
  drop: (s, p, reply) => s.drop(p, reply),
  adopt: (s, p, reply) => s.adopt(p, reply),
};

/** Decode the request with its operation's codec, run it, and write the reply with the result's. */
function handle<K extends OpName>(client: number, op: K, id: number, shardId: number, shard: Shard, r: Reader): void {
  const spec = OPS[op];
  const req = spec.req.read(r);
  HANDLERS[op](
    shard,
    req,
    (err, result) => {
      if (err !== null) fail(client, id, shardId, err);
      else if (result === undefined) fail(client, id, shardId, new SvcError('internal', `the ${op} operation answered nothing`));
      else send(client, id, Status.Ok, shardId, spec.res, result);
    },
    client,
  );
}

port.on('message', (msg: ArrayBuffer | PackedWithExtras | ControlMessage) => {
  if (!(msg instanceof ArrayBuffer) && !('packed' in msg)) {
    if (msg.type === 'close') void closeAll();
    else if (msg.type === 'space') lowSpace = msg.low;
    else if (msg.type === 'schemas') onSchemaControl(msg);
    else if (msg.type === 'attach') attach(msg.client, msg.port);
    else if (msg.type === 'detach') detach(msg.client);
    return;
  }
  onPacked(0, msg);
});

/** A gateway thread's channel: its requests are served as the main thread's are, and answered on it. */
function attach(client: number, p: MessagePort): void {
  clients.set(client, p);
  p.on('message', (msg: ArrayBuffer | PackedWithExtras) => onPacked(client, msg));
}

/** The gateway thread is gone: its watches end, and nothing more is sent to it. */
function detach(client: number): void {
  const p = clients.get(client);
  clients.delete(client);
  outboxes.delete(client);
  p?.close();
  for (const [name, set] of [...watchers]) {
    if (!set.delete(client) || set.size > 0) continue;
    watchers.delete(name);
    shards.get(shardOf(name, cfg.shardCount))?.watch(name, false);
  }
}

/** A packed batch of requests from `client`. */
function onPacked(client: number, msg: ArrayBuffer | PackedWithExtras): void {
  const packed = packedOf(msg);
  if (packed === null) return;
  const touched = new Set<Shard>();
  // Extras: a Kafka request frame's batch, moved here by the gateway thread (wire.ts, Writer.blob).
  readEntries(packed.message, packed.extras, (id, code, shardId, r) => {
    if (code === RETURNED_PAGE) {
      // A page pool slab's id, or a page of parts the read cache lent (ids from LENT_BASE).
      const id = r.u32();
      return id >= LENT_BASE ? readCache?.giveBack(id) : pagePool().giveReturned(id);
    }
    if (dying !== null) return fail(client, id, shardId, dying);
    const shard = shards.get(shardId);
    if (shard === undefined) return fail(client, id, shardId, new SvcError('internal', `shard ${shardId} is not hosted by this worker`));
    const op = opOf(code);
    if (op === undefined) return fail(client, id, shardId, new SvcError('internal', `unknown operation ${code}`));
    try {
      handle(client, op, id, shardId, shard, r);
      touched.add(shard);
    } catch (err) {
      fail(client, id, shardId, err);
    }
  });
  // Everything that arrived together is committed together.
  for (const s of touched) s.flush();
}

/** A registry change, applied before the answer: the main thread answers the client only after every worker did. */
function onSchemaControl(msg: SchemaControl & { id: number }): void {
  let reply: WorkerEvent;
  try {
    reply = { type: 'control-reply', id: msg.id, result: applySchemaControl(msg, schemaRegistry, shards.values()) };
  } catch (err) {
    reply = { type: 'control-reply', id: msg.id, error: (err instanceof SvcError ? err : new SvcError('internal', String(err))).toData() };
  }
  port.postMessage(reply);
}

/** Objects mode: this thread's ledger and each shard's object store (its own, so its stats are the shard's), or null. */
let objects: { stores: ObjectStore[]; ledger: Ledger } | null = null;
/** The groups of this thread's shards started in one turn share one fdatasync (commit-barrier.ts); null in objects mode. */
let barrier: CommitBarrier | null = null;

async function closeAll(): Promise<void> {
  for (const t of timers) clearInterval(t);
  timers = [];
  await Promise.all([...shards.values()].map((s) => s.close()));
  barrier?.close();
  if (objects !== null) {
    objects.ledger.close();
    await Promise.all(objects.stores.map((s) => s.close()));
  }
  port.postMessage({ type: 'closed' } satisfies WorkerEvent);
}

/** Where shard `id`'s memtable size lies in the node's range: evenly spaced over the shards. */
function shardSpread(id: number): number {
  return cfg.shardCount > 1 ? (id % cfg.shardCount) / (cfg.shardCount - 1) : 0.5;
}

async function main(): Promise<void> {
  // Per-thread CPU is told apart by name (perf/scaling.js): the worker's index is its first shard's.
  nameThread(`svc-shard-${cfg.shardIds[0] ?? 0}`);
  const recovery: Array<{ shardId: number; replayedFrames: number; truncatedBytes: number; streams: number }> = [];
  const dirOf = (shardId: number): string => path.join(cfg.dataDir, 'shards', String(shardId));
  // Reads of Kafka-compressed batches may need zstd, which loads asynchronously.
  await compressionReady();
  // RocksDB opens do their I/O off this thread: open every shard's index at once.
  // Each shard's memtables a size of its own, so that the shards' flushes do not come together (rocks-store.ts).
  const opened = await Promise.allSettled(cfg.shardIds.map((id) => openRocksStore(path.join(dirOf(id), 'index'), shardSpread(id))));
  for (const r of opened) if (r.status === 'fulfilled') openStores.push(r.value);
  const failed = opened.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  const o = cfg.objects;
  if (o !== undefined) objects = { stores: [], ledger: Ledger.open(o.metadataUrl, { credentials: o.metadataCredentials }) };
  // A previous thread of these shards may have left groups acknowledged through its journal only: back into the logs first.
  if (o === undefined && cfg.journalFile !== undefined) {
    replayJournal(cfg.journalFile, cfg.dataDir);
    barrier = new CommitBarrier(SyncJournal.open(cfg.journalFile));
  }
  // Objects mode: one writer of group objects for all of this worker's shards, named after its
  // first shard; with several shards their groups of one turn go as one object (shared-replicator.ts).
  let commit = null as ObjectCommit | null;
  let shared = null as Replicator | null;
  // Objects mode: the object range cache of adopted streams' reads, shared by this worker's shards (docs/objects.md, "The object cache").
  const rangeCache = o === undefined ? null : new RangeCache<RemoteBatch[]>({ budgetBytes: o.cacheBytes ?? 0, sizeOf: (v) => remoteBytes(v as RemoteBatch[]), remember: rememberDamage });
  const cache = new ReadCache(cfg.readCacheBytes ?? 0);
  readCache = cache;
  setPagePool(new PagePool(cfg.readPoolBytes ?? 0));
  cfg.shardIds.forEach((shardId, i) => {
    const store = openStores[i]!;
    let replicator: Replicator | undefined;
    let objectStats: ObjectStoreStats | undefined;
    let remoteReads: RemoteReads | undefined;
    if (o !== undefined && objects !== null) {
      objectStats = newObjectStoreStats();
      const objectStore = openObjectStore(o.url, { stats: objectStats });
      objects.stores.push(objectStore);
      if (commit === null) {
        commit = new ObjectCommit({ store: objectStore, ledger: objects.ledger, nodeId: o.nodeId, nodeEpoch: o.nodeEpoch, shardId, flushMs: o.flushMs, maxBeforeCommit: o.putsInFlight, log: workerLog, records: o.records === true });
        shared = cfg.shardIds.length > 1 ? new SharedReplicator(commit) : commit;
      }
      replicator = shared!;
      const ledger = objects.ledger;
      if (rangeCache !== null) remoteReads = { cache: rangeCache, get: (key, range) => objectStore.get(key, range), entries: async (stream) => (await ledger.entries(stream)).map((e) => ({ o: e.o, off: e.off, len: e.len, from: e.from, to: e.to })) };
    }
    const log = SegmentLog.open(path.join(dirOf(shardId), 'log'), cfg.segmentBytes);
    armTestFaults(store, log);
    const shard = new Shard(store, log, {
      shardId,
      shardCount: cfg.shardCount,
      maxChunkBytes: cfg.maxChunkBytes,
      durability: cfg.durability ?? 'sync',
      indexCacheChunks: cfg.indexCacheChunks,
      readCache: cache,
      reportsReadCache: i === 0,
      limits: cfg.limits,
      schemas: schemaRegistry,
      onTail,
      tailVersionBase: cfg.tailVersionBase ?? 0,
      onStorageFailure: (err) => die(err, shardId),
      lowSpace: () => lowSpace,
      replicator,
      objectStats,
      ...(barrier !== null ? { barrier } : {}),
      returnBuffer,
      ...(remoteReads !== undefined ? { remoteReads } : {}),
      log: workerLog,
    });
    shards.set(shardId, shard);
    if (i === 0) firstShard = shard;
    recovery.push({ shardId, ...shard.recovery });
  });
  // Objects mode: the writer continues after the group objects it wrote before a restart of this thread.
  await commit?.start();
  timers.push(
    setInterval(() => {
      for (const s of shards.values()) s.maintain();
    }, cfg.retentionIntervalMs),
    setInterval(() => {
      for (const s of shards.values()) s.reap();
    }, cfg.reaperIntervalMs),
    setInterval(() => {
      pagePool().trim();
      cache.trim();
    }, POOL_TRIM_MS),
  );
  for (const s of shards.values()) s.maintain();
  port.postMessage({ type: 'ready', recovery } satisfies WorkerEvent);
}

/** Bytes of a cached remote range: its batches. */
function remoteBytes(v: RemoteBatch[]): number {
  let n = 0;
  for (const b of v) n += b.batch.length;
  return n;
}

/** Index stores opened so far: closed when the start fails, so a new thread can open them (RocksDB's lock). */
const openStores: KvStore[] = [];

main().catch(async (err: unknown) => {
  // RocksDB's open error says only "Database is not open"; what went wrong is in its causes.
  const messages: string[] = [];
  let code: string | null = null;
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const m = e instanceof Error ? e.message : String(e);
    if (!messages.includes(m)) messages.push(m);
    if (code === null && e instanceof Error && typeof (e as NodeJS.ErrnoException).code === 'string' && /^E[A-Z]+$/.test((e as NodeJS.ErrnoException).code!)) code = (e as NodeJS.ErrnoException).code!;
  }
  const message = messages.join(': ');
  if (code === null && /no space left on device/i.test(message)) code = 'ENOSPC';
  port.postMessage({ type: 'failed', message, code } satisfies WorkerEvent);
  await Promise.allSettled(openStores.map((s) => s.close()));
  process.exit(1);
});
