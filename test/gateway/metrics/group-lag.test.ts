/**
 * svc_kafka_consumer_group_lag (docs/metrics.md) against a real node and a real kafkajs consumer
 * group: after the group commits what it consumed the lag is 0 on every partition; records
 * produced while it is paused show as lag on exactly the partitions they went to; the series of
 * a deleted group leave the scrape.
 */
import { Kafka, logLevel } from 'kafkajs';
import { type NodeProcess, startNode } from '../../helpers/node-process';

let node: NodeProcess;

function lagOf(text: string, group: string, topic: string, partition: number): number | null {
  const want = `svc_kafka_consumer_group_lag{group="${group}",topic="${topic}",partition="${partition}"}`;
  for (const line of text.split('\n')) {
    const sp = line.lastIndexOf(' ');
    if (line.slice(0, sp) === want) return Number(line.slice(sp + 1));
  }
  return null;
}

const scrape = async (): Promise<string> => (await fetch(`${node.adminUrl!}/metrics`)).text();

async function until(what: () => Promise<boolean>, ms = 10000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  node = await startNode();
});
afterAll(async () => {
  await node.stop();
});

test('consumer-group lag per partition follows commits and produced records', async () => {
  expect(await scrape()).not.toContain('svc_kafka_consumer_group_lag{');
  const kafka = new Kafka({ clientId: 'lag-test', brokers: [node.kafka], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'lag-k', numPartitions: 2 }] });
  const producer = kafka.producer();
  await producer.connect();
  // 4 records to partition 0, 2 to partition 1.
  await producer.send({ topic: 'lag-k', acks: -1, messages: [0, 0, 0, 0, 1, 1].map((partition, i) => ({ partition, value: `v${i}` })) });

  const consumer = kafka.consumer({ groupId: 'lag-group', sessionTimeout: 10000, heartbeatInterval: 1000 });
  await consumer.connect();
  await consumer.subscribe({ topic: 'lag-k', fromBeginning: true });
  let seen = 0;
  await new Promise<void>((resolve) => {
    void consumer.run({ autoCommitThreshold: 1, eachMessage: async () => void (++seen === 6 && resolve()) });
  });
  consumer.pause([{ topic: 'lag-k' }]);
  await until(async () => {
    const t = await scrape();
    return lagOf(t, 'lag-group', 'lag-k', 0) === 0 && lagOf(t, 'lag-group', 'lag-k', 1) === 0;
  });

  // 3 more to partition 1 while the group is paused: lag 3 there, still 0 on partition 0.
  await producer.send({ topic: 'lag-k', acks: -1, messages: [1, 1, 1].map((partition, i) => ({ partition, value: `late${i}` })) });
  const text = await scrape();
  expect(lagOf(text, 'lag-group', 'lag-k', 0)).toBe(0);
  expect(lagOf(text, 'lag-group', 'lag-k', 1)).toBe(3);

  await consumer.disconnect();
  await producer.disconnect();
  await admin.deleteGroups(['lag-group']);
  await admin.disconnect();
  expect(await scrape()).not.toContain('group="lag-group"');
});
