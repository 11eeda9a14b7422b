/**
 * The group APIs over the wire with the project's own codecs: generation fencing, the rebalance
 * protocol step by step, session expiry, FindCoordinator, OffsetFetch of every topic, and the
 * errors of bad joins.
 */
import { type NodeProcess, startNode } from '../helpers/node-process';
import { GroupWire } from './group-wire-client';

const ILLEGAL_GENERATION = 22;
const INCONSISTENT_GROUP_PROTOCOL = 23;
const UNKNOWN_MEMBER_ID = 25;
const INVALID_SESSION_TIMEOUT = 26;
const REBALANCE_IN_PROGRESS = 27;
const UNKNOWN_TOPIC_OR_PARTITION = 3;

describe('the group APIs over the wire', () => {
  let node: NodeProcess;
  let c1: GroupWire;
  let c2: GroupWire;

  beforeAll(async () => {
    node = await startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1'] });
    c1 = await GroupWire.connect(node.kafka);
    c2 = await GroupWire.connect(node.kafka);
    expect(await c1.createTopic('wire-g', 2)).toBe(0);
  });
  afterAll(async () => {
    c1?.close();
    c2?.close();
    await node?.stop();
  });

  test('fences commits and heartbeats of a stale generation with ILLEGAL_GENERATION and of an unknown member with UNKNOWN_MEMBER_ID', async () => {
    const j1 = await c1.join('wire-fence');
    expect(j1).toMatchObject({ errorCode: 0, generationId: 1, protocolName: 'range' });
    expect(j1.leader).toBe(j1.memberId);
    expect(j1.members.map((m) => [m.memberId, m.metadata.toString()])).toEqual([[j1.memberId, 'meta']]);
    const m1 = j1.memberId;
    // Before SyncGroup the member has no assignment: it may not commit yet.
    expect(await c1.commitErrors('wire-fence', m1, 1, 'wire-g', [[0, 1n]])).toEqual([REBALANCE_IN_PROGRESS]);
    expect(await c1.sync('wire-fence', m1, 1, [{ memberId: m1, assignment: Buffer.from('a1') }])).toMatchObject({ errorCode: 0, assignment: Buffer.from('a1') });

    expect(await c1.commitErrors('wire-fence', m1, 1, 'wire-g', [[0, 5n], [1, 7n]])).toEqual([0, 0]);
    expect(await c1.commitErrors('wire-fence', m1, 0, 'wire-g', [[0, 6n]])).toEqual([ILLEGAL_GENERATION]);
    expect(await c1.commitErrors('wire-fence', 'nobody', 1, 'wire-g', [[0, 6n]])).toEqual([UNKNOWN_MEMBER_ID]);
    expect(await c1.commitErrors('wire-fence', m1, 1, 'wire-none', [[0, 6n]])).toEqual([UNKNOWN_TOPIC_OR_PARTITION]);
    expect(await c1.commitErrors('wire-fence', m1, 1, 'wire-g', [[2, 6n]])).toEqual([UNKNOWN_TOPIC_OR_PARTITION]);

    // A second member joins: the first learns of the rebalance from its heartbeat and rejoins.
    const j2p = c2.join('wire-fence');
    await new Promise((r) => setTimeout(r, 200));
    expect(await c1.heartbeat('wire-fence', m1, 1)).toBe(REBALANCE_IN_PROGRESS);
    // Still a member of generation 1 while the group prepares the rebalance: its commit counts (Kafka's rule).
    expect(await c1.commitErrors('wire-fence', m1, 1, 'wire-g', [[0, 8n]])).toEqual([0]);
    const [r1, j2] = await Promise.all([c1.join('wire-fence', { memberId: m1 }), j2p]);
    expect(r1).toMatchObject({ errorCode: 0, generationId: 2, leader: m1 });
    expect(j2).toMatchObject({ errorCode: 0, generationId: 2, leader: m1, members: [] });
    expect(r1.members.map((m) => m.memberId).sort()).toEqual([m1, j2.memberId].sort());

    expect(await c1.commitErrors('wire-fence', m1, 1, 'wire-g', [[0, 9n]])).toEqual([ILLEGAL_GENERATION]);
    expect(await c1.heartbeat('wire-fence', m1, 1)).toBe(ILLEGAL_GENERATION);
    expect((await c1.sync('wire-fence', m1, 1)).errorCode).toBe(ILLEGAL_GENERATION);

    // The follower's SyncGroup waits for the leader's assignments.
    const s2p = c2.sync('wire-fence', j2.memberId, 2);
    const s1 = await c1.sync('wire-fence', m1, 2, [{ memberId: m1, assignment: Buffer.from('p0') }, { memberId: j2.memberId, assignment: Buffer.from('p1') }]);
    expect(s1.assignment.toString()).toBe('p0');
    expect((await s2p).assignment.toString()).toBe('p1');
    expect(await c2.commitErrors('wire-fence', j2.memberId, 2, 'wire-g', [[1, 11n]])).toEqual([0]);
    expect(await c2.heartbeat('wire-fence', j2.memberId, 2)).toBe(0);

    const all = await c1.fetchOffsets({ groups: [{ groupId: 'wire-fence', topics: null }], requireStable: false }, 8);
    expect(all.groups![0]!.topics).toEqual([
      {
        name: 'wire-g',
        partitions: [
          { partitionIndex: 0, committedOffset: 8n, committedLeaderEpoch: -1, metadata: 'm0', errorCode: 0 },
          { partitionIndex: 1, committedOffset: 11n, committedLeaderEpoch: -1, metadata: 'm1', errorCode: 0 },
        ],
      },
    ]);
    // v2-7: null topics means all topics too; a partition without a commit answers -1.
    const v5 = await c1.fetchOffsets({ groupId: 'wire-fence', topics: null }, 5);
    expect(v5.topics!.map((t) => [t.name, t.partitions.map((p) => p.committedOffset)])).toEqual([['wire-g', [8n, 11n]]]);
    const v1 = await c1.fetchOffsets({ groupId: 'wire-fence', topics: [{ name: 'wire-g', partitionIndexes: [1] }, { name: 'wire-x', partitionIndexes: [0] }] }, 1);
    expect(v1.topics!.map((t) => [t.name, t.partitions.map((p) => [p.committedOffset, p.metadata])])).toEqual([['wire-g', [[11n, 'm1']]], ['wire-x', [[-1n, '']]]]);

    const left = await c2.leave('wire-fence', j2.memberId);
    expect(left).toMatchObject({ errorCode: 0, members: [{ memberId: j2.memberId, errorCode: 0 }] });
    expect(await c1.heartbeat('wire-fence', m1, 2)).toBe(REBALANCE_IN_PROGRESS);
    expect(await c2.heartbeat('wire-fence', j2.memberId, 2)).toBe(UNKNOWN_MEMBER_ID);
    const r3 = await c1.join('wire-fence', { memberId: m1 });
    expect(r3).toMatchObject({ errorCode: 0, generationId: 3, leader: m1 });
    expect(r3.members).toHaveLength(1);
    expect((await c1.leave('wire-fence', m1, 1)).errorCode).toBe(0);
  });

  test('removes a member whose session times out and rebalances the rest', async () => {
    const a = await c1.join('wire-session', { sessionTimeoutMs: 6000 });
    const bp = c2.join('wire-session', { sessionTimeoutMs: 6000 });
    await new Promise((r) => setTimeout(r, 100));
    expect(await c1.heartbeat('wire-session', a.memberId, 1)).toBe(REBALANCE_IN_PROGRESS);
    const [a2, b] = await Promise.all([c1.join('wire-session', { memberId: a.memberId, sessionTimeoutMs: 6000 }), bp]);
    expect(a2.generationId).toBe(2);
    await Promise.all([c1.sync('wire-session', a.memberId, 2, []), c2.sync('wire-session', b.memberId, 2)]);
    // b goes silent; a keeps heartbeating until the group tells it to rejoin.
    const started = Date.now();
    let code = 0;
    while (code === 0 && Date.now() - started < 15_000) {
      await new Promise((r) => setTimeout(r, 500));
      code = await c1.heartbeat('wire-session', a.memberId, 2);
    }
    expect(code).toBe(REBALANCE_IN_PROGRESS);
    expect(Date.now() - started).toBeGreaterThanOrEqual(5000);
    const a3 = await c1.join('wire-session', { memberId: a.memberId, sessionTimeoutMs: 6000 });
    expect(a3).toMatchObject({ errorCode: 0, generationId: 3, leader: a.memberId });
    expect(a3.members.map((m) => m.memberId)).toEqual([a.memberId]);
    await c1.leave('wire-session', a.memberId);
  }, 30_000);

  test('answers FindCoordinator with this node in every version, for groups and transactional ids', async () => {
    const [host, port] = node.kafka.split(':');
    for (const v of [0, 1, 2, 3]) expect(await c1.findCoordinator(v, 'any-group')).toMatchObject({ errorCode: 0, nodeId: 1, host, port: Number(port) });
    expect((await c1.findCoordinator(4, 'any-group')).coordinators).toEqual([{ key: 'any-group', nodeId: 1, host, port: Number(port), errorCode: 0, errorMessage: null }]);
    expect((await c1.findCoordinator(4, 'tx', 1)).coordinators).toEqual([{ key: 'tx', nodeId: 1, host, port: Number(port), errorCode: 0, errorMessage: null }]);
  });

  test('refuses a join with another protocol type, a too short session, or an unknown member id', async () => {
    const a = await c1.join('wire-bad', { version: 0 });
    expect(a).toMatchObject({ errorCode: 0, generationId: 1 });
    expect((await c2.join('wire-bad', { protocolType: 'connect' })).errorCode).toBe(INCONSISTENT_GROUP_PROTOCOL);
    expect((await c2.join('wire-bad', { protocols: [{ name: 'other', metadata: Buffer.alloc(0) }] })).errorCode).toBe(INCONSISTENT_GROUP_PROTOCOL);
    expect((await c2.join('wire-bad', { sessionTimeoutMs: 100 })).errorCode).toBe(INVALID_SESSION_TIMEOUT);
    expect((await c2.join('wire-bad', { memberId: 'made-up' })).errorCode).toBe(UNKNOWN_MEMBER_ID);
    expect((await c2.join('wire-nobody', { memberId: 'made-up' })).errorCode).toBe(UNKNOWN_MEMBER_ID);
    await c1.leave('wire-bad', a.memberId, 0);
  });
});

describe('the group coordinator at shutdown', () => {
  test('answers a JoinGroup waiting for a rebalance with NOT_COORDINATOR when the node stops', async () => {
    const node = await startNode({ args: ['--no-admin', '--shards', '1', '--shard-workers', '1'] });
    const c1 = await GroupWire.connect(node.kafka);
    const c2 = await GroupWire.connect(node.kafka);
    try {
      const a = await c1.join('wire-stop');
      expect((await c1.sync('wire-stop', a.memberId, 1, [])).errorCode).toBe(0);
      // The second member's join waits for the first to rejoin, which it never does.
      const waiting = c2.join('wire-stop');
      await new Promise((r) => setTimeout(r, 200));
      const [stopped, answer] = await Promise.all([node.stop(), waiting]);
      expect(answer.errorCode).toBe(16);
      expect(stopped).toBe(0);
    } finally {
      c1.close();
      c2.close();
    }
  });
});
