/**
 * The gateway thread's handle on the shard workers.
 *
 *   gateway ──call──▶ ShardClient ──(queue per worker, packed once per event-loop turn)──▶ worker k
 *                          ▲                                                                  │
 *                          └────────────── packed replies, resolved by request id ◀──────────┘
 *
 * Each call is written straight into its worker's outgoing message (wire.ts) with the encoding of
 * its operation (protocol.ts), and resolves with that operation's result type. Errors come back
 * as data and are rebuilt into SvcError here.
 */
import * as path from 'node:path';
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import { SvcError } from '../errors';
import { type RecordInput } from '../util/record-batch';
import { initDataDir } from './data-dir';
import { type DataDirLock, lockDataDir } from './data-dir-lock';
import { shardOf, workerOf } from './placement';
import { compareNames } from './names';
import { addCommitStats, newCommitStats } from './commit-stats';
import { journalFile, replayJournals } from './worker/sync-journal';
import {
  type AdoptParams,
  type AdoptResult,
  type AppendParams,
  type BatchLimits,
  type AppendResult,
  type ConfigureParams,
  type CreateParams,
  type CreateResult,
  type DeleteResult,
  type DropResult,
  type HeadParams,
  type ImportResult,
  type HopEnd,
  type HopTracer,
  type ListParams,
  type ListResult,
  type ReadParams,
  type ReadResult,
  type ReadVisibility,
  type ShardStats,
  type StreamImport,
  type Durability,
  type StreamInfo,
  type TailEvent,
  type TrimParams,
} from './types';
import { frameChunks } from './import-chunks';
import { RETURNED_PAGE, Status, Writer, type Reader, readEntries } from './wire';
import { OPS, type OpName, type Req, type Res, errorBody, returnedBody, tailBody } from './protocol';
import { payloadBytes } from './append-wire';
import { type PackedWithExtras, controlReplyOf, repliesOf } from './worker-messages';
import { type ControlMessage, type WorkerConfig, type WorkerEvent, type WorkerObjectsConfig } from './worker/worker-main';
import { addObjectStoreStats, newObjectStoreStats } from '../objects';
import { type PoolLog, type WorkerDown, type WorkerLinks, WorkerPool, type WorkerPort } from './worker-pool';
import { SpaceGuard, type SpaceState, isDiskFull } from './space-guard';
import { type SchemaControl, type SchemaDocument } from './schema-registry';

export interface ShardClientOptions {
  dataDir: string;
  workers: number;
  /** Shard count for a new data directory (an existing one keeps its own). */
  shards: number;
  segmentBytes: number;
  /** Durability class of streams without their own (--durability); default `sync`. */
  durability?: Durability;
  limits: BatchLimits;
  retentionIntervalMs: number;
  reaperIntervalMs: number;
  /** Chunk index entries cached in memory per shard (default 16,384). */
  indexCacheChunks?: number;
  /** The read cache of the node's workers together, in bytes (worker/read-cache.ts); absent or 0: none. */
  readCacheBytes?: number;
  /**
   * Idle read page buffers the node's workers keep for reuse together, in bytes
   * (worker/page-pool.ts; pages come back through `recycle`); absent or 0: none.
   */
  readPoolBytes?: number;
  log: PoolLog;
  /** Registered schemas the workers start with (SchemaStore.documents()). */
  schemas?: SchemaDocument[];
  /** The registered schemas now, for a worker restarted after a failure (default: `schemas`). */
  currentSchemas?: () => SchemaDocument[];
  /** Bytes kept free on the data directory's disk for recovering from a full disk (space-guard.ts); 0 for none. */
  reserveBytes?: number;
  /** The node's guard when it opened one before anything else wrote to the disk (else one is opened here, with `reserveBytes`). */
  space?: SpaceGuard;
  /** Objects mode (docs/cluster.md, "Objects mode: where data lives"); absent: single-node durability on the local log. */
  objects?: WorkerObjectsConfig;
}

interface Pending {
  /** Read the reply's body with the call's own result codec and resolve. */
  settle: (r: Reader) => void;
  reject: (e: unknown) => void;
  worker: number;
}

/** What the main thread's client tells a gateway thread's about one worker (linkClient). */
export interface ClientLinkEvents {
  /** The worker's end of a new channel (at the link, and after each restart). */
  port(w: number, port: MessagePort): void;
  /** The worker stopped: calls to it fail until a new port comes. */
  down(w: number, why: WorkerDown): void;
}

/** A chunk of the log indexed as one unit; bounds the bytes a read walks to find its start. */
const MAX_CHUNK_BYTES = 1024 * 1024; // 1 MiB

export class ShardClient {
  /** The way to the workers: the pool (main thread) or a gateway thread's channels. */
  readonly #pool: WorkerLinks;
  /** The main thread's: the workers themselves, the disk's space guard and the data directory's lock; null on a gateway thread. */
  readonly #owner: { pool: WorkerPool; space: SpaceGuard; lock: DataDirLock } | null;
  /** Main thread: the gateway threads' clients, told when a worker stops and given its new channel when it is back. */
  readonly #clients = new Map<number, ClientLinkEvents>();
  #nextClient = 1;
  /** Each worker's outgoing message of this turn. */
  #out: Writer[];
  readonly #pending = new Map<number, Pending>();
  readonly shardCount: number;
  #nextId = 1;
  #nextControlId = 1;
  #scheduled = false;
  /** Receives tail events of watched streams (the gateway's live-read registry). */
  #tailListener: ((events: TailEvent[]) => void) | null = null;
  #returnedListener: ((ab: ArrayBuffer) => void) | null = null;
  /** Stream names with live readers: watched again in a worker restarted after a failure. */
  readonly #watched = new Set<string>();
  /** What of a stream reads (but Kafka fetches) may see; see setReadVisibility. */
  #visibility: ((name: string, fromSeq: number) => ReadVisibility | null) | null = null;
  #hops: HopTracer | null = null;
  /**
   * Read bodies in a worker's pooled shared memory (worker/page-pool.ts), which goes back to it
   * by `recycle`: the slab's id, and the worker's thread object then, so a slab goes back only to
   * the very thread that rendered it, never to one started after it.
   */
  readonly #sharedPages = new WeakMap<Buffer | readonly Buffer[], { w: number; thread: WorkerPort; slab: number }>();

  private constructor(links: WorkerLinks, owner: { pool: WorkerPool; space: SpaceGuard; lock: DataDirLock } | null, shardCount: number) {
    this.#pool = links;
    this.#owner = owner;
    const pool = links;
    const space = owner?.space ?? null;
    // Low on space or not, every worker knows at once; one that is down learns it when it restarts (WorkerConfig.lowSpace).
    if (owner !== null) {
      owner.space.onChange(
        (low) => {
          for (let w = 0; w < pool.size; w++) owner.pool.running(w)?.postMessage({ type: 'space', low } satisfies ControlMessage);
        },
        () => pool.unavailable().length === 0,
      );
    }
    this.#out = Array.from({ length: pool.size }, () => new Writer(false));
    this.shardCount = shardCount;
    pool.setHooks({
      message: (_w, m) => {
        const r = repliesOf(m);
        if (r !== null) this.#onReplies(r.message, r.extras, r.shared, _w);
      },
      down: (w, why) => {
        this.#failWorker(w, why);
        for (const c of this.#clients.values()) c.down(w, why);
        if (space !== null && isDiskFull(why.errorCode, why.error)) space.enterLow(`shard worker ${w}: ${why.error}`);
      },
      up: (w) => {
        for (const [client, c] of this.#clients) this.#linkWorker(client, w, c);
        this.#rewatch(w);
      },
    });
  }

  /**
   * A client on another thread (a gateway thread, docs/config.md `--gateway-threads`): a channel
   * from it to every worker, so its calls need no hop through this thread. `events.port` gets each
   * worker's end at once, and a new one after the worker is restarted; `events.down` is told when a
   * worker stops (its calls on that thread must fail). Main thread only.
   */
  linkClient(events: ClientLinkEvents): { client: number; unlink(): void } {
    const owner = this.#owned('linkClient');
    const client = this.#nextClient++;
    this.#clients.set(client, events);
    for (let w = 0; w < this.#pool.size; w++) {
      if (owner.pool.worker(w) !== null) this.#linkWorker(client, w, events);
      else events.down(w, owner.pool.downInfo(w) ?? { worker: w, shards: [], error: 'starting', errorCode: null, sinceMs: Date.now(), restarts: 0 });
    }
    return {
      client,
      unlink: () => {
        if (!this.#clients.delete(client)) return;
        for (let w = 0; w < this.#pool.size; w++) owner.pool.running(w)?.postMessage({ type: 'detach', client } satisfies ControlMessage);
      },
    };
  }

  #linkWorker(client: number, w: number, events: ClientLinkEvents): void {
    const worker = this.#owned('linkClient').pool.running(w);
    if (worker === null) return;
    const { port1, port2 } = new MessageChannel();
    worker.postMessage({ type: 'attach', client, port: port1 } satisfies ControlMessage, [port1]);
    events.port(w, port2);
  }

  /** The main thread's parts, or an error naming what only it may do. */
  #owned(what: string): { pool: WorkerPool; space: SpaceGuard; lock: DataDirLock } {
    if (this.#owner === null) throw new SvcError('internal', `${what} is the main thread's: a gateway thread's shard client cannot do it`);
    return this.#owner;
  }

  /** A gateway thread's client over the channels the main thread's client linked (linkClient; worker-links.ts). */
  static overLinks(links: WorkerLinks, shardCount: number): ShardClient {
    return new ShardClient(links, null, shardCount);
  }

  static async start(o: ShardClientOptions): Promise<ShardClient> {
    // Before anything reads the directory: a second process must not replay (and delete) the running one's journals (data-dir-lock.ts).
    const lock = lockDataDir(o.dataDir, 'serve');
    try {
      return await ShardClient.#startLocked(o, lock);
    } catch (err) {
      lock.release();
      throw err;
    }
  }

  static async #startLocked(o: ShardClientOptions, lock: DataDirLock): Promise<ShardClient> {
    const { shardCount, keptStoredShardCount } = initDataDir(o.dataDir, o.shards);
    if (keptStoredShardCount) o.log.warn({ shardCount, requested: o.shards }, 'data directory keeps its shard count');
    const workerCount = Math.min(o.workers, shardCount);
    const file = path.join(__dirname, 'worker', 'worker-main.js');
    let space = o.space;
    if (space === undefined) {
      space = new SpaceGuard(o.dataDir, o.reserveBytes ?? 0, o.log);
      space.open();
    }
    const guard = space;
    let restarted = false;
    const config = (w: number): WorkerConfig => ({
      dataDir: path.resolve(o.dataDir),
      shardIds: Array.from({ length: shardCount }, (_, k) => k).filter((k) => workerOf(k, workerCount) === w),
      shardCount,
      segmentBytes: o.segmentBytes,
      durability: o.durability ?? 'sync',
      maxChunkBytes: MAX_CHUNK_BYTES,
      limits: { maxRecordBytes: o.limits.maxRecordBytes, maxBatchRecords: o.limits.maxBatchRecords },
      retentionIntervalMs: o.retentionIntervalMs,
      reaperIntervalMs: o.reaperIntervalMs,
      indexCacheChunks: o.indexCacheChunks,
      // The node's budget, split evenly: each worker holds the chunks its own shards read.
      readCacheBytes: Math.floor((o.readCacheBytes ?? 0) / workerCount),
      readPoolBytes: Math.floor((o.readPoolBytes ?? 0) / workerCount),
      // A restarted worker compiles the schemas registered now, not those of the node's start.
      schemas: restarted ? (o.currentSchemas?.() ?? o.schemas ?? []) : (o.schemas ?? []),
      // Tail versions of a restarted shard must stay above those its readers saw (LiveWaiters drops older ones).
      tailVersionBase: Date.now() * 1000,
      lowSpace: guard.low,
      // The object range cache, like the read cache: the node's budget split evenly over the workers.
      ...(o.objects !== undefined ? { objects: { ...o.objects, cacheBytes: Math.floor((o.objects.cacheBytes ?? 0) / workerCount) } } : { journalFile: journalFile(path.resolve(o.dataDir), w) }),
    });
    let pool: WorkerPool;
    try {
      // Groups acknowledged through a worker's sync journal only go back into their logs before any worker starts (the worker count may differ from the last run's).
      const replayed = replayJournals(path.resolve(o.dataDir));
      if (replayed > 0) o.log.info({ records: replayed }, 'sync journal replayed into the shard logs');
      pool = await WorkerPool.start(file, workerCount, config, o.log);
    } catch (err) {
      space.close();
      throw err;
    }
    restarted = true;
    return new ShardClient(pool, { pool, space, lock }, shardCount);
  }

  /** Free space on the data directory's disk, and whether the node is refusing growth for want of it. */
  /** Acknowledged appends since start: records and the bytes handed to the shards (plain numbers, read at scrape time). */
  readonly appended = { records: 0, bytes: 0 };

  space(): SpaceState {
    return this.#owned('space').space.state();
  }

  /** Workers that are down after a storage failure (empty when healthy); GET /ready is 503 while any is. */
  unavailable(): WorkerDown[] {
    return this.#pool.unavailable();
  }

  shardOf(name: string): number {
    return shardOf(name, this.shardCount);
  }

  create(p: CreateParams): Promise<CreateResult> {
    return this.#call('create', this.shardOf(p.name), p);
  }

  append(p: AppendParams): Promise<AppendResult> {
    const shard = this.shardOf(p.name);
    // Traces on (docs/metrics.md, "Traces"): the hop, group commit and fdatasync as one child span.
    const end = this.#hops === null ? null : this.#hops.start('append', p.name, shard, workerOf(shard, this.#pool.size));
    // Counted as the reply is read (no promise of its own), once the append is durable and
    // acknowledged; a duplicate wrote nothing (docs/metrics.md).
    // Measured now: a body given up with its buffer (ownBuffer) is detached here once sent.
    const bytes = payloadBytes(p.payload);
    const done = this.#call('append', shard, p, (r) => {
      if (r.duplicate === true) return;
      this.appended.records += r.nextSeq - r.startSeq;
      this.appended.bytes += bytes;
    });
    return end === null ? done : ended(done, end, (r) => (r.duplicate === true ? [0, 0] : [r.nextSeq - r.startSeq, bytes]));
  }

  trim(p: TrimParams): Promise<AppendResult> {
    return this.#call('trim', this.shardOf(p.name), p);
  }

  /**
   * Delete a stream. A stream forks still read is only marked deleted (it stays for them); a
   * deleted fork lets go of its source, and a source deleted earlier goes with its last fork,
   * up the chain. Shards are independent, so a crash between two steps leaves a source kept
   * (a reference too many), never a fork without its source.
   */
  async delete(name: string): Promise<DeleteResult> {
    const r = await this.#call('delete', this.shardOf(name), { name });
    if (r.fork !== null) await this.releaseFork(r.fork.source);
    return r;
  }

  /** A fork of `source` is gone: drop the reference; a deleted source with no forks left goes, and lets go of its own source. */
  async releaseFork(source: string): Promise<void> {
    let name: string | null = source;
    while (name !== null) {
      let info: StreamInfo;
      try {
        info = await this.configure({ name, forkRefsDelta: -1 });
      } catch {
        return; // the source is already gone for good
      }
      // The shard deleted it with its last reference when it was deleted or expired before.
      name = info.forkRefs === 0 && info.gone && info.fork !== null ? info.fork.source : null;
    }
  }

  read(p: ReadParams): Promise<ReadResult> {
    // Every reader but a Kafka fetch (which applies its isolation level itself) sees committed data only.
    const v = p.format === 'kafka' || this.#visibility === null ? null : this.#visibility(p.name, p.seq);
    const shard = this.shardOf(p.name);
    const end = this.#hops === null ? null : this.#hops.start('read', p.name, shard, workerOf(shard, this.#pool.size));
    // Object.assign, not `{ ...p, visibility }` (a hidden class per object: program/http/engine.ts, requestOf).
    const done = this.#call('read', shard, v === null ? p : Object.assign({}, p, { visibility: v }));
    return end === null ? done : ended(done, end, (r) => [r.count, pageBytes(r)]);
  }

  /**
   * The caller is done with the body of a read it made with `pooled: true`: nothing will read it
   * again and it keeps no reference to it (an HTTP engine has written all of it, or dropped it).
   * A body in a worker's pooled shared memory goes back (its slab id, with the next message) to
   * the worker that rendered it, which renders later pages into it (worker/page-pool.ts), as do
   * a page's parts (ReadResult.parts) to the read cache that lent them (worker/read-cache.ts);
   * anything else is left to the garbage collector. A second call for the same body does nothing.
   */
  recycle(body: Buffer | readonly Buffer[]): void {
    const from = this.#sharedPages.get(body);
    if (from === undefined) return;
    this.#sharedPages.delete(body);
    // A worker restarted since has its own pool: the slab is dropped, not handed to it.
    if (this.#pool.worker(from.w) !== from.thread) return;
    const out = this.#out[from.w]!;
    const mark = out.beginEntry(0, RETURNED_PAGE, 0);
    out.u32(from.slab);
    out.endEntry(mark);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#sendAll);
    }
  }

  /** Where appends and reads report their hops (docs/metrics.md, "Traces"); null (the default): traces off, no cost but one check. */
  setHopTracer(t: HopTracer | null): void {
    this.#hops = t;
  }

  /**
   * Where reads in every format but `kafka` learn what of a stream is committed (the Kafka
   * listener's transactions); null or a null answer: everything durable is visible.
   */
  setReadVisibility(fn: ((name: string, fromSeq: number) => ReadVisibility | null) | null): void {
    this.#visibility = fn;
  }

  head(p: string | HeadParams): Promise<StreamInfo> {
    const params: HeadParams = typeof p === 'string' ? { name: p } : p;
    return this.#call('head', this.shardOf(params.name), params);
  }

  /**
   * Live reads: from now on the stream's shard reports every move of its tail (appends applied,
   * seal, trim, delete) to the `onTail` listener; resolves with the tail now (`deleted: true`
   * when the stream does not exist). Watches are by name and not counted: one unwatch ends it.
   */
  watch(name: string): Promise<TailEvent> {
    this.#watched.add(name);
    return this.#call('watch', this.shardOf(name), { name });
  }

  async unwatch(name: string): Promise<void> {
    this.#watched.delete(name);
    await this.#call('unwatch', this.shardOf(name), { name });
  }

  /** The one listener for tail events; they arrive batched per worker turn, after that turn's replies. */
  onTail(listener: (events: TailEvent[]) => void): void {
    this.#tailListener = listener;
  }

  /**
   * Receives the buffers given up with appends (`ownBuffer`: a Kafka listener's request frames)
   * once their shard is done with them (written and applied, or refused with a failed log), for
   * reuse. Without a listener they are dropped.
   */
  onReturnedBuffer(listener: (ab: ArrayBuffer) => void): void {
    this.#returnedListener = listener;
  }

  /** Change a stream's config (PATCH /_streams/{name}); resolves with the stream once the change is durable. */
  configure(p: ConfigureParams): Promise<StreamInfo> {
    return this.#call('configure', this.shardOf(p.name), p);
  }

  /**
   * Open a stream here from frames another node wrote (docs/storage.md, "Imported streams"): every
   * record keeps its seq, bytes, key, headers and timestamp; the start, the seal and idempotent
   * producers' state are restored; a local copy of the stream is replaced. The frames cross in
   * chunks of at most IMPORT_CHUNK_BYTES (1 MiB), one in flight; each is durable in the local log
   * before the next is sent. Readers see the old copy (or nothing) until the whole import is
   * durable, then the new stream. A damaged frame fails it with `data_corrupt`, and a failure of any
   * kind (the source's included) leaves the local state as it was before.
   */
  async importStream(name: string, input: StreamImport): Promise<ImportResult> {
    const shard = this.shardOf(name);
    const { importId } = await this.#call('importBegin', shard, { name, meta: input.meta, ...(input.epoch !== undefined ? { epoch: input.epoch } : {}), ...(input.ledger !== undefined ? { ledger: input.ledger } : {}) });
    try {
      for await (const frames of frameChunks(input.frames)) await this.#call('importFrames', shard, { name, importId, frames });
      return await this.#call('importEnd', shard, { name, importId });
    } catch (err) {
      // The shard abandons an import on its own errors; this covers the source's (an object store read, say).
      await this.#call('importAbort', shard, { name, importId }).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Open a stream here from the object ledger without copying its records (docs/objects.md,
   * "Opening without a copy"): the stream's start, seal and meta from its `m/` record, its tail at
   * the last entry's `to`, the entries kept as remote chunks and the producers as given; a local
   * copy is replaced. Its records below the remote end are read from the object store on demand
   * (worker/remote-reader.ts): how `--objects-reads remote` (the default) opens a stream.
   */
  adoptStream(name: string, input: Omit<AdoptParams, 'name'>): Promise<AdoptResult> {
    return this.#call('adopt', this.shardOf(name), { name, ...input });
  }

  /**
   * Remove the local copy of a stream (it is now served by another node): locally the effect of a
   * delete, whatever the stream's state (forks, TTL), but nothing shared is touched (no fork
   * reference released, nothing recorded in the object ledger). `dropped: false` when there was none.
   */
  dropStream(name: string, below?: number): Promise<DropResult> {
    return this.#call('drop', this.shardOf(name), below === undefined ? { name } : { name, below });
  }

  /**
   * Send a control message (not a packed request) to every worker; resolves with each worker's
   * result once all of them have applied it. Requests queued before it are sent first.
   */
  async control(msg: SchemaControl): Promise<unknown[]> {
    this.#send();
    const id = this.#nextControlId++;
    // A worker that is down gets the registry as it is then when it restarts (ShardClientOptions.currentSchemas).
    const pool = this.#owned('control').pool;
    const running = Array.from({ length: pool.size }, (_, w) => pool.running(w)).filter((w): w is Worker => w !== null);
    return Promise.all(
      running.map(
        (w) =>
          new Promise<unknown>((resolve, reject) => {
            const onMsg = (m: unknown): void => {
              const r = controlReplyOf(m);
              if (r === null || r.id !== id) return;
              w.off('message', onMsg);
              w.off('exit', onExit);
              if (r.error !== undefined) reject(SvcError.fromData(r.error));
              else resolve(r.result);
            };
            // A worker that dies meanwhile restarts with the registry as stored, which includes this change.
            const onExit = (): void => {
              w.off('message', onMsg);
              resolve(null);
            };
            w.on('message', onMsg);
            w.once('exit', onExit);
            w.postMessage({ ...msg, id } satisfies ControlMessage);
          }),
      ),
    );
  }

  /** List across every shard: each returns its first `limit` matches, merged here by name. */
  async list(p: ListParams): Promise<ListResult> {
    const parts = await Promise.all(Array.from({ length: this.shardCount }, (_, k) => this.#call('list', k, p)));
    const all: StreamInfo[] = [];
    let more = false;
    for (const l of parts) {
      all.push(...l.streams);
      more ||= l.hasMore;
    }
    all.sort((a, b) => compareNames(a.name, b.name));
    return { streams: all.slice(0, p.limit), hasMore: more || all.length > p.limit };
  }

  async stats(): Promise<ShardStats> {
    const parts = await Promise.all(Array.from({ length: this.shardCount }, (_, k) => this.#call('stats', k, null)));
    const total: ShardStats = { streamCount: 0, objectCount: 0, destroyedObjectBacklog: 0, appliedChanges: 0, commits: newCommitStats() };
    for (const s of parts) {
      total.streamCount += s.streamCount;
      total.objectCount += s.objectCount;
      total.destroyedObjectBacklog += s.destroyedObjectBacklog;
      total.appliedChanges += s.appliedChanges;
      if (s.commits !== undefined) addCommitStats(total.commits!, s.commits);
      if (s.objects !== undefined) addObjectStoreStats((total.objects ??= newObjectStoreStats()), s.objects);
      if (s.readPool !== undefined) total.readPool = addCounts(total.readPool, s.readPool);
      if (s.readCache !== undefined) total.readCache = addCounts(total.readCache, s.readCache);
    }
    return total;
  }

  /** Finish every accepted write, fsync, checkpoint, and stop the workers. */
  async close(): Promise<void> {
    this.#send();
    if (this.#owner === null) {
      // A gateway thread's client: its calls still open fail; the workers are the main thread's.
      for (const [id, p] of this.#pending) {
        this.#pending.delete(id);
        p.reject(new SvcError('shutting_down', 'the node is shutting down'));
      }
      return;
    }
    const owner = this.#owner;
    owner.space.close();
    const workers = owner.pool.stopSupervising();
    await Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve) => {
            w.on('message', (m: ArrayBuffer | WorkerEvent) => {
              if (!(m instanceof ArrayBuffer) && m.type === 'closed') resolve();
            });
            // One that dies while closing has closed what it could.
            w.once('exit', () => resolve());
            w.postMessage({ type: 'close' });
          }),
      ),
    );
    await Promise.all(workers.map((w) => w.terminate()));
    owner.lock.release();
  }

  /** The one way to a worker: `req` is written with its operation's encoding, the reply read with its result's. */
  #call<K extends OpName>(op: K, shard: number, req: Req<K>, observe?: (res: Res<K>) => void): Promise<Res<K>> {
    const worker = workerOf(shard, this.#pool.size);
    // A worker that is down answers nothing: fail at once rather than queue for ever.
    const down = this.#pool.downInfo(worker);
    if (down !== null) return Promise.reject(unavailableError(down));
    const spec = OPS[op];
    const id = this.#nextId;
    this.#nextId = id >= 0xfffffff0 ? 1 : id + 1;
    const w = this.#out[worker]!;
    const mark = w.beginEntry(id, spec.code, shard);
    try {
      spec.req.write(w, req);
    } catch (err) {
      w.rollback(mark);
      return Promise.reject(err instanceof SvcError ? err : new SvcError('internal', `cannot send the ${op} request: ${String(err)}`));
    }
    w.endEntry(mark);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#sendAll);
    }
    return new Promise((resolve, reject) =>
      this.#pending.set(id, {
        settle: (r) => {
          const res = spec.res.read(r);
          observe?.(res);
          resolve(res);
        },
        reject,
        worker,
      }),
    );
  }

  /** A worker stopped: everything sent to it or written for it fails now. */
  #failWorker(w: number, why: WorkerDown): void {
    const err = unavailableError(why);
    this.#out[w] = new Writer(false);
    for (const [id, p] of this.#pending) {
      if (p.worker !== w) continue;
      this.#pending.delete(id);
      p.reject(err);
    }
  }

  /** A restarted worker's shards know no watches: watch again, and hand the tails to the live readers. */
  #rewatch(w: number): void {
    for (const name of this.#watched) {
      if (workerOf(this.shardOf(name), this.#pool.size) !== w) continue;
      this.#call('watch', this.shardOf(name), { name }).then(
        (t) => this.#tailListener?.([t]),
        () => undefined,
      );
    }
  }

  readonly #sendAll = (): void => this.#send();

  #send(): void {
    this.#scheduled = false;
    for (let w = 0; w < this.#out.length; w++) {
      const out = this.#out[w]!;
      if (out.empty) continue;
      const worker = this.#pool.worker(w);
      if (worker === null) {
        const down = this.#pool.downInfo(w);
        if (down !== null) this.#failWorker(w, down);
        continue;
      }
      const { message, transferMessage, extras } = out.take();
      const transfer = transferMessage ? [message, ...extras] : extras;
      // Extras: large data moved to the worker, not copied (a Kafka request frame's batch; wire.ts, Writer.blob).
      if (extras.length === 0) worker.postMessage(message, transfer);
      else worker.postMessage({ packed: message, extras } satisfies PackedWithExtras, transfer);
    }
  }

  #onReplies(message: ArrayBuffer, extras: readonly ArrayBuffer[], shared: readonly SharedArrayBuffer[], w: number): void {
    const thread = shared.length === 0 ? null : this.#pool.worker(w);
    // A page in shared memory: remembered with its slab, for `recycle`.
    const onShared = thread === null ? null : (page: Buffer | readonly Buffer[], slab: number): void => void this.#sharedPages.set(page, { w, thread, slab });
    readEntries(
      message,
      extras,
      (id, code, _shard, r) => {
        if (code === Status.Tail) {
          this.#tailListener?.(tailBody.read(r));
          return;
        }
        if (code === Status.Returned) {
          const b = returnedBody.read(r);
          if (b.buffer instanceof ArrayBuffer) this.#returnedListener?.(b.buffer);
          return;
        }
        const p = this.#pending.get(id);
        if (p === undefined) return;
        this.#pending.delete(id);
        try {
          if (code === Status.Ok) p.settle(r);
          else p.reject(SvcError.fromData(errorBody.read(r)));
        } catch (err) {
          p.reject(new SvcError('internal', `unreadable reply from a shard worker: ${String(err)}`));
        }
      },
      shared,
      onShared,
    );
  }
}

/** The error of every call to a worker that is down. */
function unavailableError(d: WorkerDown): SvcError {
  const full = isDiskFull(d.errorCode, d.error);
  return new SvcError(
    'storage_unavailable',
    full ? `shards ${d.shards.join(', ')} are unavailable: the disk is full (${d.error}); retry later` : `shards ${d.shards.join(', ')} are unavailable after a storage failure (${d.error}); retry later`,
    { reason: full ? 'disk_full' : 'worker_failed' },
  );
}

export type { RecordInput };

/** `call`, ending its hop span with what it moved or the error it failed with. */
function ended<T>(call: Promise<T>, end: HopEnd, moved: (r: T) => [number, number]): Promise<T> {
  return call.then(
    (r) => {
      const [records, bytes] = moved(r);
      end(records, bytes, null);
      return r;
    },
    (err: unknown) => {
      end(0, 0, err);
      throw err;
    },
  );
}

/** `from`'s counts added into `into`, or a copy of them when there is none yet (per-worker figures summed). */
function addCounts<K extends string>(into: Record<K, number> | undefined, from: Record<K, number>): Record<K, number> {
  if (into === undefined) return { ...from };
  for (const k in from) into[k] += from[k];
  return into;
}

/** Bytes of a read's page, whole or in parts. */
function pageBytes(r: ReadResult): number {
  if (r.parts === undefined) return r.body.length;
  let n = 0;
  for (const p of r.parts) n += p.length;
  return n;
}
