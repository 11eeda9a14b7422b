/**
 * Share groups (KIP-932) in the classic group admin APIs, as Kafka 4.x answers them: ListGroups
 * lists them with type and protocol type "share" (Stable with members, Empty without, the v5 type
 * filter "share" selecting them), DescribeGroups answers GROUP_ID_NOT_FOUND (ShareGroupDescribe
 * describes them), DeleteGroups refuses one with members (NON_EMPTY_GROUP) and deletes an empty
 * one with its share partitions' state, so a member that joins later starts afresh.
 *
 * The admin side is spoken by real clients: kafkajs 2.2.4 (ListGroups v2, DescribeGroups,
 * DeleteGroups) and @platformatic/kafka 1.35 (ListGroups v5 with the type and state filters). The
 * share members are the test-only share client (share-wire-client.ts): no client installed here
 * has a share consumer.
 */
import { type Admin, Kafka, logLevel } from 'kafkajs';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { ACCEPT, ShareWire, acksOf, gotOf } from './share-wire-client';
import { platformaticAdmin } from './platformatic-process';

jest.setTimeout(90_000);

const JSON_TYPE = { 'content-type': 'application/json' };

type Listed = Record<string, { id: string; state: string; protocolType: string; groupType: string }>;

describe('share groups in ListGroups, DescribeGroups and DeleteGroups', () => {
  let node: NodeProcess;
  let w: ShareWire;
  let admin: Admin;

  /** ListGroups v5 through @platformatic/kafka, with its type and state filters. */
  const pltList = (types: string[], states?: string[]): Promise<Listed> => platformaticAdmin<Listed>({ broker: node.kafka, action: 'list', types, ...(states === undefined ? {} : { states }) });
  /** ListGroups through kafkajs: group id → protocol type. */
  const kjsList = async (): Promise<Map<string, string>> => new Map((await admin.listGroups()).groups.map((g) => [g.groupId, g.protocolType]));
  /** The Kafka error kafkajs rejects a call with (its name; per group for DeleteGroups), or 'resolved'. */
  const rejection = (p: Promise<unknown>): Promise<unknown> =>
    p.then(
      () => 'resolved',
      // A non-retriable error comes wrapped in the retrier's (`cause`).
      (e: { type?: string; cause?: { type?: string }; groups?: Array<{ groupId: string; error: { type: string } }> }) =>
        e.groups !== undefined ? e.groups.map((g) => [g.groupId, g.error.type]) : (e.type ?? e.cause?.type ?? String(e)),
    );

  const configure = async (topic: string, group: string, doc: Record<string, unknown>): Promise<void> => {
    const r = await fetch(`${node.url}/_share/${topic}?group=${encodeURIComponent(group)}`, { method: 'PATCH', headers: JSON_TYPE, body: JSON.stringify(doc) });
    expect(r.status).toBe(200);
  };

  /** A member of `group` joins, subscribed to `topic`: its id, epoch and the topic id. */
  const join = async (group: string, topic: string): Promise<{ memberId: string; memberEpoch: number; topicId: string }> => {
    const hb = await w.heartbeat({ groupId: group, memberId: '', memberEpoch: 0, subscribedTopicNames: [topic] });
    expect(hb.errorCode).toBe(0);
    return { memberId: hb.memberId!, memberEpoch: hb.memberEpoch, topicId: hb.assignment!.topicPartitions[0]!.topicId };
  };
  const leave = async (group: string, memberId: string): Promise<void> => {
    expect((await w.heartbeat({ groupId: group, memberId, memberEpoch: -1 })).errorCode).toBe(0);
  };

  beforeAll(async () => {
    node = await startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1'] });
    w = await ShareWire.connect(node.kafka);
    admin = new Kafka({ clientId: 'svc-share-admin', brokers: [node.kafka], logLevel: logLevel.NOTHING, retry: { retries: 2, initialRetryTime: 100 } }).admin();
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.disconnect();
    w?.close();
    await node?.stop();
  });

  test('a share group with members is listed Stable with type and protocol type "share", selected by the type filter "share" only; DescribeGroups answers it Dead (not a classic group, as Kafka below v6) and DeleteGroups NON_EMPTY_GROUP', async () => {
    expect(await w.createTopic('sha-live', 1)).toBe(0);
    const m = await join('sha-g-live', 'sha-live');
    // A classic group known from its committed offsets, beside it.
    await admin.setOffsets({ groupId: 'sha-g-classic', topic: 'sha-live', partitions: [{ partition: 0, offset: '0' }] });

    const listed = await kjsList();
    expect(listed.get('sha-g-live')).toBe('share');
    expect(listed.get('sha-g-classic')).toBe('consumer');

    const shares = await pltList(['share']);
    expect(shares['sha-g-live']).toEqual({ id: 'sha-g-live', state: 'STABLE', protocolType: 'share', groupType: 'share' });
    expect(shares['sha-g-classic']).toBeUndefined();
    expect((await pltList(['SHARE']))['sha-g-live']).toBeDefined();
    expect((await pltList(['classic', 'consumer']))['sha-g-live']).toBeUndefined();
    expect((await pltList(['classic']))['sha-g-classic']).toMatchObject({ state: 'EMPTY', groupType: 'classic' });
    expect((await pltList(['share'], ['EMPTY']))['sha-g-live']).toBeUndefined();
    expect((await pltList(['share'], ['STABLE']))['sha-g-live']).toBeDefined();

    expect((await admin.describeGroups(['sha-g-live'])).groups).toEqual([expect.objectContaining({ groupId: 'sha-g-live', state: 'Dead', protocolType: '', members: [], errorCode: 0 })]);
    expect(await rejection(admin.deleteGroups(['sha-g-live']))).toEqual([['sha-g-live', 'NON_EMPTY_GROUP']]);
    // Still there, its member too.
    expect((await w.describe(['sha-g-live'])).groups[0]).toMatchObject({ errorCode: 0, groupState: 'Stable' });
    expect((await w.heartbeat({ groupId: 'sha-g-live', memberId: m.memberId, memberEpoch: m.memberEpoch })).errorCode).toBe(0);

    // Once its member leaves it is Empty.
    await leave('sha-g-live', m.memberId);
    expect((await pltList(['share'], ['empty']))['sha-g-live']).toMatchObject({ state: 'EMPTY', groupType: 'share' });
  });

  test('deleting an empty share group forgets its share partitions\' state: a member that joins later starts afresh at the group\'s share.auto.offset.reset', async () => {
    const [topic, group] = ['sha-del', 'sha-g-del'];
    expect(await w.createTopic(topic, 1)).toBe(0);
    await w.produce(topic, 0, ['a', 'b', 'c', 'd', 'e']);
    await configure(topic, group, { 'share.auto.offset.reset': 'earliest' });

    // A member takes and accepts every record, then leaves.
    const a = await join(group, topic);
    const gotA = gotOf(await w.fetch({ groupId: group, memberId: a.memberId, epoch: 0, topicId: a.topicId, partitions: [0] }))[0]!.records;
    expect(gotA.map((r) => r.value)).toEqual(['a', 'b', 'c', 'd', 'e']);
    const acked = await w.acknowledge({ groupId: group, memberId: a.memberId, epoch: 1, topicId: a.topicId, acks: { 0: acksOf(gotA.map((r) => r.offset), ACCEPT) } });
    expect(acked.responses[0]!.partitions[0]!.errorCode).toBe(0);
    await leave(group, a.memberId);

    // Not deleted yet: a new member gets nothing (every record was accepted).
    const b = await join(group, topic);
    expect(gotOf(await w.fetch({ groupId: group, memberId: b.memberId, epoch: 0, topicId: b.topicId, partitions: [0] }))[0]!.records).toEqual([]);
    await leave(group, b.memberId);
    expect((await pltList(['share']))[group]).toMatchObject({ state: 'EMPTY' });

    expect(await admin.deleteGroups([group])).toEqual([expect.objectContaining({ groupId: group, errorCode: 0 })]);
    expect((await kjsList()).has(group)).toBe(false);
    expect(await rejection(admin.deleteGroups([group]))).toEqual([[group, 'GROUP_ID_NOT_FOUND']]);
    // The partition's state is gone (HTTP sees none); the group's config stays.
    const state = (await (await fetch(`${node.url}/_share/${topic}?group=${group}`)).json()) as { startSeq: number | null; config: Record<string, unknown> };
    expect(state.startSeq).toBeNull();
    expect(state.config['share.auto.offset.reset']).toBe('earliest');

    // A new member starts at the earliest record again, each delivered for the first time.
    const c = await join(group, topic);
    expect(c.memberEpoch).toBe(1);
    const gotC = gotOf(await w.fetch({ groupId: group, memberId: c.memberId, epoch: 0, topicId: c.topicId, partitions: [0] }))[0]!.records;
    expect(gotC.map((r) => [r.value, r.deliveryCount])).toEqual([['a', 1], ['b', 1], ['c', 1], ['d', 1], ['e', 1]]);
    await leave(group, c.memberId);
  });

  test('a group known only from its stored share state (an HTTP leaser\'s) is an Empty share group: listed, described by ShareGroupDescribe, not by DescribeGroups, and deleted', async () => {
    const [topic, group] = ['sha-http', 'sha-g-http'];
    expect(await w.createTopic(topic, 1)).toBe(0);
    await w.produce(topic, 0, ['x', 'y']);
    await configure(topic, group, { 'share.auto.offset.reset': 'earliest' });
    const lease = await fetch(`${node.url}/_share/${topic}?group=${group}&op=lease&max=1`, { method: 'POST' });
    expect(lease.status).toBe(200);

    expect((await kjsList()).get(group)).toBe('share');
    expect((await pltList(['share'], ['EMPTY']))[group]).toEqual({ id: group, state: 'EMPTY', protocolType: 'share', groupType: 'share' });
    expect((await w.describe([group])).groups[0]).toMatchObject({ errorCode: 0, groupState: 'Empty', members: [] });
    expect((await admin.describeGroups([group])).groups).toEqual([expect.objectContaining({ groupId: group, state: 'Dead', errorCode: 0 })]);

    expect(await admin.deleteGroups([group])).toEqual([expect.objectContaining({ groupId: group, errorCode: 0 })]);
    expect((await pltList(['share']))[group]).toBeUndefined();
    // A config alone is no group.
    expect(await rejection(admin.deleteGroups([group, 'sha-g-nobody']))).toEqual([[group, 'GROUP_ID_NOT_FOUND'], ['sha-g-nobody', 'GROUP_ID_NOT_FOUND']]);
    // The lease was forgotten with the state: the next lease starts afresh at the earliest record.
    const again = (await (await fetch(`${node.url}/_share/${topic}?group=${group}&op=lease&max=2`, { method: 'POST' })).json()) as { records: Array<{ deliveryCount: number }> };
    expect(again.records.map((r) => r.deliveryCount)).toEqual([1, 1]);
  });
});
