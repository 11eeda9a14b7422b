/**
 * kafkajs 2.2.4 consumer groups against a node started by the test: consuming from the earliest
 * offset, the latest and a timestamp; a group of two members that rebalances when one leaves;
 * committed offsets that survive a restart (SIGTERM) and a crash (SIGKILL) of the node; describe
 * and list groups.
 */
import { type Consumer, type EachMessagePayload, Kafka, logLevel } from 'kafkajs';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { waitFor } from './group-test-helpers';

const NODE_ARGS = ['--no-admin', '--shards', '2', '--shard-workers', '1'];

function client(node: NodeProcess): Kafka {
  return new Kafka({ clientId: 'svc-groups', brokers: [node.kafka], logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 100 } });
}

/** A consumer of `group` that records every message it gets. */
async function consume(kafka: Kafka, group: string, topic: string, fromBeginning: boolean, options: { autoCommit?: boolean; restartOnFailure?: boolean } = {}): Promise<{ consumer: Consumer; got: string[]; offsets: string[]; fetches: () => number }> {
  const restart = options.restartOnFailure ?? true;
  const consumer = kafka.consumer({ groupId: group, sessionTimeout: 10_000, heartbeatInterval: 500, maxWaitTimeInMs: 200, retry: { retries: 5, restartOnFailure: async () => restart } });
  let fetches = 0;
  consumer.on(consumer.events.FETCH, () => fetches++);
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning });
  const got: string[] = [];
  const offsets: string[] = [];
  await consumer.run({
    autoCommit: options.autoCommit ?? true,
    eachMessage: async ({ message }: EachMessagePayload) => {
      got.push(message.value!.toString());
      offsets.push(message.offset);
    },
  });
  return { consumer, got, offsets, fetches: () => fetches };
}

describe('kafkajs 2.2.4 consumer groups', () => {
  let node: NodeProcess;
  let kafka: Kafka;

  beforeAll(async () => {
    node = await startNode({ args: NODE_ARGS });
    kafka = client(node);
  });
  afterAll(async () => {
    await node?.stop();
  });

  test('a group consumes from the earliest offset, a new group from the latest, and a seek by timestamp starts there', async () => {
    const admin = kafka.admin();
    await admin.connect();
    const producer = kafka.producer();
    await producer.connect();
    try {
      await admin.createTopics({ topics: [{ topic: 'kjs-g-pos' }] });
      await producer.send({ topic: 'kjs-g-pos', messages: [{ value: 'a', timestamp: '1000' }, { value: 'b', timestamp: '2000' }, { value: 'c', timestamp: '3000' }] });

      const early = await consume(kafka, 'kjs-g-earliest', 'kjs-g-pos', true);
      await waitFor(() => early.got.length >= 3, 'earliest consumer got 3 records');
      expect(early.got).toEqual(['a', 'b', 'c']);

      const late = await consume(kafka, 'kjs-g-latest', 'kjs-g-pos', false);
      // The latest offset is resolved before the member's first fetch: records produced after it arrive, none before.
      await waitFor(() => late.fetches() > 0, 'latest consumer fetched once');
      await producer.send({ topic: 'kjs-g-pos', messages: [{ value: 'd', timestamp: '4000' }] });
      await waitFor(() => late.got.length >= 1, 'latest consumer got the new record');
      expect(late.got).toEqual(['d']);
      expect(late.offsets).toEqual(['3']);

      const [byTime] = await admin.fetchTopicOffsetsByTimestamp('kjs-g-pos', 2500);
      expect(byTime).toEqual({ partition: 0, offset: '2' });
      const seek = await consume(kafka, 'kjs-g-time', 'kjs-g-pos', false);
      seek.consumer.seek({ topic: 'kjs-g-pos', partition: 0, offset: byTime!.offset });
      await waitFor(() => seek.got.length >= 2, 'timestamp consumer got 2 records');
      expect(seek.got).toEqual(['c', 'd']);
      await Promise.all([early.consumer.disconnect(), late.consumer.disconnect(), seek.consumer.disconnect()]);
    } finally {
      await producer.disconnect();
      await admin.disconnect();
    }
  });

  test('two members share the partitions, and the one that stays gets all of them when the other leaves', async () => {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'kjs-g-share', numPartitions: 4 }] });
    const assignments = new Map<string, number[]>();
    const member = async (name: string): Promise<Consumer> => {
      const c = kafka.consumer({ groupId: 'kjs-g-share', sessionTimeout: 10_000, heartbeatInterval: 300, maxWaitTimeInMs: 200 });
      c.on(c.events.GROUP_JOIN, (e) => assignments.set(name, [...(e.payload.memberAssignment['kjs-g-share'] ?? [])].sort()));
      await c.connect();
      await c.subscribe({ topic: 'kjs-g-share', fromBeginning: true });
      await c.run({ eachMessage: async () => undefined });
      return c;
    };
    const a = await member('a');
    const b = await member('b');
    try {
      await waitFor(() => (assignments.get('a')?.length ?? 0) > 0 && (assignments.get('b')?.length ?? 0) > 0 && assignments.get('a')!.length + assignments.get('b')!.length === 4, 'both members have partitions', 30_000);
      expect([...assignments.get('a')!, ...assignments.get('b')!].sort()).toEqual([0, 1, 2, 3]);
      const described = (await admin.describeGroups(['kjs-g-share'])).groups[0]!;
      expect(described.members).toHaveLength(2);

      await b.disconnect();
      await waitFor(() => assignments.get('a')!.length === 4, 'the remaining member has every partition', 30_000);
      expect(assignments.get('a')).toEqual([0, 1, 2, 3]);
      await waitFor(async () => (await admin.describeGroups(['kjs-g-share'])).groups[0]!.members.length === 1, 'one member left in the group');
    } finally {
      await a.disconnect();
      await b.disconnect();
      await admin.disconnect();
    }
  });

  test('describes a running group and lists it with its protocol type', async () => {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'kjs-g-describe' }] });
    const c = await consume(kafka, 'kjs-g-describe', 'kjs-g-describe', true);
    try {
      await waitFor(async () => (await admin.describeGroups(['kjs-g-describe'])).groups[0]!.state === 'Stable', 'group stable');
      const g = (await admin.describeGroups(['kjs-g-describe'])).groups[0]!;
      expect(g).toMatchObject({ groupId: 'kjs-g-describe', errorCode: 0, protocolType: 'consumer', protocol: 'RoundRobinAssigner' });
      expect(g.members).toHaveLength(1);
      expect(g.members[0]!.clientId).toBe('svc-groups');
      expect(g.members[0]!.clientHost).toBe('/127.0.0.1');
      expect(g.members[0]!.memberAssignment.length).toBeGreaterThan(0);
      const listed = await admin.listGroups();
      expect(listed.groups).toContainEqual({ groupId: 'kjs-g-describe', protocolType: 'consumer' });
      expect((await admin.describeGroups(['kjs-g-nobody'])).groups[0]).toMatchObject({ groupId: 'kjs-g-nobody', state: 'Dead', members: [] });
    } finally {
      await c.consumer.disconnect();
      await admin.disconnect();
    }
    expect(await describeState(kafka, 'kjs-g-describe')).toBe('Empty');
  });

  test('an admin client sets the offsets of an empty group (a commit outside group management)', async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.createTopics({ topics: [{ topic: 'kjs-g-set', numPartitions: 2 }] });
      await admin.setOffsets({ groupId: 'kjs-g-set', topic: 'kjs-g-set', partitions: [{ partition: 0, offset: '4' }, { partition: 1, offset: '9' }] });
      const offsets = await admin.fetchOffsets({ groupId: 'kjs-g-set', topics: ['kjs-g-set'] });
      expect(offsets[0]!.partitions.sort((a, b) => a.partition - b.partition).map((p) => [p.partition, p.offset])).toEqual([[0, '4'], [1, '9']]);
      expect((await admin.listGroups()).groups.map((g) => g.groupId)).toContain('kjs-g-set');
    } finally {
      await admin.disconnect();
    }
  });
});

async function describeState(kafka: Kafka, group: string): Promise<string> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return (await admin.describeGroups([group])).groups[0]!.state;
  } finally {
    await admin.disconnect();
  }
}

describe('kafkajs 2.2.4 committed offsets across node restarts', () => {
  test('a group resumes at its committed offset after the node restarts on the same data directory', async () => {
    let node = await startNode({ args: NODE_ARGS });
    let kafka = client(node);
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'kjs-g-restart', numPartitions: 2 }] });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'kjs-g-restart', messages: Array.from({ length: 10 }, (_, i) => ({ value: `before-${i}`, partition: i % 2 })) });
    await producer.disconnect();
    await admin.disconnect();
    const first = await consume(kafka, 'kjs-g-resume', 'kjs-g-restart', true);
    await waitFor(() => first.got.length >= 10, 'first consumer got 10 records');
    await first.consumer.disconnect(); // commits what it consumed
    expect(await node.stop()).toBe(0);

    node = await startNode({ args: NODE_ARGS, dataDir: node.dataDir });
    try {
      kafka = client(node);
      const admin2 = kafka.admin();
      await admin2.connect();
      const committed = await admin2.fetchOffsets({ groupId: 'kjs-g-resume', topics: ['kjs-g-restart'] });
      expect(committed[0]!.partitions.sort((x, y) => x.partition - y.partition)).toEqual([
        { partition: 0, offset: '5', metadata: null },
        { partition: 1, offset: '5', metadata: null },
      ]);
      expect((await admin2.listGroups()).groups).toContainEqual({ groupId: 'kjs-g-resume', protocolType: 'consumer' });
      expect((await admin2.describeGroups(['kjs-g-resume'])).groups[0]).toMatchObject({ state: 'Empty', protocolType: 'consumer', members: [] });
      await admin2.disconnect();
      const p2 = kafka.producer();
      await p2.connect();
      await p2.send({ topic: 'kjs-g-restart', messages: [{ value: 'after-0', partition: 0 }, { value: 'after-1', partition: 1 }] });
      await p2.disconnect();
      const second = await consume(kafka, 'kjs-g-resume', 'kjs-g-restart', true);
      await waitFor(() => second.got.length >= 2, 'second consumer got the 2 new records');
      await new Promise((r) => setTimeout(r, 1000)); // anything re-delivered would arrive by now
      await second.consumer.disconnect();
      expect(second.got.sort()).toEqual(['after-0', 'after-1']);
    } finally {
      await node.stop();
    }
  });

  test('a node SIGKILLed right after acknowledging an OffsetCommit keeps the committed offset', async () => {
    let node = await startNode({ args: NODE_ARGS });
    let kafka = client(node);
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'kjs-g-kill' }] });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'kjs-g-kill', messages: Array.from({ length: 8 }, (_, i) => ({ value: `m${i}` })) });
    await producer.disconnect();
    const c = await consume(kafka, 'kjs-g-kill', 'kjs-g-kill', true, { autoCommit: false, restartOnFailure: false });
    await waitFor(() => c.got.length >= 8, 'consumer got 8 records');
    await c.consumer.commitOffsets([{ topic: 'kjs-g-kill', partition: 0, offset: '6' }]);
    await node.kill();
    // The clients' last requests go to a dead node: they fail, which is not what this test checks.
    await c.consumer.disconnect().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);

    node = await startNode({ args: NODE_ARGS, dataDir: node.dataDir });
    try {
      kafka = client(node);
      const admin2 = kafka.admin();
      await admin2.connect();
      const committed = await admin2.fetchOffsets({ groupId: 'kjs-g-kill', topics: ['kjs-g-kill'] });
      expect(committed[0]!.partitions).toEqual([{ partition: 0, offset: '6', metadata: null }]);
      await admin2.disconnect();
    } finally {
      await node.stop();
    }
  });
});
