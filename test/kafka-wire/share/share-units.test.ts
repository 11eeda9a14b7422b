/**
 * Share groups' pieces on the Kafka listener without a node: share session epochs, the parsing of
 * acknowledgement batches, and the `simple` assignor's membership epochs (src/kafka-wire/share).
 */
import { ShareGroups, ShareSessions, parseAckBatches } from '../../../src/kafka-wire/share';

const SHARE_SESSION_NOT_FOUND = 122;
const INVALID_SHARE_SESSION_EPOCH = 123;

describe('share sessions', () => {
  test('0 opens, the next epoch continues, another is INVALID_SHARE_SESSION_EPOCH, -1 closes, none is SHARE_SESSION_NOT_FOUND', () => {
    const s = new ShareSessions();
    expect(s.check('g', 'm', 1, true)).toMatchObject({ error: SHARE_SESSION_NOT_FOUND });
    expect(s.check('g', 'm', 0, false)).toMatchObject({ error: INVALID_SHARE_SESSION_EPOCH });
    expect(s.check('g', 'm', 0, true)).toMatchObject({ closing: false });
    expect(s.check('g', 'm', 2, true)).toMatchObject({ error: INVALID_SHARE_SESSION_EPOCH });
    expect(s.check('g', 'm', 1, true)).toMatchObject({ closing: false });
    expect(s.check('g', 'm', 2, false)).toMatchObject({ closing: false });
    expect(s.check('g', 'm', -1, false)).toMatchObject({ closing: true });
    s.close('g', 'm');
    expect(s.check('g', 'm', 3, true)).toMatchObject({ error: SHARE_SESSION_NOT_FOUND });
    expect(s.size).toBe(0);
  });
});

describe('acknowledgement batches', () => {
  const b = (first: number, last: number, types: number[]) => ({ firstOffset: BigInt(first), lastOffset: BigInt(last), acknowledgeTypes: types });

  test('one type for a batch or one per offset; gaps are skipped', () => {
    expect(parseAckBatches([b(0, 2, [1]), b(5, 7, [2, 0, 3])])).toEqual({
      acks: [
        { offset: 0, type: 'accept' },
        { offset: 1, type: 'accept' },
        { offset: 2, type: 'accept' },
        { offset: 5, type: 'release' },
        { offset: 7, type: 'reject' },
      ],
    });
  });

  test('refuses reversed, overlapping, oversized batches, wrong type counts and unknown types', () => {
    for (const bad of [[b(3, 2, [1])], [b(0, 3, [1]), b(3, 4, [1])], [b(0, 200_000, [1])], [b(0, 2, [1, 1])], [b(0, 0, [4])], [b(-1, 0, [1])]]) {
      expect(parseAckBatches(bad)).toHaveProperty('invalid');
    }
  });
});

describe('share group membership', () => {
  const topics = new Map([['t', { id: 'tid', partitions: 3 }]]);
  const gone: string[] = [];
  const groups = new ShareGroups({ timeoutsOf: () => ({ sessionTimeoutMs: 1000, heartbeatIntervalMs: 100 }), coordinates: () => true, otherKind: (g) => g === 'classic', onGone: (_g, m) => gone.push(m) });
  const join = (id: string, now: number) => groups.heartbeat('g', { memberId: id, memberEpoch: 0, rackId: null, subscribedTopicNames: ['t'], clientId: 'c', clientHost: '/h' }, topics, now);
  const beat = (id: string, epoch: number, now: number) => groups.heartbeat('g', { memberId: id, memberEpoch: epoch, rackId: null, subscribedTopicNames: null, clientId: 'c', clientHost: '/h' }, topics, now);

  test('epochs move with membership; partitions spread round-robin; an expired member goes and its locks are given back', () => {
    expect(join('a', 0)).toMatchObject({ memberEpoch: 1, assignment: { topicPartitions: [{ topicId: 'tid', partitions: [0, 1, 2] }] } });
    expect(join('b', 10)).toMatchObject({ memberEpoch: 2, assignment: { topicPartitions: [{ topicId: 'tid', partitions: [1] }] } });
    expect(beat('a', 1, 20)).toMatchObject({ memberEpoch: 2, assignment: { topicPartitions: [{ topicId: 'tid', partitions: [0, 2] }] } });
    // Nothing changed: no assignment sent.
    expect(beat('a', 2, 900)).toMatchObject({ memberEpoch: 2, assignment: null });
    // b stops heartbeating: after the session timeout it is removed, a gets everything.
    const r = beat('a', 2, 1500);
    expect(gone).toEqual(['b']);
    expect(r).toMatchObject({ memberEpoch: 3, assignment: { topicPartitions: [{ topicId: 'tid', partitions: [0, 1, 2] }] } });
    expect(groups.describe('g', topics, 1600)).toMatchObject({ errorCode: 0, groupState: 'Stable', groupEpoch: 3, assignmentEpoch: 3, members: [{ memberId: 'a' }] });
    expect(groups.heartbeat('classic', { memberId: '', memberEpoch: 0, rackId: null, subscribedTopicNames: ['t'], clientId: 'c', clientHost: '/h' }, topics, 0).errorCode).toBe(69);
  });
});
