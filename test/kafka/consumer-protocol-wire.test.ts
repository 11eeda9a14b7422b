/**
 * The consumer group protocol (KIP-848) over the wire with the project's own codecs: what real
 * clients cannot be made to do on purpose — a wrong member epoch, an unknown member, a leave with
 * -1, a static member away with -2 and back, a member that never revokes or stops heartbeating —
 * and the incremental hand-over of partitions step by step (a partition goes to its new member
 * only once its previous owner has revoked it). Classic and consumer groups side by side.
 */
import { randomUUID } from 'node:crypto';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { GroupWire } from './group-wire-client';
import { waitFor } from './group-test-helpers';

const UNSUPPORTED_VERSION = 35;
const INCONSISTENT_GROUP_PROTOCOL = 23;
const UNKNOWN_MEMBER_ID = 25;
const INVALID_REQUEST = 42;
const GROUP_ID_NOT_FOUND = 69;
const FENCED_MEMBER_EPOCH = 110;
const UNRELEASED_INSTANCE_ID = 111;
const UNSUPPORTED_ASSIGNOR = 112;
const STALE_MEMBER_EPOCH = 113;
const INVALID_REGULAR_EXPRESSION = 128;

type Parts = Array<{ topicId: string; partitions: number[] }>;
const flat = (a: { topicPartitions: Parts } | null): number[] => (a?.topicPartitions ?? []).flatMap((t) => t.partitions).sort((x, y) => x - y);

describe('the consumer group protocol (KIP-848) over the wire', () => {
  let node: NodeProcess;
  let w: GroupWire;

  beforeAll(async () => {
    // A short session so expiry shows within the test; heartbeats every 200 ms.
    node = await startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1', '--kafka-group-consumer-session-timeout-ms', '3000', '--kafka-group-consumer-heartbeat-interval-ms', '200'] });
    w = await GroupWire.connect(node.kafka);
    expect(await w.createTopic('cgw-4', 4)).toBe(0);
    expect(await w.createTopic('cgw-re-a', 1)).toBe(0);
    expect(await w.createTopic('cgw-re-b', 2)).toBe(0);
  });
  afterAll(async () => {
    w?.close();
    await node?.stop();
  });

  test('ApiVersions lists ConsumerGroupHeartbeat 0-1, ConsumerGroupDescribe 0 and OffsetCommit/OffsetFetch up to v9', async () => {
    const keys = new Map((await w.apiVersions()).apiKeys.map((k) => [k.apiKey, [k.minVersion, k.maxVersion]]));
    expect(keys.get(68)).toEqual([0, 1]);
    expect(keys.get(69)).toEqual([0, 0]);
    expect(keys.get(8)?.[1]).toBe(9);
    expect(keys.get(9)?.[1]).toBe(9);
  });

  test('hands partitions over incrementally: the new member gets them only after the old one revoked them; epochs fence', async () => {
    const g = 'cgw-incr';
    const a = randomUUID();
    const ja = await w.cgHeartbeat({ groupId: g, memberId: a, memberEpoch: 0, rebalanceTimeoutMs: 10_000, subscribedTopicNames: ['cgw-4'], topicPartitions: [] });
    expect(ja).toMatchObject({ errorCode: 0, memberId: a, memberEpoch: 1, heartbeatIntervalMs: 200 });
    expect(flat(ja.assignment)).toEqual([0, 1, 2, 3]);
    const topicId = ja.assignment!.topicPartitions[0]!.topicId;
    const owned = (ps: number[]): Parts => [{ topicId, partitions: ps }];

    // Fencing: a higher epoch than the member's, an unknown member, a member id left out.
    expect((await w.cgHeartbeat({ groupId: g, memberId: a, memberEpoch: 7 })).errorCode).toBe(FENCED_MEMBER_EPOCH);
    expect((await w.cgHeartbeat({ groupId: g, memberId: 'nobody', memberEpoch: 1 })).errorCode).toBe(UNKNOWN_MEMBER_ID);
    expect((await w.cgHeartbeat({ groupId: g, memberId: '', memberEpoch: 1 })).errorCode).toBe(INVALID_REQUEST);

    // B joins: group epoch 2; its target is half the partitions, all still held by A.
    const b = randomUUID();
    const jb = await w.cgHeartbeat({ groupId: g, memberId: b, memberEpoch: 0, rebalanceTimeoutMs: 10_000, subscribedTopicNames: ['cgw-4'], topicPartitions: [] });
    expect(jb).toMatchObject({ errorCode: 0, memberEpoch: 2 });
    expect(flat(jb.assignment)).toEqual([]);
    const d1 = (await w.cgDescribe([g])).groups[0]!;
    expect(d1).toMatchObject({ errorCode: 0, groupState: 'Reconciling', groupEpoch: 2, assignmentEpoch: 2, assignorName: 'uniform' });

    // A is asked to give up two partitions; it keeps the other two and its epoch until it has.
    const ra = await w.cgHeartbeat({ groupId: g, memberId: a, memberEpoch: 1, topicPartitions: owned([0, 1, 2, 3]) });
    expect(ra.memberEpoch).toBe(1);
    const kept = flat(ra.assignment);
    expect(kept).toHaveLength(2);
    const given = [0, 1, 2, 3].filter((p) => !kept.includes(p));
    // B still gets nothing: A has not confirmed the revocation.
    expect(flat((await w.cgHeartbeat({ groupId: g, memberId: b, memberEpoch: 2, topicPartitions: [] })).assignment)).toEqual([]);
    // A commits with epoch 1 during the revocation (it holds those partitions at epoch 1).
    expect(await w.commitErrors9(g, a, 1, 'cgw-4', [[given[0]!, 3n]])).toEqual([0]);
    // A confirms: epoch 2 and its two partitions; then B gets the two A gave up.
    const ca = await w.cgHeartbeat({ groupId: g, memberId: a, memberEpoch: 1, topicPartitions: owned(kept) });
    expect(ca.memberEpoch).toBe(2);
    expect(flat(ca.assignment)).toEqual(kept);
    const cb = await w.cgHeartbeat({ groupId: g, memberId: b, memberEpoch: 2, topicPartitions: [] });
    expect(flat(cb.assignment)).toEqual(given);
    const d2 = (await w.cgDescribe([g])).groups[0]!;
    expect(d2.groupState).toBe('Stable');
    expect(d2.members.map((m) => [m.memberId, m.memberEpoch, m.assignment.topicPartitions[0]?.topicName]).sort()).toEqual([[a, 2, 'cgw-4'], [b, 2, 'cgw-4']].sort());

    // The previous epoch with owned partitions inside the assignment is accepted (a lost answer); beyond it, fenced.
    expect((await w.cgHeartbeat({ groupId: g, memberId: a, memberEpoch: 1, topicPartitions: owned(kept) })).errorCode).toBe(0);
    expect((await w.cgHeartbeat({ groupId: g, memberId: a, memberEpoch: 1, topicPartitions: owned([0, 1, 2, 3]) })).errorCode).toBe(FENCED_MEMBER_EPOCH);
    // The fenced member rejoins with epoch 0.
    const rj = await w.cgHeartbeat({ groupId: g, memberId: a, memberEpoch: 0, rebalanceTimeoutMs: 10_000, subscribedTopicNames: ['cgw-4'], topicPartitions: [] });
    expect(rj.errorCode).toBe(0);

    // Offsets: v9 with a stale epoch, an unknown member, a member commit in v8; OffsetFetch v9 the same.
    const bEpoch = (await w.cgDescribe([g])).groups[0]!.members.find((m) => m.memberId === b)!.memberEpoch;
    expect(await w.commitErrors9(g, b, bEpoch + 1, 'cgw-4', [[given[0]!, 5n]])).toEqual([STALE_MEMBER_EPOCH]);
    expect(await w.commitErrors9(g, 'nobody', bEpoch, 'cgw-4', [[given[0]!, 5n]])).toEqual([UNKNOWN_MEMBER_ID]);
    expect((await w.commit(g, b, bEpoch, 'cgw-4', [[given[0]!, 5n]], 8)).topics[0]!.partitions[0]!.errorCode).toBe(UNSUPPORTED_VERSION);
    const f = await w.fetchOffsets({ groups: [{ groupId: g, memberId: b, memberEpoch: bEpoch + 5, topics: null }], requireStable: false }, 9);
    expect(f.groups![0]!.errorCode).toBe(STALE_MEMBER_EPOCH);
    const f2 = await w.fetchOffsets({ groups: [{ groupId: g, memberId: 'nobody', memberEpoch: 3, topics: null }], requireStable: false }, 9);
    expect(f2.groups![0]!.errorCode).toBe(UNKNOWN_MEMBER_ID);
    // An admin's fetch (no member, epoch -1) is answered.
    const f3 = await w.fetchOffsets({ groups: [{ groupId: g, memberId: null, memberEpoch: -1, topics: null }], requireStable: false }, 9);
    expect(f3.groups![0]!.errorCode).toBe(0);
    expect(f3.groups![0]!.topics[0]!.partitions.find((p) => p.partitionIndex === given[0])!.committedOffset).toBe(3n);

    // Leave with -1: the answer's epoch is -1, the group epoch moves, the member is gone.
    const before = (await w.cgDescribe([g])).groups[0]!.groupEpoch;
    expect(await w.cgHeartbeat({ groupId: g, memberId: b, memberEpoch: -1 })).toMatchObject({ errorCode: 0, memberEpoch: -1 });
    const d3 = (await w.cgDescribe([g])).groups[0]!;
    expect(d3.groupEpoch).toBe(before + 1);
    expect(d3.members.map((m) => m.memberId)).toEqual([a]);
    expect((await w.cgHeartbeat({ groupId: g, memberId: b, memberEpoch: bEpoch })).errorCode).toBe(UNKNOWN_MEMBER_ID);
    await w.cgHeartbeat({ groupId: g, memberId: a, memberEpoch: -1 });
  });

  test('a static member leaves with -2, keeps its partitions, and comes back under a new member id with the same assignment', async () => {
    const g = 'cgw-static';
    const s1 = randomUUID();
    const j = await w.cgHeartbeat({ groupId: g, memberId: s1, memberEpoch: 0, instanceId: 'inst-1', rebalanceTimeoutMs: 10_000, subscribedTopicNames: ['cgw-4'], topicPartitions: [] });
    expect(j).toMatchObject({ errorCode: 0, memberEpoch: 1 });
    const o = randomUUID();
    const jo = await w.cgHeartbeat({ groupId: g, memberId: o, memberEpoch: 0, rebalanceTimeoutMs: 10_000, subscribedTopicNames: ['cgw-4'], topicPartitions: [] });
    expect(jo.errorCode).toBe(0);
    const topicId = j.assignment!.topicPartitions[0]!.topicId;
    // s1 settles on its half.
    const r = await w.cgHeartbeat({ groupId: g, memberId: s1, memberEpoch: 1, topicPartitions: [{ topicId, partitions: [0, 1, 2, 3] }] });
    const mine = flat(r.assignment);
    const settled = await w.cgHeartbeat({ groupId: g, memberId: s1, memberEpoch: 1, topicPartitions: [{ topicId, partitions: mine }] });
    expect(settled.memberEpoch).toBe(2);

    // Another process claiming the instance id while s1 is live: UNRELEASED_INSTANCE_ID.
    expect((await w.cgHeartbeat({ groupId: g, memberId: randomUUID(), memberEpoch: 0, instanceId: 'inst-1', rebalanceTimeoutMs: 10_000, subscribedTopicNames: ['cgw-4'], topicPartitions: [] })).errorCode).toBe(
      UNRELEASED_INSTANCE_ID,
    );
    // -2 needs the instance id.
    expect((await w.cgHeartbeat({ groupId: g, memberId: s1, memberEpoch: -2 })).errorCode).toBe(INVALID_REQUEST);
    expect(await w.cgHeartbeat({ groupId: g, memberId: s1, memberEpoch: -2, instanceId: 'inst-1' })).toMatchObject({ errorCode: 0, memberEpoch: -2 });
    const epochAway = (await w.cgDescribe([g])).groups[0]!.groupEpoch;
    // Back under a new member id: the same partitions, and the group epoch has not moved.
    const s2 = randomUUID();
    const back = await w.cgHeartbeat({ groupId: g, memberId: s2, memberEpoch: 0, instanceId: 'inst-1', rebalanceTimeoutMs: 10_000, subscribedTopicNames: ['cgw-4'], topicPartitions: [] });
    expect(back.errorCode).toBe(0);
    expect(flat(back.assignment)).toEqual(mine);
    const d = (await w.cgDescribe([g])).groups[0]!;
    expect(d.groupEpoch).toBe(epochAway);
    expect(d.members.find((m) => m.instanceId === 'inst-1')?.memberId).toBe(s2);
    expect(d.members.some((m) => m.memberId === s1)).toBe(false);
    await w.cgHeartbeat({ groupId: g, memberId: s2, memberEpoch: -1, instanceId: 'inst-1' });
    await w.cgHeartbeat({ groupId: g, memberId: o, memberEpoch: -1 });
  });

  test('the range assignor gives contiguous ranges; a regex subscribes to the topics it matches; bad assignors and regexes are refused', async () => {
    const g = 'cgw-range';
    const [a, b] = ['m-a-' + randomUUID(), 'm-b-' + randomUUID()];
    await w.cgHeartbeat({ groupId: g, memberId: a, memberEpoch: 0, rebalanceTimeoutMs: 10_000, subscribedTopicNames: ['cgw-4'], serverAssignor: 'range', topicPartitions: [] });
    await w.cgHeartbeat({ groupId: g, memberId: b, memberEpoch: 0, rebalanceTimeoutMs: 10_000, subscribedTopicNames: ['cgw-4'], serverAssignor: 'range', topicPartitions: [] });
    const d = (await w.cgDescribe([g])).groups[0]!;
    expect(d.assignorName).toBe('range');
    const targets = new Map(d.members.map((m) => [m.memberId, m.targetAssignment.topicPartitions.flatMap((t) => t.partitions).sort()]));
    expect(targets.get(a)).toEqual([0, 1]);
    expect(targets.get(b)).toEqual([2, 3]);
    await w.cgHeartbeat({ groupId: g, memberId: a, memberEpoch: -1 });
    await w.cgHeartbeat({ groupId: g, memberId: b, memberEpoch: -1 });

    const re = randomUUID();
    const jr = await w.cgHeartbeat({ groupId: 'cgw-regex', memberId: re, memberEpoch: 0, rebalanceTimeoutMs: 10_000, subscribedTopicNames: null, subscribedTopicRegex: 'cgw-re-.*', topicPartitions: [] });
    expect(jr.errorCode).toBe(0);
    const dr = (await w.cgDescribe(['cgw-regex'])).groups[0]!;
    expect(dr.members[0]!.subscribedTopicRegex).toBe('cgw-re-.*');
    expect(dr.members[0]!.assignment.topicPartitions.map((t) => `${t.topicName}:${t.partitions.join(',')}`).sort()).toEqual(['cgw-re-a:0', 'cgw-re-b:0,1']);
    await w.cgHeartbeat({ groupId: 'cgw-regex', memberId: re, memberEpoch: -1 });

    const bad = { groupId: 'cgw-bad', memberId: randomUUID(), memberEpoch: 0, rebalanceTimeoutMs: 10_000, subscribedTopicNames: ['cgw-4'], topicPartitions: [] };
    expect((await w.cgHeartbeat({ ...bad, serverAssignor: 'sticky-ish' })).errorCode).toBe(UNSUPPORTED_ASSIGNOR);
    expect((await w.cgHeartbeat({ ...bad, subscribedTopicNames: null, subscribedTopicRegex: '(' })).errorCode).toBe(INVALID_REGULAR_EXPRESSION);
    expect((await w.cgHeartbeat({ ...bad, rebalanceTimeoutMs: -1 })).errorCode).toBe(INVALID_REQUEST);
  });

  test('a member that stops heartbeating is removed after the session timeout, and one that never revokes after its rebalance timeout', async () => {
    const g = 'cgw-expire';
    const [a, b] = [randomUUID(), randomUUID()];
    const ja = await w.cgHeartbeat({ groupId: g, memberId: a, memberEpoch: 0, rebalanceTimeoutMs: 1_000, subscribedTopicNames: ['cgw-4'], topicPartitions: [] });
    const topicId = ja.assignment!.topicPartitions[0]!.topicId;
    // B joins and keeps heartbeating; A is asked to revoke and never does: fenced after 1 s, and B gets everything.
    await w.cgHeartbeat({ groupId: g, memberId: b, memberEpoch: 0, rebalanceTimeoutMs: 10_000, subscribedTopicNames: ['cgw-4'], topicPartitions: [] });
    expect(flat((await w.cgHeartbeat({ groupId: g, memberId: a, memberEpoch: 1, topicPartitions: [{ topicId, partitions: [0, 1, 2, 3] }] })).assignment)).toHaveLength(2);
    let bEpoch = 2;
    let bParts: number[] = [];
    await waitFor(async () => {
      const r = await w.cgHeartbeat({ groupId: g, memberId: b, memberEpoch: bEpoch, topicPartitions: [{ topicId, partitions: bParts }] });
      bEpoch = r.memberEpoch;
      if (r.assignment !== null) bParts = flat(r.assignment);
      return bParts.length === 4;
    }, 'the member that did not revoke is fenced and its partitions go to the other', 20_000);
    expect((await w.cgHeartbeat({ groupId: g, memberId: a, memberEpoch: 1 })).errorCode).toBe(UNKNOWN_MEMBER_ID);
    // B stops heartbeating: gone after the 3 s session timeout, and the group with it.
    await waitFor(async () => (await w.cgDescribe([g])).groups[0]!.members.length === 0, 'the silent member expires', 20_000);
  });

  test('a group is classic or consumer: mixing answers INCONSISTENT_GROUP_PROTOCOL or GROUP_ID_NOT_FOUND; an empty group changes kind keeping its offsets', async () => {
    const m = randomUUID();
    expect((await w.cgHeartbeat({ groupId: 'cgw-mix', memberId: m, memberEpoch: 0, rebalanceTimeoutMs: 10_000, subscribedTopicNames: ['cgw-4'], topicPartitions: [] })).errorCode).toBe(0);
    expect((await w.join('cgw-mix')).errorCode).toBe(INCONSISTENT_GROUP_PROTOCOL);
    const classic = await w.join('cgw-classic');
    expect(classic.errorCode).toBe(0);
    expect((await w.cgHeartbeat({ groupId: 'cgw-classic', memberId: randomUUID(), memberEpoch: 0, rebalanceTimeoutMs: 10_000, subscribedTopicNames: ['cgw-4'], topicPartitions: [] })).errorCode).toBe(GROUP_ID_NOT_FOUND);
    const [dClassic, dUnknown] = (await w.cgDescribe(['cgw-classic', 'cgw-nobody'])).groups;
    expect(dClassic!.errorCode).toBe(GROUP_ID_NOT_FOUND);
    expect(dUnknown!.errorCode).toBe(GROUP_ID_NOT_FOUND);
    // DescribeGroups below v6 answers a consumer-protocol group Dead with no error, as Kafka 4.x does.
    expect((await w.describeGroups(['cgw-mix'])).groups[0]).toMatchObject({ errorCode: 0, groupId: 'cgw-mix', groupState: 'Dead', protocolType: '', members: [] });

    // The consumer group commits, empties, and a classic member takes it over with the offsets kept.
    const epoch = (await w.cgDescribe(['cgw-mix'])).groups[0]!.members[0]!.memberEpoch;
    expect(await w.commitErrors9('cgw-mix', m, epoch, 'cgw-4', [[0, 42n]])).toEqual([0]);
    await w.cgHeartbeat({ groupId: 'cgw-mix', memberId: m, memberEpoch: -1 });
    expect((await w.cgDescribe(['cgw-mix'])).groups[0]).toMatchObject({ errorCode: 0, groupState: 'Empty' });
    const taken = await w.join('cgw-mix');
    expect(taken.errorCode).toBe(0);
    const f = await w.fetchOffsets({ groups: [{ groupId: 'cgw-mix', memberId: null, memberEpoch: -1, topics: [{ name: 'cgw-4', partitionIndexes: [0] }] }], requireStable: false }, 9);
    expect(f.groups![0]!.topics[0]!.partitions[0]!.committedOffset).toBe(42n);
    await w.leave('cgw-mix', taken.memberId);
    await w.leave('cgw-classic', classic.memberId);
  });
});

describe('a consumer group through a restart of its coordinator', () => {
  let node: NodeProcess | undefined;
  afterAll(async () => {
    await node?.stop();
  });

  test('a node SIGKILLed and started again goes on with the group\'s members, epochs and assignments (stored at each change); a member that does not come back expires', async () => {
    const args = ['--no-admin', '--shards', '2', '--shard-workers', '1', '--kafka-group-consumer-session-timeout-ms', '3000', '--kafka-group-consumer-heartbeat-interval-ms', '200'];
    node = await startNode({ args });
    let w = await GroupWire.connect(node.kafka);
    expect(await w.createTopic('cgr-2', 2)).toBe(0);
    const g = 'cgr';
    const [a, b] = [randomUUID(), randomUUID()];
    const state = new Map<string, { epoch: number; owned: Parts }>();
    const beat = async (m: string): Promise<void> => {
      const s = state.get(m);
      const r = await w.cgHeartbeat({ groupId: g, memberId: m, memberEpoch: s?.epoch ?? 0, rebalanceTimeoutMs: 10_000, subscribedTopicNames: ['cgr-2'], topicPartitions: s?.owned ?? [] });
      expect(r.errorCode).toBe(0);
      state.set(m, { epoch: r.memberEpoch, owned: r.assignment === null ? (s?.owned ?? []) : r.assignment.topicPartitions });
    };
    await beat(a);
    await beat(b);
    // Heartbeats with what each owns until the partition moved from a to b.
    await waitFor(async () => {
      await beat(a);
      await beat(b);
      const d = (await w.cgDescribe([g])).groups[0]!;
      return d.groupState === 'Stable';
    }, 'the group is stable with one partition each', 20_000);
    const before = (await w.cgDescribe([g])).groups[0]!;
    expect(new Set(before.members.flatMap((m) => flat(m.assignment)))).toEqual(new Set([0, 1]));
    expect(await w.commitErrors9(g, a, state.get(a)!.epoch, 'cgr-2', [[0, 7n]])).toEqual([0]);

    const dataDir = node.dataDir;
    w.close();
    await node.kill();
    node = await startNode({ dataDir, args });
    w = await GroupWire.connect(node.kafka);
    // a carries on with its epoch and partitions: no rejoin, and it may commit at that epoch.
    const aEpoch = state.get(a)!.epoch;
    const r = await w.cgHeartbeat({ groupId: g, memberId: a, memberEpoch: aEpoch, topicPartitions: state.get(a)!.owned });
    expect([r.errorCode, r.memberEpoch]).toEqual([0, aEpoch]);
    expect(await w.commitErrors9(g, a, aEpoch, 'cgr-2', [[flat({ topicPartitions: state.get(a)!.owned })[0]!, 8n]])).toEqual([0]);
    const after = (await w.cgDescribe([g])).groups[0]!;
    expect({ epoch: after.groupEpoch, members: after.members.map((m) => [m.memberId, m.memberEpoch, flat(m.assignment)]).sort() }).toEqual({
      epoch: before.groupEpoch,
      members: before.members.map((m) => [m.memberId, m.memberEpoch, flat(m.assignment)]).sort(),
    });
    // b never comes back: its session (3 s from the restart) ends and a gets both partitions.
    let got: number[] = [];
    await waitFor(async () => {
      const x = await w.cgHeartbeat({ groupId: g, memberId: a, memberEpoch: state.get(a)!.epoch, topicPartitions: state.get(a)!.owned });
      expect(x.errorCode).toBe(0);
      state.set(a, { epoch: x.memberEpoch, owned: x.assignment === null ? state.get(a)!.owned : x.assignment.topicPartitions });
      got = flat({ topicPartitions: state.get(a)!.owned });
      return got.length === 2;
    }, 'b expires and a gets both partitions', 20_000);
    const last = (await w.cgDescribe([g])).groups[0]!;
    expect(last.members.map((m) => m.memberId)).toEqual([a]);
    expect(last.groupEpoch).toBeGreaterThan(before.groupEpoch);
    w.close();
  });
});
