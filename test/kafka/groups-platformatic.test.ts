/**
 * @platformatic/kafka 1.35 consumer groups against a node started by the test (the client is an
 * ES module, so it runs in a child process: platformatic-driver.mjs). Consuming from the earliest
 * offset, the latest and a timestamp; two members that rebalance when one leaves; describe and
 * list groups; a group that resumes at its committed offsets after the node restarts. Records
 * are produced with kafkajs (the producer side is not what these tests check).
 */
import { Kafka, logLevel } from 'kafkajs';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { GroupWire } from './group-wire-client';
import { waitFor } from './group-test-helpers';
import { platformatic, platformaticAdmin } from './platformatic-process';

const NODE_ARGS = ['--no-admin', '--shards', '2', '--shard-workers', '1'];

async function createTopic(node: NodeProcess, name: string, partitions: number): Promise<void> {
  const w = await GroupWire.connect(node.kafka);
  try {
    expect(await w.createTopic(name, partitions)).toBe(0);
  } finally {
    w.close();
  }
}

async function produce(node: NodeProcess, topic: string, messages: Array<{ value: string; partition?: number; timestamp?: string }>): Promise<void> {
  const producer = new Kafka({ clientId: 'svc-plt-producer', brokers: [node.kafka], logLevel: logLevel.NOTHING }).producer();
  await producer.connect();
  try {
    await producer.send({ topic, acks: -1, messages: messages.map((m) => ({ partition: 0, ...m })) });
  } finally {
    await producer.disconnect();
  }
}

const got = (run: ReturnType<typeof platformatic>): string[] => run.messages().map((m) => `${m.partition}:${m.offset}:${String(m.value)}`);

describe('@platformatic/kafka 1.35 consumer groups', () => {
  let node: NodeProcess;

  beforeAll(async () => {
    node = await startNode({ args: NODE_ARGS });
  });
  afterAll(async () => {
    await node?.stop();
  });

  test('a group consumes from the earliest offset, a new group from the latest, and one from a timestamp', async () => {
    await createTopic(node, 'plt-pos', 1);
    await produce(node, 'plt-pos', [{ value: 'a', timestamp: '1000' }, { value: 'b', timestamp: '2000' }, { value: 'c', timestamp: '3000' }]);

    const early = platformatic({ op: 'consume', broker: node.kafka, group: 'plt-g-early', topics: ['plt-pos'], mode: 'earliest', max: 3 });
    expect(await early.exited).toBe(0);
    expect(got(early)).toEqual(['0:0:a', '0:1:b', '0:2:c']);

    const late = platformatic({ op: 'consume', broker: node.kafka, group: 'plt-g-late', topics: ['plt-pos'], mode: 'latest', max: 1 });
    await waitFor(() => late.assignment()?.length === 1, 'the latest consumer joined');
    // The client resolves the latest offset right after joining; give it that moment.
    await new Promise((r) => setTimeout(r, 2000));
    await produce(node, 'plt-pos', [{ value: 'd', timestamp: '4000' }]);
    expect(await late.exited).toBe(0);
    expect(got(late)).toEqual(['0:3:d']);

    const offsets = await platformaticAdmin<Record<string, string[]>>({ broker: node.kafka, action: 'offsetsForTime', topic: 'plt-pos', timestamp: 2500 });
    expect(offsets).toEqual({ 'plt-pos': ['2'] });
    const byTime = platformatic({ op: 'consume', broker: node.kafka, group: 'plt-g-time', topics: ['plt-pos'], mode: 'manual', offsets: [{ topic: 'plt-pos', partition: 0, offset: offsets['plt-pos']![0] }], max: 2 });
    expect(await byTime.exited).toBe(0);
    expect(got(byTime)).toEqual(['0:2:c', '0:3:d']);
  });

  test('two members share the partitions and the one that stays gets all of them when the other leaves; describe and list show the group', async () => {
    await createTopic(node, 'plt-share', 4);
    const consume = { op: 'consume', broker: node.kafka, group: 'plt-g-share', topics: ['plt-share'], mode: 'earliest' };
    const a = platformatic(consume);
    await waitFor(() => a.assignment()?.length === 4, 'the first member has every partition');
    const b = platformatic(consume);
    try {
      await waitFor(() => (a.assignment()?.length ?? 0) > 0 && (b.assignment()?.length ?? 0) > 0 && a.assignment()!.length + b.assignment()!.length === 4, 'both members have partitions', 40_000);
      expect([...a.assignment()!, ...b.assignment()!].sort()).toEqual([0, 1, 2, 3]);

      type Described = Record<string, { state: string; protocolType: string; protocol: string; members: Record<string, { clientId: string; clientHost: string }> }>;
      const described = await platformaticAdmin<Described>({ broker: node.kafka, action: 'describe', groups: ['plt-g-share'] });
      expect(described['plt-g-share']).toMatchObject({ state: 'STABLE', protocolType: 'consumer', protocol: 'roundrobin' });
      expect(Object.values(described['plt-g-share']!.members).map((m) => [m.clientId, m.clientHost])).toEqual([['svc-plt', '/127.0.0.1'], ['svc-plt', '/127.0.0.1']]);
      const listed = await platformaticAdmin<Record<string, { state: string; protocolType: string; groupType: string }>>({ broker: node.kafka, action: 'list' });
      expect(listed['plt-g-share']).toEqual({ id: 'plt-g-share', state: 'STABLE', protocolType: 'consumer', groupType: 'classic' });

      expect(await b.stop()).toBe(0);
      expect(b.events().some((e) => e.type === 'closed')).toBe(true);
      await waitFor(() => a.assignment()?.length === 4 && a.events().filter((e) => e.type === 'join').length >= 3, 'the remaining member has every partition again', 40_000);
      expect(a.assignment()).toEqual([0, 1, 2, 3]);
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});

describe('@platformatic/kafka 1.35 committed offsets across a node restart', () => {
  test('a group resumes at its committed offsets after the node restarts on the same data directory', async () => {
    let node = await startNode({ args: NODE_ARGS });
    await createTopic(node, 'plt-restart', 2);
    await produce(node, 'plt-restart', [0, 1, 2, 3, 4, 5].map((i) => ({ value: `before-${i}`, partition: i % 2 })));
    const consume = { op: 'consume', group: 'plt-g-resume', topics: ['plt-restart'], mode: 'committed', fallbackMode: 'earliest' };
    const first = platformatic({ ...consume, broker: node.kafka, max: 6 });
    expect(await first.exited).toBe(0);
    expect(got(first).sort()).toEqual(['0:0:before-0', '0:1:before-2', '0:2:before-4', '1:0:before-1', '1:1:before-3', '1:2:before-5']);
    expect(await node.stop()).toBe(0);

    node = await startNode({ args: NODE_ARGS, dataDir: node.dataDir });
    try {
      type Offsets = Array<{ groupId: string; topics: Array<{ name: string; partitions: Array<{ partitionIndex: number; committedOffset: string }> }> }>;
      const committed = await platformaticAdmin<Offsets>({ broker: node.kafka, action: 'offsets', groups: ['plt-g-resume'] });
      expect(committed[0]!.topics[0]!.partitions.map((p) => [p.partitionIndex, p.committedOffset])).toEqual([[0, '3'], [1, '3']]);
      await produce(node, 'plt-restart', [{ value: 'after-0', partition: 0 }, { value: 'after-1', partition: 1 }]);
      // Two messages and stop: a re-delivered record would be among them.
      const second = platformatic({ ...consume, broker: node.kafka, max: 2 });
      expect(await second.exited).toBe(0);
      expect(got(second).sort()).toEqual(['0:3:after-0', '1:3:after-1']);
    } finally {
      await node.stop();
    }
  });
});
