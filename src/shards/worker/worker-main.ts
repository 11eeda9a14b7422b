/**
 * Entry point of a shard worker thread. Hosts several shards; receives packed request
 * batches from the gateway thread (see ../wire.ts), dispatches them, starts one group commit
 * per shard touched by the batch, and sends replies back packed per event-loop turn.
 *
 * A storage failure (a log or index write error, a full disk, any exception escaping a timer)
 * stops the thread on purpose (`die`): the shards still healthy finish what they have in
 * flight, every file is closed (RocksDB's lock with it), `fatal` goes to the main thread and
 * the thread exits. The main thread fails its calls and starts it again (../worker-pool.ts),
 * and the new thread recovers its shards from their logs.
 */
import * as path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { ready as compressionReady } from '../../util/compression';
import { type ErrorData, SvcError } from '../../errors';
import { type SchemaControl, type SchemaDocument, SchemaRegistry, applySchemaControl } from '../schema-registry';
import { type AppendParams, type BatchLimits, type ConfigureParams, type CreateParams, type HeadParams, type ListParams, type ReadParams, type TailEvent, type TrimParams } from '../types';
import { type Entry, Op, Status, packEntries, unpackEntries, unpackRecords } from '../wire';
import { openRocksStore } from './rocks-store';
import { SegmentLog } from './segment-log';
import { Shard } from './shard';
import { type KvStore } from './kv-store';
import { armTestFaults } from './test-faults';

export interface WorkerConfig {
  dataDir: string;
  shardIds: number[];
  shardCount: number;
  segmentBytes: number;
  maxChunkBytes: number;
  limits: BatchLimits;
  retentionIntervalMs: number;
  reaperIntervalMs: number;
  /** Chunk index entries cached in memory per shard; absent: the default. */
  indexCacheChunks?: number;
  /** Registered schemas at start (schema-store.ts); changes arrive as `schemas` control messages. */
  schemas?: SchemaDocument[];
  /** First tail-event version (Shard option): above every version a previous thread of these shards sent. */
  tailVersionBase?: number;
  /** The disk is full (../space-guard.ts): creates and appends are refused; changes arrive as `space` control messages. */
  lowSpace?: boolean;
}

/** Control messages travel outside the packed batches; those with an `id` are answered with a `control-reply`. */
export type ControlMessage = { type: 'close' } | { type: 'space'; low: boolean } | (SchemaControl & { id: number });
/** Replies whose large data travels in transferred buffers of their own. */
export interface PackedWithExtras {
  packed: ArrayBuffer;
  extras: ArrayBuffer[];
}
export type WorkerEvent =
  | { type: 'ready'; recovery: Array<{ shardId: number; replayedFrames: number; truncatedBytes: number; streams: number }> }
  | { type: 'failed'; message: string; code: string | null }
  /** The thread stops after a storage failure (it exits right after this message). */
  | { type: 'fatal'; message: string; code: string | null; shardId: number | null }
  | { type: 'closed' }
  | { type: 'control-reply'; id: number; result?: unknown; error?: ErrorData };

const port = parentPort!;
const cfg = workerData as WorkerConfig;
const shards = new Map<number, Shard>();
/** Every schema, compiled once for this thread; shards validate appends with it. */
const schemaRegistry = new SchemaRegistry(cfg.schemas ?? []);
let outbox: Entry[] = [];
/** Creates and appends are refused while the disk is full (deletes and trims free space). */
let lowSpace = cfg.lowSpace === true;
let sendScheduled = false;
/** Retention and reaper intervals, stopped on close and on a storage failure. */
let timers: NodeJS.Timeout[] = [];

function send(e: Entry): void {
  outbox.push(e);
  if (!sendScheduled) {
    sendScheduled = true;
    setImmediate(flushOutbox);
  }
}

function flushOutbox(): void {
  sendScheduled = false;
  if (outbox.length === 0) return;
  const batch = outbox;
  outbox = [];
  // Read pages are not copied into the batch: their buffers belong to this reply alone and move with it.
  const extras: ArrayBuffer[] = [];
  const ab = packEntries(batch, extras);
  if (extras.length === 0) port.postMessage(ab, [ab]);
  else port.postMessage({ packed: ab, extras } satisfies PackedWithExtras, [ab, ...extras]);
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

/** Tail events of watched streams go out with the replies of the same turn, after them (live reads). */
function onTail(events: TailEvent[]): void {
  send({ id: 0, code: Status.Tail, shard: 0, meta: events, data: null });
}

function ok(id: number, shard: number, meta: unknown, data: Buffer | null = null): void {
  send({ id, code: Status.Ok, shard, meta, data });
}

function fail(id: number, shard: number, err: unknown): void {
  const e = err instanceof SvcError ? err : new SvcError('internal', err instanceof Error ? err.message : String(err));
  send({ id, code: Status.Error, shard, meta: e.toData(), data: null });
}

function handle(e: Entry, shard: Shard): void {
  const reply = (err: SvcError | null, result?: unknown): void => (err ? fail(e.id, e.shard, err) : ok(e.id, e.shard, result ?? null));
  switch (e.code as Op) {
    case Op.Create: {
      const p = e.meta as Omit<CreateParams, 'records'>;
      return shard.create({ ...p, records: e.data === null ? [] : unpackRecords(e.data) }, reply);
    }
    case Op.Append: {
      const p = e.meta as Omit<AppendParams, 'records' | 'batches' | 'jsonBatch'> & { kind: 'records' | 'batches' | 'json' | 'none' };
      const records = p.kind === 'records' && e.data !== null ? unpackRecords(e.data) : null;
      // A view into the transferred message buffer, which this thread owns: the shard copies each
      // batch into its log frame (encodeFrame), so a copy here would be a second one.
      const batches = p.kind === 'batches' && e.data !== null ? e.data : null;
      const jsonBatch = p.kind === 'json' ? (e.data ?? Buffer.alloc(0)) : null;
      return shard.append(
        { name: p.name, contentType: p.contentType, close: p.close, records, batches, jsonBatch, producer: p.producer ?? null, matchSeq: p.matchSeq ?? null, writerSeq: p.writerSeq ?? null, kafka: p.kafka === true },
        reply,
      );
    }
    case Op.Trim:
      return shard.trim(e.meta as TrimParams, reply);
    case Op.Delete:
      return shard.delete((e.meta as { name: string }).name, reply);
    case Op.Read: {
      const r = shard.read(e.meta as ReadParams);
      const { body, ...meta } = r;
      return ok(e.id, e.shard, meta, body);
    }
    case Op.Head:
      return ok(e.id, e.shard, shard.head(e.meta as HeadParams));
    case Op.List:
      return ok(e.id, e.shard, shard.list(e.meta as ListParams));
    case Op.Stats:
      return ok(e.id, e.shard, shard.stats());
    case Op.Configure:
      return shard.configure(e.meta as ConfigureParams, reply);
    case Op.Watch:
    case Op.Unwatch:
      return ok(e.id, e.shard, shard.watch((e.meta as { name: string }).name, e.code === Op.Watch));
    default:
      throw new SvcError('internal', `unknown op ${e.code}`);
  }
}

port.on('message', (msg: ArrayBuffer | ControlMessage) => {
  if (!(msg instanceof ArrayBuffer)) {
    if (msg.type === 'close') void closeAll();
    else if (msg.type === 'space') lowSpace = msg.low;
    else if (msg.type === 'schemas') onSchemaControl(msg);
    return;
  }
  const touched = new Set<Shard>();
  for (const e of unpackEntries(msg)) {
    if (dying !== null) {
      fail(e.id, e.shard, dying);
      continue;
    }
    const shard = shards.get(e.shard);
    if (shard === undefined) {
      fail(e.id, e.shard, new SvcError('internal', `shard ${e.shard} is not hosted by this worker`));
      continue;
    }
    try {
      handle(e, shard);
      touched.add(shard);
    } catch (err) {
      fail(e.id, e.shard, err);
    }
  }
  // Everything that arrived together is committed together.
  for (const s of touched) s.flush();
});

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

async function closeAll(): Promise<void> {
  for (const t of timers) clearInterval(t);
  timers = [];
  await Promise.all([...shards.values()].map((s) => s.close()));
  port.postMessage({ type: 'closed' } satisfies WorkerEvent);
}

async function main(): Promise<void> {
  const recovery: Array<{ shardId: number; replayedFrames: number; truncatedBytes: number; streams: number }> = [];
  const dirOf = (shardId: number): string => path.join(cfg.dataDir, 'shards', String(shardId));
  // Reads of Kafka-compressed batches may need zstd, which loads asynchronously.
  await compressionReady();
  // RocksDB opens do their I/O off this thread: open every shard's index at once.
  const opened = await Promise.allSettled(cfg.shardIds.map((id) => openRocksStore(path.join(dirOf(id), 'index'))));
  for (const r of opened) if (r.status === 'fulfilled') openStores.push(r.value);
  const failed = opened.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  cfg.shardIds.forEach((shardId, i) => {
    const store = openStores[i]!;
    const log = SegmentLog.open(path.join(dirOf(shardId), 'log'), cfg.segmentBytes);
    armTestFaults(store, log);
    const shard = new Shard(store, log, {
      shardId,
      shardCount: cfg.shardCount,
      maxChunkBytes: cfg.maxChunkBytes,
      indexCacheChunks: cfg.indexCacheChunks,
      limits: cfg.limits,
      schemas: schemaRegistry,
      onTail,
      tailVersionBase: cfg.tailVersionBase ?? 0,
      onStorageFailure: (err) => die(err, shardId),
      lowSpace: () => lowSpace,
    });
    shards.set(shardId, shard);
    recovery.push({ shardId, ...shard.recovery });
  });
  timers.push(
    setInterval(() => {
      for (const s of shards.values()) s.maintain();
    }, cfg.retentionIntervalMs),
    setInterval(() => {
      for (const s of shards.values()) s.reap();
    }, cfg.reaperIntervalMs),
  );
  for (const s of shards.values()) s.maintain();
  port.postMessage({ type: 'ready', recovery } satisfies WorkerEvent);
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
