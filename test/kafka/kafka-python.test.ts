/**
 * Debian's kafka-python 2.0.x (python3-kafka, stock): it probes with Metadata v0, then runs on
 * Metadata v1, Produce v7, Fetch v4, the v0–2 group APIs and SaslHandshake v0 with a raw PLAIN
 * token. It produces, consumes in a group, commits, and its admin client creates, describes,
 * alters, grows and deletes topics and deletes groups.
 */
import { randomBytes } from 'node:crypto';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { python } from './python-process';

const DRIVER = 'kafka_python_driver.py';

interface Consumed {
  records: Array<{ partition: number; offset: number; key: string | null; value: string; headers: Array<[string, string]> }>;
  committed: Record<string, number>;
}

describe('kafka-python 2.0 (Debian python3-kafka)', () => {
  let node: NodeProcess;

  beforeAll(async () => {
    node = await startNode({ args: ['--shards', '2', '--shard-workers', '1'] });
  });
  afterAll(async () => {
    await node.stop();
  });

  test('produces to an auto-created topic and a group consumer reads every record and commits', async () => {
    const produced = await python<{ offsets: number[] }>(DRIVER, { op: 'produce', broker: node.kafka, topic: 'kp-orders', values: ['a', 'b', 'c'], acks: 'all' });
    expect(produced.offsets).toEqual([0, 1, 2]);
    const got = await python<Consumed>(DRIVER, { op: 'consume', broker: node.kafka, topic: 'kp-orders', group: 'kp-group', count: 3 });
    expect(got.records.map((r) => [r.offset, r.key, r.value, r.headers])).toEqual([
      [0, 'k0', 'a', [['i', '0']]],
      [1, 'k1', 'b', [['i', '1']]],
      [2, 'k2', 'c', [['i', '2']]],
    ]);
    expect(got.committed).toEqual({ '0': 3 });
  }, 60_000);

  test('its admin client creates with configs, describes, alters, grows and deletes a topic, and deletes an empty group', async () => {
    await python(DRIVER, { op: 'produce', broker: node.kafka, topic: 'kp-admin-src', values: ['x'] });
    await python<Consumed>(DRIVER, { op: 'consume', broker: node.kafka, topic: 'kp-admin-src', group: 'kp-admin-group', count: 1 });
    const out = await python<Record<string, unknown>>(DRIVER, { op: 'admin', broker: node.kafka, topic: 'kp-admin', group: 'kp-admin-group' });
    expect(out['topics']).toEqual(expect.arrayContaining(['kp-admin', 'kp-admin-src']));
    expect(out['configs']).toMatchObject({ 'retention.ms': '3600000', 'cleanup.policy': 'delete' });
    expect(out['altered']).toEqual({ 'retention.ms': '7200000' });
    expect(out['brokerConfigCount']).toBeGreaterThan(0);
    expect(out['createPartitions']).toEqual([['kp-admin', 0]]);
    expect(out['partitions']).toEqual([0, 1, 2]);
    expect(out['groups']).toContain('kp-admin-group');
    expect(out['offsets']).toEqual({ '0': 1 });
    expect(out['deleteGroups']).toEqual([['kp-admin-group', 0]]);
    expect(out['groupsAfter']).not.toContain('kp-admin-group');
    expect(out['topicsAfter']).not.toContain('kp-admin');
  }, 60_000);
});

describe('kafka-python 2.0 with SASL/PLAIN (SaslHandshake v0, raw token)', () => {
  const ROOT = `${Buffer.from('kafka-root').toString('base64url')}.${randomBytes(32).toString('base64url')}`;
  const WRONG = `${Buffer.from('kafka-root').toString('base64url')}.${randomBytes(32).toString('base64url')}`;
  let node: NodeProcess;

  beforeAll(async () => {
    node = await startNode({ args: ['--shards', '2', '--shard-workers', '1', '--auth', 'required', '--auth-bootstrap-token', ROOT] });
  });
  afterAll(async () => {
    await node.stop();
  });

  test('authenticates with the token as password, produces and consumes; a wrong token is refused', async () => {
    const produced = await python<{ offsets: number[] }>(DRIVER, { op: 'produce', broker: node.kafka, topic: 'kp-sasl', values: ['s1', 's2'], token: ROOT });
    expect(produced.offsets).toEqual([0, 1]);
    const got = await python<Consumed>(DRIVER, { op: 'consume', broker: node.kafka, topic: 'kp-sasl', group: 'kp-sasl-g', count: 2, token: ROOT });
    expect(got.records.map((r) => r.value)).toEqual(['s1', 's2']);
    await expect(python(DRIVER, { op: 'produce', broker: node.kafka, topic: 'kp-sasl', values: ['s3'], token: WRONG }, 30_000)).rejects.toThrow(/exited with/);
    expect(node.output()).toContain('kafka SASL authentication failed');
    // The raw token is served, not misread as a request with API key 24940 ("\0s" of "\0svc\0…").
    expect(node.output()).not.toContain('is not served');
  }, 90_000);
});
