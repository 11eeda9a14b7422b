/**
 * kafkajs 2.2.4 producing: auto-create, an idempotent producer, gzip (built in) and snappy (the
 * kafkajs-snappy codec plugin, which writes plain snappy blocks), consumed back with kcat and read
 * over HTTP. (Topic create/delete and acks=1/-1 are in kafkajs.test.ts.)
 */
import { CompressionCodecs, CompressionTypes, Kafka, logLevel, type Producer } from 'kafkajs';
import SnappyCodec from 'kafkajs-snappy';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { kcatConsume } from './kcat';
import { servedBatches } from './stored-batches';

CompressionCodecs[CompressionTypes.Snappy] = SnappyCodec;

describe('kafkajs 2.2.4 producing to the Kafka listener', () => {
  let node: NodeProcess;
  let kafka: Kafka;
  let producer: Producer;

  beforeAll(async () => {
    node = await startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1'] });
    kafka = new Kafka({ clientId: 'svc-test-produce', brokers: [node.kafka], logLevel: logLevel.NOTHING, retry: { retries: 3 } });
    producer = kafka.producer({ idempotent: true, allowAutoTopicCreation: true });
    await producer.connect();
  });
  afterAll(async () => {
    await producer?.disconnect();
    await node.stop();
  });

  test('auto-creates a topic on produce', async () => {
    const r = await producer.send({ topic: 'kjp-auto', acks: -1, messages: [{ key: 'a', value: 'auto' }] });
    expect(r[0]).toMatchObject({ topicName: 'kjp-auto', errorCode: 0, baseOffset: '0' });
    expect((await kcatConsume(node.kafka, 'kjp-auto')).map((l) => l.split('|').slice(0, 3))).toEqual([['0', 'a', 'auto']]);
  });

  test.each([
    ['gzip', CompressionTypes.GZIP, 1],
    ['snappy', CompressionTypes.Snappy, 2],
  ] as const)('an idempotent producer with %s: batches stored compressed with its producer id, consumed back by kcat, read over HTTP', async (name, compression, codec) => {
    const topic = `kjp-${name}`;
    const values = Array.from({ length: 60 }, (_, i) => `${name}-${i}-` + 'lorem ipsum '.repeat(10));
    for (let round = 0; round < 3; round++) {
      const r = await producer.send({
        topic,
        acks: -1,
        compression,
        messages: values.slice(round * 20, round * 20 + 20).map((v, i) => ({ key: `k${round * 20 + i}`, value: v, headers: { round: String(round) } })),
      });
      expect(r[0]).toMatchObject({ errorCode: 0, baseOffset: String(round * 20) });
    }
    const batches = await servedBatches(node.kafka, topic);
    expect(batches.map((b) => [b.baseOffset, b.codec, b.records])).toEqual([[0, codec, 20], [20, codec, 20], [40, codec, 20]]);
    expect(new Set(batches.map((b) => b.producerId)).size).toBe(1);
    expect(batches[0]!.producerId).toBeGreaterThanOrEqual(0n);
    const consumed = await kcatConsume(node.kafka, topic);
    expect(consumed.map((l) => l.split('|').slice(0, 4))).toEqual(values.map((v, i) => [String(i), `k${i}`, v, `round=${Math.floor(i / 20)}`]));
    const http = (await (await fetch(`${node.url}/${topic}?count=100`)).json()) as Array<{ key: string; body: string }>;
    expect(http.map((r) => [r.key, r.body])).toEqual(values.map((v, i) => [`k${i}`, v]));
  });
});
