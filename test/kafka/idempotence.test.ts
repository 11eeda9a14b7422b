/**
 * Idempotent produce over a raw connection: InitProducerId, the sequence rules (duplicate,
 * out of order, stale epoch, unknown producer) and their survival across a SIGKILL.
 */
import { type NodeProcess, startNode } from '../helpers/node-process';
import { RawKafka } from './kafka-test-client';
import { batchOf, initProducerId, produce } from './raw-produce';

const OUT_OF_ORDER_SEQUENCE_NUMBER = 45;
const INVALID_PRODUCER_EPOCH = 47;
const UNKNOWN_PRODUCER_ID = 59;

async function createStream(node: NodeProcess, name: string): Promise<void> {
  const res = await fetch(`${node.url}/${name}`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } });
  expect(res.status).toBe(201);
  // The listener's topic index rebuilds on a miss at most every 250 ms (src/kafka-wire/topics.ts).
  await new Promise((r) => setTimeout(r, 300));
}

async function nextSeq(node: NodeProcess, name: string): Promise<string | null> {
  return (await fetch(`${node.url}/${name}`, { method: 'HEAD' })).headers.get('svc-next-seq');
}

describe('idempotent Kafka producers', () => {
  let node: NodeProcess;
  let k: RawKafka;

  beforeAll(async () => {
    node = await startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1'] });
    k = await RawKafka.connect(node.kafka);
  });
  afterAll(async () => {
    k?.close();
    await node.stop();
  });

  test('InitProducerId hands out a new producer id with epoch 0 each time', async () => {
    const a = await initProducerId(k);
    const b = await initProducerId(k);
    expect(a).toMatchObject({ errorCode: 0, producerEpoch: 0 });
    expect(b).toMatchObject({ errorCode: 0, producerEpoch: 0 });
    expect(a.producerId).toBeGreaterThanOrEqual(0n);
    expect(b.producerId).not.toBe(a.producerId);
  });

  test('acknowledges a repeated batch with its original offset without writing it again', async () => {
    await createStream(node, 'idem-dup');
    const { producerId: id } = await initProducerId(k);
    expect(await produce(k, 'idem-dup', batchOf(['a', 'b', 'c'], { id, epoch: 0, seq: 0 }))).toMatchObject({ errorCode: 0, baseOffset: 0n });
    expect(await produce(k, 'idem-dup', batchOf(['d'], { id, epoch: 0, seq: 3 }))).toMatchObject({ errorCode: 0, baseOffset: 3n });
    // The retry of the first batch: the original offset, nothing written.
    expect(await produce(k, 'idem-dup', batchOf(['a', 'b', 'c'], { id, epoch: 0, seq: 0 }))).toMatchObject({ errorCode: 0, baseOffset: 0n });
    expect(await nextSeq(node, 'idem-dup')).toBe('4');
  });

  test('refuses a sequence gap with OUT_OF_ORDER_SEQUENCE_NUMBER', async () => {
    await createStream(node, 'idem-gap');
    const { producerId: id } = await initProducerId(k);
    expect((await produce(k, 'idem-gap', batchOf(['a', 'b'], { id, epoch: 0, seq: 0 }))).errorCode).toBe(0);
    expect((await produce(k, 'idem-gap', batchOf(['x'], { id, epoch: 0, seq: 5 }))).errorCode).toBe(OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(await nextSeq(node, 'idem-gap')).toBe('2');
  });

  test('refuses a stale producer epoch with INVALID_PRODUCER_EPOCH', async () => {
    await createStream(node, 'idem-epoch');
    const { producerId: id } = await initProducerId(k);
    expect((await produce(k, 'idem-epoch', batchOf(['a'], { id, epoch: 0, seq: 0 }))).errorCode).toBe(0);
    expect((await produce(k, 'idem-epoch', batchOf(['b'], { id, epoch: 1, seq: 0 }))).errorCode).toBe(0);
    expect((await produce(k, 'idem-epoch', batchOf(['c'], { id, epoch: 0, seq: 1 }))).errorCode).toBe(INVALID_PRODUCER_EPOCH);
    expect(await nextSeq(node, 'idem-epoch')).toBe('2');
  });

  test('refuses a producer the partition does not know, starting past sequence 0, with UNKNOWN_PRODUCER_ID', async () => {
    await createStream(node, 'idem-unknown');
    const { producerId: id } = await initProducerId(k);
    expect((await produce(k, 'idem-unknown', batchOf(['a'], { id, epoch: 0, seq: 7 }))).errorCode).toBe(UNKNOWN_PRODUCER_ID);
    expect(await nextSeq(node, 'idem-unknown')).toBe('0');
  });

  test('keeps producer state across a SIGKILL: a retry is still a duplicate and the next sequence still follows', async () => {
    await createStream(node, 'idem-crash');
    const { producerId: id } = await initProducerId(k);
    expect(await produce(k, 'idem-crash', batchOf(['a', 'b'], { id, epoch: 0, seq: 0 }))).toMatchObject({ errorCode: 0, baseOffset: 0n });
    expect(await produce(k, 'idem-crash', batchOf(['c', 'd'], { id, epoch: 0, seq: 2 }))).toMatchObject({ errorCode: 0, baseOffset: 2n });
    k.close();
    await node.kill();
    node = await startNode({ dataDir: node.dataDir, args: ['--no-admin', '--shards', '2', '--shard-workers', '1'] });
    k = await RawKafka.connect(node.kafka);
    expect(await produce(k, 'idem-crash', batchOf(['c', 'd'], { id, epoch: 0, seq: 2 }))).toMatchObject({ errorCode: 0, baseOffset: 2n });
    expect((await produce(k, 'idem-crash', batchOf(['z'], { id, epoch: 0, seq: 9 }))).errorCode).toBe(OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(await produce(k, 'idem-crash', batchOf(['e'], { id, epoch: 0, seq: 4 }))).toMatchObject({ errorCode: 0, baseOffset: 4n });
    const body = (await (await fetch(`${node.url}/idem-crash`)).json()) as Array<{ body: string }>;
    expect(body.map((r) => r.body)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });
});
