/**
 * Every endpoint's operation and group (the table in docs/auth.md), proven row by row on a real
 * node with `--auth required`: a token holding exactly the row's operations, the right side of its
 * group, its audience and a matcher for its name is let through with the endpoint's own status;
 * a token lacking any one of those operations, holding only the other side of the group, or
 * lacking the audience is refused with the listener's exact 403.
 */
import { randomBytes } from 'node:crypto';
import { OPS, type Op } from '../../../src/actors';
import { type NodeProcess, startNode } from '../../helpers/node-process';

const b64 = (s: string | Buffer): string => Buffer.from(s).toString('base64url');
const ROOT = `${b64('root')}.${b64(randomBytes(32))}`;

type Listener = 'svc' | 'ds' | 'admin';
type Group = 'stream' | 'tokens' | 'admin';
const AUDIENCE = { svc: 'svc', ds: 'durable_streams', admin: 'admin' } as const;
const ALL_GROUPS = { stream: { read: true, write: true }, tokens: { read: true, write: true }, admin: { read: true, write: true } };

interface Row {
  listener: Listener;
  method: string;
  /** Request path on its listener; `n` makes names unique per call. */
  path: (n: number) => string;
  headers?: Record<string, string>;
  body?: (n: number) => string;
  ops: Op[];
  group: Group;
  write: boolean;
  /** A write that also reads (a fork reads its source): the token needs both sides of the group. */
  alsoRead?: true;
  /** What the token's `streams` (or, for token endpoints, `tokens`) matcher must cover. */
  matcher: { streams?: string; tokens?: string };
  /** Status when allowed. */
  status: number;
  /** Prepared with the root token before each allowed call. */
  setup?: (n: number) => Promise<void>;
}

let node: NodeProcess;
let base: Record<Listener, string>;
let counter = 0;

async function call(listener: Listener, method: string, path: string, token: string | null, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; body: string }> {
  const h: Record<string, string> = { ...headers };
  if (token !== null) h['authorization'] = `Bearer ${token}`;
  const r = await fetch(base[listener] + path, { method, headers: h, body });
  return { status: r.status, body: await r.text() };
}

const rootPut = async (listener: Listener, path: string, headers: Record<string, string> = { 'content-type': 'text/plain' }, body?: string): Promise<void> => {
  const r = await call(listener, 'PUT', path, ROOT, headers, body);
  if (r.status !== 201) throw new Error(`setup PUT ${path}: ${r.status} ${r.body}`);
};

const issued = new Map<string, string>();
/** A token with `scope`, issued once by the root token (same scope, same token). */
async function tokenFor(scope: Record<string, unknown>): Promise<string> {
  const key = JSON.stringify(scope);
  const known = issued.get(key);
  if (known !== undefined) return known;
  const r = await call('admin', 'POST', '/admin/tokens', ROOT, { 'content-type': 'application/json' }, JSON.stringify({ id: `map-${issued.size}`, scope }));
  if (r.status !== 201) throw new Error(`issue ${key}: ${r.status} ${r.body}`);
  const t = (JSON.parse(r.body) as { token: string }).token;
  issued.set(key, t);
  return t;
}

function matchers(row: Row): Record<string, unknown> {
  return {
    streams: [{ prefix: row.matcher.streams ?? '/m/' }],
    tokens: [{ prefix: row.matcher.tokens ?? 'map-' }],
  };
}

/** The 403 of each listener for `why`. */
function forbidden(listener: Listener, why: string): string {
  if (listener === 'ds') return why;
  return listener === 'admin' ? '{"error":"forbidden"}' : JSON.stringify({ error: 'forbidden', message: why });
}

const TEXT = { 'content-type': 'text/plain' };
const JSON_TYPE = { 'content-type': 'application/json' };

const ROWS: Array<[string, Row]> = [
  // The Svc listener.
  ['Svc GET /{s} reads', { listener: 'svc', method: 'GET', path: () => '/m/s?format=raw', ops: ['read'], group: 'stream', write: false, matcher: {}, status: 200 }],
  ['Svc HEAD /{s} is head', { listener: 'svc', method: 'HEAD', path: () => '/m/s', ops: ['head'], group: 'stream', write: false, matcher: {}, status: 200 }],
  ['Svc GET / lists its prefix range', { listener: 'svc', method: 'GET', path: () => '/?prefix=/m/', ops: ['list'], group: 'stream', write: false, matcher: {}, status: 200 }],
  ['Svc PUT /{s} creates', { listener: 'svc', method: 'PUT', path: (n) => `/m/new-${n}`, headers: TEXT, ops: ['create'], group: 'stream', write: true, matcher: {}, status: 201 }],
  ['Svc POST /{s} appends', { listener: 'svc', method: 'POST', path: () => '/m/s', headers: TEXT, body: () => 'x', ops: ['append'], group: 'stream', write: true, matcher: {}, status: 200 }],
  [
    'Svc POST /{s} with Svc-Closed and a body appends and closes',
    { listener: 'svc', method: 'POST', path: (n) => `/m/c-${n}`, headers: { ...TEXT, 'svc-closed': 'true' }, body: () => 'last', ops: ['append', 'close'], group: 'stream', write: true, matcher: {}, status: 200, setup: (n) => rootPut('svc', `/m/c-${n}`) },
  ],
  [
    'Svc POST /{s} with Svc-Closed and no body closes',
    { listener: 'svc', method: 'POST', path: (n) => `/m/c-${n}`, headers: { ...TEXT, 'svc-closed': 'true' }, ops: ['close'], group: 'stream', write: true, matcher: {}, status: 200, setup: (n) => rootPut('svc', `/m/c-${n}`) },
  ],
  ['Svc POST /{s} with Svc-Trim-Seq trims', { listener: 'svc', method: 'POST', path: () => '/m/s', headers: { 'svc-trim-seq': '0' }, ops: ['trim'], group: 'stream', write: true, matcher: {}, status: 200 }],
  ['Svc DELETE /{s} deletes', { listener: 'svc', method: 'DELETE', path: (n) => `/m/d-${n}`, ops: ['delete'], group: 'stream', write: true, matcher: {}, status: 204, setup: (n) => rootPut('svc', `/m/d-${n}`) }],
  ['Svc GET /_streams/{s} is head', { listener: 'svc', method: 'GET', path: () => '/_streams/m/s', ops: ['head'], group: 'stream', write: false, matcher: {}, status: 200 }],
  ['Svc GET /_offsets/{s} is read', { listener: 'svc', method: 'GET', path: () => '/_offsets/m/s?group=g', ops: ['read'], group: 'stream', write: false, matcher: {}, status: 200 }],
  [
    'Svc PUT /_offsets/{s} (a commit) is read',
    { listener: 'svc', method: 'PUT', path: () => '/_offsets/m/s?group=g', headers: { 'content-type': 'application/json' }, body: () => '{"seq":0}', ops: ['read'], group: 'stream', write: false, matcher: {}, status: 200 },
  ],
  [
    'Svc POST /_share/{s} (a lease) is read',
    { listener: 'svc', method: 'POST', path: () => '/_share/m/s?group=g&op=lease&max=1', ops: ['read'], group: 'stream', write: false, matcher: {}, status: 200 },
  ],
  [
    'Svc PATCH /_share/{s} (the share group config) is create',
    { listener: 'svc', method: 'PATCH', path: () => '/_share/m/s?group=g', headers: { 'content-type': 'application/json' }, body: () => '{"group.share.delivery.count.limit":3}', ops: ['create'], group: 'stream', write: true, matcher: {}, status: 200 },
  ],
  [
    'Svc PATCH /_streams/{s} is create',
    { listener: 'svc', method: 'PATCH', path: () => '/_streams/m/s', headers: { 'content-type': 'application/merge-patch+json' }, body: () => '{"ttlSeconds":null}', ops: ['create'], group: 'stream', write: true, matcher: {}, status: 200 },
  ],
  ['Svc GET /_schemas/{n} reads', { listener: 'svc', method: 'GET', path: () => '/_schemas/sch', ops: ['read'], group: 'stream', write: false, matcher: { streams: '/_schemas/' }, status: 200 }],
  ['Svc HEAD /_schemas/{n} is head', { listener: 'svc', method: 'HEAD', path: () => '/_schemas/sch', ops: ['head'], group: 'stream', write: false, matcher: { streams: '/_schemas/' }, status: 200 }],
  [
    'Svc PUT /_schemas/{n} creates',
    { listener: 'svc', method: 'PUT', path: (n) => `/_schemas/s${n}`, headers: JSON_TYPE, body: () => '{"type":"json-schema","schema":{"type":"object"}}', ops: ['create'], group: 'stream', write: true, matcher: { streams: '/_schemas/' }, status: 201 },
  ],
  [
    'Svc DELETE /_schemas/{n} deletes',
    {
      listener: 'svc', method: 'DELETE', path: (n) => `/_schemas/d${n}`, ops: ['delete'], group: 'stream', write: true, matcher: { streams: '/_schemas/' }, status: 204,
      setup: (n) => rootPut('svc', `/_schemas/d${n}`, JSON_TYPE, '{"type":"json-schema","schema":{"type":"object"}}'),
    },
  ],
  // The Durable Streams listener.
  ['DS GET reads', { listener: 'ds', method: 'GET', path: () => '/v1/stream/m/s?offset=-1', ops: ['read'], group: 'stream', write: false, matcher: {}, status: 200 }],
  ['DS HEAD is head', { listener: 'ds', method: 'HEAD', path: () => '/v1/stream/m/s', ops: ['head'], group: 'stream', write: false, matcher: {}, status: 200 }],
  ['DS PUT creates', { listener: 'ds', method: 'PUT', path: (n) => `/v1/stream/m/new-${n}`, headers: TEXT, ops: ['create'], group: 'stream', write: true, matcher: {}, status: 201 }],
  [
    'DS PUT with Stream-Forked-From creates and reads the source',
    { listener: 'ds', method: 'PUT', path: (n) => `/v1/stream/m/fork-${n}`, headers: { ...TEXT, 'stream-forked-from': '/v1/stream/m/s' }, ops: ['create', 'read'], group: 'stream', write: true, alsoRead: true, matcher: {}, status: 201 },
  ],
  ['DS POST appends', { listener: 'ds', method: 'POST', path: () => '/v1/stream/m/s', headers: TEXT, body: () => 'x', ops: ['append'], group: 'stream', write: true, matcher: {}, status: 204 }],
  [
    'DS POST with Stream-Closed and a body appends and closes',
    { listener: 'ds', method: 'POST', path: (n) => `/v1/stream/m/c-${n}`, headers: { ...TEXT, 'stream-closed': 'true' }, body: () => 'last', ops: ['append', 'close'], group: 'stream', write: true, matcher: {}, status: 204, setup: (n) => rootPut('ds', `/v1/stream/m/c-${n}`) },
  ],
  [
    'DS POST with Stream-Closed and no body closes',
    { listener: 'ds', method: 'POST', path: (n) => `/v1/stream/m/c-${n}`, headers: { ...TEXT, 'stream-closed': 'true' }, ops: ['close'], group: 'stream', write: true, matcher: {}, status: 204, setup: (n) => rootPut('ds', `/v1/stream/m/c-${n}`) },
  ],
  ['DS DELETE deletes', { listener: 'ds', method: 'DELETE', path: (n) => `/v1/stream/m/d-${n}`, ops: ['delete'], group: 'stream', write: true, matcher: {}, status: 204, setup: (n) => rootPut('ds', `/v1/stream/m/d-${n}`) }],
  ['DS GET /__ds/… reads', { listener: 'ds', method: 'GET', path: () => '/v1/stream/__ds/jwks.json', ops: ['read'], group: 'stream', write: false, matcher: { streams: '/__ds/' }, status: 200 }],
  // The admin listener.
  ['admin GET /admin/cluster is cluster_read', { listener: 'admin', method: 'GET', path: () => '/admin/cluster', ops: ['cluster_read'], group: 'admin', write: false, matcher: {}, status: 200 }],
  ['admin GET /metrics is node_read', { listener: 'admin', method: 'GET', path: () => '/metrics', ops: ['node_read'], group: 'admin', write: false, matcher: {}, status: 200 }],
  ['admin GET /admin/nodes is node_read', { listener: 'admin', method: 'GET', path: () => '/admin/nodes', ops: ['node_read'], group: 'admin', write: false, matcher: {}, status: 200 }],
  ['admin GET /admin/nodes/{id} is node_read', { listener: 'admin', method: 'GET', path: () => '/admin/nodes/1', ops: ['node_read'], group: 'admin', write: false, matcher: {}, status: 200 }],
  [
    'admin POST /admin/nodes/{id} is update_node_slots',
    { listener: 'admin', method: 'POST', path: () => '/admin/nodes/1', headers: JSON_TYPE, body: () => '{"slots":1024}', ops: ['update_node_slots'], group: 'admin', write: true, matcher: {}, status: 200 },
  ],
  ['admin GET /admin/streams/{s} is stream_inspect', { listener: 'admin', method: 'GET', path: () => '/admin/streams/m/s', ops: ['stream_inspect'], group: 'admin', write: false, matcher: {}, status: 200 }],
  [
    'admin POST /admin/transfer is transfer_stream',
    { listener: 'admin', method: 'POST', path: () => '/admin/transfer', headers: JSON_TYPE, body: () => '{"stream":"/m/s","toNode":1}', ops: ['transfer_stream'], group: 'admin', write: true, matcher: {}, status: 200 },
  ],
  // The dashboard's read endpoints (gateway/admin/dashboard-api.ts).
  ['admin GET /admin/streams lists its prefix range with stream_inspect', { listener: 'admin', method: 'GET', path: () => '/admin/streams?prefix=/m/', ops: ['stream_inspect'], group: 'admin', write: false, matcher: {}, status: 200 }],
  ['admin GET /admin/stream-config/{s} is stream_inspect', { listener: 'admin', method: 'GET', path: () => '/admin/stream-config/m/s', ops: ['stream_inspect'], group: 'admin', write: false, matcher: {}, status: 200 }],
  ['admin GET /admin/records/{s} is read', { listener: 'admin', method: 'GET', path: () => '/admin/records/m/s', ops: ['read'], group: 'stream', write: false, matcher: {}, status: 200 }],
  ['admin GET /admin/groups is cluster_read', { listener: 'admin', method: 'GET', path: () => '/admin/groups', ops: ['cluster_read'], group: 'admin', write: false, matcher: {}, status: 200 }],
  ['admin GET /admin/tokens is list_tokens', { listener: 'admin', method: 'GET', path: () => '/admin/tokens', ops: ['list_tokens'], group: 'tokens', write: false, matcher: {}, status: 200 }],
  [
    'admin POST /admin/tokens is issue_token',
    { listener: 'admin', method: 'POST', path: () => '/admin/tokens', headers: JSON_TYPE, body: (n) => JSON.stringify({ id: `map-new-${n}`, scope: {} }), ops: ['issue_token'], group: 'tokens', write: true, matcher: {}, status: 201 },
  ],
  [
    'admin DELETE /admin/tokens/{id} is revoke_token',
    {
      listener: 'admin', method: 'DELETE', path: (n) => `/admin/tokens/map-gone-${n}`, ops: ['revoke_token'], group: 'tokens', write: true, matcher: {}, status: 204,
      setup: async (n) => {
        const r = await call('admin', 'POST', '/admin/tokens', ROOT, JSON_TYPE, JSON.stringify({ id: `map-gone-${n}`, scope: {} }));
        if (r.status !== 201) throw new Error(`setup issue: ${r.status}`);
      },
    },
  ],
];

beforeAll(async () => {
  node = await startNode({ args: ['--auth', 'required', '--auth-bootstrap-token', ROOT, '--ds-listen', '127.0.0.1:0', '--ds-subscriptions'] });
  base = { svc: node.url, ds: node.dsUrl!, admin: node.adminUrl! };
  await rootPut('svc', '/m/s', TEXT, 'hello');
  await rootPut('svc', '/_schemas/sch', JSON_TYPE, '{"type":"json-schema","schema":{"type":"object"}}');
});

afterAll(async () => {
  await node.stop();
});

describe('every endpoint maps to its operation, group and audience', () => {
  test.each(ROWS)('%s', async (_label, row) => {
    const send = async (token: string): Promise<{ status: number; body: string }> => {
      const n = ++counter;
      if (row.setup !== undefined) await row.setup(n);
      return call(row.listener, row.method, row.path(n), token, row.headers, row.body?.(n));
    };
    const denied = (why: string): { status: number; body: string } => ({ status: 403, body: row.method === 'HEAD' ? '' : forbidden(row.listener, why) });
    const audience = AUDIENCE[row.listener];
    const sides: Array<'read' | 'write'> = row.alsoRead === true ? ['write', 'read'] : [row.write ? 'write' : 'read'];
    const groupWith = (which: Array<'read' | 'write'>): { read: boolean; write: boolean } => ({ read: which.includes('read'), write: which.includes('write') });

    const exactly = await tokenFor({ ...matchers(row), groups: { [row.group]: groupWith(sides) }, ops: row.ops, audiences: [audience] });
    expect((await send(exactly)).status).toBe(row.status);

    for (const op of row.ops) {
      const without = await tokenFor({ ...matchers(row), groups: ALL_GROUPS, ops: OPS.filter((o) => o !== op), audiences: ['svc', 'durable_streams', 'admin'] });
      expect(await send(without)).toEqual(denied(`the token does not allow ${op}`));
    }
    for (const side of sides) {
      const missing = await tokenFor({ ...matchers(row), groups: { ...ALL_GROUPS, [row.group]: groupWith(side === 'read' ? ['write'] : ['read']) }, ops: [...OPS], audiences: ['svc', 'durable_streams', 'admin'] });
      expect(await send(missing)).toEqual(denied(`the token does not allow ${side === 'write' ? 'writing' : 'reading'} ${row.group}`));
    }

    const elsewhere = await tokenFor({ ...matchers(row), groups: ALL_GROUPS, ops: [...OPS], audiences: ['svc', 'durable_streams', 'admin'].filter((a) => a !== audience) });
    expect(await send(elsewhere)).toEqual(denied(`the token is not valid on the ${audience} audience`));
  });

  test('the table names all sixteen operations of these listeners (the schema registry\'s four: test/registry/auth.test.ts)', () => {
    expect(new Set(ROWS.flatMap(([, r]) => r.ops))).toEqual(new Set(OPS.filter((op) => !op.startsWith('schema_'))));
  });
});
