/**
 * The admin APIs through kafkajs 2.2.4's admin client: topic configs ⇄ stream config
 * (retention.ms ⇄ the streams' TTL, seen over HTTP), CreatePartitions, DeleteRecords ⇄ trim,
 * DescribeCluster, DeleteGroups; what is refused answers Kafka's own error codes.
 */
import { ConfigResourceTypes, Kafka, logLevel, type Admin } from 'kafkajs';
import { type NodeProcess, startNode } from '../helpers/node-process';

interface StreamConfig {
  ttlSeconds: number | null;
  durability: string;
  durabilityDefault: boolean;
}

describe('admin APIs with kafkajs', () => {
  let node: NodeProcess;
  let kafka: Kafka;
  let admin: Admin;

  beforeAll(async () => {
    node = await startNode({ args: ['--shards', '2', '--shard-workers', '1'] });
    kafka = new Kafka({ clientId: 'svc-admin-test', brokers: [node.kafka], logLevel: logLevel.NOTHING, retry: { retries: 0 } });
    admin = kafka.admin();
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.disconnect();
    await node.stop();
  });

  const streamConfig = async (stream: string): Promise<StreamConfig> => (await (await fetch(`${node.url}/_streams${stream}`)).json()) as StreamConfig;

  test('retention.ms is the streams\' TTL: set at create, described, altered on every partition, reset by a full AlterConfigs', async () => {
    expect(await admin.createTopics({ topics: [{ topic: 'adm-cfg', numPartitions: 2, configEntries: [{ name: 'retention.ms', value: '60000' }] }] })).toBe(true);
    expect((await streamConfig('/adm-cfg')).ttlSeconds).toBe(60);
    expect((await streamConfig('/adm-cfg/1')).ttlSeconds).toBe(60);
    const described = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: 'adm-cfg' }], includeSynonyms: false });
    const entries = Object.fromEntries(described.resources[0]!.configEntries.map((e) => [e.configName, e.configValue]));
    expect(entries).toMatchObject({ 'retention.ms': '60000', 'cleanup.policy': 'delete', 'retention.bytes': '-1' });
    await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'adm-cfg', configEntries: [{ name: 'retention.ms', value: '1500' }] }] });
    expect((await streamConfig('/adm-cfg')).ttlSeconds).toBe(2);
    expect((await streamConfig('/adm-cfg/1')).ttlSeconds).toBe(2);
    // AlterConfigs replaces the whole set: leaving retention.ms out resets it (no TTL).
    await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'adm-cfg', configEntries: [{ name: 'cleanup.policy', value: 'delete' }] }] });
    expect((await streamConfig('/adm-cfg')).ttlSeconds).toBeNull();
  });

  test('flush.messages is the streams\' durability class: 1 = sync, larger = async, reset = the node default', async () => {
    const never = '9223372036854775807';
    expect(await admin.createTopics({ topics: [{ topic: 'adm-dur', numPartitions: 2, configEntries: [{ name: 'flush.messages', value: never }] }] })).toBe(true);
    expect(await streamConfig('/adm-dur')).toMatchObject({ durability: 'async', durabilityDefault: false });
    expect(await streamConfig('/adm-dur/1')).toMatchObject({ durability: 'async', durabilityDefault: false });
    const describe = async (): Promise<Record<string, string>> => {
      const d = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: 'adm-dur' }], includeSynonyms: false });
      return Object.fromEntries(d.resources[0]!.configEntries.map((e) => [e.configName, e.configValue]));
    };
    expect((await describe())['flush.messages']).toBe(never);
    await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'adm-dur', configEntries: [{ name: 'flush.messages', value: '1' }] }] });
    expect(await streamConfig('/adm-dur/1')).toMatchObject({ durability: 'sync', durabilityDefault: false });
    expect((await describe())['flush.messages']).toBe('1');
    // A full AlterConfigs that leaves it out: back to the node's default (sync here).
    await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'adm-dur', configEntries: [{ name: 'cleanup.policy', value: 'delete' }] }] });
    expect(await streamConfig('/adm-dur')).toMatchObject({ durability: 'sync', durabilityDefault: true });
    const zero = admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'adm-dur', configEntries: [{ name: 'flush.messages', value: '0' }] }] });
    await expect(zero).rejects.toMatchObject({ type: 'INVALID_CONFIG' });
  });

  test('refused configs answer INVALID_CONFIG and change nothing; broker configs are read-only (POLICY_VIOLATION)', async () => {
    await admin.createTopics({ topics: [{ topic: 'adm-bad', configEntries: [{ name: 'retention.ms', value: '5000' }] }] });
    const compact = admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'adm-bad', configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }] });
    await expect(compact).rejects.toMatchObject({ type: 'INVALID_CONFIG' });
    const unknown = admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'adm-bad', configEntries: [{ name: 'no.such.config', value: '1' }] }] });
    await expect(unknown).rejects.toMatchObject({ type: 'INVALID_CONFIG' });
    expect((await streamConfig('/adm-bad')).ttlSeconds).toBe(5);
    const broker = admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.BROKER, name: '1', configEntries: [{ name: 'num.partitions', value: '3' }] }] });
    await expect(broker).rejects.toMatchObject({ type: 'POLICY_VIOLATION' });
    const missing = admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: 'adm-none' }], includeSynonyms: false });
    await expect(missing).rejects.toMatchObject({ type: 'UNKNOWN_TOPIC_OR_PARTITION' });
  });

  test('CreatePartitions adds the streams /T/n; shrinking is INVALID_PARTITIONS', async () => {
    await admin.createTopics({ topics: [{ topic: 'adm-grow' }] });
    await admin.createPartitions({ topicPartitions: [{ topic: 'adm-grow', count: 3 }] });
    expect((await fetch(`${node.url}/adm-grow/2`, { method: 'HEAD' })).status).toBe(200);
    const md = await admin.fetchTopicMetadata({ topics: ['adm-grow'] });
    expect(md.topics[0]!.partitions.map((p) => p.partitionId).sort()).toEqual([0, 1, 2]);
    await expect(admin.createPartitions({ topicPartitions: [{ topic: 'adm-grow', count: 2 }] })).rejects.toMatchObject({ type: 'INVALID_PARTITIONS' });
  });

  test('DeleteRecords trims the stream; the new start is the low watermark over Kafka and HTTP', async () => {
    await admin.createTopics({ topics: [{ topic: 'adm-trim' }] });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'adm-trim', messages: ['a', 'b', 'c', 'd'].map((value) => ({ value })) });
    await producer.disconnect();
    // kafkajs looks the leader up in its cached metadata before it fetches any: load the topic first.
    await admin.fetchTopicMetadata({ topics: ['adm-trim'] });
    await admin.deleteTopicRecords({ topic: 'adm-trim', partitions: [{ partition: 0, offset: '2' }] });
    const offsets = await admin.fetchTopicOffsets('adm-trim');
    expect(offsets[0]).toMatchObject({ partition: 0, low: '2', high: '4' });
    expect((await fetch(`${node.url}/adm-trim`, { method: 'HEAD' })).headers.get('svc-start-seq')).toBe('2');
  });

  test('a replication factor above the one live broker is INVALID_REPLICATION_FACTOR and creates nothing; 1 and the default are accepted, with this node the one replica', async () => {
    const refused = await admin.createTopics({ topics: [{ topic: 'adm-rf3', replicationFactor: 3 }] }).catch((err: unknown) => err);
    expect(refused).toMatchObject({ errors: [expect.objectContaining({ type: 'INVALID_REPLICATION_FACTOR' })] });
    expect((await fetch(`${node.url}/adm-rf3`, { method: 'HEAD' })).status).toBe(404);
    expect(await admin.createTopics({ topics: [{ topic: 'adm-rf1', replicationFactor: 1 }, { topic: 'adm-rfd' }] })).toBe(true);
    const md = await admin.fetchTopicMetadata({ topics: ['adm-rf1', 'adm-rfd'] });
    for (const t of md.topics) expect(t.partitions.map((p) => p.replicas)).toEqual([[1]]);
  });

  test('DescribeCluster names this node as broker and controller; DeleteGroups forgets an empty group and refuses an unknown one', async () => {
    const cluster = await admin.describeCluster();
    expect(cluster.brokers).toHaveLength(1);
    expect(cluster.controller).toBe(cluster.brokers[0]!.nodeId);
    await admin.createTopics({ topics: [{ topic: 'adm-grp' }] });
    await admin.setOffsets({ groupId: 'adm-group', topic: 'adm-grp', partitions: [{ partition: 0, offset: '0' }] });
    expect((await admin.listGroups()).groups.map((g) => g.groupId)).toContain('adm-group');
    await admin.deleteGroups(['adm-group']);
    expect((await admin.listGroups()).groups.map((g) => g.groupId)).not.toContain('adm-group');
    await expect(admin.deleteGroups(['adm-unknown'])).rejects.toMatchObject({ groups: [expect.objectContaining({ errorCode: 69 })] });
  });
});
