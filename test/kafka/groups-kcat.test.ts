/**
 * kcat 1.7.1 (librdkafka 2.0.2) consumer groups against a node started by the test: the balanced
 * consumer (-G) from the earliest and the latest offset, a timestamp start (kcat refuses s@ with
 * -G, so that one reads the partition directly), two members that rebalance when one leaves, and
 * a group that resumes at its committed offsets after the node restarts. kcat cannot describe or
 * list groups; a group of kcat members is described with kafkajs's admin client instead.
 */
import { Kafka, logLevel } from 'kafkajs';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { GroupWire } from './group-wire-client';
import { waitFor } from './group-test-helpers';
import { kcat, kcatOut, lastAssignment } from './kcat-process';

const NODE_ARGS = ['--no-admin', '--shards', '2', '--shard-workers', '1'];
/** Partition:offset:value per line. */
const FORMAT = '%p:%o:%s\\n';

async function createTopic(node: NodeProcess, name: string, partitions: number): Promise<void> {
  const w = await GroupWire.connect(node.kafka);
  try {
    expect(await w.createTopic(name, partitions)).toBe(0);
  } finally {
    w.close();
  }
}

function produce(node: NodeProcess, topic: string, partition: number, values: string[]): Promise<string> {
  return kcatOut(['-P', '-b', node.kafka, '-t', topic, '-p', String(partition)], values.map((v) => `${v}\n`).join(''));
}

const lines = (out: string): string[] => out.split('\n').filter((l) => l !== '').sort();

describe('kcat 1.7.1 consumer groups', () => {
  let node: NodeProcess;

  beforeAll(async () => {
    node = await startNode({ args: NODE_ARGS });
  });
  afterAll(async () => {
    await node?.stop();
  });

  test('a balanced consumer reads from the earliest offset, from the latest, and a reader starts at a timestamp', async () => {
    await createTopic(node, 'kc-pos', 2);
    await produce(node, 'kc-pos', 0, ['a0', 'b0']);
    await produce(node, 'kc-pos', 1, ['a1']);
    const between = Date.now();
    await new Promise((r) => setTimeout(r, 20));
    await produce(node, 'kc-pos', 1, ['b1']);

    const early = await kcatOut(['-b', node.kafka, '-G', 'kc-g-early', '-o', 'beginning', '-e', '-f', FORMAT, 'kc-pos']);
    expect(lines(early)).toEqual(['0:0:a0', '0:1:b0', '1:0:a1', '1:1:b1']);

    // From the end: only what is produced once the member has its partitions.
    const late = kcat(['-b', node.kafka, '-G', 'kc-g-late', '-o', 'end', '-c', '1', '-f', FORMAT, 'kc-pos']);
    await waitFor(() => lastAssignment(late.stderr(), 'kc-pos')?.length === 2, 'kcat has its assignment');
    // librdkafka resolves the end offset right after the assignment; give it that moment.
    await new Promise((r) => setTimeout(r, 2000));
    await produce(node, 'kc-pos', 0, ['c0']);
    expect(await late.exited).toBe(0);
    expect(late.stdout()).toBe('0:2:c0\n');

    const byTime = await kcatOut(['-b', node.kafka, '-C', '-t', 'kc-pos', '-p', '1', '-o', `s@${between}`, '-e', '-f', FORMAT]);
    expect(lines(byTime)).toEqual(['1:1:b1']);
  });

  test('two members share the partitions, and the one that stays gets all of them when the other leaves', async () => {
    await createTopic(node, 'kc-share', 4);
    const a = kcat(['-b', node.kafka, '-G', 'kc-g-share', '-o', 'beginning', '-f', FORMAT, 'kc-share']);
    await waitFor(() => lastAssignment(a.stderr(), 'kc-share')?.length === 4, 'the first member has every partition');
    const b = kcat(['-b', node.kafka, '-G', 'kc-g-share', '-o', 'beginning', '-f', FORMAT, 'kc-share']);
    await waitFor(() => {
      const pa = lastAssignment(a.stderr(), 'kc-share') ?? [];
      const pb = lastAssignment(b.stderr(), 'kc-share') ?? [];
      return pa.length > 0 && pb.length > 0 && pa.length + pb.length === 4;
    }, 'both members have partitions', 40_000);
    expect([...lastAssignment(a.stderr(), 'kc-share')!, ...lastAssignment(b.stderr(), 'kc-share')!].sort()).toEqual([0, 1, 2, 3]);

    const kafka = new Kafka({ clientId: 'svc-kcat-test', brokers: [node.kafka], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    try {
      const g = (await admin.describeGroups(['kc-g-share'])).groups[0]!;
      expect(g).toMatchObject({ state: 'Stable', protocolType: 'consumer', protocol: 'range' });
      expect(g.members).toHaveLength(2);
      expect((await admin.listGroups()).groups).toContainEqual({ groupId: 'kc-g-share', protocolType: 'consumer' });

      expect(await b.stop()).toBe(0);
      await waitFor(() => lastAssignment(a.stderr(), 'kc-share')?.length === 4 && a.stderr().split('assigned:').length >= 4, 'the remaining member has every partition again', 40_000);
      expect(lastAssignment(a.stderr(), 'kc-share')).toEqual([0, 1, 2, 3]);
      expect((await admin.describeGroups(['kc-g-share'])).groups[0]!.members).toHaveLength(1);
    } finally {
      await admin.disconnect();
      await a.stop();
    }
  });
});

describe('kcat 1.7.1 committed offsets across a node restart', () => {
  test('a group resumes at its committed offsets after the node restarts on the same data directory', async () => {
    let node = await startNode({ args: NODE_ARGS });
    await createTopic(node, 'kc-restart', 2);
    await produce(node, 'kc-restart', 0, ['a', 'b', 'c']);
    await produce(node, 'kc-restart', 1, ['d', 'e']);
    // -o stored: the committed offset, or (first time) the earliest. kcat commits when it closes.
    const stored = ['-G', 'kc-g-resume', '-o', 'stored', '-X', 'auto.offset.reset=earliest', '-e', '-f', FORMAT, 'kc-restart'];
    expect(lines(await kcatOut(['-b', node.kafka, ...stored]))).toEqual(['0:0:a', '0:1:b', '0:2:c', '1:0:d', '1:1:e']);
    expect(await node.stop()).toBe(0);

    node = await startNode({ args: NODE_ARGS, dataDir: node.dataDir });
    try {
      await produce(node, 'kc-restart', 0, ['f']);
      await produce(node, 'kc-restart', 1, ['g']);
      expect(lines(await kcatOut(['-b', node.kafka, ...stored]))).toEqual(['0:3:f', '1:2:g']);
    } finally {
      await node.stop();
    }
  });
});
