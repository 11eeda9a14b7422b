/**
 * Share groups (KIP-932) on the Kafka listener: ShareGroupHeartbeat, ShareGroupDescribe,
 * ShareFetch and ShareAcknowledge against a real node, spoken by a test-only client built from
 * the project's own codecs (share-wire-client.ts): no client installed here speaks these RPCs
 * (kafkajs, @platformatic/kafka and Debian's librdkafka 2.0.2 have no share consumer).
 *
 * Two Kafka members split a topic's records with no record held by both; a released record comes
 * back with its delivery count + 1; a rejected one goes to the group's dead-letter stream; a
 * Kafka member and an HTTP leaser share one group; a lock that ends redelivers; share session
 * epochs and member epochs are checked with Kafka's error codes.
 */
import { randomUUID } from 'node:crypto';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { ACCEPT, REJECT, RELEASE, type Got, ShareWire, acksOf, gotOf } from './share-wire-client';
import { waitFor } from './group-test-helpers';

jest.setTimeout(110_000);

const UNKNOWN_MEMBER_ID = 25;
const INVALID_REQUEST = 42;
const GROUP_ID_NOT_FOUND = 69;
const FENCED_MEMBER_EPOCH = 110;
const INVALID_RECORD_STATE = 121;
const SHARE_SESSION_NOT_FOUND = 122;
const INVALID_SHARE_SESSION_EPOCH = 123;

const JSON_TYPE = { 'content-type': 'application/json' };

/** Records of a ShareFetch answer, all partitions. */
const recordsOf = (g: Got[]): Got['records'] => g.flatMap((p) => p.records);

describe('share groups (KIP-932) over the Kafka listener', () => {
  let node: NodeProcess;
  let w: ShareWire;

  /** Set the group's config over HTTP (the share groups' config is one for both listeners). */
  const configure = async (topic: string, group: string, doc: Record<string, unknown>): Promise<void> => {
    const r = await fetch(`${node.url}/_share/${topic}?group=${encodeURIComponent(group)}`, { method: 'PATCH', headers: JSON_TYPE, body: JSON.stringify(doc) });
    expect(r.status).toBe(200);
  };

  /** A topic with `n` records v0… on each partition, and a member of `group` subscribed to it: its id, epoch and the topic id. */
  const setup = async (topic: string, partitions: number, n: number, group: string, config: Record<string, unknown> = {}): Promise<{ topicId: string }> => {
    expect(await w.createTopic(topic, partitions)).toBe(0);
    for (let p = 0; p < partitions; p++) await w.produce(topic, p, Array.from({ length: n }, (_, i) => `v${i}`));
    await configure(topic, group, { 'share.auto.offset.reset': 'earliest', ...config });
    const hb = await w.heartbeat({ groupId: `${group}-probe`, memberId: '', memberEpoch: 0, subscribedTopicNames: [topic] });
    expect(hb.errorCode).toBe(0);
    return { topicId: hb.assignment!.topicPartitions[0]!.topicId };
  };

  beforeAll(async () => {
    // A short session so a member that stops heartbeating goes within the test.
    node = await startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1', '--kafka-group-consumer-session-timeout-ms', '3000', '--kafka-group-consumer-heartbeat-interval-ms', '200'] });
    w = await ShareWire.connect(node.kafka);
  });
  afterAll(async () => {
    w?.close();
    await node?.stop();
  });

  test('ApiVersions lists ShareGroupHeartbeat 76, ShareGroupDescribe 77, ShareFetch 78 and ShareAcknowledge 79 (v0)', async () => {
    const keys = new Map((await w.apiVersions()).apiKeys.map((k) => [k.apiKey, [k.minVersion, k.maxVersion]]));
    for (const key of [76, 77, 78, 79]) expect(keys.get(key)).toEqual([0, 0]);
  });

  test('members join, are assigned partitions by the simple assignor, are fenced by epoch, and leave; describe shows them', async () => {
    const g = 'shg-members';
    expect(await w.createTopic('shg-4', 4)).toBe(0);
    const a = await w.heartbeat({ groupId: g, memberId: '', memberEpoch: 0, subscribedTopicNames: ['shg-4'] });
    expect(a).toMatchObject({ errorCode: 0, memberEpoch: 1, heartbeatIntervalMs: 200 });
    expect(a.memberId).toMatch(/./);
    expect(a.assignment!.topicPartitions[0]!.partitions).toEqual([0, 1, 2, 3]);
    const bId = randomUUID();
    const b = await w.heartbeat({ groupId: g, memberId: bId, memberEpoch: 0, subscribedTopicNames: ['shg-4'] });
    expect(b).toMatchObject({ errorCode: 0, memberId: bId, memberEpoch: 2 });
    // A's next heartbeat moves it to epoch 2 with half the partitions; B has the other half.
    const a2 = await w.heartbeat({ groupId: g, memberId: a.memberId!, memberEpoch: 1 });
    expect(a2.memberEpoch).toBe(2);
    const pa = a2.assignment!.topicPartitions[0]!.partitions;
    const pb = b.assignment!.topicPartitions[0]!.partitions;
    expect(pa).toHaveLength(2);
    expect([...pa, ...pb].sort()).toEqual([0, 1, 2, 3]);
    // Fencing.
    expect((await w.heartbeat({ groupId: g, memberId: a.memberId!, memberEpoch: 1 })).errorCode).toBe(FENCED_MEMBER_EPOCH);
    expect((await w.heartbeat({ groupId: g, memberId: 'nobody', memberEpoch: 3 })).errorCode).toBe(UNKNOWN_MEMBER_ID);
    expect((await w.heartbeat({ groupId: g, memberId: '', memberEpoch: 0, subscribedTopicNames: [] })).errorCode).toBe(INVALID_REQUEST);
    const d = (await w.describe([g, 'shg-nobody'])).groups;
    expect(d[0]).toMatchObject({ errorCode: 0, groupId: g, groupState: 'Stable', groupEpoch: 2, assignorName: 'simple' });
    expect(d[0]!.members.map((m) => m.memberId).sort()).toEqual([a.memberId!, bId].sort());
    expect(d[0]!.members.every((m) => m.subscribedTopicNames[0] === 'shg-4' && m.assignment.topicPartitions[0]!.topicName === 'shg-4')).toBe(true);
    expect(d[1]!.errorCode).toBe(GROUP_ID_NOT_FOUND);
    // More members than partitions: a one-partition topic is assigned to both.
    expect(await w.createTopic('shg-1', 1)).toBe(0);
    const c1 = await w.heartbeat({ groupId: 'shg-one', memberId: '', memberEpoch: 0, subscribedTopicNames: ['shg-1'] });
    const c2 = await w.heartbeat({ groupId: 'shg-one', memberId: '', memberEpoch: 0, subscribedTopicNames: ['shg-1'] });
    expect(c2.assignment!.topicPartitions[0]!.partitions).toEqual([0]);
    expect((await w.heartbeat({ groupId: 'shg-one', memberId: c1.memberId!, memberEpoch: c1.memberEpoch })).assignment!.topicPartitions[0]!.partitions).toEqual([0]);
    // B leaves: A gets all four at its next heartbeat.
    expect(await w.heartbeat({ groupId: g, memberId: bId, memberEpoch: -1 })).toMatchObject({ errorCode: 0, memberEpoch: -1 });
    const a3 = await w.heartbeat({ groupId: g, memberId: a.memberId!, memberEpoch: 2 });
    expect(a3.memberEpoch).toBe(3);
    expect(a3.assignment!.topicPartitions[0]!.partitions).toEqual([0, 1, 2, 3]);
    // A member that stops heartbeating is removed after the session timeout (3 s).
    await waitFor(async () => (await w.describe([g])).groups[0]!.members.length === 0, 'member A expired', 30_000);
  });

  test('two members split a topic: no record is held by both; released records come back with delivery count 2; rejected ones are dead-lettered', async () => {
    const g = 'shg-split';
    const { topicId } = await setup('shs-1', 1, 100, g, { 'group.share.record.lock.duration.ms': 60_000, 'errors.deadletterqueue.topic.name': '/shs-1.dlq' });
    const [a, b] = ['member-a', 'member-b'];
    const epochs: Record<string, number> = { [a]: 0, [b]: 0 };
    const held = new Map<number, string>();
    const got = new Map<string, number[]>([[a, []], [b, []]]);
    // Small fetches alternate between the members until the partition has nothing left to hand out.
    for (let round = 0; round < 200; round++) {
      const m = round % 2 === 0 ? a : b;
      const res = await w.fetch({ groupId: g, memberId: m, epoch: epochs[m]!, topicId, partitions: [0], partitionMaxBytes: 100 });
      expect(res.errorCode).toBe(0);
      epochs[m] = epochs[m]! + 1;
      const recs = recordsOf(gotOf(res));
      for (const r of recs) {
        expect(held.get(r.offset)).toBeUndefined(); // never held by the other member while locked
        expect(r).toMatchObject({ deliveryCount: 1, value: `v${r.offset}` });
        held.set(r.offset, m);
        got.get(m)!.push(r.offset);
      }
      if (held.size === 100) break;
    }
    expect([...held.keys()].sort((x, y) => x - y)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(got.get(a)!.length).toBeGreaterThan(0);
    expect(got.get(b)!.length).toBeGreaterThan(0);
    // A accepts all but its first two records: one released, one rejected. B accepts everything.
    const [released, rejected, ...accepted] = got.get(a)!.sort((x, y) => x - y);
    const ackA = await w.acknowledge({ groupId: g, memberId: a, epoch: epochs[a]!, topicId, acks: { 0: [...acksOf([released!], RELEASE), ...acksOf([rejected!], REJECT), ...acksOf(accepted, ACCEPT)].sort((x, y) => x.first - y.first) } });
    epochs[a] = epochs[a]! + 1;
    expect(ackA).toMatchObject({ errorCode: 0, responses: [{ partitions: [{ partitionIndex: 0, errorCode: 0 }] }] });
    // Acknowledging a record another member holds: INVALID_RECORD_STATE.
    const wrong = await w.acknowledge({ groupId: g, memberId: a, epoch: epochs[a]!, topicId, acks: { 0: acksOf([got.get(b)![0]!], ACCEPT) } });
    epochs[a] = epochs[a]! + 1;
    expect(wrong.responses[0]!.partitions[0]!.errorCode).toBe(INVALID_RECORD_STATE);
    // B's acknowledgements ride on its next fetch, which gets the released record, delivered a second time.
    const rb = await w.fetch({ groupId: g, memberId: b, epoch: epochs[b]!, topicId, partitions: [0], acks: { 0: acksOf(got.get(b)!, ACCEPT) }, maxWaitMs: 5000 });
    epochs[b] = epochs[b]! + 1;
    const again = gotOf(rb)[0]!;
    expect(again.acknowledgeErrorCode).toBe(0);
    expect(again.records).toEqual([{ offset: released, deliveryCount: 2, value: `v${released}` }]);
    await w.acknowledge({ groupId: g, memberId: b, epoch: epochs[b]!, topicId, acks: { 0: acksOf([released!], ACCEPT) } });
    // The rejected record is in the dead-letter stream, as an HTTP reject puts it there.
    const dlq = (await (await fetch(`${node.url}/shs-1.dlq`)).json()) as Array<{ body?: string; body_b64?: string; headers: Record<string, string> }>;
    expect(dlq.map((r) => [r.body ?? Buffer.from(r.body_b64!, 'base64').toString(), r.headers['svc-share-seq'], r.headers['svc-share-group']])).toEqual([[`v${rejected}`, String(rejected), g]]);
    // Every record done: the partition's start is past them all.
    const state = (await (await fetch(`${node.url}/_share/shs-1?group=${g}`)).json()) as { startSeq: number };
    expect(state.startSeq).toBe(100);
  });

  test('a Kafka member and an HTTP leaser of one group share the records, each accepted exactly once', async () => {
    const g = 'shg-mixed';
    const N = 60;
    const { topicId } = await setup('shm-1', 1, N, g, { 'group.share.record.lock.duration.ms': 60_000 });
    const lease = async (): Promise<{ lease: string; records: Array<{ seq: number; body?: string }> }> => {
      const r = await fetch(`${node.url}/_share/shm-1?group=${g}&op=lease&max=7&lock=60s`, { method: 'POST' });
      expect(r.status).toBe(200);
      return (await r.json()) as { lease: string; records: Array<{ seq: number }> };
    };
    const accepted = new Map<number, string>();
    let epoch = 0;
    let pending: number[] = [];
    for (let round = 0; round < 100 && accepted.size < N; round++) {
      const l = await lease();
      for (const r of l.records) {
        expect(accepted.has(r.seq)).toBe(false);
        accepted.set(r.seq, 'http');
      }
      if (l.records.length > 0) {
        const a = (await (await fetch(`${node.url}/_share/shm-1?group=${g}&op=ack`, { method: 'POST', headers: JSON_TYPE, body: JSON.stringify({ lease: l.lease, accept: l.records.map((r) => r.seq) }) })).json()) as { applied: number[] };
        expect(a.applied.length).toBe(l.records.length);
      }
      const res = await w.fetch({ groupId: g, memberId: 'kafka-m', epoch, topicId, partitions: [0], partitionMaxBytes: 100, acks: epoch === 0 ? {} : { 0: acksOf(pending, ACCEPT) } });
      epoch++;
      const got = gotOf(res)[0]!;
      expect(got.acknowledgeErrorCode).toBe(0);
      pending = got.records.map((r) => r.offset);
      for (const r of got.records) {
        expect(accepted.has(r.offset)).toBe(false);
        accepted.set(r.offset, 'kafka');
      }
    }
    if (pending.length > 0) expect((await w.acknowledge({ groupId: g, memberId: 'kafka-m', epoch, topicId, acks: { 0: acksOf(pending, ACCEPT) } })).responses[0]!.partitions[0]!.errorCode).toBe(0);
    expect(accepted.size).toBe(N);
    const by = [...accepted.values()];
    expect(by.filter((x) => x === 'http').length).toBeGreaterThan(0);
    expect(by.filter((x) => x === 'kafka').length).toBeGreaterThan(0);
    const state = (await (await fetch(`${node.url}/_share/shm-1?group=${g}`)).json()) as { startSeq: number };
    expect(state.startSeq).toBe(N);
  });

  test('a lock that ends redelivers the record (delivery count 2) to another member; the late acknowledgement is INVALID_RECORD_STATE', async () => {
    const g = 'shg-expiry';
    const { topicId } = await setup('she-1', 1, 3, g, { 'group.share.record.lock.duration.ms': 1000 });
    const first = gotOf(await w.fetch({ groupId: g, memberId: 'slow', epoch: 0, topicId, partitions: [0] }))[0]!;
    expect(first.records.map((r) => [r.offset, r.deliveryCount])).toEqual([
      [0, 1],
      [1, 1],
      [2, 1],
    ]);
    // The other member waits in its fetch (MaxWaitMs) until the locks end.
    let epoch = 0;
    let again: Got['records'] = [];
    const until = Date.now() + 60_000;
    while (again.length === 0 && Date.now() < until) {
      again = recordsOf(gotOf(await w.fetch({ groupId: g, memberId: 'quick', epoch, topicId, partitions: [0], maxWaitMs: 2000 })));
      epoch++;
    }
    expect(again.map((r) => [r.offset, r.deliveryCount])).toEqual([
      [0, 2],
      [1, 2],
      [2, 2],
    ]);
    const late = await w.acknowledge({ groupId: g, memberId: 'slow', epoch: 1, topicId, acks: { 0: acksOf([0, 1, 2], ACCEPT) } });
    expect(late.responses[0]!.partitions[0]!.errorCode).toBe(INVALID_RECORD_STATE);
  });

  test('share session epochs: SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH, and closing with -1 gives the locks back', async () => {
    const g = 'shg-sessions';
    const { topicId } = await setup('shx-1', 1, 5, g, { 'group.share.record.lock.duration.ms': 60_000 });
    const m = 'sess-member';
    expect((await w.fetch({ groupId: g, memberId: m, epoch: 3, topicId, partitions: [0] })).errorCode).toBe(SHARE_SESSION_NOT_FOUND);
    expect((await w.acknowledge({ groupId: g, memberId: m, epoch: 0, topicId, acks: { 0: acksOf([0], ACCEPT) } })).errorCode).toBe(INVALID_SHARE_SESSION_EPOCH);
    // A request opening a session carries no acknowledgements.
    expect((await w.fetch({ groupId: g, memberId: m, epoch: 0, topicId, partitions: [0], acks: { 0: acksOf([0], ACCEPT) } })).errorCode).toBe(INVALID_REQUEST);
    const opened = gotOf(await w.fetch({ groupId: g, memberId: m, epoch: 0, topicId, partitions: [0] }))[0]!;
    expect(opened.records.map((r) => r.offset)).toEqual([0, 1, 2, 3, 4]);
    // The next request must carry epoch 1.
    const bad = await w.fetch({ groupId: g, memberId: m, epoch: 2, topicId, partitions: [0] });
    expect(bad).toMatchObject({ errorCode: INVALID_SHARE_SESSION_EPOCH, responses: [] });
    // Epoch 1: no partitions named, the session's are fetched (nothing left).
    const one = await w.fetch({ groupId: g, memberId: m, epoch: 1, topicId, partitions: [] });
    expect(one.errorCode).toBe(0);
    expect(recordsOf(gotOf(one))).toEqual([]);
    // One batch, one type for both offsets.
    expect((await w.acknowledge({ groupId: g, memberId: m, epoch: 2, topicId, acks: { 0: [{ first: 0, last: 1, type: ACCEPT }] } })).errorCode).toBe(0);
    // Close with -1, accepting 0 and 1 (just above): 2, 3, 4 are given back at once.
    const closed = await w.acknowledge({ groupId: g, memberId: m, epoch: -1, topicId, acks: { 0: acksOf([2], ACCEPT) } });
    expect(closed.errorCode).toBe(0);
    expect((await w.fetch({ groupId: g, memberId: m, epoch: 3, topicId, partitions: [0] })).errorCode).toBe(SHARE_SESSION_NOT_FOUND);
    const other = recordsOf(gotOf(await w.fetch({ groupId: g, memberId: 'other', epoch: 0, topicId, partitions: [0] })));
    expect(other.map((r) => [r.offset, r.deliveryCount])).toEqual([
      [3, 2],
      [4, 2],
    ]);
  });

  test('a member leaving its group (heartbeat -1) gives its locks back; a classic group id is not a share group', async () => {
    const g = 'shg-leave';
    const { topicId } = await setup('shl-1', 1, 4, g, { 'group.share.record.lock.duration.ms': 60_000 });
    const j = await w.heartbeat({ groupId: g, memberId: '', memberEpoch: 0, subscribedTopicNames: ['shl-1'] });
    const mine = recordsOf(gotOf(await w.fetch({ groupId: g, memberId: j.memberId!, epoch: 0, topicId, partitions: [0] })));
    expect(mine.map((r) => r.offset)).toEqual([0, 1, 2, 3]);
    expect((await w.heartbeat({ groupId: g, memberId: j.memberId!, memberEpoch: j.memberEpoch })).errorCode).toBe(0);
    expect((await w.heartbeat({ groupId: g, memberId: j.memberId!, memberEpoch: -1 })).memberEpoch).toBe(-1);
    let other: Got['records'] = [];
    await waitFor(async () => {
      const res = await w.fetch({ groupId: g, memberId: 'heir', epoch: 0, topicId, partitions: [0] });
      other = other.concat(recordsOf(gotOf(res)));
      return other.length === 4;
    }, 'the leaver\'s records given back');
    expect(other.map((r) => [r.offset, r.deliveryCount])).toEqual([0, 1, 2, 3].map((o) => [o, 2]));
    // A group id a consumer-protocol group owns answers GROUP_ID_NOT_FOUND here.
    const { GroupWire } = await import('./group-wire-client');
    const gw = await GroupWire.connect(node.kafka);
    try {
      expect((await gw.cgHeartbeat({ groupId: 'shg-consumer', memberId: randomUUID(), memberEpoch: 0, rebalanceTimeoutMs: 10_000, subscribedTopicNames: ['shl-1'], topicPartitions: [] })).errorCode).toBe(0);
    } finally {
      gw.close();
    }
    expect((await w.heartbeat({ groupId: 'shg-consumer', memberId: '', memberEpoch: 0, subscribedTopicNames: ['shl-1'] })).errorCode).toBe(GROUP_ID_NOT_FOUND);
    expect((await w.describe(['shg-consumer'])).groups[0]!.errorCode).toBe(GROUP_ID_NOT_FOUND);
  });
});
