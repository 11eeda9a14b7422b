/**
 * The Svc protocol's stream schemas as a view of the registry (docs/schema-registry.md, "Stream
 * schemas"): `/_schemas/{name}` is the JSON subject `svc-{name}`, over a real node with the
 * registry listener; a data directory with schema files from before the view keeps them, and
 * they become subjects at its first start (once, however often it restarts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type NodeProcess, startNode, tempDir } from '../helpers/node-process';
import { registryUrl } from './registry-node';

const CT = 'application/vnd.schemaregistry.v1+json';
const ORDER = { type: 'object', properties: { id: { type: 'integer' }, amount: { type: 'number' } }, required: ['id', 'amount'] };

interface Answer {
  status: number;
  body: unknown;
}

async function call(base: string, method: string, p: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const r = await fetch(base + p, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await r.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // empty or plain text
  }
  return { status: r.status, body: parsed };
}

const start = (dataDir?: string): Promise<NodeProcess> => startNode({ dataDir, args: ['--schema-registry-listen', '127.0.0.1:0'] });

describe('stream schemas over the registry', () => {
  let node: NodeProcess;
  let reg: string;
  beforeAll(async () => {
    node = await start();
    reg = registryUrl(node);
  });
  afterAll(async () => {
    await node?.stop();
  });

  test('a schema written through /_schemas/x is the JSON subject svc-x, its versions the subject versions', async () => {
    expect((await call(node.url, 'PUT', '/_schemas/orders', { type: 'json-schema', schema: ORDER })).status).toBe(201);
    expect((await call(reg, 'GET', '/subjects')).body).toContain('svc-orders');
    const v1 = await call(reg, 'GET', '/subjects/svc-orders/versions/latest');
    expect(v1.body).toMatchObject({ subject: 'svc-orders', version: 1, schemaType: 'JSON', schema: JSON.stringify(ORDER) });
    // A replacement that a BACKWARD check would refuse (a required property added) passes: /_schemas never checked one.
    const stricter = { ...ORDER, properties: { ...ORDER.properties, note: { type: 'string' } }, required: ['id', 'amount', 'note'] };
    const put2 = await call(node.url, 'PUT', '/_schemas/orders', { type: 'json-schema', schema: stricter });
    expect(put2).toMatchObject({ status: 200, body: { version: 2 } });
    expect((await call(reg, 'GET', '/subjects/svc-orders/versions')).body).toEqual([1, 2]);
    expect((await call(reg, 'GET', '/config/svc-orders')).body).toEqual({ compatibilityLevel: 'NONE' });
    // The first schema again: the latest once more, as a new version (the registry's ids are shared: the same id as version 1).
    const put3 = await call(node.url, 'PUT', '/_schemas/orders', { type: 'json-schema', schema: ORDER });
    expect(put3).toMatchObject({ status: 200, body: { version: 3 } });
    const v3 = await call(reg, 'GET', '/subjects/svc-orders/versions/latest');
    expect(v3.body).toMatchObject({ version: 3, id: (v1.body as { id: number }).id });
    expect((await call(node.url, 'GET', '/_schemas/orders')).body).toMatchObject({ version: 3, schema: ORDER });
  });

  test('a JSON schema registered over the Confluent API as svc-y can be bound to a stream, which validates with it', async () => {
    const r = await call(reg, 'POST', '/subjects/svc-payments/versions', { schemaType: 'JSON', schema: JSON.stringify(ORDER) }, { 'content-type': CT });
    expect(r.status).toBe(200);
    expect((await call(node.url, 'GET', '/_schemas/payments')).body).toMatchObject({ name: 'payments', type: 'json-schema', schema: ORDER, version: 1 });
    const create = await call(node.url, 'PUT', '/r/payments', undefined, { 'svc-schema': 'payments', 'svc-schema-validate': 'true' });
    expect(create.status).toBe(201);
    expect((await call(node.url, 'POST', '/r/payments', JSON.stringify({ id: 1, amount: 2 }))).status).toBe(200);
    expect((await call(node.url, 'POST', '/r/payments', JSON.stringify({ id: 1, amount: 'x' }))).body).toMatchObject({ error: 'schema_validation_failed' });
    // A new version over the Confluent API is the stream schema's next version at once.
    const looser = { ...ORDER, required: ['id'] };
    expect((await call(reg, 'POST', '/subjects/svc-payments/versions', { schemaType: 'JSON', schema: JSON.stringify(looser) }, { 'content-type': CT })).status).toBe(200);
    expect((await call(node.url, 'GET', '/_schemas/payments')).body).toMatchObject({ version: 2, schema: looser });
    expect((await call(node.url, 'POST', '/r/payments', JSON.stringify({ id: 2 }))).status).toBe(200);
    // Deleting the subject while the stream is bound: the stream keeps its schema (409 through /_schemas, as before).
    expect((await call(node.url, 'DELETE', '/_schemas/payments')).status).toBe(409);
    expect((await call(reg, 'GET', '/subjects/svc-payments/versions')).body).toEqual([1, 2]);
  });

  test('a DELETE of /_schemas/x removes the subject svc-x', async () => {
    expect((await call(node.url, 'PUT', '/_schemas/gone', { type: 'json-schema', schema: ORDER })).status).toBe(201);
    expect((await call(node.url, 'DELETE', '/_schemas/gone')).status).toBe(204);
    expect(await call(reg, 'GET', '/subjects/svc-gone/versions?deleted=true')).toMatchObject({ status: 404, body: { error_code: 40401 } });
    expect((await call(node.url, 'GET', '/_schemas/gone')).status).toBe(404);
  });

  test('a registration Svc cannot take (not JSON) stays a registry subject only', async () => {
    const avro = JSON.stringify({ type: 'record', name: 'A', fields: [{ name: 'a', type: 'string' }] });
    expect((await call(reg, 'POST', '/subjects/svc-avro/versions', { schema: avro }, { 'content-type': CT })).status).toBe(200);
    expect((await call(node.url, 'GET', '/_schemas/avro')).status).toBe(404);
  });
});

describe('a data directory from before the view', () => {
  test('keeps its schema files, which become subjects at the next start, once', async () => {
    const dataDir = tempDir();
    const first = await startNode({ dataDir });
    const created = await call(first.url, 'PUT', '/r/legacy', undefined, {});
    expect(created.status).toBe(201);
    expect(await first.stop()).toBe(0);
    // The stream schema store's file format, as written before the registry held stream schemas (version 3: replaced twice).
    fs.mkdirSync(path.join(dataDir, 'schemas'), { recursive: true });
    const doc = { name: 'legacy', type: 'json-schema', schema: ORDER, version: 3, createdAtMs: 1_700_000_000_000, updatedAtMs: 1_700_000_100_000 };
    fs.writeFileSync(path.join(dataDir, 'schemas', 'legacy.json'), JSON.stringify(doc) + '\n');

    for (let start_ = 0; start_ < 2; start_++) {
      const node = await start(dataDir);
      try {
        const reg = registryUrl(node);
        const got = await call(node.url, 'GET', '/_schemas/legacy');
        if (start_ === 0) expect(got.body).toEqual(doc);
        else expect(got.body).toMatchObject({ name: 'legacy', schema: ORDER, version: 3, createdAtMs: doc.createdAtMs });
        expect((await call(reg, 'GET', '/subjects/svc-legacy/versions')).body).toEqual([3]);
        expect((await call(reg, 'GET', '/subjects/svc-legacy/versions/3')).body).toMatchObject({ schemaType: 'JSON', schema: JSON.stringify(ORDER) });
        // The subject is in READWRITE again after its import.
        expect((await call(reg, 'GET', '/mode/svc-legacy')).status).toBe(404);
        if (start_ === 0) {
          expect((await call(node.url, 'PATCH', '/_streams/r/legacy', { schema: 'legacy', schemaValidate: true })).status).toBeLessThan(300);
          const put = await call(node.url, 'PUT', '/_schemas/legacy', { type: 'json-schema', schema: { ...ORDER, required: ['id'] } });
          expect(put).toMatchObject({ status: 200, body: { version: 4 } });
          // Back to the file's schema for the second start's checks.
          await call(reg, 'DELETE', '/subjects/svc-legacy/versions/4', undefined, { 'content-type': CT });
          expect((await call(node.url, 'GET', '/_schemas/legacy')).body).toMatchObject({ version: 3 });
        }
      } finally {
        await node.stop();
      }
    }
  });
});
