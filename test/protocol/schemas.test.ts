/**
 * The schema registry (`/_schemas/{name}`) and validation of appends against a bound schema
 * (docs/protocol.md "Schemas"), over both HTTP engines; and that registrations survive restarts.
 */
import { Agent } from 'undici';
import { type NodeProcess, startNode, tempDir } from '../helpers/node-process';
import { ENGINES, type Engine, JSON_BATCH, type Res, type Svc, binaryBatch, expectError, jsonBatch, useNode } from './client';

interface SchemaDoc {
  name: string;
  type: string;
  schema: unknown;
  version: number;
  createdAtMs: number;
  updatedAtMs: number;
}

const ORDER = {
  type: 'object',
  properties: { id: { type: 'string' }, amount: { type: 'number' } },
  required: ['id', 'amount'],
};

let counter = 0;
/** A schema name no other test uses. */
function schemaName(label: string): string {
  counter++;
  return `${label}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}

function putSchema(svc: Svc, name: string, doc: unknown, contentType = 'application/json'): Promise<Res> {
  return svc.put(`/_schemas/${name}`, { headers: { 'content-type': contentType }, body: typeof doc === 'string' ? doc : JSON.stringify(doc) });
}

async function register(svc: Svc, name: string, schema: unknown = ORDER): Promise<SchemaDoc> {
  const res = await putSchema(svc, name, { type: 'json-schema', schema });
  if (res.status !== 201 && res.status !== 200) throw new Error(`PUT /_schemas/${name}: ${res.status} ${res.text}`);
  return res.json<SchemaDoc>();
}

/** Create a stream bound to `schema` (validating unless told otherwise). */
async function createBound(svc: Svc, schema: string, validate = true, contentType = 'application/json'): Promise<string> {
  const name = svc.name('bound');
  const res = await svc.put(name, { headers: { 'content-type': contentType, 'svc-schema': schema, 'svc-schema-validate': String(validate) } });
  if (res.status !== 201) throw new Error(`PUT ${name}: ${res.status} ${res.text}`);
  return name;
}

const order = (i: number, amount: unknown = i * 10): string => JSON.stringify({ id: `o${i}`, amount });

describe.each(ENGINES)('the schema registry over the %s engine', (engine) => {
  const svc = useNode(engine);

  test('registering a schema answers 201 with the stored document, and GET returns it', async () => {
    const name = schemaName('order');
    const before = Date.now();
    const res = await putSchema(svc, name, { type: 'json-schema', schema: ORDER });
    expect(res.status).toBe(201);
    expect(res.header('content-type')).toMatch(/^application\/json/);
    expect(res.header('location')).toBe(`/_schemas/${name}`);
    const doc = res.json<SchemaDoc>();
    expect(doc).toEqual({ name, type: 'json-schema', schema: ORDER, version: 1, createdAtMs: expect.any(Number), updatedAtMs: doc.createdAtMs });
    expect(doc.createdAtMs).toBeGreaterThanOrEqual(before - 1000);

    const got = await svc.get(`/_schemas/${name}`);
    expect(got.status).toBe(200);
    expect(got.json()).toEqual(doc);
  });

  test('registering the same document again answers 200 and keeps the version', async () => {
    const name = schemaName('same');
    const first = await register(svc, name);
    const again = await putSchema(svc, name, { type: 'json-schema', schema: ORDER });
    expect(again.status).toBe(200);
    expect(again.json()).toEqual(first);
  });

  test('a document read with GET can be registered again as it is', async () => {
    const name = schemaName('roundtrip');
    await register(svc, name);
    const doc = (await svc.get(`/_schemas/${name}`)).text;
    const again = await putSchema(svc, name, doc);
    expect(again.status).toBe(200);
    expect(again.json<SchemaDoc>().version).toBe(1);
  });

  test('replacing a schema answers 200 with the next version, and appends are validated against the new version', async () => {
    const name = schemaName('replace');
    const v1 = await register(svc, name);
    const stream = await createBound(svc, name);
    expectError(await svc.post(stream, { headers: { 'content-type': 'application/json' }, body: order(1, 'ten') }), 400, 'schema_validation_failed');

    const looser = { type: 'object', properties: { id: { type: 'string' }, amount: { type: ['number', 'string'] } }, required: ['id'] };
    const res = await putSchema(svc, name, { type: 'json-schema', schema: looser });
    expect(res.status).toBe(200);
    const v2 = res.json<SchemaDoc>();
    expect(v2).toMatchObject({ name, version: 2, schema: looser, createdAtMs: v1.createdAtMs });
    expect(v2.updatedAtMs).toBeGreaterThanOrEqual(v1.updatedAtMs);

    const ok = await svc.post(stream, { headers: { 'content-type': 'application/json' }, body: order(1, 'ten') });
    expect(ok.status).toBe(200);
    expectError(await svc.post(stream, { headers: { 'content-type': 'application/json' }, body: '{"amount": 1}' }), 400, 'schema_validation_failed');
  });

  test('the list holds every registered schema sorted by name, without the schema bodies', async () => {
    const prefix = schemaName('list');
    const names = [`${prefix}-b`, `${prefix}-a`, `${prefix}-c`];
    for (const n of names) await register(svc, n);
    const res = await svc.get('/_schemas');
    expect(res.status).toBe(200);
    const list = res.json<{ schemas: Array<Record<string, unknown>> }>().schemas;
    const mine = list.filter((s) => String(s['name']).startsWith(prefix));
    expect(mine.map((s) => s['name'])).toEqual([...names].sort());
    for (const s of mine) expect(Object.keys(s).sort()).toEqual(['createdAtMs', 'name', 'type', 'updatedAtMs', 'version']);
    const all = list.map((s) => String(s['name']));
    expect(all).toEqual([...all].sort());
  });

  test('deleting a schema answers 204, after which it is gone; deleting an unknown schema answers 404', async () => {
    const name = schemaName('gone');
    await register(svc, name);
    const del = await svc.del(`/_schemas/${name}`);
    expect(del.status).toBe(204);
    expectError(await svc.get(`/_schemas/${name}`), 404, 'not_found');
    expectError(await svc.del(`/_schemas/${name}`), 404, 'not_found');
    expect((await svc.get('/_schemas')).json<{ schemas: SchemaDoc[] }>().schemas.map((s) => s.name)).not.toContain(name);
    // The name is free again.
    expect((await putSchema(svc, name, { type: 'json-schema', schema: ORDER })).status).toBe(201);
  });

  test('deleting a schema a stream is bound to answers 409 naming the stream, keeps validating, and succeeds once the stream is unbound', async () => {
    const name = schemaName('bound');
    await register(svc, name);
    const stream = await createBound(svc, name);
    const refused = expectError(await svc.del(`/_schemas/${name}`), 409, 'conflict');
    expect(refused.message).toContain(stream);
    expect((await svc.get(`/_schemas/${name}`)).status).toBe(200);
    // Every shard worker still has it.
    for (let i = 0; i < 4; i++) {
      const other = await createBound(svc, name);
      expectError(await svc.post(other, { headers: { 'content-type': 'application/json' }, body: '{}' }), 400, 'schema_validation_failed');
      expect((await svc.del(other)).status).toBe(204);
    }

    const patch = await svc.request('PATCH', `/_streams${stream}`, {
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ schema: null, schemaValidate: false }),
    });
    expect(patch.status).toBe(200);
    expect((await svc.del(`/_schemas/${name}`)).status).toBe(204);
  });

  test('a stream bound without validation also keeps its schema from being deleted', async () => {
    const name = schemaName('label');
    await register(svc, name);
    const stream = await createBound(svc, name, false);
    expectError(await svc.del(`/_schemas/${name}`), 409, 'conflict');
    expect((await svc.del(stream)).status).toBe(204);
    expect((await svc.del(`/_schemas/${name}`)).status).toBe(204);
  });

  test('a registration that is not the documented document answers 400 invalid_schema', async () => {
    const name = schemaName('bad-doc');
    for (const doc of [
      { schema: ORDER },
      { type: 'avro', schema: ORDER },
      { type: 'json-schema' },
      { type: 'json-schema', schema: ORDER, extra: 1 },
      { type: 'json-schema', schema: 'string' },
      { type: 'json-schema', schema: [ORDER] },
      { type: 'json-schema', schema: ORDER, name: 'another-name' },
      ['json-schema'],
    ]) {
      expectError(await putSchema(svc, name, doc), 400, 'invalid_schema');
    }
    expectError(await putSchema(svc, name, '{"type": '), 400, 'invalid_json');
    expectError(await putSchema(svc, name, { type: 'json-schema', schema: ORDER }, 'text/plain'), 415, 'unsupported_media_type');
    expectError(await svc.get(`/_schemas/${name}`), 404, 'not_found');
  });

  test("a JSON Schema that ajv cannot compile answers 400 invalid_schema with ajv's message", async () => {
    const name = schemaName('bad-schema');
    const bad = expectError(await putSchema(svc, name, { type: 'json-schema', schema: { type: 'object', properties: { a: { type: 'nope' } } } }), 400, 'invalid_schema');
    expect(bad.message).toMatch(/schema is invalid/);
    expect(bad.message).toMatch(/type/);
    const ref = expectError(await putSchema(svc, name, { type: 'json-schema', schema: { $ref: 'https://example.com/other.json' } }), 400, 'invalid_schema');
    expect(ref.message).toMatch(/resolve reference/);
    const draft = expectError(await putSchema(svc, name, { type: 'json-schema', schema: { $schema: 'http://json-schema.org/draft-04/schema#' } }), 400, 'invalid_schema');
    expect(draft.message).toMatch(/\$schema/);
    expectError(await svc.get(`/_schemas/${name}`), 404, 'not_found');
  });

  test('draft-07 schemas are chosen by $schema and validate with draft-07 rules', async () => {
    const name = schemaName('draft07');
    // Tuple `items` is draft-07; in 2020-12 it would be prefixItems.
    const schema = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'array', items: [{ type: 'number' }], additionalItems: false };
    expect((await putSchema(svc, name, { type: 'json-schema', schema })).status).toBe(201);
    const stream = await createBound(svc, name);
    expect((await svc.post(stream, { headers: { 'content-type': 'application/json' }, body: '[1]' })).status).toBe(200);
    expect(expectError(await svc.post(stream, { headers: { 'content-type': 'application/json' }, body: '[1, 2]' }), 400, 'schema_validation_failed').message).toMatch(/^records\[0\]: /);
    expect(expectError(await svc.post(stream, { headers: { 'content-type': 'application/json' }, body: '["x"]' }), 400, 'schema_validation_failed').message).toBe('records[0]/0: must be number');
  });

  test('two schemas with the same $id can both be registered', async () => {
    const a = schemaName('id-a');
    const b = schemaName('id-b');
    expect((await putSchema(svc, a, { type: 'json-schema', schema: { $id: 'https://example.com/same', type: 'string' } })).status).toBe(201);
    expect((await putSchema(svc, b, { type: 'json-schema', schema: { $id: 'https://example.com/same', type: 'number' } })).status).toBe(201);
    const sa = await createBound(svc, a);
    const sb = await createBound(svc, b);
    expect((await svc.post(sa, { headers: { 'content-type': 'application/json' }, body: '"text"' })).status).toBe(200);
    expect((await svc.post(sb, { headers: { 'content-type': 'application/json' }, body: '12' })).status).toBe(200);
    expectError(await svc.post(sb, { headers: { 'content-type': 'application/json' }, body: '"text"' }), 400, 'schema_validation_failed');
  });

  test('invalid schema names answer 400 invalid_parameter', async () => {
    for (const path of ['/_schemas/a%20b', `/_schemas/${'x'.repeat(129)}`, '/_schemas/a/b', '/_schemas/%2E%2E', '/_schemas/%C3%BC']) {
      expectError(await putSchema(svc, path.slice('/_schemas/'.length), { type: 'json-schema', schema: ORDER }), 400, 'invalid_parameter');
      expectError(await svc.get(path), 400, 'invalid_parameter');
    }
    expect((await putSchema(svc, `${'x'.repeat(120)}.v1_-Z`, { type: 'json-schema', schema: true })).status).toBe(201);
  });

  test('methods other than GET, HEAD, PUT and DELETE answer 405 with Allow', async () => {
    const res = await svc.post('/_schemas/anything', { headers: { 'content-type': 'application/json' }, body: '{}' });
    expectError(res, 405, 'method_not_allowed');
    expect(res.header('allow')).toBe('GET, HEAD, PUT, DELETE');
    expect(expectError(await svc.put('/_schemas'), 405, 'method_not_allowed').error).toBe('method_not_allowed');
  });
});

describe.each(ENGINES)('schema validation of appends over the %s engine', (engine) => {
  const svc = useNode(engine);
  let schema = '';

  beforeAll(async () => {
    schema = schemaName('orders');
    await register(svc, schema);
  });

  test('creating a stream with Svc-Schema and Svc-Schema-Validate binds the schema, and a valid append passes', async () => {
    const stream = await createBound(svc, schema);
    const res = await svc.post(stream, { headers: { 'content-type': 'application/json' }, body: order(1) });
    expect(res.status).toBe(200);
    expect(res.header('svc-next-seq')).toBe('1');
    const { records } = await svc.read(stream);
    expect(records.map((r) => r.body)).toEqual([order(1)]);
  });

  test('an invalid single record answers 400 schema_validation_failed naming records[0] and the path', async () => {
    const stream = await createBound(svc, schema);
    const e = expectError(await svc.post(stream, { headers: { 'content-type': 'application/json' }, body: order(1, 'ten') }), 400, 'schema_validation_failed');
    expect(e.message).toBe('records[0]/amount: must be number');
    const missing = expectError(await svc.post(stream, { headers: { 'content-type': 'application/json' }, body: '{"id": "x"}' }), 400, 'schema_validation_failed');
    expect(missing.message).toBe("records[0]: must have required property 'amount'");
    expect(await svc.nextSeq(stream)).toBe(0);
  });

  test('a JSON batch with one bad record among ten answers 400 naming records[i], and nothing is written', async () => {
    const stream = await createBound(svc, schema);
    expect((await svc.post(stream, { headers: { 'content-type': 'application/json' }, body: order(0) })).status).toBe(200);
    const records = Array.from({ length: 10 }, (_, i) => ({ body: order(i, i === 6 ? { value: 6 } : i) }));
    const e = expectError(await svc.post(stream, jsonBatch(records)), 400, 'schema_validation_failed');
    expect(e.message).toBe('records[6]/amount: must be number');
    expect(await svc.nextSeq(stream)).toBe(1);
    const { records: stored } = await svc.read(stream);
    expect(stored).toHaveLength(1);

    records[6] = { body: order(6) };
    const ok = await svc.post(stream, jsonBatch(records));
    expect(ok.status).toBe(200);
    expect([ok.header('svc-start-seq'), ok.header('svc-next-seq')]).toEqual(['1', '11']);
  });

  test('a body that is not JSON answers 400 naming the record', async () => {
    const stream = await createBound(svc, schema);
    const single = expectError(await svc.post(stream, { headers: { 'content-type': 'application/json' }, body: 'not json' }), 400, 'schema_validation_failed');
    expect(single.message).toMatch(/^records\[0\]: the body is not JSON/);
    const batch = expectError(await svc.post(stream, jsonBatch([{ body: order(0) }, { body: '{"id": ' }])), 400, 'schema_validation_failed');
    expect(batch.message).toMatch(/^records\[1\]: the body is not JSON/);
    const binary = expectError(await svc.post(stream, jsonBatch([{ body_b64: Buffer.from([0xff, 0xfe]).toString('base64') }])), 400, 'schema_validation_failed');
    expect(binary.message).toMatch(/^records\[0\]: /);
    expect(await svc.nextSeq(stream)).toBe(0);
  });

  test('binary batches are validated record by record, numbered across the batches', async () => {
    const stream = await createBound(svc, schema);
    const rec = (s: string) => ({ key: null, value: Buffer.from(s), headers: null });
    const good = Buffer.concat([binaryBatch([rec(order(0)), rec(order(1))]), binaryBatch([rec(order(2))])]);
    expect((await svc.post(stream, { headers: { 'content-type': 'application/vnd.svc.batch' }, body: good })).status).toBe(200);
    const bad = Buffer.concat([binaryBatch([rec(order(3)), rec(order(4))]), binaryBatch([rec(order(5)), rec('{"id": 5, "amount": 5}')])]);
    const e = expectError(await svc.post(stream, { headers: { 'content-type': 'application/vnd.svc.batch' }, body: bad }), 400, 'schema_validation_failed');
    expect(e.message).toBe('records[3]/id: must be string');
    const tombstone = binaryBatch([{ key: Buffer.from('k'), value: null, headers: null }]);
    expectError(await svc.post(stream, { headers: { 'content-type': 'application/vnd.svc.batch' }, body: tombstone }), 400, 'schema_validation_failed');
    expect(await svc.nextSeq(stream)).toBe(3);
  });

  test('a create body is validated when the create turns validation on', async () => {
    const bad = svc.name('create-body');
    const headers = { 'content-type': 'application/json', 'svc-schema': schema, 'svc-schema-validate': 'true' };
    expectError(await svc.put(bad, { headers, body: '{"id": 1}' }), 400, 'schema_validation_failed');
    expect((await svc.head(bad)).status).toBe(404);
    const good = svc.name('create-body-ok');
    const res = await svc.put(good, { headers, body: order(1) });
    expect(res.status).toBe(201);
    expect(res.header('svc-next-seq')).toBe('1');
  });

  test('a stream bound without validation accepts anything, and HEAD shows the schema', async () => {
    const stream = await createBound(svc, schema, false, 'text/plain');
    expect((await svc.post(stream, { headers: { 'content-type': 'text/plain' }, body: 'free text' })).status).toBe(200);
    const head = await svc.head(stream);
    expect(head.header('svc-schema')).toBe(schema);
  });

  test('validation does not depend on the stream content type', async () => {
    const stream = await createBound(svc, schema, true, 'text/plain');
    expect((await svc.post(stream, { headers: { 'content-type': 'text/plain' }, body: order(1) })).status).toBe(200);
    expectError(await svc.post(stream, { headers: { 'content-type': 'text/plain' }, body: 'plain' }), 400, 'schema_validation_failed');
  });

  test('a seal without records passes a validating stream, and a sealed stream still answers 409 before validating', async () => {
    const stream = await createBound(svc, schema);
    const seal = await svc.post(stream, { headers: { 'svc-closed': 'true' } });
    expect(seal.status).toBe(200);
    expectError(await svc.post(stream, { headers: { 'content-type': 'application/json' }, body: 'x' }), 409, 'conflict');
  });

  test('creating with an unregistered Svc-Schema, or Svc-Schema-Validate without Svc-Schema, answers 400', async () => {
    const name = svc.name('bad-create');
    expectError(await svc.put(name, { headers: { 'content-type': 'application/json', 'svc-schema': 'no-such-schema-xyz' } }), 400, 'invalid_parameter');
    expectError(await svc.put(name, { headers: { 'content-type': 'application/json', 'svc-schema': 'bad name' } }), 400, 'invalid_parameter');
    expectError(await svc.put(name, { headers: { 'content-type': 'application/json', 'svc-schema-validate': 'true' } }), 400, 'invalid_parameter');
    expectError(await svc.put(name, { headers: { 'content-type': 'application/json', 'svc-schema': schema, 'svc-schema-validate': 'yes' } }), 400, 'invalid_parameter');
    expect((await svc.head(name)).status).toBe(404);
    // Svc-Schema-Validate: false alone is the default, not an error.
    expect((await svc.put(name, { headers: { 'content-type': 'application/json', 'svc-schema-validate': 'false' } })).status).toBe(201);
  });

  test('concurrent appends to a validating stream keep valid ones and refuse invalid ones', async () => {
    const stream = await createBound(svc, schema);
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        svc.post(stream, { headers: { 'content-type': JSON_BATCH }, body: JSON.stringify({ records: [{ body: order(i, i % 4 === 0 ? 'bad' : i) }] }) }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(30);
    expect(results.filter((r) => r.status === 400)).toHaveLength(10);
    expect(await svc.nextSeq(stream)).toBe(30);
  });
});

describe.each(ENGINES)('schemas across restarts over the %s engine', (engine: Engine) => {
  let agent: Agent;
  beforeAll(() => {
    agent = new Agent();
  });
  afterAll(async () => {
    await agent.close();
  });

  async function call(node: NodeProcess, method: 'GET' | 'PUT' | 'POST' | 'HEAD', path: string, headers: Record<string, string> = {}, body?: string) {
    const r = await agent.request({ origin: node.url, path, method, headers, body: body ?? null });
    const text = await r.body.text();
    return { status: r.statusCode, headers: r.headers, text };
  }

  async function setUp(node: NodeProcess): Promise<{ doc: string }> {
    const put = await call(node, 'PUT', '/_schemas/restart', { 'content-type': 'application/json' }, JSON.stringify({ type: 'json-schema', schema: ORDER }));
    expect(put.status).toBe(201);
    const create = await call(node, 'PUT', '/r/orders', { 'content-type': 'application/json', 'svc-schema': 'restart', 'svc-schema-validate': 'true' });
    expect(create.status).toBe(201);
    return { doc: put.text };
  }

  async function check(node: NodeProcess, doc: string): Promise<void> {
    const got = await call(node, 'GET', '/_schemas/restart');
    expect(got.status).toBe(200);
    expect(JSON.parse(got.text)).toEqual(JSON.parse(doc));
    const list = await call(node, 'GET', '/_schemas');
    expect(JSON.parse(list.text)).toEqual({ schemas: [expect.objectContaining({ name: 'restart', version: 1 })] });
    expect((await call(node, 'POST', '/r/orders', { 'content-type': 'application/json' }, order(1))).status).toBe(200);
    const bad = await call(node, 'POST', '/r/orders', { 'content-type': 'application/json' }, order(2, 'x'));
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text)).toMatchObject({ error: 'schema_validation_failed', message: 'records[0]/amount: must be number' });
    expect((await call(node, 'HEAD', '/r/orders')).headers['svc-schema']).toBe('restart');
  }

  test('schemas survive a graceful restart, and bound streams still validate', async () => {
    const dataDir = tempDir();
    const first = await startNode({ engine, dataDir });
    const { doc } = await setUp(first);
    expect(await first.stop()).toBe(0);
    const second = await startNode({ engine, dataDir });
    await check(second, doc);
    await second.stop();
  });

  test('a schema registered right before SIGKILL is there after the restart', async () => {
    const dataDir = tempDir();
    const first = await startNode({ engine, dataDir });
    const { doc } = await setUp(first);
    await first.kill();
    const second = await startNode({ engine, dataDir });
    await check(second, doc);
    await second.stop();
  });

  test('a deleted schema stays deleted after a restart', async () => {
    const dataDir = tempDir();
    const first = await startNode({ engine, dataDir });
    expect((await call(first, 'PUT', '/_schemas/temp', { 'content-type': 'application/json' }, JSON.stringify({ type: 'json-schema', schema: true }))).status).toBe(201);
    const del = await agent.request({ origin: first.url, path: '/_schemas/temp', method: 'DELETE' });
    await del.body.text();
    expect(del.statusCode).toBe(204);
    await first.kill();
    const second = await startNode({ engine, dataDir });
    expect((await call(second, 'GET', '/_schemas/temp')).status).toBe(404);
    await second.stop();
  });
});
