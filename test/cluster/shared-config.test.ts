/**
 * Stream schemas and Kafka topic settings are the cluster's, not a node's (docs/cluster.md,
 * "Schemas and topic configs"): three nodes in objects mode on one etcd. A schema registered on
 * one node is read and enforced on the others on the next request, also after the stream moved
 * there; a stricter version registered on another node applies to the very next append; a Kafka
 * topic setting changed on one node (IncrementalAlterConfigs) is described on another, and a
 * stream's Kafka topic PATCHed on its owner is a topic on every node at once. A group config set
 * over Kafka on any node is described on every node and leases on the stream's owner use it
 * (`/_share/{stream}` sent to another node is redirected to the owner).
 */
import { type ObjectsCluster, objectsClusterForFile, until } from './objects-cluster';
import { type NodeProcess } from '../helpers/node-process';
import { RawKafka } from '../kafka/kafka-test-client';
import { DESCRIBE_CONFIGS, decodeDescribeConfigsResponse, encodeDescribeConfigsRequest } from '../../src/kafka-wire/messages/describe-configs';
import { INCREMENTAL_ALTER_CONFIGS, decodeIncrementalAlterConfigsResponse, encodeIncrementalAlterConfigsRequest } from '../../src/kafka-wire/messages/incremental-alter-configs';
import { METADATA, decodeMetadataResponse, encodeMetadataRequest } from '../../src/kafka-wire/messages/metadata';

jest.setTimeout(120_000);

const c: ObjectsCluster = objectsClusterForFile();

/** An HTTP request to `n`, following 307s to the owner by hand (as a client does). */
async function req(n: NodeProcess, path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; text: string; json: () => Record<string, unknown> }> {
  let url = `${n.url}${path}`;
  for (let hop = 0; hop < 5; hop++) {
    const r = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(15_000) });
    if (r.status === 307) {
      url = r.headers.get('location')!;
      continue;
    }
    const text = await r.text();
    return { status: r.status, text, json: () => JSON.parse(text) as Record<string, unknown> };
  }
  throw new Error(`${path}: too many redirects`);
}

const node = (id: number): NodeProcess => c.nodes.get(id)!;
const json = { 'content-type': 'application/json' };
const append = (n: NodeProcess, stream: string, body: unknown) => req(n, stream, { method: 'POST', headers: json, body: JSON.stringify(body) });

async function transfer(stream: string, toNode: number): Promise<void> {
  const r = await c.admin('/admin/transfer', { method: 'POST', body: JSON.stringify({ stream, toNode }) });
  expect(r.status).toBe(200);
  await until(`${stream} placed on node ${toNode}`, async () => {
    const d = await c.detail(stream);
    return d.state === 'placed' && d.ownerNodeId === toNode ? d : null;
  });
}

test('a schema registered on node 1 is read on 2 and 3, binds a stream there, and is enforced wherever the stream lives', async () => {
  const schema = { type: 'object', properties: { id: { type: 'string' }, amount: { type: 'number' } }, required: ['id'] };
  const put = await req(node(1), '/_schemas/orders', { method: 'PUT', headers: json, body: JSON.stringify({ type: 'json-schema', schema }) });
  expect(put.status).toBe(201);
  // The next request on the other nodes sees it.
  for (const id of [2, 3]) {
    const got = await req(node(id), '/_schemas/orders');
    expect(got.status).toBe(200);
    expect(got.json()).toMatchObject({ name: 'orders', version: 1, schema });
    expect(((await req(node(id), '/_schemas')).json()['schemas'] as Array<{ name: string }>).map((s) => s.name)).toContain('orders');
  }
  // A stream bound to it, created through node 3 (placed on whichever node the cluster chooses).
  const created = await req(node(3), '/sc/orders', { method: 'PUT', headers: { ...json, 'svc-schema': 'orders', 'svc-schema-validate': 'true' } });
  expect(created.status).toBe(201);
  const owner = (await c.detail('/sc/orders')).ownerNodeId;
  // Wherever it lives and whichever node is asked: a bad record is refused, a good one taken.
  for (const to of [owner, ...[1, 2, 3].filter((id) => id !== owner)]) {
    if (to !== owner) await transfer('/sc/orders', to);
    for (const via of [1, 2, 3]) {
      const bad = await append(node(via), '/sc/orders', { amount: 'ten' });
      expect(bad.status).toBe(400);
      expect(bad.json()).toMatchObject({ error: 'schema_validation_failed' });
      expect((await append(node(via), '/sc/orders', { id: `n${to}-${via}`, amount: 1 })).status).toBe(200);
    }
  }
  // A stricter version registered on another node than the owner applies to the very next append.
  const d = await c.detail('/sc/orders');
  const other = [1, 2, 3].find((id) => id !== d.ownerNodeId)!;
  const stricter = { ...schema, required: ['id', 'amount'] };
  const replaced = await req(node(other), '/_schemas/orders', { method: 'PUT', headers: json, body: JSON.stringify({ type: 'json-schema', schema: stricter }) });
  expect(replaced.status).toBe(200);
  expect(replaced.json()).toMatchObject({ version: 2 });
  for (const via of [1, 2, 3]) {
    const r = await append(node(via), '/sc/orders', { id: 'no-amount' });
    expect(r.status).toBe(400);
    expect(r.json()).toMatchObject({ error: 'schema_validation_failed' });
  }
  // Deleting it on a node that does not own the bound stream is refused: the stream is bound to it.
  const del = await req(node(other), '/_schemas/orders', { method: 'DELETE' });
  expect(del.status).toBe(409);
  for (const id of [1, 2, 3]) expect((await req(node(id), '/_schemas/orders')).status).toBe(200);
  // Unbound, it can go, and is gone everywhere.
  expect((await req(node(other), '/_streams/sc/orders', { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json' }, body: JSON.stringify({ schema: null, schemaValidate: false }) })).status).toBe(200);
  expect((await req(node(other), '/_schemas/orders', { method: 'DELETE' })).status).toBe(204);
  for (const id of [1, 2, 3]) expect((await req(node(id), '/_schemas/orders')).status).toBe(404);
});

/**
 * UNKNOWN_TOPIC_OR_PARTITION is retriable in Kafka, and clients retry it: a node's topic lookup
 * waits at most 250 ms for etcd's quorum read before it answers from its view (docs/cluster.md), so
 * on a loaded machine a topic made on another node a moment ago can still be unknown there.
 */
const UNKNOWN_TOPIC_OR_PARTITION = 3;

/** `call` again while it answers UNKNOWN_TOPIC_OR_PARTITION, for up to 10 s, as a Kafka client does. */
async function retryingUnknown<T>(call: () => Promise<T>, code: (r: T) => number): Promise<T> {
  const end = Date.now() + 10_000;
  for (;;) {
    const r = await call();
    if (code(r) !== UNKNOWN_TOPIC_OR_PARTITION || Date.now() > end) return r;
    await new Promise((res) => setTimeout(res, 100));
  }
}

function alterRetention(broker: string, topic: string, ms: string): Promise<number> {
  return retryingUnknown(() => alterRetentionOnce(broker, topic, ms), (r) => r);
}

function describeRetention(broker: string, topic: string): Promise<{ errorCode: number; value: string | null | undefined }> {
  return retryingUnknown(() => describeRetentionOnce(broker, topic), (r) => r.errorCode);
}

async function alterRetentionOnce(broker: string, topic: string, ms: string): Promise<number> {
  const k = await RawKafka.connect(broker);
  try {
    const r = await k.request(INCREMENTAL_ALTER_CONFIGS.apiKey, 0, false, (w) =>
      encodeIncrementalAlterConfigsRequest(w, { resources: [{ resourceType: 2, resourceName: topic, configs: [{ name: 'retention.ms', configOperation: 0, value: ms }] }], validateOnly: false }, 0),
    );
    return decodeIncrementalAlterConfigsResponse(r, 0).responses[0]!.errorCode;
  } finally {
    k.close();
  }
}

async function describeRetentionOnce(broker: string, topic: string): Promise<{ errorCode: number; value: string | null | undefined }> {
  const k = await RawKafka.connect(broker);
  try {
    const r = await k.request(DESCRIBE_CONFIGS.apiKey, 1, false, (w) => encodeDescribeConfigsRequest(w, { resources: [{ resourceType: 2, resourceName: topic, configurationKeys: ['retention.ms'] }], includeSynonyms: false }, 1));
    const res = decodeDescribeConfigsResponse(r, 1).results[0]!;
    return { errorCode: res.errorCode, value: res.configs.find((x) => x.name === 'retention.ms')?.value };
  } finally {
    k.close();
  }
}

async function topicsOn(broker: string): Promise<string[]> {
  const k = await RawKafka.connect(broker);
  try {
    const r = await k.request(METADATA.apiKey, 1, false, (w) => encodeMetadataRequest(w, { topics: null }, 1));
    return decodeMetadataResponse(r, 1).topics.filter((t) => t.errorCode === 0).map((t) => t.name!);
  } finally {
    k.close();
  }
}

test('a Kafka topic setting changed on one node is read on another, and the partition\'s owner applies it', async () => {
  expect((await req(node(1), '/kt', { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } })).status).toBe(201);
  const owner = (await c.detail('/kt')).ownerNodeId;
  const a = [1, 2, 3].find((id) => id !== owner)!;
  const b = [1, 2, 3].find((id) => id !== owner && id !== a)!;
  expect(await alterRetention(node(a).kafka, 'kt', '3600000')).toBe(0);
  // The next request on every node describes it.
  for (const id of [b, owner, a]) expect(await describeRetention(node(id).kafka, 'kt')).toEqual({ errorCode: 0, value: '3600000' });
  // The stream itself (on its owner) has the TTL now.
  const cfg = await until('the owner applied retention.ms', async () => {
    const r = await req(node(b), '/_streams/kt');
    return r.json()['ttlSeconds'] === 3600 ? r.json() : null;
  }, 10_000);
  expect(cfg).toMatchObject({ ttlSeconds: 3600 });
  // Changed again on another node: read back everywhere.
  expect(await alterRetention(node(b).kafka, 'kt', '-1')).toBe(0);
  for (const id of [1, 2, 3]) expect(await describeRetention(node(id).kafka, 'kt')).toEqual({ errorCode: 0, value: '-1' });
});

test('a stream\'s Kafka topic PATCHed on its owner is that topic on every node at once', async () => {
  expect((await req(node(2), '/kp/src', { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } })).status).toBe(201);
  const owner = (await c.detail('/kp/src')).ownerNodeId;
  const other = [1, 2, 3].find((id) => id !== owner)!;
  const r = await req(node(other), '/_streams/kp/src', { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json' }, body: JSON.stringify({ kafkaTopic: 'renamed-topic' }) });
  expect(r.status).toBe(200);
  for (const id of [1, 2, 3]) expect(await topicsOn(node(id).kafka)).toContain('renamed-topic');
  for (const id of [1, 2, 3]) expect((await describeRetention(node(id).kafka, 'renamed-topic')).errorCode).toBe(0);
});

async function alterGroupConfig(broker: string, group: string, name: string, value: string): Promise<number> {
  const k = await RawKafka.connect(broker);
  try {
    const r = await k.request(INCREMENTAL_ALTER_CONFIGS.apiKey, 0, false, (w) =>
      encodeIncrementalAlterConfigsRequest(w, { resources: [{ resourceType: 32, resourceName: group, configs: [{ name, configOperation: 0, value }] }], validateOnly: false }, 0),
    );
    return decodeIncrementalAlterConfigsResponse(r, 0).responses[0]!.errorCode;
  } finally {
    k.close();
  }
}

async function describeGroupConfig(broker: string, group: string, name: string): Promise<{ errorCode: number; value: string | null | undefined; source: number | undefined }> {
  const k = await RawKafka.connect(broker);
  try {
    const r = await k.request(DESCRIBE_CONFIGS.apiKey, 1, false, (w) => encodeDescribeConfigsRequest(w, { resources: [{ resourceType: 32, resourceName: group, configurationKeys: [name] }], includeSynonyms: false }, 1));
    const res = decodeDescribeConfigsResponse(r, 1).results[0]!;
    const c0 = res.configs.find((x) => x.name === name);
    return { errorCode: res.errorCode, value: c0?.value, source: c0?.configSource };
  } finally {
    k.close();
  }
}

test('a group config set over Kafka on a node that does not own the stream is described on every node and used by the owner\'s leases', async () => {
  expect((await req(node(1), '/gcq', { method: 'PUT', headers: json })).status).toBe(201);
  expect((await append(node(1), '/gcq', [{ n: 1 }])).status).toBeLessThan(300);
  const owner = (await c.detail('/gcq')).ownerNodeId;
  const other = [1, 2, 3].find((id) => id !== owner)!;
  expect(await alterGroupConfig(node(other).kafka, 'gcq-g', 'share.record.lock.duration.ms', '120000')).toBe(0);
  expect(await alterGroupConfig(node(other).kafka, 'gcq-g', 'share.auto.offset.reset', 'earliest')).toBe(0);
  for (const id of [1, 2, 3]) expect(await describeGroupConfig(node(id).kafka, 'gcq-g', 'share.record.lock.duration.ms')).toEqual({ errorCode: 0, value: '120000', source: 8 });
  // The owner (reached through the 307) has it once its watch delivered it.
  await until('the owner sees the group config', async () => {
    const r = await req(node(other), '/_share/gcq?group=gcq-g');
    return (r.json()['config'] as Record<string, unknown>)['group.share.record.lock.duration.ms'] === 120000 ? true : null;
  }, 10_000);
  const before = Date.now();
  const lease = await req(node(other), '/_share/gcq?group=gcq-g&op=lease', { method: 'POST' });
  expect(lease.status).toBe(200);
  expect((lease.json()['records'] as unknown[]).length).toBe(1);
  expect((lease.json()['lockedUntilMs'] as number) - before).toBeGreaterThanOrEqual(119_000);
});
