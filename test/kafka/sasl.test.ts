/**
 * SASL/PLAIN with `--auth required`: the access token is the password. kcat, kafkajs and
 * @platformatic/kafka authenticate and produce/consume; a wrong token is refused; nothing but
 * ApiVersions and the SASL APIs is served before authentication; a scoped token reaches only the
 * topics its scope covers.
 */
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { decodeHeartbeatResponse, encodeHeartbeatRequest } from '../../src/kafka-wire/messages/heartbeat';
import { encodeMetadataRequest } from '../../src/kafka-wire/messages/metadata';
import { decodeOffsetCommitResponse, encodeOffsetCommitRequest } from '../../src/kafka-wire/messages/offset-commit';
import { decodeOffsetFetchResponse, encodeOffsetFetchRequest } from '../../src/kafka-wire/messages/offset-fetch';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { RawKafka, saslAuthenticate as authenticate, saslHandshake as handshake, saslPlainOnNewConnection } from './kafka-test-client';
import { kcatConsume, kcatProduce, saslArgs } from './kcat';
import { platformatic } from './platformatic';
import { batchOf, produce } from './raw-produce';

const ROOT = `${Buffer.from('kafka-root').toString('base64url')}.${randomBytes(32).toString('base64url')}`;
const WRONG = `${Buffer.from('kafka-root').toString('base64url')}.${randomBytes(32).toString('base64url')}`;

describe('SASL/PLAIN on the Kafka listener with --auth required', () => {
  let node: NodeProcess;

  beforeAll(async () => {
    node = await startNode({ args: ['--shards', '2', '--shard-workers', '1', '--auth', 'required', '--auth-bootstrap-token', ROOT] });
  });
  afterAll(async () => {
    await node.stop();
  });

  /** A token issued by the root token with `scope`: its wire form. */
  async function issueToken(id: string, scope: object): Promise<string> {
    const r = await fetch(`${node.adminUrl!}/admin/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ROOT}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id, scope }),
    });
    expect(r.status).toBe(201);
    return ((await r.json()) as { token: string }).token;
  }

  test('kcat authenticates with the token, produces and consumes; a wrong token is refused', async () => {
    const ok = await kcatProduce(node.kafka, 'sasl-kcat', ['k:v1', 'k:v2'], [...saslArgs(ROOT), '-X', 'acks=all']);
    expect(ok.code).toBe(0);
    expect((await kcatConsume(node.kafka, 'sasl-kcat', saslArgs(ROOT))).map((l) => l.split('|')[2])).toEqual(['v1', 'v2']);
    const bad = await kcatProduce(node.kafka, 'sasl-kcat', ['k:v3'], [...saslArgs(WRONG), '-m', '3', '-X', 'message.timeout.ms=3000']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/Authentication failed|SASL authentication error/i);
    for (let i = 0; i < 50 && !node.output().includes('kafka SASL authentication failed'); i++) await new Promise((r) => setTimeout(r, 50));
    expect(node.output()).toContain('kafka SASL authentication failed');
  });

  test('kafkajs authenticates with the token and creates, writes and deletes a topic; a wrong token is refused', async () => {
    const kafka = new Kafka({ clientId: 'sasl-kjs', brokers: [node.kafka], logLevel: logLevel.NOTHING, retry: { retries: 0 }, sasl: { mechanism: 'plain', username: 'svc', password: ROOT } });
    const admin = kafka.admin();
    await admin.connect();
    try {
      expect(await admin.createTopics({ topics: [{ topic: 'sasl-kjs' }] })).toBe(true);
      const producer = kafka.producer({ idempotent: true, retry: { retries: 2 } });
      await producer.connect();
      const r = await producer.send({ topic: 'sasl-kjs', acks: -1, messages: [{ key: 'a', value: 'one' }] });
      expect(r[0]).toMatchObject({ errorCode: 0, baseOffset: '0' });
      await producer.disconnect();
      await admin.deleteTopics({ topics: ['sasl-kjs'] });
      expect(await admin.listTopics()).not.toContain('sasl-kjs');
    } finally {
      await admin.disconnect();
    }
    const wrong = new Kafka({ clientId: 'sasl-kjs-bad', brokers: [node.kafka], logLevel: logLevel.NOTHING, retry: { retries: 0 }, sasl: { mechanism: 'plain', username: 'svc', password: WRONG } });
    const badAdmin = wrong.admin();
    await expect(badAdmin.connect()).rejects.toThrow(/SASL PLAIN authentication failed/);
  });

  test('@platformatic/kafka authenticates with the token, produces and consumes; a wrong token is refused', async () => {
    const p = await platformatic({ op: 'produce', broker: node.kafka, sasl: ROOT, topic: 'sasl-pf', autocreate: true, idempotent: true, messages: [{ key: 'a', value: 'pf' }] });
    expect(p).toEqual({ ok: true, offsets: [{ partition: 0, offset: '0' }] });
    const c = await platformatic({ op: 'consume', broker: node.kafka, sasl: ROOT, topic: 'sasl-pf' });
    expect(c.records!.map((r) => r.value)).toEqual(['pf']);
    const bad = await platformatic({ op: 'produce', broker: node.kafka, sasl: WRONG, topic: 'sasl-pf', messages: [{ key: 'a', value: 'no' }] });
    expect(bad.ok).toBe(false);
    expect((await (await fetch(`${node.url}/sasl-pf`, { method: 'HEAD', headers: { authorization: `Bearer ${ROOT}` } })).headers.get('svc-next-seq'))).toBe('1');
  });

  test('closes a connection that sends Metadata before authenticating', async () => {
    const k = await RawKafka.connect(node.kafka);
    const answer = k.request(3, 12, true, (w) => encodeMetadataRequest(w, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }, 12));
    await expect(answer).rejects.toThrow('connection closed');
    await k.closed;
    for (let i = 0; i < 50 && !node.output().includes('Metadata before SASL authentication'); i++) await new Promise((r) => setTimeout(r, 50));
    expect(node.output()).toContain('Metadata before SASL authentication');
  });

  test('answers ILLEGAL_SASL_STATE before a handshake, UNSUPPORTED_SASL_MECHANISM for another mechanism, SASL_AUTHENTICATION_FAILED for a wrong token', async () => {
    const k = await RawKafka.connect(node.kafka);
    try {
      expect(await authenticate(k, ROOT)).toBe(34);
      expect(await handshake(k, 'SCRAM-SHA-256')).toBe(33);
      expect(await handshake(k, 'PLAIN')).toBe(0);
      expect(await authenticate(k, WRONG)).toBe(58);
      expect(await authenticate(k, 'not-a-token')).toBe(58);
    } finally {
      k.close();
    }
  });

  /**
   * Revocation takes effect on the connection's very next request, as on the HTTP listeners (and
   * on every gateway thread: this suite runs again with SVC_GATEWAY_THREADS=2, where Produce is
   * served on the connection's thread, from its copy of the token records). Fails when an open
   * connection keeps the scope it authenticated with.
   */
  test('a token revoked while its connection is open closes that connection at its very next request, 20 of 20; SASL with it then fails', async () => {
    const put = await fetch(`${node.url}/revoked-topic`, { method: 'PUT', headers: { authorization: `Bearer ${ROOT}`, 'content-type': 'application/octet-stream' } });
    expect(put.status).toBe(201);
    await new Promise((r) => setTimeout(r, 300)); // the topic index sees HTTP-created streams on its next rebuild
    const scope = { streams: [{ prefix: '/revoked-' }], groups: { stream: { read: true, write: true } }, ops: ['head', 'read', 'append'], audiences: ['svc'] };
    for (let i = 0; i < 20; i++) {
      const token = await issueToken(`revoked-${i}`, scope);
      const k = await RawKafka.connect(node.kafka);
      try {
        expect(await handshake(k, 'PLAIN')).toBe(0);
        expect(await authenticate(k, token)).toBe(0);
        expect((await produce(k, 'revoked-topic', batchOf([`before-${i}`]))).errorCode).toBe(0);
        const revoke = await fetch(`${node.adminUrl!}/admin/tokens/revoked-${i}`, { method: 'DELETE', headers: { authorization: `Bearer ${ROOT}` } });
        expect(revoke.status).toBe(204);
        await expect(produce(k, 'revoked-topic', batchOf([`after-${i}`]))).rejects.toThrow('connection closed');
      } finally {
        k.close();
      }
      expect(await saslPlainOnNewConnection(node.kafka, token)).toBe(58);
    }
    expect(node.output()).toContain('no longer accepted (revoked)');
    // Nothing produced after a revocation was stored: 20 records, all from before.
    const head = await fetch(`${node.url}/revoked-topic`, { method: 'HEAD', headers: { authorization: `Bearer ${ROOT}` } });
    expect(head.headers.get('svc-next-seq')).toBe('20');
  });

  test('a token scoped to one prefix produces there and gets TOPIC_AUTHORIZATION_FAILED elsewhere', async () => {
    const token = await issueToken('orders-writer', { streams: [{ prefix: '/orders' }], groups: { stream: { read: true, write: true } }, ops: ['head', 'read', 'append', 'create'], audiences: ['svc'] });
    for (const name of ['orders-eu', 'audit']) {
      const put = await fetch(`${node.url}/${name}`, { method: 'PUT', headers: { authorization: `Bearer ${ROOT}`, 'content-type': 'application/octet-stream' } });
      expect(put.status).toBe(201);
    }
    await new Promise((r) => setTimeout(r, 300)); // the topic index sees HTTP-created streams on its next rebuild
    const k = await RawKafka.connect(node.kafka);
    try {
      expect(await handshake(k, 'PLAIN')).toBe(0);
      expect(await authenticate(k, token)).toBe(0);
      expect((await produce(k, 'orders-eu', batchOf(['ok']))).errorCode).toBe(0);
      expect((await produce(k, 'audit', batchOf(['no']))).errorCode).toBe(29);
    } finally {
      k.close();
    }
    const audit = await fetch(`${node.url}/audit`, { method: 'HEAD', headers: { authorization: `Bearer ${ROOT}` } });
    expect(audit.headers.get('svc-next-seq')).toBe('0');
  });

  test('group APIs need the read op (GROUP_AUTHORIZATION_FAILED), and offsets are committed and fetched only for readable partitions (TOPIC_AUTHORIZATION_FAILED)', async () => {
    const issue = (id: string, ops: string[]): Promise<string> => issueToken(id, { streams: [{ prefix: '/grp-orders' }], groups: { stream: { read: true, write: true } }, ops, audiences: ['svc'] });
    const reader = await issue('grp-reader', ['head', 'read']);
    const writer = await issue('grp-writer', ['head', 'append']);
    for (const name of ['grp-orders', 'grp-audit']) {
      const put = await fetch(`${node.url}/${name}`, { method: 'PUT', headers: { authorization: `Bearer ${ROOT}`, 'content-type': 'application/octet-stream' } });
      expect(put.status).toBe(201);
    }
    await new Promise((r) => setTimeout(r, 300)); // the topic index sees HTTP-created streams on its next rebuild
    const commit = (k: RawKafka) =>
      k.request(8, 8, true, (w) =>
        encodeOffsetCommitRequest(w, { groupId: 'g1', generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics: ['grp-orders', 'grp-audit'].map((name) => ({ name, partitions: [{ partitionIndex: 0, committedOffset: 0n, committedLeaderEpoch: -1, committedMetadata: '' }] })) }, 8),
      );
    const fetchOffsets = (k: RawKafka) => k.request(9, 7, true, (w) => encodeOffsetFetchRequest(w, { groupId: 'g1', topics: ['grp-orders', 'grp-audit'].map((name) => ({ name, partitionIndexes: [0] })), requireStable: false }, 7));
    const w = await RawKafka.connect(node.kafka);
    try {
      expect(await handshake(w, 'PLAIN')).toBe(0);
      expect(await authenticate(w, writer)).toBe(0);
      expect(decodeHeartbeatResponse(await w.request(12, 4, true, (x) => encodeHeartbeatRequest(x, { groupId: 'g1', generationId: 1, memberId: 'm', groupInstanceId: null }, 4)), 4).errorCode).toBe(30);
      const c = decodeOffsetCommitResponse(await commit(w), 8);
      expect(c.topics.map((t) => t.partitions[0]!.errorCode)).toEqual([30, 30]);
      expect(decodeOffsetFetchResponse(await fetchOffsets(w), 7).errorCode).toBe(30);
    } finally {
      w.close();
    }
    const r = await RawKafka.connect(node.kafka);
    try {
      expect(await handshake(r, 'PLAIN')).toBe(0);
      expect(await authenticate(r, reader)).toBe(0);
      const c = decodeOffsetCommitResponse(await commit(r), 8);
      expect(c.topics.map((t) => [t.name, t.partitions[0]!.errorCode])).toEqual([['grp-orders', 0], ['grp-audit', 29]]);
      const f = decodeOffsetFetchResponse(await fetchOffsets(r), 7);
      expect(f.errorCode).toBe(0);
      expect(f.topics!.map((t) => [t.name, t.partitions[0]!.errorCode, t.partitions[0]!.committedOffset])).toEqual([['grp-orders', 0, 0n], ['grp-audit', 29, -1n]]);
    } finally {
      r.close();
    }
  });
});
