/**
 * Streams written by a real ShardClient in one data directory, and their frames taken from its
 * segment files the way objects mode takes them (each frame as the shard wrote it, its stream's
 * only), for importing into another data directory.
 *
 * ShardClient runs its workers from compiled files, so these tests drive the build in dist/
 * (`npm test` builds it first). Close the clients inside a test, not in `afterAll`: a worker
 * thread terminated from `afterAll`, once jest has begun tearing the test file down, can take the
 * jest process down with a segmentation fault (seen here with jest 29 on Node.js 20).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as Shards from '../../../src/shards';
import { type SvcError } from '../../../src/errors';
import { FrameType, parseFrame } from '../../../src/shards/worker/frame';
import { type KvStore } from '../../../src/shards/worker/kv-store';
import { openMemoryStore } from '../../../src/shards/worker/memory-store';
import { SegmentLog } from '../../../src/shards/worker/segment-log';
import { type Reply, Shard } from '../../../src/shards/worker/shard';
import { encodeRecordBatch } from '../../../src/util/record-batch';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const dist = require('../../../dist/shards') as typeof Shards;

export type ShardClient = Shards.ShardClient;

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** A ShardClient on `dataDir` (small segments, so a stream spans several files). */
export function startShards(dataDir: string, shards: number, workers = 1): Promise<ShardClient> {
  return dist.ShardClient.start({
    dataDir,
    workers,
    shards,
    segmentBytes: 256 * 1024,
    limits: { maxRecordBytes: 1 << 20, maxBatchRecords: 10_000 },
    retentionIntervalMs: 60_000,
    reaperIntervalMs: 60_000,
    log: silent,
    reserveBytes: 0,
  });
}

const enc = (s: string): Buffer => Buffer.from(s);
export const rec = (value: string, key: string | null = null, headers: Array<[string, string | null]> | null = null): Shards.RecordInput => ({
  key: key === null ? null : enc(key),
  value: enc(value),
  headers: headers === null ? null : headers.map(([k, v]) => [enc(k), v === null ? null : enc(v)] as const),
});

/** An idempotent Kafka producer's batch as a Produce carries it (offsets assigned by the shard). */
export function kafkaBatch(producerId: bigint, epoch: number, baseSequence: number, values: string[]): Buffer {
  return encodeRecordBatch({
    baseOffset: 0,
    baseTimestamp: 1_700_000_000_000,
    producerId,
    producerEpoch: epoch,
    baseSequence,
    records: values.map((v, i) => ({ key: enc(`k${i}`), value: enc(v), headers: [[enc('kh'), enc(`v${i}`)]], timestampDelta: i })),
  });
}

export function appendRecords(c: ShardClient, name: string, records: Shards.RecordInput[], producer: Shards.ProducerParams | null = null, close = false): Promise<Shards.AppendResult> {
  return c.append({ name, origin: 'http', payload: { kind: 'records', records }, contentType: null, close, producer });
}

export function appendKafka(c: ShardClient, name: string, batch: Buffer): Promise<Shards.AppendResult> {
  return c.append({ name, origin: 'kafka', payload: { kind: 'batches', body: Buffer.from(batch) }, contentType: null, close: false });
}

export function createStream(c: ShardClient, name: string, contentType = 'application/octet-stream'): Promise<Shards.CreateResult> {
  return c.create({ name, contentType, ttlSeconds: null, expiresAtMs: null, closed: false, records: [] });
}

/** The frames of the stream with global id `streamId`, in log order, read from the segment files of `dataDir`. */
export function streamFrames(dataDir: string, shardCount: number, streamId: number): Buffer[] {
  return logFrames(path.join(dataDir, 'shards', String(streamId % shardCount), 'log'), Math.floor(streamId / shardCount));
}

/** The frames of the stream with shard-local id `local` in the segment files of one shard's log directory. */
export function logFrames(dir: string, local: number): Buffer[] {
  const out: Buffer[] = [];
  for (const file of fs.readdirSync(dir).sort()) {
    const buf = fs.readFileSync(path.join(dir, file));
    for (let pos = 0; pos < buf.length; ) {
      const f = parseFrame(buf, pos, true);
      if (f === null) break;
      if (f.streamId === local) out.push(Buffer.from(buf.subarray(pos, pos + f.size)));
      pos += f.size;
    }
  }
  return out;
}

/** The stored meta in the stream's CREATE frame: what the ledger's `m/` record holds. */
export function createdMeta(frames: readonly Buffer[]): Record<string, unknown> {
  const create = frames.find((f) => f[8] === FrameType.Create);
  if (create === undefined) throw new Error('no CREATE frame');
  return JSON.parse(create.subarray(13).toString()) as Record<string, unknown>;
}

/** The import input of a stream of `source`: meta as the ledger records it, frames from the segment files. */
export async function importInput(source: ShardClient, dataDir: string, name: string): Promise<Shards.StreamImport> {
  const info = await source.head(name);
  const frames = streamFrames(dataDir, source.shardCount, info.streamId);
  return { meta: { meta: createdMeta(frames), startSeq: info.startSeq, sealed: info.closed }, frames };
}

/** Every record of a stream in one format, from its start. */
export async function readAll(c: ShardClient, name: string, format: Shards.ReadFormat): Promise<{ body: Buffer; count: number; nextSeq: number; startSeq: number }> {
  const bodies: Buffer[] = [];
  let count = 0;
  const head = await c.head(name);
  let seq = head.startSeq;
  for (;;) {
    const r = await c.read({ name, seq, count: 100_000, bytes: 64 << 20, format });
    bodies.push(r.body);
    count += r.count;
    if (r.nextSeq >= r.tailSeq || r.count === 0) return { body: Buffer.concat(bodies), count, nextSeq: r.nextSeq, startSeq: r.startSeq };
    seq = r.nextSeq;
  }
}

/** One shard on this thread (white-box), over `<dir>/log` with 64 KiB segments and an in-memory index (by default). */
export function openLocalShard(dir: string, store: KvStore = openMemoryStore()): Shard {
  return new Shard(store, SegmentLog.open(path.join(dir, 'log'), 64 * 1024), {
    shardId: 0,
    shardCount: 1,
    maxChunkBytes: 1 << 20,
    limits: { maxRecordBytes: 1 << 20, maxBatchRecords: 1000 },
  });
}

/** A white-box shard call, flushed at once (as the worker does after each message). */
export function call<T>(shard: Shard, f: (reply: Reply<T>) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    f((err: SvcError | null, r?: T) => (err ? reject(err) : resolve(r as T)));
    shard.flush();
  });
}

/** The error `p` is rejected with (a test failure if it resolves). */
export async function rejection(p: Promise<unknown>): Promise<SvcError> {
  try {
    await p;
  } catch (err) {
    return err as SvcError;
  }
  throw new Error('expected a rejection');
}
