/**
 * Entry point of a shard worker thread. Hosts several shards; receives packed request
 * batches from the gateway thread (see ../wire.ts), dispatches them, starts one group commit
 * per shard touched by the batch, and sends replies back packed per event-loop turn.
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
}

/** Control messages travel outside the packed batches; those with an `id` are answered with a `control-reply`. */
export type ControlMessage = { type: 'close' } | (SchemaControl & { id: number });
/** Replies whose large data travels in transferred buffers of their own. */
export interface PackedWithExtras {
  packed: ArrayBuffer;
  extras: ArrayBuffer[];
}
export type WorkerEvent =
  | { type: 'ready'; recovery: Array<{ shardId: number; replayedFrames: number; truncatedBytes: number; streams: number }> }
  | { type: 'failed'; message: string }
  | { type: 'closed' }
  | { type: 'control-reply'; id: number; result?: unknown; error?: ErrorData };

const port = parentPort!;
const cfg = workerData as WorkerConfig;
const shards = new Map<number, Shard>();
/** Every schema, compiled once for this thread; shards validate appends with it. */
const schemaRegistry = new SchemaRegistry(cfg.schemas ?? []);
let outbox: Entry[] = [];
let sendScheduled = false;

function send(e: Entry): void {
  outbox.push(e);
  if (!sendScheduled) {
    sendScheduled = true;
    setImmediate(() => {
      sendScheduled = false;
      const batch = outbox;
      outbox = [];
      // Read pages are not copied into the batch: their buffers belong to this reply alone and move with it.
      const extras: ArrayBuffer[] = [];
      const ab = packEntries(batch, extras);
      if (extras.length === 0) port.postMessage(ab, [ab]);
      else port.postMessage({ packed: ab, extras } satisfies PackedWithExtras, [ab, ...extras]);
    });
  }
}

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
    else if (msg.type === 'schemas') onSchemaControl(msg);
    return;
  }
  const touched = new Set<Shard>();
  for (const e of unpackEntries(msg)) {
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

let timers: NodeJS.Timeout[] = [];

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
  const stores = await Promise.all(cfg.shardIds.map((id) => openRocksStore(path.join(dirOf(id), 'index'))));
  cfg.shardIds.forEach((shardId, i) => {
    const log = SegmentLog.open(path.join(dirOf(shardId), 'log'), cfg.segmentBytes);
    const shard = new Shard(stores[i]!, log, { shardId, shardCount: cfg.shardCount, maxChunkBytes: cfg.maxChunkBytes, indexCacheChunks: cfg.indexCacheChunks, limits: cfg.limits, schemas: schemaRegistry, onTail });
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

main().catch((err: unknown) => {
  port.postMessage({ type: 'failed', message: err instanceof Error ? err.message : String(err) } satisfies WorkerEvent);
});
