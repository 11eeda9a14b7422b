/**
 * The admin endpoints the dashboard reads (src/gateway/admin/dashboard-api.ts), against a real
 * node with `--auth required`: what each answers, the scope each needs (docs/auth.md), and the
 * admin error shape for bad input.
 */
import { randomBytes } from 'node:crypto';
import { type NodeProcess, startNode } from '../../helpers/node-process';

const b64url = (b: Buffer | string): string => Buffer.from(b).toString('base64url');
const ROOT = b64url('root') + '.' + b64url(randomBytes(32));

let node: NodeProcess;
let admin: string;

async function call(path: string, token: string | null = ROOT, method = 'GET', body?: unknown): Promise<{ status: number; json: Record<string, unknown> | null }> {
  const headers: Record<string, string> = {};
  if (token !== null) headers['authorization'] = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = typeof body === 'string' ? 'text/plain' : 'application/json';
  const url = path.startsWith('http') ? path : admin + path;
  const r = await fetch(url, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, json: text === '' ? null : (JSON.parse(text) as Record<string, unknown>) };
}

/** Issues a token with the given ops (groups read for all, admin and svc audiences). */
async function token(id: string, ops: string[], streams: unknown[] = [{ prefix: '' }]): Promise<string> {
  const r = await call('/admin/tokens', ROOT, 'POST', {
    id,
    scope: { streams, tokens: [], groups: { stream: { read: true, write: false }, admin: { read: true, write: false } }, ops, audiences: ['admin', 'svc'], expiresAtMs: null },
  });
  expect(r.status).toBe(201);
  return String(r.json!['token']);
}

beforeAll(async () => {
  node = await startNode({ args: ['--auth', 'required', '--auth-bootstrap-token', ROOT] });
  admin = node.adminUrl!;
  expect((await call(`${node.url}/team/a`, ROOT, 'PUT', 'a0')).status).toBe(201);
  for (let i = 1; i < 4; i++) expect((await call(`${node.url}/team/a`, ROOT, 'POST', `a${i}`)).status).toBe(200);
  expect((await call(`${node.url}/team/b`, ROOT, 'PUT')).status).toBe(201);
  expect((await call(`${node.url}/other`, ROOT, 'PUT')).status).toBe(201);
});
afterAll(async () => {
  await node.stop();
});

test('GET /admin/whoami gives the caller id and scope, and 401 without a token', async () => {
  const me = await call('/admin/whoami');
  expect(me.status).toBe(200);
  expect(me.json!['id']).toBe('root');
  expect(me.json!['auth']).toBe('required');
  expect((me.json!['scope'] as { ops: string[] }).ops).toContain('update_node_slots');
  expect((await call('/admin/whoami', null)).status).toBe(401);
});

test('GET /admin/streams lists a page by prefix with sizes, and pages with start_after', async () => {
  const all = await call('/admin/streams?prefix=/team/');
  expect(all.status).toBe(200);
  const streams = all.json!['streams'] as Array<Record<string, unknown>>;
  expect(streams.map((s) => s['name']).slice(0, 2)).toEqual(['/team/a', '/team/b']);
  expect(streams[0]).toMatchObject({ startOffset: 0, endOffset: 4, closed: false, contentType: 'text/plain', ttlSeconds: null });
  const before = Date.now();
  const first = await call('/admin/streams?prefix=/team/&limit=1');
  expect(first.json).toMatchObject({ hasMore: true, nextStartAfter: '/team/a' });
  // The node's clock at the listing: the page's rates divide by it.
  expect(first.json!['listedAtMs']).toBeGreaterThanOrEqual(before);
  expect(first.json!['listedAtMs']).toBeLessThanOrEqual(Date.now());
  const second = await call('/admin/streams?prefix=/team/&limit=1&start_after=/team/a');
  expect((second.json!['streams'] as Array<{ name: string }>).map((s) => s.name)).toEqual(['/team/b']);
  expect(second.json!['hasMore']).toBe(false);
  expect((await call('/admin/streams?limit=x')).json).toEqual({ error: 'bad_request' });
});

test('a list needs stream_inspect over the whole prefix range', async () => {
  const t = await token('team-inspector', ['stream_inspect'], [{ prefix: '/team/' }]);
  expect((await call('/admin/streams?prefix=/team/', t)).status).toBe(200);
  expect((await call('/admin/streams?prefix=/', t)).status).toBe(403);
  expect((await call('/admin/streams', t)).status).toBe(403);
});

test('GET /admin/records gives records from a seq in the JSON read format, and needs the read op', async () => {
  const r = await call('/admin/records/team/a?from=2&limit=10');
  expect(r.status).toBe(200);
  expect(r.json).toMatchObject({ startSeq: 0, nextSeq: 4, tailSeq: 4, count: 2 });
  expect((r.json!['records'] as Array<{ seq: number; body: string }>).map((x) => [x.seq, x.body])).toEqual([
    [2, 'a2'],
    [3, 'a3'],
  ]);
  const atTail = await call('/admin/records/team/a?from=4');
  expect(atTail.json).toMatchObject({ count: 0, nextSeq: 4, records: [] });
  expect((await call('/admin/records/no-such')).status).toBe(404);
  const inspectOnly = await token('inspect-only', ['stream_inspect']);
  expect((await call('/admin/streams/team/a', inspectOnly)).status).toBe(200);
  expect((await call('/admin/records/team/a', inspectOnly)).status).toBe(403);
  const reader = await token('inspect-read', ['stream_inspect', 'read']);
  expect((await call('/admin/records/team/a', reader)).status).toBe(200);
});

test('GET /admin/stream-config gives the config beyond the stream detail, with the bound schema', async () => {
  const r = await call('/admin/stream-config/team/a');
  expect(r.status).toBe(200);
  expect(r.json).toMatchObject({ name: '/team/a', contentType: 'text/plain', schema: null, schemaValidate: false, kafkaTopic: null, fork: null, forkRefs: 0, schemaDocument: null });
  const schema = { type: 'object', required: ['id'] };
  expect((await call(`${node.url}/_schemas/order`, ROOT, 'PUT', { type: 'json-schema', schema })).status).toBe(201);
  const put = await fetch(`${node.url}/team/typed`, { method: 'PUT', headers: { authorization: `Bearer ${ROOT}`, 'content-type': 'application/json', 'svc-schema': 'order' } });
  expect(put.status).toBe(201);
  const typed = await call('/admin/stream-config/team/typed');
  expect(typed.json).toMatchObject({ schema: 'order', schemaDocument: { type: 'json-schema', version: 1, schema } });
});

test('GET /admin/groups answers with the Kafka listener present and no groups yet; writes are 405', async () => {
  expect((await call('/admin/groups')).json).toEqual({ kafka: true, groups: [] });
  expect((await call('/admin/groups', ROOT, 'POST', {})).json).toEqual({ error: 'method_not_allowed' });
  expect((await call('/admin/records/team/a', ROOT, 'DELETE')).status).toBe(405);
});
