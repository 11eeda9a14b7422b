/**
 * The schema registry's REST API as Confluent documents it, request by request over HTTP on a
 * real node: soft and hard deletes and their error codes, references (AVRO named types, JSON
 * `$ref`, PROTOBUF imports) and `referencedby`, `normalize`, config and mode with their codes,
 * PROTOBUF registration and lookup, and the shapes of answers.
 */
import { type NodeProcess, startNode } from '../helpers/node-process';
import { registryUrl } from './registry-node';

let node: NodeProcess;
let url: string;
const CT = 'application/vnd.schemaregistry.v1+json';

beforeAll(async () => {
  node = await startNode({ args: ['--schema-registry-listen', '127.0.0.1:0'] });
  url = registryUrl(node);
});

afterAll(async () => {
  await node?.stop();
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown; type: string | null }> {
  const r = await fetch(url + path, { method, headers: { 'content-type': CT }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // a raw schema text
  }
  return { status: r.status, body: parsed, type: r.headers.get('content-type') };
}

const avro = (name: string, fields: unknown[] = [{ name: 'a', type: 'string' }]): string => JSON.stringify({ type: 'record', name, fields });

describe('registering and reading', () => {
  test('answers the type list, the root and unknown paths in Confluent shapes', async () => {
    expect(await call('GET', '/schemas/types')).toMatchObject({ status: 200, body: ['AVRO', 'JSON', 'PROTOBUF'], type: CT });
    expect((await call('GET', '/')).body).toEqual({});
    expect(await call('GET', '/nope')).toMatchObject({ status: 404, body: { error_code: 404 } });
    expect(await call('GET', '/subjects/x/versions/0')).toMatchObject({ status: 422, body: { error_code: 42202 } });
    expect(await call('POST', '/subjects/x/versions', { schema: '{"type":"nope"}' })).toMatchObject({ status: 422, body: { error_code: 42201 } });
    expect(await call('POST', '/subjects/x/versions', { schema: '{}', schemaType: 'XML' })).toMatchObject({ status: 422, body: { error_code: 42201 } });
  });

  test('serves a version with subject, id, version and schema, leaving schemaType out for AVRO', async () => {
    const { body } = await call('POST', '/subjects/shape/versions', { schema: avro('Shape') });
    const id = (body as { id: number }).id;
    expect((await call('GET', '/subjects/shape/versions/latest')).body).toEqual({ subject: 'shape', version: 1, id, schema: avro('Shape') });
    expect((await call('GET', '/subjects/shape/versions/1/schema')).body).toEqual(JSON.parse(avro('Shape')));
    expect((await call('GET', `/schemas/ids/${id}`)).body).toEqual({ schema: avro('Shape') });
    expect((await call('GET', `/schemas/ids/${id}/subjects`)).body).toEqual(['shape']);
    expect((await call('GET', `/schemas/ids/${id}/versions`)).body).toEqual([{ subject: 'shape', version: 1 }]);
    expect(await call('POST', '/subjects/shape', { schema: avro('Other') })).toMatchObject({ status: 404, body: { error_code: 40403 } });
    expect(await call('POST', '/subjects/none', { schema: avro('Shape') })).toMatchObject({ status: 404, body: { error_code: 40401 } });
  });

  test('registers and looks up PROTOBUF schemas, with imports given as references', async () => {
    const common = 'syntax = "proto3";\npackage common;\nmessage Money { int64 units = 1; string currency = 2; }';
    const c = await call('POST', '/subjects/money/versions', { schema: common, schemaType: 'PROTOBUF' });
    expect(c.status).toBe(200);
    const order = 'syntax = "proto3";\npackage shop;\nimport "common/money.proto";\nimport "google/protobuf/timestamp.proto";\nmessage Order { string id = 1; common.Money total = 2; google.protobuf.Timestamp at = 3; }';
    const refs = [{ name: 'common/money.proto', subject: 'money', version: 1 }];
    const o = await call('POST', '/subjects/order/versions', { schema: order, schemaType: 'PROTOBUF', references: refs });
    expect(o.status).toBe(200);
    const id = (o.body as { id: number }).id;
    expect((await call('GET', `/schemas/ids/${id}`)).body).toEqual({ schema: order, schemaType: 'PROTOBUF', references: refs });
    expect((await call('POST', '/subjects/order', { schema: order, schemaType: 'PROTOBUF', references: refs })).body).toMatchObject({ id, version: 1, schemaType: 'PROTOBUF' });
    expect((await call('GET', '/subjects/money/versions/1/referencedby')).body).toEqual([id]);
    // Without the reference the import cannot be resolved.
    expect(await call('POST', '/subjects/order2/versions', { schema: order, schemaType: 'PROTOBUF' })).toMatchObject({ status: 422, body: { error_code: 42201 } });
    // A referenced version cannot go while a live schema uses it.
    expect(await call('DELETE', '/subjects/money/versions/1')).toMatchObject({ status: 422, body: { error_code: 42206 } });
  });

  test('resolves AVRO named types and JSON $refs from references', async () => {
    const addr = JSON.stringify({ type: 'record', name: 'Address', namespace: 'geo', fields: [{ name: 'city', type: 'string' }] });
    expect((await call('POST', '/subjects/address/versions', { schema: addr })).status).toBe(200);
    const person = JSON.stringify({ type: 'record', name: 'Person', fields: [{ name: 'home', type: 'geo.Address' }] });
    expect((await call('POST', '/subjects/person/versions', { schema: person })).status).toBe(422);
    expect((await call('POST', '/subjects/person/versions', { schema: person, references: [{ name: 'geo.Address', subject: 'address', version: 1 }] })).status).toBe(200);
    const item = JSON.stringify({ type: 'object', properties: { sku: { type: 'string' } } });
    expect((await call('POST', '/subjects/item/versions', { schema: item, schemaType: 'JSON' })).status).toBe(200);
    const cart = JSON.stringify({ type: 'object', properties: { items: { type: 'array', items: { $ref: 'item.json' } } } });
    expect((await call('POST', '/subjects/cart/versions', { schema: cart, schemaType: 'JSON', references: [{ name: 'item.json', subject: 'item', version: 1 }] })).status).toBe(200);
  });

  test('normalize=true makes key order irrelevant for JSON schemas', async () => {
    const a = JSON.stringify({ type: 'object', properties: { x: { type: 'string' } } });
    const b = JSON.stringify({ properties: { x: { type: 'string' } }, type: 'object' });
    const ra = await call('POST', '/subjects/norm/versions?normalize=true', { schema: a, schemaType: 'JSON' });
    const rb = await call('POST', '/subjects/norm/versions?normalize=true', { schema: b, schemaType: 'JSON' });
    expect(rb.body).toEqual(ra.body);
    expect((await call('GET', '/subjects/norm/versions')).body).toEqual([1]);
    expect((await call('POST', '/subjects/norm?normalize=true', { schema: b, schemaType: 'JSON' })).body).toMatchObject({ version: 1 });
  });
});

describe('deletes', () => {
  test('soft-deletes, then hard-deletes a version, with 40406 and 40407 on the wrong order', async () => {
    await call('POST', '/subjects/dv/versions', { schema: avro('D1') });
    await call('POST', '/subjects/dv/versions', { schema: avro('D1', [{ name: 'a', type: 'string' }, { name: 'b', type: 'int', default: 0 }]) });
    expect(await call('DELETE', '/subjects/dv/versions/1?permanent=true')).toMatchObject({ status: 404, body: { error_code: 40407 } });
    expect(await call('DELETE', '/subjects/dv/versions/1')).toMatchObject({ status: 200, body: 1 });
    expect(await call('DELETE', '/subjects/dv/versions/1')).toMatchObject({ status: 404, body: { error_code: 40406 } });
    expect((await call('GET', '/subjects/dv/versions')).body).toEqual([2]);
    expect((await call('GET', '/subjects/dv/versions?deleted=true')).body).toEqual([1, 2]);
    expect(await call('GET', '/subjects/dv/versions/1')).toMatchObject({ status: 404, body: { error_code: 40402 } });
    expect((await call('GET', '/subjects/dv/versions/1?deleted=true')).status).toBe(200);
    expect(await call('DELETE', '/subjects/dv/versions/1?permanent=true')).toMatchObject({ status: 200, body: 1 });
    expect((await call('GET', '/subjects/dv/versions?deleted=true')).body).toEqual([2]);
  });

  test('soft-deletes, then hard-deletes a subject, with 40404 and 40405 on the wrong order, and new versions continue the numbering', async () => {
    await call('POST', '/subjects/ds/versions', { schema: avro('S1') });
    const id = ((await call('GET', '/subjects/ds/versions/1')).body as { id: number }).id;
    expect(await call('DELETE', '/subjects/ds?permanent=true')).toMatchObject({ status: 404, body: { error_code: 40405 } });
    expect(await call('DELETE', '/subjects/ds')).toMatchObject({ status: 200, body: [1] });
    expect(await call('DELETE', '/subjects/ds')).toMatchObject({ status: 404, body: { error_code: 40404 } });
    expect((await call('GET', '/subjects')).body).not.toContain('ds');
    expect((await call('GET', '/subjects?deleted=true')).body).toContain('ds');
    expect(await call('GET', '/subjects/ds/versions')).toMatchObject({ status: 404, body: { error_code: 40401 } });
    // Registering again after a soft delete: a new version, the same id.
    expect((await call('POST', '/subjects/ds/versions', { schema: avro('S1') })).body).toEqual({ id });
    expect((await call('GET', '/subjects/ds/versions')).body).toEqual([2]);
    await call('DELETE', '/subjects/ds');
    expect(await call('DELETE', '/subjects/ds?permanent=true')).toMatchObject({ status: 200, body: [1, 2] });
    expect(await call('GET', '/subjects/ds/versions?deleted=true')).toMatchObject({ status: 404, body: { error_code: 40401 } });
    // The id stays readable: ids are never handed out again.
    expect((await call('GET', `/schemas/ids/${id}`)).status).toBe(200);
  });
});

describe('config and mode', () => {
  test('sets, reads and deletes the global and subject levels, with 40408 and 42203', async () => {
    expect((await call('GET', '/config')).body).toEqual({ compatibilityLevel: 'BACKWARD' });
    expect(await call('GET', '/config/cfg')).toMatchObject({ status: 404, body: { error_code: 40408 } });
    expect((await call('GET', '/config/cfg?defaultToGlobal=true')).body).toEqual({ compatibilityLevel: 'BACKWARD' });
    expect((await call('PUT', '/config/cfg', { compatibility: 'full_transitive' })).body).toEqual({ compatibility: 'FULL_TRANSITIVE' });
    expect((await call('GET', '/config/cfg')).body).toEqual({ compatibilityLevel: 'FULL_TRANSITIVE' });
    expect(await call('PUT', '/config/cfg', { compatibility: 'SIDEWAYS' })).toMatchObject({ status: 422, body: { error_code: 42203 } });
    expect((await call('DELETE', '/config/cfg')).body).toEqual({ compatibilityLevel: 'FULL_TRANSITIVE' });
    expect(await call('GET', '/config/cfg')).toMatchObject({ status: 404, body: { error_code: 40408 } });
    expect((await call('PUT', '/config', { compatibility: 'NONE' })).body).toEqual({ compatibility: 'NONE' });
    expect((await call('DELETE', '/config')).body).toEqual({ compatibilityLevel: 'NONE' });
    expect((await call('GET', '/config')).body).toEqual({ compatibilityLevel: 'BACKWARD' });
  });

  test('READONLY refuses registrations (42205), IMPORT takes a given id and version, 40409 and 42204', async () => {
    expect((await call('GET', '/mode')).body).toEqual({ mode: 'READWRITE' });
    expect(await call('GET', '/mode/ro')).toMatchObject({ status: 404, body: { error_code: 40409 } });
    expect(await call('PUT', '/mode/ro', { mode: 'SLEEPY' })).toMatchObject({ status: 422, body: { error_code: 42204 } });
    expect((await call('PUT', '/mode/ro', { mode: 'READONLY' })).body).toEqual({ mode: 'READONLY' });
    expect(await call('POST', '/subjects/ro/versions', { schema: avro('RO') })).toMatchObject({ status: 422, body: { error_code: 42205 } });
    expect(await call('POST', '/subjects/imp/versions', { schema: avro('Imp'), id: 5000, version: 3 })).toMatchObject({ status: 422, body: { error_code: 42205 } });
    expect((await call('PUT', '/mode/imp', { mode: 'IMPORT' })).body).toEqual({ mode: 'IMPORT' });
    expect((await call('POST', '/subjects/imp/versions', { schema: avro('Imp'), id: 5000, version: 3 })).body).toEqual({ id: 5000 });
    expect((await call('GET', '/subjects/imp/versions/3')).body).toMatchObject({ id: 5000, version: 3 });
    await call('DELETE', '/mode/imp');
    // Ids handed out later start above the imported one.
    const next = (await call('POST', '/subjects/after-import/versions', { schema: avro('After') })).body as { id: number };
    expect(next.id).toBeGreaterThan(5000);
  });

  test('tests compatibility against a version, with messages when verbose', async () => {
    await call('POST', '/subjects/ct/versions', { schema: avro('CT') });
    const incompatible = { schema: avro('CT', [{ name: 'a', type: 'int' }]) };
    expect((await call('POST', '/compatibility/subjects/ct/versions/latest', incompatible)).body).toEqual({ is_compatible: false });
    const verbose = (await call('POST', '/compatibility/subjects/ct/versions/1?verbose=true', incompatible)).body as { is_compatible: boolean; messages: string[] };
    expect(verbose.is_compatible).toBe(false);
    expect(verbose.messages.length).toBeGreaterThan(0);
    expect((await call('POST', '/compatibility/subjects/ct/versions', { schema: avro('CT') })).body).toEqual({ is_compatible: true });
    expect(await call('POST', '/compatibility/subjects/none/versions/1', incompatible)).toMatchObject({ status: 404, body: { error_code: 40401 } });
  });
});
