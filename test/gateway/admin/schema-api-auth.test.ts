/**
 * `/admin/schemas…` with `--auth required` (docs/auth.md): each endpoint needs its schema_*
 * operation on the admin audience, the `schemas` group, and a `streams` matcher covering
 * `/_subjects/<subject>` (the list: every subject).
 */
import { randomBytes } from 'node:crypto';
import { type NodeProcess, startNode } from '../../helpers/node-process';

const b64url = (b: Buffer | string): string => Buffer.from(b).toString('base64url');
const ROOT = b64url('root') + '.' + b64url(randomBytes(32));
const AVRO = JSON.stringify({ schema: JSON.stringify({ type: 'record', name: 'R', fields: [] }) });

let node: NodeProcess;

async function call(method: string, path: string, token: string, body?: string): Promise<number> {
  const r = await fetch(node.adminUrl! + path, { method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body });
  await r.text();
  return r.status;
}

let issued = 0;
async function tokenFor(scope: Record<string, unknown>): Promise<string> {
  const r = await fetch(`${node.adminUrl!}/admin/tokens`, { method: 'POST', headers: { authorization: `Bearer ${ROOT}`, 'content-type': 'application/json' }, body: JSON.stringify({ id: `s${++issued}`, scope }) });
  if (r.status !== 201) throw new Error(`issue: ${r.status} ${await r.text()}`);
  return ((await r.json()) as { token: string }).token;
}

const scope = (ops: string[], write: boolean, streams: unknown[] = [{ prefix: '/_subjects/team-' }]): Record<string, unknown> => ({
  streams,
  groups: { schemas: { read: !write, write } },
  ops,
  audiences: ['admin'],
});

beforeAll(async () => {
  node = await startNode({ args: ['--auth', 'required', '--auth-bootstrap-token', ROOT] });
  expect(await call('POST', '/admin/schemas/team-a/versions', ROOT, AVRO)).toBe(200);
  expect(await call('POST', '/admin/schemas/other/versions', ROOT, AVRO)).toBe(200);
});
afterAll(async () => {
  await node?.stop();
});

test('each endpoint needs its schema operation, the schemas group and the subject', async () => {
  const reader = await tokenFor(scope(['schema_read'], false));
  expect(await call('GET', '/admin/schemas/team-a', reader)).toBe(200);
  expect(await call('GET', '/admin/schemas/team-a/versions/1', reader)).toBe(200);
  expect(await call('POST', '/admin/schemas/team-a/compatibility', reader, AVRO)).toBe(200);
  expect(await call('GET', '/admin/schemas/other', reader)).toBe(403);
  expect(await call('POST', '/admin/schemas/team-a/versions', reader, AVRO)).toBe(403);
  expect(await call('DELETE', '/admin/schemas/team-a', reader)).toBe(403);
  // The list covers every subject: a prefix matcher short of that is refused.
  expect(await call('GET', '/admin/schemas', reader)).toBe(403);
  expect(await call('GET', '/admin/schemas', await tokenFor(scope(['schema_read'], false, [{ prefix: '/_subjects/' }])))).toBe(200);

  const writer = await tokenFor(scope(['schema_write'], true));
  expect(await call('POST', '/admin/schemas/team-b/versions', writer, AVRO)).toBe(200);
  expect(await call('PUT', '/admin/schemas/team-b/config', writer, '{"compatibility":"NONE"}')).toBe(403);
  expect(await call('PUT', '/admin/schemas/team-b/config', await tokenFor(scope(['schema_config'], true)), '{"compatibility":"NONE"}')).toBe(200);
  expect(await call('DELETE', '/admin/schemas/team-b', await tokenFor(scope(['schema_delete'], true)))).toBe(200);
  // Another audience's token with the same operations is refused here.
  expect(await call('GET', '/admin/schemas/team-a', await tokenFor({ ...scope(['schema_read'], false), audiences: ['schema_registry'] }))).toBe(403);
});
