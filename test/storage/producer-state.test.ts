/**
 * White-box tests of idempotent producer state in one shard (no threads, real segment files,
 * in-memory index twin): it is rebuilt from the batch headers by log replay, restored from the
 * catalog after a checkpoint, and bounded per stream.
 */
import * as path from 'node:path';
import { type SvcError } from '../../src/errors';
import { type AppendResult, type ProducerParams } from '../../src/shards/types';
import { type KvStore } from '../../src/shards/worker/kv-store';
import { openMemoryStore } from '../../src/shards/worker/memory-store';
import { HTTP_PRODUCER_ID_BASE, producerIdOf } from '../../src/shards/worker/producers';
import { SegmentLog } from '../../src/shards/worker/segment-log';
import { type Reply, Shard } from '../../src/shards/worker/shard';
import { decodeRecords, readBatchHeader } from '../../src/util/record-batch';
import { tempDir } from '../helpers/node-process';

const rec = (s: string) => ({ key: null, value: Buffer.from(s), headers: null });

function call<T>(f: (reply: Reply<T>) => void, shard: Shard): Promise<T> {
  return new Promise((resolve, reject) => {
    f((err: SvcError | null, r?: T) => (err ? reject(err) : resolve(r as T)));
    shard.flush();
  });
}

function open(dir: string, store: KvStore, maxProducersPerStream?: number): Shard {
  return new Shard(store, SegmentLog.open(path.join(dir, 'log'), 1 << 20), {
    shardId: 0,
    shardCount: 1,
    maxChunkBytes: 1 << 20,
    limits: { maxRecordBytes: 1 << 20, maxBatchRecords: 1000 },
    maxProducersPerStream,
  });
}

async function create(shard: Shard, name: string): Promise<void> {
  await call((r) => shard.create({ name, contentType: 'text/plain', ttlSeconds: null, expiresAtMs: null, closed: false, records: [] }, r), shard);
}

function append(shard: Shard, name: string, body: string, producer: ProducerParams): Promise<AppendResult> {
  return call<AppendResult>((reply) => shard.append({ name, origin: 'http', payload: { kind: 'records', records: [rec(body)] }, contentType: null, close: false, producer }, reply), shard);
}

function bodies(shard: Shard, name: string): string[] {
  const r = shard.read({ name, seq: 0, count: 100000, bytes: 1 << 30, format: 'json' });
  return (JSON.parse(r.body.toString()) as Array<{ body: string }>).map((x) => x.body);
}

const P = (seq: number, epoch = 0, id = 'producer-a'): ProducerParams => ({ id, epoch, seq });

describe('idempotent producer state in a shard', () => {
  it('derives a 63-bit producer id with bit 62 set from the producer id string', () => {
    const a = producerIdOf('producer-a');
    expect(a >= HTTP_PRODUCER_ID_BASE).toBe(true);
    expect(a < HTTP_PRODUCER_ID_BASE * 2n).toBe(true);
    expect(producerIdOf('producer-a')).toBe(a);
    expect(producerIdOf('producer-b')).not.toBe(a);
  });

  it('writes the producer id, epoch and sequence into the batch header', async () => {
    const dir = tempDir();
    const shard = open(dir, openMemoryStore());
    await create(shard, '/h');
    await append(shard, '/h', 'x', P(0, 7));
    const r = shard.read({ name: '/h', seq: 0, count: 10, bytes: 1 << 20, format: 'binary' });
    const h = readBatchHeader(r.body, 0);
    expect({ id: h.producerId, epoch: h.producerEpoch, seq: h.baseSequence }).toEqual({ id: producerIdOf('producer-a'), epoch: 7, seq: 0 });
    expect(decodeRecords(r.body, 0).map((x) => x.value!.toString())).toEqual(['x']);
    await shard.close();
  });

  it('rebuilds producer state by replaying the log into an empty index, so a retry is still a duplicate', async () => {
    const dir = tempDir();
    const shard = open(dir, openMemoryStore());
    await create(shard, '/a');
    const acks: AppendResult[] = [];
    for (let i = 0; i < 8; i++) acks.push(await append(shard, '/a', `r${i}`, P(i)));
    // Reopen over the same files with an empty index: producer state comes back from the batch headers.
    const fresh = open(dir, openMemoryStore());
    const dup = await append(fresh, '/a', 'r7-again', P(7));
    expect(dup).toMatchObject({ duplicate: true, startSeq: acks[7]!.startSeq, nextSeq: acks[7]!.nextSeq, timestamp: acks[7]!.timestamp });
    const old = await append(fresh, '/a', 'r1-again', P(1));
    expect(old).toMatchObject({ duplicate: true, startSeq: -1, nextSeq: -1 });
    await expect(append(fresh, '/a', 'gap', P(10))).rejects.toMatchObject({ code: 'conflict', outcome: { kind: 'sequence_gap', expectedSeq: 8, receivedSeq: 10 } });
    expect((await append(fresh, '/a', 'r8', P(8))).startSeq).toBe(8);
    expect(bodies(fresh, '/a')).toEqual([...Array.from({ length: 8 }, (_, i) => `r${i}`), 'r8']);
    await fresh.close();
  });

  it('restores producer state from the catalog when nothing needs replay', async () => {
    const dir = tempDir();
    const store = openMemoryStore();
    const shard = open(dir, store);
    await create(shard, '/c');
    const first = await append(shard, '/c', 'one', P(0, 3));
    await append(shard, '/c', 'two', P(1, 3));
    await shard.close();
    const warm = open(dir, store);
    expect(warm.recovery.replayedFrames).toBe(0);
    expect(await append(warm, '/c', 'one-again', P(0, 3))).toMatchObject({ duplicate: true, startSeq: first.startSeq, nextSeq: first.nextSeq });
    await expect(append(warm, '/c', 'stale', P(2, 2))).rejects.toMatchObject({ code: 'producer_fenced', outcome: { kind: 'stale_epoch', currentEpoch: 3 } });
    expect((await append(warm, '/c', 'three', P(2, 3))).startSeq).toBe(2);
    await warm.close();
  });

  it('combines the checkpointed table with producer batches replayed after the checkpoint', async () => {
    const dir = tempDir();
    const store = openMemoryStore();
    const shard = open(dir, store);
    await create(shard, '/m');
    for (let i = 0; i < 3; i++) await append(shard, '/m', `r${i}`, P(i));
    await shard.close(); // checkpoint: the catalog holds seqs 0..2
    // The index as of that checkpoint, as a crash before the next checkpoint would leave it.
    const snapshot = openMemoryStore();
    snapshot.write(store.scan(Buffer.alloc(0)).map(([key, value]) => ({ type: 'put' as const, key, value })), false);
    const again = open(dir, store);
    for (let i = 3; i < 6; i++) await append(again, '/m', `r${i}`, P(i));
    // Seqs 3..5 are only in the log as far as the snapshot knows.
    const recovered = open(dir, snapshot);
    expect(recovered.recovery.replayedFrames).toBeGreaterThanOrEqual(3);
    expect(await append(recovered, '/m', 'r5-again', P(5))).toMatchObject({ duplicate: true, startSeq: 5, nextSeq: 6 });
    expect(await append(recovered, '/m', 'r2-again', P(2))).toMatchObject({ duplicate: true, startSeq: 2, nextSeq: 3 });
    expect((await append(recovered, '/m', 'r6', P(6))).startSeq).toBe(6);
    expect(bodies(recovered, '/m')).toEqual(Array.from({ length: 7 }, (_, i) => `r${i}`));
    await recovered.close();
  });

  it('keeps at most the configured number of producers per stream, evicting the least recently written, also on replay', async () => {
    const dir = tempDir();
    const shard = open(dir, openMemoryStore(), 2);
    await create(shard, '/e');
    await append(shard, '/e', 'a0', P(0, 0, 'a'));
    await append(shard, '/e', 'b0', P(0, 0, 'b'));
    await append(shard, '/e', 'a1', P(1, 0, 'a')); // a is now the most recently written
    await append(shard, '/e', 'c0', P(0, 0, 'c')); // evicts b
    // b is a new producer again: it must start at 0, and its old seq 0 is not recognised.
    await expect(append(shard, '/e', 'b1', P(1, 0, 'b'))).rejects.toMatchObject({ code: 'conflict', outcome: { kind: 'unknown_producer', expectedSeq: 0, receivedSeq: 1 } });
    expect(await append(shard, '/e', 'a1-again', P(1, 0, 'a'))).toMatchObject({ duplicate: true, startSeq: 2 });
    const fresh = open(dir, openMemoryStore(), 2);
    await expect(append(fresh, '/e', 'b1', P(1, 0, 'b'))).rejects.toMatchObject({ code: 'conflict' });
    expect(await append(fresh, '/e', 'c0-again', P(0, 0, 'c'))).toMatchObject({ duplicate: true, startSeq: 3 });
    await fresh.close();
  });

  it('refuses a binary batch whose producer id is in the range reserved for Svc-Producer-Id', async () => {
    const dir = tempDir();
    const shard = open(dir, openMemoryStore());
    await create(shard, '/b');
    const { encodeRecordBatch } = await import('../../src/util/record-batch');
    const batch = encodeRecordBatch({ baseOffset: 0, baseTimestamp: 1, records: [rec('x')], producerId: producerIdOf('p'), producerEpoch: 0, baseSequence: 0 });
    await expect(
      call((reply) => shard.append({ name: '/b', origin: 'http', payload: { kind: 'batches', body: batch }, contentType: null, close: false }, reply), shard),
    ).rejects.toMatchObject({ code: 'invalid_batch' });
    const ok = encodeRecordBatch({ baseOffset: 0, baseTimestamp: 1, records: [rec('y')], producerId: 42n, producerEpoch: 0, baseSequence: 0 });
    await call((reply) => shard.append({ name: '/b', origin: 'http', payload: { kind: 'batches', body: ok }, contentType: null, close: false }, reply), shard);
    expect(bodies(shard, '/b')).toEqual(['y']);
    await shard.close();
  });

  it('refuses with named outcomes: a Kafka repeat older than the acknowledgements kept, a new epoch past 0, a sealed stream', async () => {
    const dir = tempDir();
    const shard = open(dir, openMemoryStore());
    await create(shard, '/k');
    const { encodeRecordBatch } = await import('../../src/util/record-batch');
    const kafka = (seq: number, epoch = 0): Promise<AppendResult> => {
      const batch = encodeRecordBatch({ baseOffset: 0, baseTimestamp: 1, records: [rec(`k${seq}`)], producerId: 7n, producerEpoch: epoch, baseSequence: seq });
      return call<AppendResult>((reply) => shard.append({ name: '/k', origin: 'kafka', payload: { kind: 'batches', body: batch }, contentType: null, close: false }, reply), shard);
    };
    for (let i = 0; i < 7; i++) await kafka(i);
    // Sequences 2..6 are remembered; 0 is a duplicate whose offsets are forgotten (Kafka: DUPLICATE_SEQUENCE_NUMBER).
    expect(await kafka(3)).toMatchObject({ duplicate: true, startSeq: 3 });
    await expect(kafka(0)).rejects.toMatchObject({ code: 'conflict', outcome: { kind: 'duplicate', receivedSeq: 0 } });
    await expect(kafka(1, 1)).rejects.toMatchObject({ code: 'conflict', outcome: { kind: 'invalid_epoch_seq', expectedSeq: 0, receivedSeq: 1 } });
    await expect(kafka(9)).rejects.toMatchObject({ code: 'conflict', outcome: { kind: 'sequence_gap', expectedSeq: 7, receivedSeq: 9 } });
    await create(shard, '/s');
    await append(shard, '/s', 'first', P(0));
    await call((reply) => shard.append({ name: '/s', origin: 'http', payload: { kind: 'records', records: [] }, contentType: null, close: true }, reply), shard);
    await expect(append(shard, '/s', 'late', P(1))).rejects.toMatchObject({ code: 'stream_closed', outcome: { kind: 'closed', producerSeq: 1 }, details: { next_seq: 1 } });
    await shard.close();
  });
});
