/**
 * kafkajs 2.2.4 against a node started by the test: admin (create, list, delete topics),
 * produce with acks=1 and acks=-1, a consumer reading from the earliest offset (no group: the
 * node has no group coordinator yet, so it reads with Fetch directly through a simple loop of
 * Metadata + ListOffsets + Fetch), and ListOffsets by timestamp.
 */
import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { fetchAll } from './kafka-test-client';

describe('kafkajs 2.2.4 against the Kafka listener', () => {
  let node: NodeProcess;
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;

  beforeAll(async () => {
    node = await startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1'] });
    kafka = new Kafka({ clientId: 'svc-test', brokers: [node.kafka], logLevel: logLevel.NOTHING, retry: { retries: 2 } });
    admin = kafka.admin();
    await admin.connect();
    producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
  });
  afterAll(async () => {
    await producer?.disconnect();
    await admin?.disconnect();
    await node.stop();
  });

  test('creates a topic, lists it with a stable topic id, and refuses to create it twice', async () => {
    expect(await admin.createTopics({ topics: [{ topic: 'kjs-create', numPartitions: 3 }] })).toBe(true);
    expect(await admin.listTopics()).toContain('kjs-create');
    const md = await admin.fetchTopicMetadata({ topics: ['kjs-create'] });
    expect(md.topics[0]!.partitions.map((p) => p.partitionId).sort()).toEqual([0, 1, 2]);
    expect(md.topics[0]!.partitions.every((p) => p.leader === 1)).toBe(true);
    expect(await admin.createTopics({ topics: [{ topic: 'kjs-create' }] })).toBe(false);
    // Partitions beyond 0 are the streams /T/1, /T/2 with the topic set explicitly.
    const head = await fetch(`${node.url}/kjs-create/2`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('svc-kafka-topic')).toBe('kjs-create');
  });

  test('produces with acks=1 and acks=-1 and reads every record back from the earliest offset', async () => {
    await admin.createTopics({ topics: [{ topic: 'kjs-produce' }] });
    const first = await producer.send({ topic: 'kjs-produce', acks: 1, messages: [{ key: 'k1', value: 'one', headers: { h: 'x' } }, { value: 'two' }] });
    expect(first[0]).toMatchObject({ topicName: 'kjs-produce', partition: 0, errorCode: 0, baseOffset: '0' });
    const second = await producer.send({ topic: 'kjs-produce', acks: -1, messages: [{ key: 'k3', value: 'three' }] });
    expect(second[0]).toMatchObject({ baseOffset: '2' });
    const records = await fetchAll(node.kafka, 'kjs-produce', 0, 0n);
    expect(records.map((r) => [r.offset, r.key, r.value, r.headers])).toEqual([
      [0n, 'k1', 'one', { h: 'x' }],
      [1n, null, 'two', {}],
      [2n, 'k3', 'three', {}],
    ]);
  });

  test('consumes from the earliest offset with a partition assignment of its own', async () => {
    await admin.createTopics({ topics: [{ topic: 'kjs-consume' }] });
    await producer.send({ topic: 'kjs-consume', acks: -1, messages: Array.from({ length: 25 }, (_, i) => ({ value: `m${i}` })) });
    const records = await fetchAll(node.kafka, 'kjs-consume', 0, 0n);
    expect(records.map((r) => r.value)).toEqual(Array.from({ length: 25 }, (_, i) => `m${i}`));
    // From the middle: the first batch holds earlier records too; the client skips them.
    expect((await fetchAll(node.kafka, 'kjs-consume', 0, 20n)).map((r) => r.offset)).toEqual([20n, 21n, 22n, 23n, 24n]);
  });

  test('answers ListOffsets for the earliest, the latest and a timestamp', async () => {
    await admin.createTopics({ topics: [{ topic: 'kjs-offsets' }] });
    await producer.send({ topic: 'kjs-offsets', messages: [{ value: 'a', timestamp: '1000' }, { value: 'b', timestamp: '2000' }] });
    await producer.send({ topic: 'kjs-offsets', messages: [{ value: 'c', timestamp: '3000' }] });
    expect(await admin.fetchTopicOffsets('kjs-offsets')).toEqual([{ partition: 0, offset: '3', high: '3', low: '0' }]);
    expect(await admin.fetchTopicOffsetsByTimestamp('kjs-offsets', 1500)).toEqual([{ partition: 0, offset: '1' }]);
    expect(await admin.fetchTopicOffsetsByTimestamp('kjs-offsets', 2500)).toEqual([{ partition: 0, offset: '2' }]);
    // Past every record: Kafka answers -1, which kafkajs turns into the latest offset.
    expect(await admin.fetchTopicOffsetsByTimestamp('kjs-offsets', 9000)).toEqual([{ partition: 0, offset: '3' }]);
  });

  test('deletes a topic and its partition streams', async () => {
    await admin.createTopics({ topics: [{ topic: 'kjs-delete', numPartitions: 2 }] });
    await admin.deleteTopics({ topics: ['kjs-delete'] });
    expect(await admin.listTopics()).not.toContain('kjs-delete');
    expect((await fetch(`${node.url}/kjs-delete`, { method: 'HEAD' })).status).toBe(404);
    expect((await fetch(`${node.url}/kjs-delete/1`, { method: 'HEAD' })).status).toBe(404);
  });

  test('refuses to produce to a topic that does not exist', async () => {
    await expect(producer.send({ topic: 'kjs-missing', acks: 1, messages: [{ value: 'x' }] })).rejects.toThrow();
  });
});
