/**
 * Group configs over the Kafka admin APIs (ConfigResource type GROUP, 32; KIP-848, KIP-932):
 * DescribeConfigs answers a share group's configs (defaults for any group id, DEFAULT_CONFIG;
 * set ones GROUP_CONFIG), IncrementalAlterConfigs SETs and DELETEs them with the share-group
 * validation (INVALID_CONFIG), AlterConfigs replaces the set; what is set is what HTTP leases and
 * Kafka share members get.
 *
 * The admin side is @platformatic/kafka 1.35, which sends resource type 32 (kafkajs 2.2.4 refuses
 * any type but topic, broker and broker logger before sending; Debian's librdkafka 2.0.2 sends its
 * ACL type GROUP, 3). The share member is the test-only share client (share-wire-client.ts); the
 * token checks speak the two APIs with the listener's own codecs, authenticated with SASL/PLAIN.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { decodeDescribeConfigsResponse, encodeDescribeConfigsRequest } from '../../src/kafka-wire/messages/describe-configs';
import { decodeIncrementalAlterConfigsResponse, encodeIncrementalAlterConfigsRequest } from '../../src/kafka-wire/messages/incremental-alter-configs';
import { decodeSaslAuthenticateResponse, encodeSaslAuthenticateRequest } from '../../src/kafka-wire/messages/sasl-authenticate';
import { decodeSaslHandshakeResponse, encodeSaslHandshakeRequest } from '../../src/kafka-wire/messages/sasl-handshake';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { RawKafka } from './kafka-test-client';
import { platformaticAdmin } from './platformatic-process';
import { ShareWire, gotOf } from './share-wire-client';
import { GroupWire } from './group-wire-client';
import { waitFor } from './group-test-helpers';

jest.setTimeout(90_000);

const GROUP = 32;
const SET = 0;
const DELETE = 1;
const APPEND = 2;
const DEFAULT_CONFIG = 5;
const GROUP_CONFIG = 8;
const INVALID_CONFIG = 40;
const INVALID_REQUEST = 42;
const GROUP_AUTHORIZATION_FAILED = 30;

const JSON_TYPE = { 'content-type': 'application/json' };

interface Described {
  name: string;
  value: string;
  readOnly: boolean;
  configSource: number;
  documentation?: string | null;
}
type Step = { value: unknown } | { error: { apiId: string | null; code: number | null; message: string } };

describe('group configs over DescribeConfigs, IncrementalAlterConfigs and AlterConfigs', () => {
  let node: NodeProcess;
  let w: ShareWire;

  const configs = (steps: object[]): Promise<Step[]> => platformaticAdmin<Step[]>({ broker: node.kafka, action: 'configs', steps });
  const describeStep = (group: string, keys?: string[], docs = false): object => ({ describe: { resources: [{ resourceType: GROUP, resourceName: group, ...(keys === undefined ? {} : { configurationKeys: keys }) }], includeDocumentation: docs } });
  const setStep = (group: string, entries: Array<[string, string | null, number?]>, validateOnly = false): object => ({
    incremental: { resources: [{ resourceType: GROUP, resourceName: group, configs: entries.map(([name, value, op]) => ({ name, value, configOperation: op ?? SET })) }], validateOnly },
  });
  /** The described configs of one group step, by name. */
  const byName = (s: Step | undefined): Record<string, Described> => {
    if (s === undefined || !('value' in s)) throw new Error(`describe failed: ${JSON.stringify(s)}`);
    return Object.fromEntries((s.value as Array<{ configs: Described[] }>)[0]!.configs.map((c) => [c.name, c]));
  };
  const valuesOf = (s: Step | undefined): Record<string, [string, number]> => Object.fromEntries(Object.values(byName(s)).map((c) => [c.name, [c.value, c.configSource]]));
  const httpConfig = async (stream: string, group: string): Promise<Record<string, unknown>> => {
    const r = await fetch(`${node.url}/_share/${stream}?group=${encodeURIComponent(group)}`);
    expect(r.status).toBe(200);
    return ((await r.json()) as { config: Record<string, unknown> }).config;
  };

  beforeAll(async () => {
    node = await startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1'] });
    w = await ShareWire.connect(node.kafka);
  });
  afterAll(async () => {
    w?.close();
    await node?.stop();
  });

  test('a group never seen is described with the defaults under Kafka\'s group config names (DEFAULT_CONFIG, not read-only); ConfigurationKeys pick by either name; documentation when asked', async () => {
    const [all, picked, docs] = await configs([describeStep('gc-never'), describeStep('gc-never', ['share.delivery.count.limit', 'group.share.record.lock.duration.ms', 'no.such.config']), describeStep('gc-never', ['share.auto.offset.reset'], true)]);
    expect(valuesOf(all)).toEqual({
      'share.record.lock.duration.ms': ['30000', DEFAULT_CONFIG],
      'share.delivery.count.limit': ['5', DEFAULT_CONFIG],
      'share.partition.max.record.locks': ['2000', DEFAULT_CONFIG],
      'share.auto.offset.reset': ['latest', DEFAULT_CONFIG],
      'errors.deadletterqueue.topic.name': ['', DEFAULT_CONFIG],
      // The membership timeouts default to the node's options (45 s and 5 s here).
      'consumer.session.timeout.ms': ['45000', DEFAULT_CONFIG],
      'consumer.heartbeat.interval.ms': ['5000', DEFAULT_CONFIG],
      'share.session.timeout.ms': ['45000', DEFAULT_CONFIG],
      'share.heartbeat.interval.ms': ['5000', DEFAULT_CONFIG],
    });
    expect(Object.values(byName(all)).every((c) => !c.readOnly)).toBe(true);
    expect(valuesOf(picked)).toEqual({ 'share.delivery.count.limit': ['5', DEFAULT_CONFIG], 'group.share.record.lock.duration.ms': ['30000', DEFAULT_CONFIG] });
    expect(byName(docs)['share.auto.offset.reset']!.documentation).toMatch(/latest or earliest/);
  });

  test('SET of the lock duration takes effect for HTTP leases and shows as GROUP_CONFIG; DELETE puts the default back', async () => {
    expect(await w.createTopic('gc-lock', 1)).toBe(0);
    await w.produce('gc-lock', 0, ['a', 'b']);
    const g = 'gc-lock-g';
    const [set, after] = await configs([setStep(g, [['share.record.lock.duration.ms', '120000'], ['group.share.delivery.count.limit', '3'], ['share.auto.offset.reset', 'earliest']]), describeStep(g)]);
    expect(set).toEqual({ value: null });
    expect(valuesOf(after)).toMatchObject({
      'share.record.lock.duration.ms': ['120000', GROUP_CONFIG],
      'share.delivery.count.limit': ['3', GROUP_CONFIG],
      'share.partition.max.record.locks': ['2000', DEFAULT_CONFIG],
      'share.auto.offset.reset': ['earliest', GROUP_CONFIG],
    });
    // The HTTP listener's view of the group is the same record.
    expect(await httpConfig('gc-lock', g)).toMatchObject({ 'group.share.record.lock.duration.ms': 120000, 'group.share.delivery.count.limit': 3, 'share.auto.offset.reset': 'earliest' });
    const before = Date.now();
    const lease = await fetch(`${node.url}/_share/gc-lock?group=${g}&op=lease`, { method: 'POST' });
    expect(lease.status).toBe(200);
    const leased = (await lease.json()) as { lockedUntilMs: number; records: Array<{ seq: number }> };
    expect(leased.records.map((r) => r.seq)).toEqual([0, 1]); // earliest, as set over Kafka
    expect(leased.lockedUntilMs - before).toBeGreaterThanOrEqual(119_000);
    expect(leased.lockedUntilMs - before).toBeLessThan(125_000);

    const [del, back] = await configs([setStep(g, [['share.record.lock.duration.ms', null, DELETE], ['group.share.delivery.count.limit', null, DELETE]]), describeStep(g, ['share.record.lock.duration.ms', 'share.delivery.count.limit', 'share.auto.offset.reset'])]);
    expect(del).toEqual({ value: null });
    expect(valuesOf(back)).toEqual({ 'share.record.lock.duration.ms': ['30000', DEFAULT_CONFIG], 'share.delivery.count.limit': ['5', DEFAULT_CONFIG], 'share.auto.offset.reset': ['earliest', GROUP_CONFIG] });
    expect(await httpConfig('gc-lock', g)).toMatchObject({ 'group.share.record.lock.duration.ms': 30000, 'group.share.delivery.count.limit': 5 });
  });

  test('a Kafka share member gets the lock duration set over Kafka: with 1 s, a record it does not acknowledge goes to another member a second time', async () => {
    expect(await w.createTopic('gc-member', 1)).toBe(0);
    await w.produce('gc-member', 0, ['x']);
    const g = 'gc-member-g';
    const [set] = await configs([setStep(g, [['share.record.lock.duration.ms', '1000'], ['share.auto.offset.reset', 'earliest']])]);
    expect(set).toEqual({ value: null });
    const hb = await w.heartbeat({ groupId: g, memberId: '', memberEpoch: 0, subscribedTopicNames: ['gc-member'] });
    expect(hb.errorCode).toBe(0);
    const topicId = hb.assignment!.topicPartitions[0]!.topicId;
    const first = gotOf(await w.fetch({ groupId: g, memberId: 'member-a', epoch: 0, topicId, partitions: [0] }));
    expect(first[0]!.records).toEqual([{ offset: 0, deliveryCount: 1, value: 'x' }]);
    // Still locked to A at once; B gets it after the 1 s lock (the default would hold it 30 s).
    expect(gotOf(await w.fetch({ groupId: g, memberId: 'member-b', epoch: 0, topicId, partitions: [0] }))[0]!.records).toEqual([]);
    await new Promise((r) => setTimeout(r, 1300));
    expect(gotOf(await w.fetch({ groupId: g, memberId: 'member-b', epoch: 1, topicId, partitions: [0], maxWaitMs: 2000 }))[0]!.records).toEqual([{ offset: 0, deliveryCount: 2, value: 'x' }]);
  });

  test('a bad value or an unknown name is INVALID_CONFIG naming it, and changes nothing of the resource; APPEND is INVALID_REQUEST; validateOnly checks without storing', async () => {
    const g = 'gc-invalid';
    const steps = await configs([
      setStep(g, [['share.delivery.count.limit', '4'], ['share.record.lock.duration.ms', '500']]),
      setStep(g, [['share.delivery.count.limit', 'many']]),
      setStep(g, [['share.auto.offset.reset', 'by_duration:PT1H']]),
      setStep(g, [['no.such.config', '1']]),
      setStep(g, [['consumer.session.timeout.ms', '500']]),
      setStep(g, [['share.delivery.count.limit', '4', APPEND]]),
      setStep(g, [['errors.deadletterqueue.topic.name', 'gc-no-such-topic']]),
      setStep(g, [['share.delivery.count.limit', '4']], true),
      describeStep(g, ['share.delivery.count.limit', 'share.record.lock.duration.ms']),
    ]);
    const errors = steps.slice(0, 7).map((s) => ('error' in s ? [s.error.code, s.error.message] : s));
    expect(errors).toEqual([
      [INVALID_CONFIG, expect.stringContaining('share.record.lock.duration.ms: an integer from 1000 to 3600000')],
      [INVALID_CONFIG, expect.stringContaining('share.delivery.count.limit: an integer from 2 to 10')],
      [INVALID_CONFIG, expect.stringContaining('share.auto.offset.reset: earliest or latest')],
      [INVALID_CONFIG, 'Unknown group config name: no.such.config'],
      [INVALID_CONFIG, expect.stringContaining('consumer.session.timeout.ms: an integer from 1000 to 1800000')],
      [INVALID_REQUEST, 'Config value append is not allowed for config key: share.delivery.count.limit'],
      [INVALID_CONFIG, expect.stringContaining('topic gc-no-such-topic does not exist')],
    ]);
    expect(steps[7]).toEqual({ value: null });
    // Neither the refused request's valid entry nor the validateOnly one was stored.
    expect(valuesOf(steps[8])).toEqual({ 'share.delivery.count.limit': ['5', DEFAULT_CONFIG], 'share.record.lock.duration.ms': ['30000', DEFAULT_CONFIG] });
  });

  test('consumer.* and share.* session timeouts and heartbeat intervals are per group: members are told the group\'s interval and removed after its session timeout', async () => {
    expect(await w.createTopic('gc-members', 1)).toBe(0);
    const [set, setShare, described] = await configs([
      setStep('gc-cg', [['consumer.session.timeout.ms', '2000'], ['consumer.heartbeat.interval.ms', '250']]),
      setStep('gc-sg', [['share.session.timeout.ms', '1500'], ['share.heartbeat.interval.ms', '300']]),
      describeStep('gc-cg', ['consumer.session.timeout.ms', 'consumer.heartbeat.interval.ms', 'share.session.timeout.ms']),
    ]);
    expect([set, setShare, valuesOf(described)]).toEqual([{ value: null }, { value: null }, { 'consumer.session.timeout.ms': ['2000', GROUP_CONFIG], 'consumer.heartbeat.interval.ms': ['250', GROUP_CONFIG], 'share.session.timeout.ms': ['45000', DEFAULT_CONFIG] }]);
    const gw = await GroupWire.connect(node.kafka);
    try {
      // A consumer-protocol member: told 250 ms, gone 2 s after its last heartbeat (the node's own session is 45 s).
      const m = randomUUID();
      const j = await gw.cgHeartbeat({ groupId: 'gc-cg', memberId: m, memberEpoch: 0, rebalanceTimeoutMs: 10_000, subscribedTopicNames: ['gc-members'], topicPartitions: [] });
      expect([j.errorCode, j.heartbeatIntervalMs]).toEqual([0, 250]);
      const t0 = Date.now();
      await waitFor(async () => (await gw.cgDescribe(['gc-cg'])).groups[0]!.members.length === 0, 'the consumer member expires', 20_000);
      expect(Date.now() - t0).toBeLessThan(15_000);
      // A share member: told 300 ms, gone 1.5 s after its last heartbeat.
      const s = await w.heartbeat({ groupId: 'gc-sg', memberId: '', memberEpoch: 0, subscribedTopicNames: ['gc-members'] });
      expect([s.errorCode, s.heartbeatIntervalMs]).toEqual([0, 300]);
      const t1 = Date.now();
      await waitFor(async () => (await w.describe(['gc-sg'])).groups[0]!.members.length === 0, 'the share member expires', 20_000);
      expect(Date.now() - t1).toBeLessThan(15_000);
      // A group without its own settings still gets the node's interval.
      expect((await w.heartbeat({ groupId: 'gc-sg-default', memberId: '', memberEpoch: 0, subscribedTopicNames: ['gc-members'] })).heartbeatIntervalMs).toBe(5000);
    } finally {
      gw.close();
    }
  });

  test('the dead-letter topic is a topic name on the wire and its partition-0 stream over HTTP; AlterConfigs replaces the whole set', async () => {
    expect(await w.createTopic('gc-dlq', 1)).toBe(0);
    const g = 'gc-dlq-g';
    const [set, described] = await configs([setStep(g, [['errors.deadletterqueue.topic.name', 'gc-dlq'], ['share.partition.max.record.locks', '500']]), describeStep(g, ['errors.deadletterqueue.topic.name', 'share.partition.max.record.locks'])]);
    expect(set).toEqual({ value: null });
    expect(valuesOf(described)).toEqual({ 'errors.deadletterqueue.topic.name': ['gc-dlq', GROUP_CONFIG], 'share.partition.max.record.locks': ['500', GROUP_CONFIG] });
    expect(await httpConfig('gc-dlq', g)).toMatchObject({ 'errors.deadletterqueue.topic.name': '/gc-dlq', 'group.share.partition.max.record.locks': 500 });

    // AlterConfigs (key 33): what it leaves out goes back to its default.
    const [replaced, after] = await configs([{ alter: { resources: [{ resourceType: GROUP, resourceName: g, configs: [{ name: 'share.delivery.count.limit', value: '7' }] }] } }, describeStep(g)]);
    expect(replaced).toEqual({ value: null });
    expect(valuesOf(after)).toMatchObject({ 'share.delivery.count.limit': ['7', GROUP_CONFIG], 'share.partition.max.record.locks': ['2000', DEFAULT_CONFIG], 'errors.deadletterqueue.topic.name': ['', DEFAULT_CONFIG] });
  });

  test('a config set over HTTP is described over Kafka as GROUP_CONFIG', async () => {
    expect(await w.createTopic('gc-http', 1)).toBe(0);
    const r = await fetch(`${node.url}/_share/gc-http?group=gc-http-g`, { method: 'PATCH', headers: JSON_TYPE, body: JSON.stringify({ 'group.share.record.lock.duration.ms': 45000 }) });
    expect(r.status).toBe(200);
    const [d] = await configs([describeStep('gc-http-g', ['share.record.lock.duration.ms'])]);
    expect(valuesOf(d)).toEqual({ 'share.record.lock.duration.ms': ['45000', GROUP_CONFIG] });
  });
});

describe('group configs with --auth required', () => {
  const ROOT = `${Buffer.from('gc-root').toString('base64url')}.${randomBytes(32).toString('base64url')}`;
  let node: NodeProcess;

  beforeAll(async () => {
    node = await startNode({ args: ['--shards', '1', '--shard-workers', '1', '--auth', 'required', '--auth-bootstrap-token', ROOT] });
  });
  afterAll(async () => {
    await node?.stop();
  });

  const issue = async (id: string, ops: string[]): Promise<string> => {
    const r = await fetch(`${node.adminUrl!}/admin/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ROOT}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id, scope: { streams: [{ prefix: '/gc-' }], groups: { stream: { read: true, write: true } }, ops, audiences: ['svc'] } }),
    });
    expect(r.status).toBe(201);
    return ((await r.json()) as { token: string }).token;
  };
  const connect = async (token: string): Promise<RawKafka> => {
    const k = await RawKafka.connect(node.kafka);
    expect(decodeSaslHandshakeResponse(await k.request(17, 1, false, (x) => encodeSaslHandshakeRequest(x, { mechanism: 'PLAIN' }, 1)), 1).errorCode).toBe(0);
    const authBytes = Buffer.from(`\0svc\0${token}`);
    expect(decodeSaslAuthenticateResponse(await k.request(36, 2, true, (x) => encodeSaslAuthenticateRequest(x, { authBytes }, 2)), 2).errorCode).toBe(0);
    return k;
  };
  const describeCode = async (k: RawKafka): Promise<number> =>
    decodeDescribeConfigsResponse(await k.request(32, 4, true, (x) => encodeDescribeConfigsRequest(x, { resources: [{ resourceType: GROUP, resourceName: 'gc-auth', configurationKeys: null }], includeSynonyms: false, includeDocumentation: false }, 4)), 4).results[0]!.errorCode;
  const alterCode = async (k: RawKafka): Promise<number> =>
    decodeIncrementalAlterConfigsResponse(
      await k.request(44, 1, true, (x) => encodeIncrementalAlterConfigsRequest(x, { resources: [{ resourceType: GROUP, resourceName: 'gc-auth', configs: [{ name: 'share.delivery.count.limit', configOperation: SET, value: '3' }] }], validateOnly: false }, 1)),
      1,
    ).responses[0]!.errorCode;

  test('describing takes the read op and altering the create op, as configuring a stream does; otherwise GROUP_AUTHORIZATION_FAILED', async () => {
    const reader = await connect(await issue('gc-reader', ['head', 'read']));
    const configurer = await connect(await issue('gc-configurer', ['head', 'read', 'create']));
    const appender = await connect(await issue('gc-appender', ['head', 'append']));
    try {
      expect(await describeCode(reader)).toBe(0);
      expect(await describeCode(appender)).toBe(GROUP_AUTHORIZATION_FAILED);
      expect(await alterCode(reader)).toBe(GROUP_AUTHORIZATION_FAILED);
      expect(await alterCode(configurer)).toBe(0);
    } finally {
      for (const k of [reader, configurer, appender]) k.close();
    }
  });
});
