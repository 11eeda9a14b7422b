/**
 * The schema registry listener's rows of the access map (docs/auth.md), proven on a real node with
 * `--auth required`: a token holding exactly the row's operation, the right side of the `schemas`
 * group, the `schema_registry` audience and a matcher for the subject gets the endpoint's own
 * answer; lacking any one of them, it gets 403 `{"error_code":40301}`. Credentials go as the
 * registry's clients send them: Basic, the token as the password.
 */
import { randomBytes } from 'node:crypto';
import { OPS } from '../../src/actors';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { registryUrl } from './registry-node';

const b64 = (s: string | Buffer): string => Buffer.from(s).toString('base64url');
const ROOT = `${b64('root')}.${b64(randomBytes(32))}`;
const CT = 'application/vnd.schemaregistry.v1+json';
const SCHEMA = JSON.stringify({ schema: JSON.stringify({ type: 'record', name: 'A', fields: [{ name: 'a', type: 'string' }] }) });

let node: NodeProcess;
let url: string;

interface Row {
  method: string;
  path: string;
  body?: string;
  op: 'schema_read' | 'schema_write' | 'schema_delete' | 'schema_config';
  /** The `streams` matcher the token needs, if the row touches subjects. */
  matcher?: { exact: string } | { prefix: string };
  status: number;
}

const ROWS: Row[] = [
  { method: 'GET', path: '/subjects', op: 'schema_read', matcher: { prefix: '/_subjects/' }, status: 200 },
  { method: 'GET', path: '/subjects?subjectPrefix=team-', op: 'schema_read', matcher: { prefix: '/_subjects/team-' }, status: 200 },
  { method: 'GET', path: '/subjects/base/versions', op: 'schema_read', matcher: { exact: '/_subjects/base' }, status: 200 },
  { method: 'POST', path: '/subjects/base', body: SCHEMA, op: 'schema_read', matcher: { exact: '/_subjects/base' }, status: 200 },
  { method: 'POST', path: '/compatibility/subjects/base/versions/latest', body: SCHEMA, op: 'schema_read', matcher: { exact: '/_subjects/base' }, status: 200 },
  { method: 'POST', path: '/subjects/written/versions', body: SCHEMA, op: 'schema_write', matcher: { exact: '/_subjects/written' }, status: 200 },
  { method: 'DELETE', path: '/subjects/gone/versions/1', op: 'schema_delete', matcher: { exact: '/_subjects/gone' }, status: 200 },
  { method: 'PUT', path: '/config/base', body: '{"compatibility":"FULL"}', op: 'schema_config', matcher: { exact: '/_subjects/base' }, status: 200 },
  { method: 'PUT', path: '/mode/base', body: '{"mode":"READWRITE"}', op: 'schema_config', matcher: { exact: '/_subjects/base' }, status: 200 },
  { method: 'PUT', path: '/config', body: '{"compatibility":"BACKWARD"}', op: 'schema_config', matcher: { prefix: '/_subjects/' }, status: 200 },
  { method: 'GET', path: '/schemas/ids/1', op: 'schema_read', status: 200 },
  { method: 'GET', path: '/schemas/types', op: 'schema_read', status: 200 },
  { method: 'GET', path: '/config', op: 'schema_read', status: 200 },
];

async function call(method: string, path: string, token: string, body?: string): Promise<{ status: number; body: string }> {
  const r = await fetch(url + path, { method, headers: { authorization: `Basic ${Buffer.from(`svc:${token}`).toString('base64')}`, 'content-type': CT }, body });
  return { status: r.status, body: await r.text() };
}

let issuedCount = 0;
async function tokenFor(scope: Record<string, unknown>): Promise<string> {
  const r = await fetch(`${node.adminUrl!}/admin/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ROOT}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id: `t${++issuedCount}`, scope }),
  });
  if (r.status !== 201) throw new Error(`issue: ${r.status} ${await r.text()}`);
  return ((await r.json()) as { token: string }).token;
}

const write = (op: Row['op']): boolean => op !== 'schema_read';
const scopeOf = (row: Row, over: Record<string, unknown> = {}): Record<string, unknown> => ({
  ...(row.matcher === undefined ? {} : { streams: [row.matcher] }),
  groups: { schemas: { read: !write(row.op), write: write(row.op) } },
  ops: [row.op],
  audiences: ['schema_registry'],
  ...over,
});

beforeAll(async () => {
  node = await startNode({ args: ['--schema-registry-listen', '127.0.0.1:0', '--auth', 'required', '--auth-bootstrap-token', ROOT] });
  url = registryUrl(node);
  expect((await call('POST', '/subjects/base/versions', ROOT, SCHEMA)).status).toBe(200);
});

afterAll(async () => {
  await node?.stop();
});

describe.each(ROWS.map((r) => [`${r.method} ${r.path}`, r] as const))('%s', (_name, row) => {
  test(`is allowed with exactly ${row.op}, its group side, the schema_registry audience${row.matcher === undefined ? '' : ' and a matcher for its subject'}`, async () => {
    // A version to delete, made fresh for the delete row.
    if (row.method === 'DELETE') expect((await call('POST', '/subjects/gone/versions', ROOT, SCHEMA)).status).toBe(200);
    const r = await call(row.method, row.path, await tokenFor(scopeOf(row)), row.body);
    expect(r).toMatchObject({ status: row.status });
  });

  test('is refused (403, 40301) without the operation, the group side, the audience or the subject', async () => {
    const other = row.op === 'schema_read' ? 'schema_write' : 'schema_read';
    const lacking: Array<Record<string, unknown>> = [
      scopeOf(row, { ops: [other] }),
      scopeOf(row, { groups: { schemas: { read: write(row.op), write: !write(row.op) } } }),
      scopeOf(row, { audiences: ['svc'] }),
    ];
    if (row.matcher !== undefined) lacking.push(scopeOf(row, { streams: [{ exact: '/_subjects/elsewhere' }] }));
    for (const scope of lacking) {
      const r = await call(row.method, row.path, await tokenFor(scope), row.body);
      expect(r.status).toBe(403);
      expect(JSON.parse(r.body)).toMatchObject({ error_code: 40301 });
    }
  });
});

test('answers 401 (40101) without credentials and with a wrong token, asking for Basic credentials', async () => {
  const none = await fetch(`${url}/subjects`);
  expect(none.status).toBe(401);
  expect(none.headers.get('www-authenticate')).toMatch(/^Basic/);
  expect(((await none.json()) as { error_code: number }).error_code).toBe(40101);
  expect((await call('GET', '/subjects', `${b64('root')}.${b64(randomBytes(32))}`)).status).toBe(401);
  // Bearer works as well.
  expect((await fetch(`${url}/subjects`, { headers: { authorization: `Bearer ${ROOT}` } })).status).toBe(200);
});

test('the rows name every schema registry operation', () => {
  expect(new Set(ROWS.map((r) => r.op))).toEqual(new Set(OPS.filter((op) => op.startsWith('schema_'))));
});
