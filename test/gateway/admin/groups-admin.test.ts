/**
 * Groups of all three kinds in the admin API (`GET /admin/groups`, src/gateway/admin/group-doc.ts)
 * and the CLI (`svc groups ls|describe`), on one real node fed by real clients:
 * - a classic group: kafkajs 2.2.4 (JoinGroup/SyncGroup, its own assignor), offsets committed;
 * - a consumer group of the KIP-848 protocol: @platformatic/kafka 1.35 with
 *   `groupProtocol: 'consumer'`, the server's `uniform` assignor;
 * - a share group with a Kafka member (the test's share client: no client installed here has a
 *   share consumer) and HTTP leases (`/_share/{stream}`) on one stream: records accepted,
 *   in flight, redelivered after a lock ended, rejected — shown as in-flight, acknowledged,
 *   redelivered and archived counts, which survive a SIGKILL of the node.
 * The dashboard's page of the same groups is checked in dashboard-pages.browser.test.ts.
 */
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { type GroupDoc, type TopicPartitions } from '../../../src/gateway';
import { type NodeProcess, startNode } from '../../helpers/node-process';
import { svc, clientEnv } from '../../helpers/svc-cli';
import { waitFor } from '../../kafka/group-test-helpers';
import { type PltRun, platformatic } from '../../kafka/platformatic-process';
import { ACCEPT, REJECT, ShareWire, acksOf, gotOf } from '../../kafka/share-wire-client';

jest.setTimeout(120_000);

type Group = GroupDoc;

const JSON_TYPE = { 'content-type': 'application/json' };
const sorted = (tps: TopicPartitions[]): number[] => tps.flatMap((t) => t.partitions).sort((a, b) => a - b);

describe('groups of all three kinds in the admin API and the CLI', () => {
  let node: NodeProcess;
  let kafka: Kafka;
  let classic: Consumer | null = null;
  let plt: PltRun | null = null;
  let w: ShareWire;

  const groups = async (only?: string): Promise<Group[]> => {
    const r = await fetch(`${node.adminUrl!}/admin/groups${only === undefined ? '' : `?group=${encodeURIComponent(only)}`}`);
    expect(r.status).toBe(200);
    return ((await r.json()) as { groups: Group[] }).groups;
  };
  const group = async (id: string): Promise<Group | undefined> => (await groups(id))[0];
  const cli = (args: string[]) => svc([...args], { env: clientEnv({ SVC_URL: node.url, SVC_ADMIN_URL: node.adminUrl! }) });
  const share = (q: string, init?: RequestInit) => fetch(`${node.url}/_share/adm-share?group=adm-s${q}`, init);

  beforeAll(async () => {
    node = await startNode({ args: ['--shards', '2', '--shard-workers', '1', '--kafka-group-consumer-heartbeat-interval-ms', '300'] });
    kafka = new Kafka({ clientId: 'svc-groups-admin', brokers: [node.kafka], logLevel: logLevel.NOTHING });
    w = await ShareWire.connect(node.kafka);
  });
  afterAll(async () => {
    await classic?.disconnect().catch(() => undefined);
    await plt?.stop();
    w?.close();
    await node?.stop();
  });

  test('a classic group, a consumer-protocol group and a share group are shown with their kinds, members, assignments, lag and share counts', async () => {
    expect(await w.createTopic('adm-classic', 1)).toBe(0);
    expect(await w.createTopic('adm-cp', 2)).toBe(0);
    expect(await w.createTopic('adm-share', 1)).toBe(0);
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'adm-classic', acks: -1, messages: Array.from({ length: 5 }, (_, i) => ({ value: `c${i}` })) });
    await producer.send({ topic: 'adm-cp', acks: -1, messages: Array.from({ length: 6 }, (_, i) => ({ partition: i % 2, value: `p${i}` })) });
    await producer.disconnect();
    await w.produce('adm-share', 0, Array.from({ length: 10 }, (_, i) => `s${i}`));

    // The classic group: kafkajs reads the five records and commits them.
    const seen: string[] = [];
    classic = kafka.consumer({ groupId: 'adm-c', sessionTimeout: 10_000, heartbeatInterval: 500, maxWaitTimeInMs: 200 });
    await classic.connect();
    await classic.subscribe({ topic: 'adm-classic', fromBeginning: true });
    await classic.run({ eachMessage: async ({ message }) => void seen.push(String(message.value)) });
    // The consumer-protocol group: one @platformatic/kafka member owns both partitions.
    plt = platformatic({ op: 'consume', broker: node.kafka, group: 'adm-k', topics: ['adm-cp'], mode: 'earliest', groupProtocol: 'consumer' });

    // The share group: a Kafka member acquires everything, accepts four, rejects one, keeps five.
    expect((await share('', { method: 'PATCH', headers: JSON_TYPE, body: JSON.stringify({ 'share.auto.offset.reset': 'earliest' }) })).status).toBe(200);
    const hb = await w.heartbeat({ groupId: 'adm-s', memberId: '', memberEpoch: 0, subscribedTopicNames: ['adm-share'] });
    expect(hb.errorCode).toBe(0);
    const topicId = hb.assignment!.topicPartitions[0]!.topicId;
    const f = await w.fetch({ groupId: 'adm-s', memberId: hb.memberId!, epoch: 0, topicId, partitions: [0], maxWaitMs: 1000 });
    expect(gotOf(f).flatMap((g) => g.records.map((r) => r.offset))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const ack = await w.acknowledge({ groupId: 'adm-s', memberId: hb.memberId!, epoch: 1, topicId, acks: { 0: [...acksOf([0, 1, 2, 3], ACCEPT), ...acksOf([4], REJECT)] } });
    expect([ack.errorCode, ack.responses[0]!.partitions[0]!.errorCode]).toEqual([0, 0]);
    // The member leaves: its five locks are given back; an HTTP lease takes two of them again
    // (their second delivery) with a 1 s lock that ends, and a third lease takes them once more.
    expect((await w.heartbeat({ groupId: 'adm-s', memberId: hb.memberId!, memberEpoch: -1 })).errorCode).toBe(0);
    type Lease = { lockedUntilMs: number; records: Array<{ seq: number; deliveryCount: number }> };
    const lease = async (max: number, lock: string): Promise<Lease> => {
      const r = await share(`&op=lease&max=${max}&lock=${lock}`, { method: 'POST' });
      expect(r.status).toBe(200);
      return (await r.json()) as Lease;
    };
    let first: Lease = { lockedUntilMs: 0, records: [] };
    await waitFor(async () => (first = await lease(2, '1s')).records.length === 2, 'the member\'s locks are given back', 20_000);
    expect(first.records.map((r) => [r.seq, r.deliveryCount])).toEqual([
      [5, 2],
      [6, 2],
    ]);
    // The node's clock is this machine's: lease again once the lock has ended.
    await new Promise((r) => setTimeout(r, Math.max(0, first.lockedUntilMs - Date.now()) + 100));
    const again = (await lease(2, '60s')).records;
    expect(again.map((r) => [r.seq, r.deliveryCount])).toEqual([
      [5, 3],
      [6, 3],
    ]);

    await waitFor(() => seen.length === 5, 'kafkajs read the classic topic', 30_000);
    await waitFor(async () => (await group('adm-c'))?.offsets[0]?.committed === 5, 'kafkajs committed offset 5', 30_000);
    await waitFor(async () => (await group('adm-k'))?.offsets.reduce((n, o) => n + o.committed, 0) === 6, 'the consumer-protocol member committed both partitions', 60_000);

    const all = await groups();
    expect(all.map((g) => [g.groupId, g.kind])).toEqual([
      ['adm-c', 'classic'],
      ['adm-k', 'consumer'],
      ['adm-s', 'share'],
    ]);
    const [c, k, s] = all as [Group, Group, Group];
    for (const g of all) expect([typeof g.coordinator, g.coordinatedHere]).toEqual(['number', true]);

    expect(c).toMatchObject({ state: 'Stable', protocolType: 'consumer', share: null });
    expect(c.groupEpoch).toBeGreaterThanOrEqual(1);
    expect(c.members).toHaveLength(1);
    expect(c.members[0]).toMatchObject({ clientId: 'svc-groups-admin', memberEpoch: null, assignment: [{ topic: 'adm-classic', partitions: [0] }], targetAssignment: null });
    expect(c.offsets).toEqual([{ topic: 'adm-classic', partition: 0, committed: 5, end: 5, lag: 0 }]);

    expect(k).toMatchObject({ state: 'Stable', protocolType: 'consumer', protocolName: 'uniform', share: null });
    expect(k.members).toHaveLength(1);
    expect(k.members[0]!.memberEpoch).toBe(k.groupEpoch);
    expect(k.members[0]!.subscribedTopics).toEqual(['adm-cp']);
    expect(sorted(k.members[0]!.assignment)).toEqual([0, 1]);
    expect(sorted(k.members[0]!.targetAssignment!)).toEqual([0, 1]);
    expect(k.offsets.map((o) => [o.partition, o.committed, o.end, o.lag])).toEqual([
      [0, 3, 3, 0],
      [1, 3, 3, 0],
    ]);

    // Share: 0–3 accepted, 4 rejected (archived), 5 and 6 held by the 60 s lease (in flight),
    // 7–9 given back by the member and waiting; deliveries 10 + 2 + 2, four of them redeliveries.
    expect(s).toMatchObject({ state: 'Empty', protocolType: 'share', protocolName: 'simple', members: [], offsets: [] });
    expect(s.share).toEqual({
      inFlight: 2,
      redeliveryPending: 3,
      lag: 5,
      totals: { delivered: 14, redelivered: 4, acknowledged: 4, archived: 1 },
      partitions: [{ stream: '/adm-share', topic: 'adm-share', partition: 0, startOffset: 5, endOffset: 10, lag: 5, inFlight: 2, redeliveryPending: 3, totals: { delivered: 14, redelivered: 4, acknowledged: 4, archived: 1 } }],
    });
    // A Kafka member of the share group is listed with its epoch and assignment.
    const hb2 = await w.heartbeat({ groupId: 'adm-s', memberId: '', memberEpoch: 0, subscribedTopicNames: ['adm-share'] });
    expect(hb2.errorCode).toBe(0);
    const s2 = (await group('adm-s'))!;
    expect(s2.state).toBe('Stable');
    expect(s2.members).toEqual([{ memberId: hb2.memberId, instanceId: null, clientId: expect.any(String), clientHost: expect.any(String), memberEpoch: hb2.memberEpoch, subscribedTopics: ['adm-share'], assignment: [{ topic: 'adm-share', partitions: [0] }], targetAssignment: null }]);
    expect((await w.heartbeat({ groupId: 'adm-s', memberId: hb2.memberId!, memberEpoch: -1 })).errorCode).toBe(0);

    // One group by id; an unknown id is no group.
    expect((await groups('adm-k')).map((g) => g.groupId)).toEqual(['adm-k']);
    expect(await groups('adm-none')).toEqual([]);

    // The CLI: one line per group, and a group's members, offsets or share partitions.
    const ls = await cli(['groups', 'ls']);
    expect(ls.code).toBe(0);
    const lines = ls.stdout.trim().split('\n');
    expect(lines[0]!.split(/\s+/)).toEqual(['GROUP', 'KIND', 'STATE', 'MEMBERS', 'LAG', 'INFLIGHT', 'COORDINATOR']);
    expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 6))).toEqual([
      ['adm-c', 'classic', 'Stable', '1', '0', '-'],
      ['adm-k', 'consumer', 'Stable', '1', '0', '-'],
      ['adm-s', 'share', 'Empty', '0', '5', '2'],
    ]);
    const dk = await cli(['groups', 'describe', 'adm-k']);
    expect(dk.code).toBe(0);
    expect(dk.stdout).toMatch(/^kind:\s+consumer$/m);
    expect(dk.stdout).toMatch(/^protocol:\s+consumer\/uniform$/m);
    expect(dk.stdout).toMatch(/adm-cp\[0,1\]/);
    expect(dk.stdout).toMatch(/^adm-cp\s+1\s+3\s+3\s+0$/m);
    const ds = await cli(['groups', 'describe', 'adm-s', '-o', 'json']);
    expect(ds.code).toBe(0);
    expect((JSON.parse(ds.stdout) as Group).share!.totals).toEqual({ delivered: 14, redelivered: 4, acknowledged: 4, archived: 1 });
    const dsText = await cli(['groups', 'describe', 'adm-s']);
    expect(dsText.stdout).toMatch(/^\/adm-share\s+adm-share\/0\s+5\s+10\s+5\s+2\s+3\s+4\s+4\s+1$/m);
    const missing = await cli(['groups', 'describe', 'adm-none']);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/group adm-none not found/);

    // The share totals are stored with the partition's state: a node killed and restarted shows them again.
    await classic.disconnect();
    classic = null;
    await plt.stop();
    plt = null;
    const dataDir = node.dataDir;
    await node.kill();
    node = await startNode({ dataDir, args: ['--shards', '2', '--shard-workers', '1'] });
    const after = (await group('adm-s'))!;
    expect(after.share!.totals).toEqual({ delivered: 14, redelivered: 4, acknowledged: 4, archived: 1 });
    expect(after.share!.partitions[0]).toMatchObject({ startOffset: 5, endOffset: 10, inFlight: 2 });
    // Committed offsets survive too; the members do not (they rejoin a restarted coordinator).
    expect((await group('adm-c'))).toMatchObject({ kind: 'classic', state: 'Empty', members: [], offsets: [{ committed: 5, lag: 0 }] });
    expect((await group('adm-k'))).toMatchObject({ kind: 'consumer', state: 'Empty', members: [] });
  });
});
