/**
 * Large Produce requests (64 KiB and more: a request frame with a buffer of its own, moved to the
 * shard worker and framed in place there; docs/kafka.md "What a produced megabyte costs"). Sent
 * over a raw socket in pieces cut at awkward places, they parse and store exactly the bytes sent;
 * the stored frames pass their CRC check after a restart; a damaged batch is still
 * CORRUPT_MESSAGE; a request with two partitions (whose batches share the frame's buffer) stores
 * both.
 */
import * as net from 'node:net';
import { decodeResponseHeader, encodeRequestHeader } from '../../src/kafka-wire/messages/header';
import { decodeProduceResponse, encodeProduceRequest } from '../../src/kafka-wire/messages/produce';
import { Reader } from '../../src/kafka-wire/protocol/reader';
import { Writer } from '../../src/kafka-wire/protocol/writer';
import { CRC_POS, decodeRecords, splitBatches } from '../../src/util/record-batch';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { batchOf } from './raw-produce';

/** A Produce v9 request frame (size prefix included), acks=-1. */
function produceFrame(correlationId: number, partitions: Array<{ topic: string; index: number; records: Buffer }>): Buffer {
  const w = new Writer();
  const size = w.reserveInt32();
  encodeRequestHeader(w, { requestApiKey: 0, requestApiVersion: 9, correlationId, clientId: 'large' }, 2);
  const topics = [...new Set(partitions.map((p) => p.topic))];
  encodeProduceRequest(w, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: topics.map((name) => ({ name, partitionData: partitions.filter((p) => p.topic === name).map((p) => ({ index: p.index, records: p.records })) })) }, 9);
  w.int32At(size, w.length - 4);
  return Buffer.from(w.toBuffer());
}

/** Send `bytes` in pieces of the given lengths (the rest at the end), a few ms apart, so they arrive as separate reads; the response frames of `expected` requests. */
function send(broker: string, bytes: Buffer, pieces: number[], expected: number): Promise<Buffer[]> {
  const [host, port] = broker.split(':') as [string, string];
  return new Promise((resolve, reject) => {
    let got = Buffer.alloc(0);
    const frames: Buffer[] = [];
    const s = net.connect({ host, port: Number(port) }, async () => {
      s.setNoDelay(true);
      let at = 0;
      for (const n of [...pieces, bytes.length]) {
        if (at >= bytes.length) break;
        s.write(bytes.subarray(at, Math.min(bytes.length, at + n)));
        at += n;
        await new Promise((r) => setTimeout(r, 3));
      }
    });
    s.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
      while (got.length >= 4 && got.length >= 4 + got.readInt32BE(0)) {
        frames.push(got.subarray(4, 4 + got.readInt32BE(0)));
        got = got.subarray(4 + got.readInt32BE(0));
      }
      if (frames.length === expected) {
        s.destroy();
        resolve(frames);
      }
    });
    s.once('error', reject);
    s.once('close', () => reject(new Error(`connection closed after ${frames.length} of ${expected} responses`)));
  });
}

/** The partition answer of a Produce v9 response frame (the response header v1 is a correlation id and empty tags). */
function answer(frame: Buffer): { correlationId: number; errorCode: number; baseOffset: bigint } {
  const r = new Reader(frame, 0);
  const { correlationId } = decodeResponseHeader(r, 1);
  const p = decodeProduceResponse(r, 9).responses[0]!.partitionResponses[0]!;
  return { correlationId, errorCode: p.errorCode, baseOffset: p.baseOffset };
}

/** Every record value stored in `stream`, read as stored batches. */
async function values(node: NodeProcess, stream: string): Promise<string[]> {
  const out: string[] = [];
  for (let seq = 0; ; ) {
    const res = await fetch(`${node.url}/${stream}?format=binary&seq=${seq}&count=100000&bytes=16777216`);
    expect(res.status).toBe(200);
    const body = Buffer.from(await res.arrayBuffer());
    const batches = splitBatches(body);
    if (!Array.isArray(batches)) throw batches;
    for (const b of batches) for (const r of decodeRecords(b, 0, seq)) out.push(r.value!.toString());
    const next = Number(res.headers.get('svc-next-seq'));
    if (res.headers.get('svc-up-to-date') === 'true' || next === seq) return out;
    seq = next;
  }
}

const valuesOf = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${i}-${'v'.repeat(90)}`);

describe('large Produce requests', () => {
  let node: NodeProcess;

  beforeAll(async () => {
    node = await startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1'] });
    for (const s of ['big-a', 'big-b', 'big-c', 'big-d']) expect((await fetch(`${node.url}/${s}`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } })).status).toBe(201);
  });
  afterAll(async () => {
    await node.stop();
  });

  test('a ~200 KB request cut inside its size prefix, at 64 KiB reads and at odd places parses and stores exactly what was sent, each time', async () => {
    const want: string[] = [];
    const cuts = [[1], [3], [4], [5], [2, 2, 65536], [65536, 65536], [1000, 7, 99_999], [150_000]];
    for (let i = 0; i < cuts.length; i++) {
      const vals = valuesOf(`cut${i}`, 2000);
      const frame = produceFrame(100 + i, [{ topic: 'big-a', index: 0, records: batchOf(vals) }]);
      expect(frame.length).toBeGreaterThan(150_000);
      const [res] = await send(node.kafka, frame, cuts[i]!, 1);
      expect(answer(res!)).toEqual({ correlationId: 100 + i, errorCode: 0, baseOffset: BigInt(want.length) });
      want.push(...vals);
    }
    expect(await values(node, 'big-a')).toEqual(want);
  });

  test('two large requests and a small one in one write are answered in order', async () => {
    const a = valuesOf('pipe-a', 1500);
    const b = valuesOf('pipe-b', 1500);
    const c = valuesOf('pipe-c', 3);
    const bytes = Buffer.concat([
      produceFrame(1, [{ topic: 'big-b', index: 0, records: batchOf(a) }]),
      produceFrame(2, [{ topic: 'big-b', index: 0, records: batchOf(b) }]),
      produceFrame(3, [{ topic: 'big-b', index: 0, records: batchOf(c) }]),
    ]);
    const res = await send(node.kafka, bytes, [], 3);
    expect(res.map(answer)).toEqual([
      { correlationId: 1, errorCode: 0, baseOffset: 0n },
      { correlationId: 2, errorCode: 0, baseOffset: 1500n },
      { correlationId: 3, errorCode: 0, baseOffset: 3000n },
    ]);
    expect(await values(node, 'big-b')).toEqual([...a, ...b, ...c]);
  });

  test('a large batch with a bad CRC, or a byte changed in its records, is CORRUPT_MESSAGE and stores nothing', async () => {
    const badCrc = batchOf(valuesOf('bad', 1500));
    badCrc.writeUInt32BE((badCrc.readUInt32BE(CRC_POS) ^ 1) >>> 0, CRC_POS);
    const flipped = batchOf(valuesOf('flip', 1500));
    const mid = Math.floor(flipped.length / 2);
    flipped[mid] = flipped[mid]! ^ 0x01;
    const res = await send(node.kafka, Buffer.concat([produceFrame(7, [{ topic: 'big-c', index: 0, records: badCrc }]), produceFrame(8, [{ topic: 'big-c', index: 0, records: flipped }])]), [70_000], 2);
    expect(res.map(answer)).toEqual([
      { correlationId: 7, errorCode: 2, baseOffset: -1n },
      { correlationId: 8, errorCode: 2, baseOffset: -1n },
    ]);
    expect(await values(node, 'big-c')).toEqual([]);
  });

  test('a large request for two partitions stores both; every frame passes its CRC check after a restart', async () => {
    const one = valuesOf('p-one', 1200);
    const two = valuesOf('p-two', 1200);
    const [res] = await send(node.kafka, produceFrame(9, [{ topic: 'big-c', index: 0, records: batchOf(one) }, { topic: 'big-d', index: 0, records: batchOf(two) }]), [4, 80_000], 1);
    const r = new Reader(res!, 0);
    decodeResponseHeader(r, 1);
    const answers = decodeProduceResponse(r, 9).responses.map((t) => [t.name, t.partitionResponses[0]!.errorCode]);
    expect(answers.sort()).toEqual([['big-c', 0], ['big-d', 0]]);
    const before = { a: await values(node, 'big-a'), c: await values(node, 'big-c'), d: await values(node, 'big-d') };
    expect(before.c).toEqual(one);
    expect(before.d).toEqual(two);
    const dataDir = node.dataDir;
    expect(await node.stop()).toBe(0);
    node = await startNode({ dataDir, args: ['--no-admin', '--shards', '2', '--shard-workers', '1'] });
    // Reads check every frame's CRC (data_corrupt otherwise); the in-place frames' CRCs were combined, not computed.
    expect({ a: await values(node, 'big-a'), c: await values(node, 'big-c'), d: await values(node, 'big-d') }).toEqual(before);
  });
});
