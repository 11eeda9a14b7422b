/**
 * Stream config (docs/protocol.md "Stream config"): the create headers Svc-Schema,
 * Svc-Schema-Validate and Svc-Kafka-Topic, HEAD's Svc-Schema and Svc-Kafka-Topic, and
 * GET/PATCH /_streams/{name}, over both HTTP engines; and that a PATCH survives restarts.
 */
import { Agent } from 'undici';
import { type NodeProcess, startNode, tempDir } from '../helpers/node-process';
import { ENGINES, type Engine, type Res, type Svc, expectError, useNode } from './client';

interface ConfigDoc {
  name: string;
  contentType: string;
  createdAtMs: number;
  ttlSeconds: number | null;
  expiresAtMs: number | null;
  closed: boolean;
  schema: string | null;
  schemaValidate: boolean;
  kafkaTopic: string;
  kafkaTopicDerived: boolean;
}

const AMOUNT = { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] };
const MERGE_PATCH = 'application/merge-patch+json';

function patch(svc: Svc, stream: string, body: unknown, contentType = MERGE_PATCH): Promise<Res> {
  return svc.request('PATCH', `/_streams${stream}`, { headers: { 'content-type': contentType }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

async function config(svc: Svc, stream: string): Promise<ConfigDoc> {
  const res = await svc.get(`/_streams${stream}`);
  if (res.status !== 200) throw new Error(`GET /_streams${stream}: ${res.status} ${res.text}`);
  return res.json<ConfigDoc>();
}

describe.each(ENGINES)('stream config over the %s engine', (engine) => {
  const svc = useNode(engine);
  const schema = `amount-${Math.random().toString(36).slice(2, 8)}`;

  beforeAll(async () => {
    const res = await svc.put(`/_schemas/${schema}`, { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'json-schema', schema: AMOUNT }) });
    expect(res.status).toBe(201);
  });

  test('GET /_streams/{name} returns the config document, with the topic derived from the name', async () => {
    const name = svc.name('doc');
    const before = Date.now();
    expect((await svc.put(name, { headers: { 'content-type': 'application/json', 'svc-ttl': '60' } })).status).toBe(201);
    const res = await svc.get(`/_streams${name}`);
    expect(res.status).toBe(200);
    expect(res.header('content-type')).toMatch(/^application\/json/);
    const doc = res.json<ConfigDoc>();
    expect(doc).toEqual({
      name,
      contentType: 'application/json',
      createdAtMs: expect.any(Number),
      ttlSeconds: 60,
      expiresAtMs: null,
      closed: false,
      schema: null,
      schemaValidate: false,
      kafkaTopic: name.slice(1),
      kafkaTopicDerived: true,
      durability: 'sync',
      durabilityDefault: true,
      registryValidation: null,
    });
    expect(doc.createdAtMs).toBeGreaterThanOrEqual(before - 1000);
  });

  test('the stream name is the rest of the path, slashes included', async () => {
    const name = `${svc.name('nested')}/eu/2024`;
    expect((await svc.put(name, { headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    const doc = await config(svc, name);
    expect(doc.name).toBe(name);
    expect(doc.kafkaTopic).toBe(name.slice(1).replace(/\//g, '.'));
  });

  test('an unknown stream answers 404, a missing or invalid name 400', async () => {
    expectError(await svc.get(`/_streams${svc.name('missing')}`), 404, 'not_found');
    expectError(await patch(svc, svc.name('missing'), { kafkaTopic: 'x' }), 404, 'not_found');
    expectError(await svc.get('/_streams'), 400, 'invalid_stream_name');
    expectError(await svc.get('/_streams/'), 400, 'invalid_stream_name');
    expectError(await svc.get('/_streams/a//b'), 400, 'invalid_stream_name');
  });

  test('creating with Svc-Kafka-Topic sets the topic, and HEAD shows Svc-Kafka-Topic and Svc-Schema', async () => {
    const name = svc.name('topic');
    const headers = { 'content-type': 'application/json', 'svc-kafka-topic': 'orders.v1', 'svc-schema': schema, 'svc-schema-validate': 'true' };
    expect((await svc.put(name, { headers })).status).toBe(201);
    const head = await svc.head(name);
    expect(head.status).toBe(200);
    expect(head.header('svc-kafka-topic')).toBe('orders.v1');
    expect(head.header('svc-schema')).toBe(schema);
    expect(await config(svc, name)).toMatchObject({ schema, schemaValidate: true, kafkaTopic: 'orders.v1', kafkaTopicDerived: false });
  });

  test('HEAD has neither Svc-Schema nor Svc-Kafka-Topic when none is set (a derived topic has no header)', async () => {
    const name = svc.name('plain');
    expect((await svc.put(name, { headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    const head = await svc.head(name);
    expect(head.header('svc-schema')).toBeUndefined();
    expect(head.header('svc-kafka-topic')).toBeUndefined();
  });

  test('an Svc-Kafka-Topic that breaks Kafka topic rules answers 400 and creates nothing', async () => {
    const name = svc.name('bad-topic');
    for (const topic of ['a b', '.', '..', 'x'.repeat(250), 'a/b', 'a:b', 'a*b']) {
      expectError(await svc.put(name, { headers: { 'content-type': 'text/plain', 'svc-kafka-topic': topic } }), 400, 'invalid_parameter');
    }
    expect((await svc.head(name)).status).toBe(404);
    expect((await svc.put(name, { headers: { 'content-type': 'text/plain', 'svc-kafka-topic': 'x'.repeat(249) } })).status).toBe(201);
  });

  test('creating an existing stream again answers 200 whatever its config headers say, and changes nothing', async () => {
    const name = svc.name('again');
    expect((await svc.put(name, { headers: { 'content-type': 'application/json', 'svc-kafka-topic': 'first' } })).status).toBe(201);
    const again = await svc.put(name, { headers: { 'content-type': 'application/json', 'svc-kafka-topic': 'second', 'svc-schema': schema, 'svc-schema-validate': 'true' } });
    expect(again.status).toBe(200);
    expect(await config(svc, name)).toMatchObject({ schema: null, schemaValidate: false, kafkaTopic: 'first' });
    // A malformed header is still refused.
    expectError(await svc.put(name, { headers: { 'content-type': 'application/json', 'svc-kafka-topic': 'a b' } }), 400, 'invalid_parameter');
  });

  test('PATCH binds a schema later and turns validation on; appends after it are validated', async () => {
    const name = svc.name('bind-later');
    expect((await svc.put(name, { headers: { 'content-type': 'application/json' } })).status).toBe(201);
    expect((await svc.post(name, { headers: { 'content-type': 'application/json' }, body: '{"amount": "free"}' })).status).toBe(200);

    const bind = await patch(svc, name, { schema });
    expect(bind.status).toBe(200);
    expect(bind.json<ConfigDoc>()).toMatchObject({ schema, schemaValidate: false });
    expect((await svc.head(name)).header('svc-schema')).toBe(schema);
    expect((await svc.post(name, { headers: { 'content-type': 'application/json' }, body: '{"amount": "still free"}' })).status).toBe(200);

    const on = await patch(svc, name, { schemaValidate: true });
    expect(on.status).toBe(200);
    expect(on.json<ConfigDoc>()).toMatchObject({ schema, schemaValidate: true });
    const refused = expectError(await svc.post(name, { headers: { 'content-type': 'application/json' }, body: '{"amount": "no"}' }), 400, 'schema_validation_failed');
    expect(refused.message).toBe('records[0]/amount: must be number');
    expect((await svc.post(name, { headers: { 'content-type': 'application/json' }, body: '{"amount": 5}' })).status).toBe(200);
    expect(await svc.nextSeq(name)).toBe(3);

    const off = await patch(svc, name, { schemaValidate: false }, 'application/json');
    expect(off.json<ConfigDoc>()).toMatchObject({ schema, schemaValidate: false });
    expect((await svc.post(name, { headers: { 'content-type': 'application/json' }, body: 'anything' })).status).toBe(200);
  });

  test('PATCH binds and validates in one change', async () => {
    const name = svc.name('bind-and-validate');
    expect((await svc.put(name, { headers: { 'content-type': 'application/json' } })).status).toBe(201);
    expect((await patch(svc, name, { schema, schemaValidate: true })).status).toBe(200);
    expectError(await svc.post(name, { headers: { 'content-type': 'application/json' }, body: '{}' }), 400, 'schema_validation_failed');
  });

  test('PATCH sets kafkaTopic, and null clears it back to the derived topic', async () => {
    const name = svc.name('set-topic');
    expect((await svc.put(name, { headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    const set = await patch(svc, name, { kafkaTopic: 'billing-events' });
    expect(set.status).toBe(200);
    expect(set.json<ConfigDoc>()).toMatchObject({ kafkaTopic: 'billing-events', kafkaTopicDerived: false });
    expect((await svc.head(name)).header('svc-kafka-topic')).toBe('billing-events');

    const clear = await patch(svc, name, { kafkaTopic: null });
    expect(clear.status).toBe(200);
    expect(clear.json<ConfigDoc>()).toMatchObject({ kafkaTopic: name.slice(1), kafkaTopicDerived: true });
    expect((await svc.head(name)).header('svc-kafka-topic')).toBeUndefined();
  });

  test('PATCH sets and clears ttlSeconds', async () => {
    const name = svc.name('ttl');
    expect((await svc.put(name, { headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    expect((await patch(svc, name, { ttlSeconds: 3600 })).json<ConfigDoc>().ttlSeconds).toBe(3600);
    expect((await svc.head(name)).header('svc-ttl')).toBe('3600');
    expect((await patch(svc, name, { ttlSeconds: null })).json<ConfigDoc>().ttlSeconds).toBeNull();
    expect((await svc.head(name)).header('svc-ttl')).toBeUndefined();
  });

  test('PATCH refuses unknown and read-only fields, naming them, and changes nothing', async () => {
    const name = svc.name('refuse');
    expect((await svc.put(name, { headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    const before = await config(svc, name);
    const e = expectError(await patch(svc, name, { kafkaTopic: 'x', name: '/other', colour: 'red' }), 400, 'invalid_parameter');
    expect(e.message).toContain('name');
    expect(e.message).toContain('colour');
    expectError(await patch(svc, name, { closed: true }), 400, 'invalid_parameter');
    expectError(await patch(svc, name, { kafkaTopicDerived: false }), 400, 'invalid_parameter');
    expect(await config(svc, name)).toEqual(before);
  });

  test('PATCH refuses values of the wrong form', async () => {
    const name = svc.name('forms');
    expect((await svc.put(name, { headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    for (const body of [{ kafkaTopic: 'a b' }, { kafkaTopic: 5 }, { schema: 'no-such-schema' }, { schema: 7 }, { schemaValidate: 'yes' }, { ttlSeconds: -1 }, { ttlSeconds: 1.5 }]) {
      expectError(await patch(svc, name, body), 400, 'invalid_parameter');
    }
    expectError(await patch(svc, name, '[]'), 400, 'invalid_parameter');
    expectError(await patch(svc, name, '"x"'), 400, 'invalid_parameter');
    expectError(await patch(svc, name, '{'), 400, 'invalid_json');
    expectError(await patch(svc, name, { kafkaTopic: 'x' }, 'text/plain'), 415, 'unsupported_media_type');
    expect((await config(svc, name)).kafkaTopicDerived).toBe(true);
  });

  test('validation needs a bound schema: turning it on without one, or unbinding a validating stream alone, answers 400', async () => {
    const name = svc.name('needs-schema');
    expect((await svc.put(name, { headers: { 'content-type': 'application/json' } })).status).toBe(201);
    expectError(await patch(svc, name, { schemaValidate: true }), 400, 'invalid_parameter');
    expect((await patch(svc, name, { schema, schemaValidate: true })).status).toBe(200);
    expectError(await patch(svc, name, { schema: null }), 400, 'invalid_parameter');
    const unbound = await patch(svc, name, { schema: null, schemaValidate: null });
    expect(unbound.status).toBe(200);
    expect(unbound.json<ConfigDoc>()).toMatchObject({ schema: null, schemaValidate: false });
  });

  test('a patch that changes nothing answers 200 with the document', async () => {
    const name = svc.name('noop');
    expect((await svc.put(name, { headers: { 'content-type': 'text/plain', 'svc-kafka-topic': 't1' } })).status).toBe(201);
    const before = await config(svc, name);
    const res = await patch(svc, name, {});
    expect(res.status).toBe(200);
    expect(res.json()).toEqual(before);
    expect((await patch(svc, name, { kafkaTopic: 't1' })).json()).toEqual(before);
  });

  test('a sealed stream can still be configured', async () => {
    const name = svc.name('sealed');
    expect((await svc.put(name, { headers: { 'content-type': 'text/plain', 'svc-closed': 'true' } })).status).toBe(201);
    const res = await patch(svc, name, { kafkaTopic: 'archive' });
    expect(res.status).toBe(200);
    expect(res.json<ConfigDoc>()).toMatchObject({ closed: true, kafkaTopic: 'archive' });
  });

  test('a stream deleted and created again starts with a fresh config', async () => {
    const name = svc.name('recreate');
    expect((await svc.put(name, { headers: { 'content-type': 'text/plain', 'svc-kafka-topic': 'old' } })).status).toBe(201);
    expect((await svc.del(name)).status).toBe(204);
    expect((await svc.put(name, { headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    expect(await config(svc, name)).toMatchObject({ kafkaTopicDerived: true, schema: null });
  });

  test('methods other than GET, HEAD and PATCH answer 405 with Allow', async () => {
    const name = svc.name('methods');
    expect((await svc.put(name, { headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    for (const method of ['PUT', 'POST', 'DELETE'] as const) {
      const res = await svc.request(method, `/_streams${name}`);
      expectError(res, 405, 'method_not_allowed');
      expect(res.header('allow')).toBe('GET, HEAD, PATCH');
    }
    expect((await svc.head(`/_streams${name}`)).status).toBe(200);
  });
});

describe.each(ENGINES)('stream config across restarts over the %s engine', (engine: Engine) => {
  let agent: Agent;
  beforeAll(() => {
    agent = new Agent();
  });
  afterAll(async () => {
    await agent.close();
  });

  async function call(node: NodeProcess, method: 'GET' | 'PUT' | 'POST' | 'PATCH', path: string, headers: Record<string, string> = {}, body?: string) {
    const r = await agent.request({ origin: node.url, path, method, headers, body: body ?? null });
    const text = await r.body.text();
    return { status: r.statusCode, text };
  }

  /** Register a schema, create a stream, then PATCH it; returns the document the PATCH answered. */
  async function setUp(node: NodeProcess): Promise<ConfigDoc> {
    expect((await call(node, 'PUT', '/_schemas/amount', { 'content-type': 'application/json' }, JSON.stringify({ type: 'json-schema', schema: AMOUNT }))).status).toBe(201);
    expect((await call(node, 'PUT', '/cfg/orders', { 'content-type': 'application/json' })).status).toBe(201);
    expect((await call(node, 'POST', '/cfg/orders', { 'content-type': 'application/json' }, '{"amount": "before"}')).status).toBe(200);
    const res = await call(node, 'PATCH', '/_streams/cfg/orders', { 'content-type': MERGE_PATCH }, JSON.stringify({ schema: 'amount', schemaValidate: true, kafkaTopic: 'orders-topic', ttlSeconds: 86400 }));
    expect(res.status).toBe(200);
    const doc = JSON.parse(res.text) as ConfigDoc;
    expect(doc).toMatchObject({ schema: 'amount', schemaValidate: true, kafkaTopic: 'orders-topic', kafkaTopicDerived: false, ttlSeconds: 86400 });
    return doc;
  }

  async function check(node: NodeProcess, doc: ConfigDoc): Promise<void> {
    const got = await call(node, 'GET', '/_streams/cfg/orders');
    expect(got.status).toBe(200);
    expect(JSON.parse(got.text)).toEqual(doc);
    expect((await call(node, 'POST', '/cfg/orders', { 'content-type': 'application/json' }, '{"amount": "after"}')).status).toBe(400);
    const ok = await call(node, 'POST', '/cfg/orders', { 'content-type': 'application/json' }, '{"amount": 1}');
    expect(ok.status).toBe(200);
  }

  test('a PATCHed config survives a graceful restart', async () => {
    const dataDir = tempDir();
    const first = await startNode({ engine, dataDir });
    const doc = await setUp(first);
    expect(await first.stop()).toBe(0);
    const second = await startNode({ engine, dataDir });
    await check(second, doc);
    await second.stop();
  });

  test('a PATCHed config survives SIGKILL right after the 200 (replayed from the log)', async () => {
    const dataDir = tempDir();
    const first = await startNode({ engine, dataDir });
    const doc = await setUp(first);
    await first.kill();
    const second = await startNode({ engine, dataDir });
    await check(second, doc);
    // A second crash and restart replays the same frames again: still the same config.
    await second.kill();
    const third = await startNode({ engine, dataDir });
    const got = await call(third, 'GET', '/_streams/cfg/orders');
    expect(JSON.parse(got.text)).toEqual(doc);
    await third.stop();
  });

  test('a kafkaTopic cleared with PATCH stays cleared after SIGKILL', async () => {
    const dataDir = tempDir();
    const first = await startNode({ engine, dataDir });
    expect((await call(first, 'PUT', '/cfg/topic', { 'content-type': 'text/plain', 'svc-kafka-topic': 'explicit' })).status).toBe(201);
    expect((await call(first, 'PATCH', '/_streams/cfg/topic', { 'content-type': MERGE_PATCH }, '{"kafkaTopic": null}')).status).toBe(200);
    await first.kill();
    const second = await startNode({ engine, dataDir });
    const got = JSON.parse((await call(second, 'GET', '/_streams/cfg/topic')).text) as ConfigDoc;
    expect(got).toMatchObject({ kafkaTopic: 'cfg.topic', kafkaTopicDerived: true });
    await second.stop();
  });
});
