/**
 * The schema registry on the admin listener (docs/schema-registry.md, "Admin API"): subjects with
 * their versions, compatibility and the streams bound to them; registration, compatibility
 * checks, levels and deletes, with the admin error shape plus the registry's message.
 */
import { type NodeProcess, startNode } from '../../helpers/node-process';

let node: NodeProcess;
let admin: string;

async function call(path: string, method = 'GET', body?: unknown): Promise<{ status: number; json: unknown }> {
  const r = await fetch(admin + path, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, json: text === '' ? null : (JSON.parse(text) as unknown) };
}

const ORDER = { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] };
const avro = (fields: unknown[]): string => JSON.stringify({ type: 'record', name: 'User', fields });

beforeAll(async () => {
  node = await startNode();
  admin = node.adminUrl!;
});
afterAll(async () => {
  await node.stop();
});

test('GET /admin/schemas lists subjects with versions, latest id and type, compatibility and the streams bound to them', async () => {
  expect((await fetch(`${node.url}/_schemas/orders`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'json-schema', schema: ORDER }) })).status).toBe(201);
  expect((await fetch(`${node.url}/shop/orders`, { method: 'PUT', headers: { 'svc-schema': 'orders', 'svc-schema-validate': 'true' } })).status).toBe(201);
  expect((await fetch(`${node.url}/shop/audit`, { method: 'PUT', headers: { 'svc-schema': 'orders' } })).status).toBe(201);
  const r = await call('/admin/schemas');
  expect(r.status).toBe(200);
  const doc = r.json as { compatibilityLevel: string; mode: string; subjects: Array<Record<string, unknown>> };
  expect(doc).toMatchObject({ compatibilityLevel: 'BACKWARD', mode: 'READWRITE' });
  const orders = doc.subjects.find((s) => s['subject'] === 'svc-orders');
  expect(orders).toEqual({ subject: 'svc-orders', versions: [1], latest: { version: 1, id: expect.any(Number), schemaType: 'JSON' }, compatibilityLevel: 'NONE', streams: ['/shop/audit', '/shop/orders'] });
  expect((await call('/admin/schemas/svc-orders')).json).toMatchObject({ subject: 'svc-orders', streams: ['/shop/audit', '/shop/orders'], versions: [{ version: 1, schemaType: 'JSON', schema: JSON.stringify(ORDER), deleted: false }] });
});

test('registers, checks compatibility, sets the level and deletes, answering in the admin shape', async () => {
  const v1 = await call('/admin/schemas/users/versions', 'POST', { schema: avro([{ name: 'a', type: 'string' }]) });
  expect(v1).toMatchObject({ status: 200, json: { subject: 'users', version: 1, id: expect.any(Number) } });
  // A field without a default: BACKWARD refuses it.
  const bad = { schema: avro([{ name: 'a', type: 'string' }, { name: 'b', type: 'int' }]) };
  const check = await call('/admin/schemas/users/compatibility', 'POST', bad);
  expect(check).toMatchObject({ status: 200, json: { compatible: false, compatibilityLevel: 'BACKWARD' } });
  expect((check.json as { messages: string[] }).messages.length).toBeGreaterThan(0);
  const refused = await call('/admin/schemas/users/versions', 'POST', bad);
  expect(refused).toMatchObject({ status: 409, json: { error: 'conflict', message: expect.stringMatching(/incompatible/) } });
  const good = { schema: avro([{ name: 'a', type: 'string' }, { name: 'b', type: 'int', default: 0 }]) };
  expect((await call('/admin/schemas/users/compatibility', 'POST', good)).json).toMatchObject({ compatible: true, messages: [] });
  expect((await call('/admin/schemas/users/versions', 'POST', good)).json).toMatchObject({ version: 2 });
  expect((await call('/admin/schemas/users/versions/latest')).json).toMatchObject({ subject: 'users', version: 2, schemaType: 'AVRO' });
  // A subject that does not exist yet: anything is compatible.
  expect((await call('/admin/schemas/nobody/compatibility', 'POST', bad)).json).toMatchObject({ compatible: true });

  expect(await call('/admin/schemas/users/config', 'PUT', { compatibility: 'NONE' })).toMatchObject({ status: 200, json: { compatibilityLevel: 'NONE' } });
  expect((await call('/admin/schemas/users/config')).json).toMatchObject({ compatibilityLevel: 'NONE' });
  expect(await call('/admin/schemas/users/config', 'PUT', { compatibility: 'SIDEWAYS' })).toMatchObject({ status: 400, json: { error: 'bad_request' } });

  expect(await call('/admin/schemas/users/versions/1', 'DELETE')).toMatchObject({ status: 200, json: { version: 1, permanent: false } });
  expect((await call('/admin/schemas/users')).json).toMatchObject({ versions: [{ version: 2 }] });
  expect((await call('/admin/schemas/users?deleted=true')).json).toMatchObject({ versions: [{ version: 1, deleted: true }, { version: 2, deleted: false }] });
  expect(await call('/admin/schemas/users/versions/2?permanent=true', 'DELETE')).toMatchObject({ status: 404, json: { error: 'not_found' } });
  expect(await call('/admin/schemas/users', 'DELETE')).toMatchObject({ status: 200, json: { versions: [2] } });
  expect(await call('/admin/schemas/users?permanent=true', 'DELETE')).toMatchObject({ status: 200, json: { versions: [1, 2], permanent: true } });
  expect(await call('/admin/schemas/users')).toMatchObject({ status: 404, json: { error: 'not_found' } });
});

test('refuses bad requests with 400 and other methods with 405', async () => {
  expect(await call('/admin/schemas/x/versions', 'POST', '{')).toMatchObject({ status: 400 });
  expect(await call('/admin/schemas/x/versions', 'POST', { schema: '{}', schemaType: 'XML' })).toMatchObject({ status: 400, json: { error: 'bad_request' } });
  expect(await call('/admin/schemas/x/versions/0')).toMatchObject({ status: 400 });
  expect(await call('/admin/schemas', 'POST', {})).toMatchObject({ status: 405 });
  expect(await call('/admin/schemas/x/nothing')).toMatchObject({ status: 404 });
});
