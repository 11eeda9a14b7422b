/**
 * The security suite (docs/auth.md): one node with `--auth required`, every listener, table-driven.
 * Each row states the exact status and body; rejections must carry their listener's shape.
 */
import { randomBytes } from 'node:crypto';
import * as net from 'node:net';
import { type NodeProcess, startNode } from '../../helpers/node-process';

const b64 = (s: string | Buffer): string => Buffer.from(s).toString('base64url');
const ROOT = `${b64('root')}.${b64(randomBytes(32))}`;

interface Answer {
  status: number;
  body: string;
  headers: Headers;
}

let node: NodeProcess;
let svc: string;
let ds: string;
let admin: string;
const tokens: Record<string, string> = {};

async function call(url: string, init: { method?: string; token?: string | null; auth?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.auth !== undefined) headers['authorization'] = init.auth;
  else if (init.token != null) headers['authorization'] = `Bearer ${init.token}`;
  const r = await fetch(url, { method: init.method ?? 'GET', headers, body: init.body });
  return { status: r.status, body: await r.text(), headers: r.headers };
}

async function issue(id: string, scope: unknown, as = ROOT, at = admin): Promise<Answer> {
  return call(`${at}/admin/tokens`, { method: 'POST', token: as, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id, scope }) });
}

/** A fixed expiry an hour ahead for the tenant issuer. */
const EXPIRY = Date.now() + 3_600_000;

const streamScope = (prefix: string, ops: string[], write: boolean, audiences = ['svc', 'durable_streams']): unknown => ({
  streams: [{ prefix }],
  groups: { stream: { read: true, write } },
  ops,
  audiences,
});

beforeAll(async () => {
  node = await startNode({ args: ['--auth', 'required', '--auth-bootstrap-token', ROOT, '--ds-listen', '127.0.0.1:0'] });
  svc = node.url;
  ds = `${node.dsUrl!}/v1/stream`;
  admin = node.adminUrl!;
  const grant = async (id: string, scope: unknown): Promise<void> => {
    const r = await issue(id, scope);
    expect(r.status).toBe(201);
    tokens[id] = (JSON.parse(r.body) as { token: string }).token;
  };
  await grant('reader-a', streamScope('/a/', ['read', 'head', 'list'], false));
  await grant('writer-a', streamScope('/a/', ['read', 'head', 'list', 'create', 'append', 'close', 'delete'], true));
  await grant('tenant-b', { ...(streamScope('/tenant-b/', ['read', 'head', 'list', 'create', 'append', 'delete'], true) as object), autoPrefixStreams: true });
  await grant('expired', { ...(streamScope('/a/', ['read'], false) as object), expiresAtMs: Date.now() - 1000 });
  await grant('revoked', streamScope('/a/', ['read'], false));
  await grant('admin-reader', { groups: { admin: { read: true, write: false } }, ops: ['cluster_read', 'node_read'], audiences: ['admin'] });
  await grant('issuer-a', {
    streams: [{ prefix: '/a/' }],
    tokens: [{ prefix: 'a-' }],
    groups: { stream: { read: true, write: false }, tokens: { read: true, write: true } },
    ops: ['read', 'issue_token', 'list_tokens', 'revoke_token'],
    audiences: ['admin', 'svc'],
  });
  await grant('tenant-issuer', {
    streams: [{ prefix: '/tenant-c/' }],
    tokens: [{ prefix: 't-' }],
    groups: { stream: { read: true, write: true }, tokens: { read: true, write: true } },
    ops: ['read', 'append', 'issue_token'],
    audiences: ['admin', 'svc'],
    autoPrefixStreams: true,
    expiresAtMs: EXPIRY,
  });
  await grant('exact-a-x', { streams: [{ exact: '/a/x' }], groups: { stream: { read: true, write: false } }, ops: ['read'], audiences: ['svc', 'durable_streams'] });
  // One key missing each: a missing key denies.
  await grant('no-audiences', { streams: [{ prefix: '/a/' }], groups: { stream: { read: true, write: false } }, ops: ['read'] });
  await grant('no-ops', { streams: [{ prefix: '/a/' }], groups: { stream: { read: true, write: false } }, audiences: ['svc'] });
  await grant('no-groups', { streams: [{ prefix: '/a/' }], ops: ['read'], audiences: ['svc'] });
  await grant('no-streams', { groups: { stream: { read: true, write: false } }, ops: ['read'], audiences: ['svc'] });
  await grant('no-tokens', { groups: { tokens: { read: true, write: true } }, ops: ['issue_token', 'list_tokens', 'revoke_token'], audiences: ['admin'] });
  expect((await call(`${admin}/admin/tokens/revoked`, { method: 'DELETE', token: ROOT })).status).toBe(204);
  for (const url of [`${svc}/a/x`, `${svc}/tenant-a/secret`]) {
    expect((await call(url, { method: 'PUT', token: ROOT, headers: { 'content-type': 'text/plain' }, body: 'hello' })).status).toBe(201);
  }
});

/**
 * Requests sent back to back in one TCP write (HTTP/1.1 pipelining) with the root token; the
 * answers in order. The node parses both before the first one's metadata write is durable.
 */
async function pipelined(url: string, reqs: Array<{ method: string; path: string; body?: string }>): Promise<Array<{ status: number; body: string }>> {
  const { hostname, port } = new URL(url);
  const wire = reqs
    .map((r, i) => {
      const body = r.body ?? '';
      const close = i === reqs.length - 1 ? 'connection: close\r\n' : '';
      return `${r.method} ${r.path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\nauthorization: Bearer ${ROOT}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${close}\r\n${body}`;
    })
    .join('');
  const raw = await new Promise<string>((resolve, reject) => {
    const sock = net.connect({ host: hostname, port: Number(port) }, () => sock.write(wire));
    let got = '';
    sock.setEncoding('latin1');
    sock.on('data', (d: string) => (got += d));
    sock.on('end', () => resolve(got));
    sock.on('error', reject);
    sock.setTimeout(10_000, () => sock.destroy(new Error(`no complete answer in 10 s: ${got}`)));
  });
  const out: Array<{ status: number; body: string }> = [];
  let rest = raw;
  while (rest.length > 0) {
    const head = rest.slice(0, rest.indexOf('\r\n\r\n'));
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)![1]);
    const len = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? '0');
    const start = head.length + 4;
    out.push({ status, body: rest.slice(start, start + len) });
    rest = rest.slice(start + len);
  }
  return out;
}

afterAll(async () => {
  await node.stop();
});

const forged = (): string => `${b64('root')}.${b64(randomBytes(32))}`;
const UNAUTH_SVC = (message: string): string => JSON.stringify({ error: 'unauthorized', message });
const ABSENT = 'a bearer token is required (Authorization: Bearer <token>)';
const MALFORMED = 'the Authorization header is not "Bearer <token>" with a token this service issues';
const UNKNOWN = 'the token is unknown or revoked';
const EXPIRED = 'the token has expired';

describe('the Svc listener', () => {
  const rows: Array<[string, () => { auth?: string; token?: string | null }, number, string]> = [
    ['no credential', () => ({ token: null }), 401, UNAUTH_SVC(ABSENT)],
    ['a Basic credential', () => ({ auth: 'Basic cm9vdDpwdw==' }), 401, UNAUTH_SVC(MALFORMED)],
    ['a bearer that is not a wire token', () => ({ auth: 'Bearer not-a-token' }), 401, UNAUTH_SVC(MALFORMED)],
    ['padded base64 in the wire token', () => ({ token: ROOT + '=' }), 401, UNAUTH_SVC(MALFORMED)],
    ['a forged secret under a real id', () => ({ token: forged() }), 401, UNAUTH_SVC(UNKNOWN)],
    ['an expired token', () => ({ token: tokens['expired']! }), 401, UNAUTH_SVC(EXPIRED)],
    ['a revoked token', () => ({ token: tokens['revoked']! }), 401, UNAUTH_SVC(UNKNOWN)],
    ['a token of an id that never existed', () => ({ token: `${b64('ghost')}.${b64(randomBytes(32))}` }), 401, UNAUTH_SVC(UNKNOWN)],
    ['a secret of the wrong length', () => ({ token: `${b64('root')}.${b64(randomBytes(31))}` }), 401, UNAUTH_SVC(MALFORMED)],
    ['two bearer tokens', () => ({ auth: `Bearer ${ROOT} ${ROOT}` }), 401, UNAUTH_SVC(MALFORMED)],
    ['an empty Authorization header', () => ({ auth: '' }), 401, UNAUTH_SVC(MALFORMED)],
  ];
  test.each(rows)('answers %s with 401 and WWW-Authenticate: Bearer', async (_label, cred, status, body) => {
    const r = await call(`${svc}/a/x`, cred());
    expect([r.status, r.body, r.headers.get('www-authenticate')]).toEqual([status, body, 'Bearer']);
  });

  test.each([
    ['reader-a reads its prefix', 'reader-a', 'GET', '/a/x?format=raw', undefined, 200, 'hello'],
    ['reader-a may not append', 'reader-a', 'POST', '/a/x', 'more', 403, JSON.stringify({ error: 'forbidden', message: 'the token does not allow append' })],
    ['reader-a may not read outside its prefix', 'reader-a', 'GET', '/tenant-a/secret', undefined, 403, JSON.stringify({ error: 'forbidden', message: 'the token does not cover the stream /tenant-a/secret' })],
    ['writer-a may not list the whole node', 'writer-a', 'GET', '/', undefined, 403, JSON.stringify({ error: 'forbidden', message: 'the token does not cover every stream under /' })],
    ['writer-a may not touch another tenant', 'writer-a', 'GET', '/tenant-a/secret', undefined, 403, JSON.stringify({ error: 'forbidden', message: 'the token does not cover the stream /tenant-a/secret' })],
    ['an {exact} matcher reads its one stream', 'exact-a-x', 'GET', '/a/x?format=raw', undefined, 200, 'hello'],
    ['an {exact} matcher is not a prefix', 'exact-a-x', 'GET', '/a/xy', undefined, 403, JSON.stringify({ error: 'forbidden', message: 'the token does not cover the stream /a/xy' })],
    ['a scope without audiences denies', 'no-audiences', 'GET', '/a/x', undefined, 403, JSON.stringify({ error: 'forbidden', message: 'the token is not valid on the svc audience' })],
    ['a scope without ops denies', 'no-ops', 'GET', '/a/x', undefined, 403, JSON.stringify({ error: 'forbidden', message: 'the token does not allow read' })],
    ['a scope without groups denies', 'no-groups', 'GET', '/a/x', undefined, 403, JSON.stringify({ error: 'forbidden', message: 'the token does not allow reading stream' })],
    ['a scope without streams denies', 'no-streams', 'GET', '/a/x', undefined, 403, JSON.stringify({ error: 'forbidden', message: 'the token does not cover the stream /a/x' })],
    ['the tenant token may not list outside its prefix by naming it', 'tenant-b', 'GET', '/?prefix=/tenant-a/', undefined, 200, '{"streams":[],"has_more":false}'],
  ] as const)('%s', async (_label, who, method, path, body, status, expected) => {
    const r = await call(svc + path, { method, token: tokens[who]!, body, headers: body === undefined ? {} : { 'content-type': 'text/plain' } });
    expect([r.status, r.body]).toEqual([status, expected]);
    expect(r.headers.get('www-authenticate')).toBeNull();
  });

  test('a tenant token names streams without its prefix and sees nothing outside it', async () => {
    const t = tokens['tenant-b']!;
    expect((await call(`${svc}/orders`, { method: 'PUT', token: t, headers: { 'content-type': 'text/plain' }, body: 'o1' })).status).toBe(201);
    // Stored under the tenant's prefix, as the root token sees it.
    expect((await call(`${svc}/tenant-b/orders?format=raw`, { token: ROOT })).body).toBe('o1');
    expect((await call(`${svc}/orders?format=raw`, { token: t })).body).toBe('o1');
    const list = JSON.parse((await call(`${svc}/`, { token: t })).body) as { streams: Array<{ name: string }> };
    expect(list.streams.map((s) => s.name)).toEqual(['/orders']);
    // Another tenant's name is just a name inside this tenant's prefix: nothing there.
    const other = await call(`${svc}/tenant-a/secret`, { token: t });
    expect(other.status).toBe(404);
  });
});

describe('the Durable Streams listener', () => {
  test.each([
    ['no credential', null, 401, ABSENT],
    ['a malformed credential', 'malformed', 401, MALFORMED],
    ['a forged secret', 'forged', 401, UNKNOWN],
    ['an expired token', 'expired', 401, EXPIRED],
    ['a revoked token', 'revoked', 401, UNKNOWN],
    ['a token without the durable_streams audience', 'admin-reader', 403, 'the token is not valid on the durable_streams audience'],
    ['a token for another prefix', 'writer-a', 403, 'the token does not cover the stream /tenant-a/secret'],
  ] as const)('answers %s with plain text and only the protocol headers', async (_label, who, status, body) => {
    const token = who === null ? null : who === 'forged' ? forged() : who === 'malformed' ? 'not-a-token' : tokens[who]!;
    const r = await call(`${ds}/tenant-a/secret?offset=-1`, { token });
    expect([r.status, r.body, r.headers.get('content-type')]).toEqual([status, body, 'text/plain; charset=utf-8']);
    expect(r.headers.get('www-authenticate')).toBeNull();
    expect(r.headers.get('producer-epoch')).toBeNull();
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
  });

  test('producer fencing stays a 403 with Producer-Epoch, unlike a scope 403', async () => {
    const w = tokens['writer-a']!;
    const post = (epoch: number, seq: number): Promise<Answer> =>
      call(`${ds}/a/x`, { method: 'POST', token: w, body: 'p', headers: { 'content-type': 'text/plain', 'producer-id': 'p1', 'producer-epoch': String(epoch), 'producer-seq': String(seq) } });
    expect((await post(1, 0)).status).toBe(200);
    const fenced = await post(0, 0);
    expect([fenced.status, fenced.headers.get('producer-epoch')]).toEqual([403, '1']);
    const scope = await call(`${ds}/a/x`, { method: 'POST', token: tokens['reader-a']!, body: 'p', headers: { 'content-type': 'text/plain' } });
    expect([scope.status, scope.headers.get('producer-epoch'), scope.body]).toEqual([403, null, 'the token does not allow append']);
  });

  test('a tenant token creates, reads and is told the Location of its own names', async () => {
    const t = tokens['tenant-b']!;
    const created = await call(`${ds}/events`, { method: 'PUT', token: t, headers: { 'content-type': 'text/plain' } });
    expect(created.status).toBe(201);
    expect(new URL(created.headers.get('location')!).pathname).toBe('/v1/stream/events');
    expect((await call(`${ds}/events`, { method: 'POST', token: t, headers: { 'content-type': 'text/plain' }, body: 'e1' })).status).toBe(204);
    // Stored under the tenant's prefix, as the root token sees it on either listener.
    expect((await call(`${svc}/tenant-b/events?format=raw`, { token: ROOT })).body).toBe('e1');
    const read = await call(`${ds}/events?offset=-1`, { token: t });
    expect([read.status, read.body]).toEqual([200, 'e1']);
    // A fork names its source in the tenant's terms too.
    const fork = await call(`${ds}/events-copy`, { method: 'PUT', token: t, headers: { 'content-type': 'text/plain', 'stream-forked-from': '/v1/stream/events' } });
    expect(fork.status).toBe(201);
    expect(await call(`${ds}/events-copy?offset=-1`, { token: t }).then((r) => [r.status, r.body])).toEqual([200, 'e1']);
    expect((await call(`${ds}/tenant-b/events-copy?offset=-1`, { token: ROOT })).body).toBe('e1');
  });

  test('a CORS preflight needs no token', async () => {
    const r = await call(`${ds}/a/x`, { method: 'OPTIONS', token: null, headers: { origin: 'https://example.com', 'access-control-request-method': 'GET' } });
    expect(r.status).toBe(204);
  });
});

describe('the admin listener', () => {
  test.each([
    ['no credential', null, 401, { error: 'unauthorized' }],
    ['a malformed credential', 'malformed', 401, { error: 'unauthorized' }],
    ['a forged secret', 'forged', 401, { error: 'unauthorized' }],
    ['an expired token', 'expired', 401, { error: 'unauthorized' }],
    ['a revoked token', 'revoked', 401, { error: 'unauthorized' }],
    ['a token without the admin audience', 'writer-a', 403, { error: 'forbidden' }],
    ['a token without cluster_read', 'issuer-a', 403, { error: 'forbidden' }],
  ] as const)('answers %s on /admin/cluster in the admin error shape', async (_label, who, status, body) => {
    const token = who === null ? null : who === 'forged' ? forged() : who === 'malformed' ? 'not-a-token' : tokens[who]!;
    const r = await call(`${admin}/admin/cluster`, { token });
    expect([r.status, JSON.parse(r.body) as unknown]).toEqual([status, body]);
    expect(r.headers.get('www-authenticate')).toBe(status === 401 ? 'Bearer' : null);
  });

  test('keeps the probes and the dashboard open', async () => {
    expect((await call(`${admin}/health`, { token: null })).status).toBe(200);
    expect((await call(`${admin}/ready`, { token: null })).status).toBe(200);
    expect((await call(`${admin}/`, { token: null })).status).toBe(200);
  });

  test('lets an admin reader read the cluster but not change a node', async () => {
    const t = tokens['admin-reader']!;
    expect((await call(`${admin}/admin/cluster`, { token: t })).status).toBe(200);
    const r = await call(`${admin}/admin/nodes/1`, { method: 'POST', token: t, headers: { 'content-type': 'application/json' }, body: '{"slots":3}' });
    expect([r.status, r.body]).toEqual([403, '{"error":"forbidden"}']);
  });
});

describe('issuing and revoking tokens', () => {
  test.each([
    ['a scope within the issuer’s', 'a-1', { streams: [{ prefix: '/a/x/' }], groups: { stream: { read: true, write: false } }, ops: ['read'], audiences: ['svc'] }, 201],
    ['a wider stream range', 'a-2', { streams: [{ prefix: '/' }], groups: { stream: { read: true, write: false } }, ops: ['read'], audiences: ['svc'] }, 403],
    ['an operation the issuer lacks', 'a-3', { streams: [{ prefix: '/a/' }], groups: { stream: { read: true, write: true } }, ops: ['append'], audiences: ['svc'] }, 403],
    ['an audience the issuer lacks', 'a-4', { streams: [{ prefix: '/a/' }], ops: ['read'], audiences: ['durable_streams'] }, 403],
    ['an id outside the issuer’s tokens', 'b-1', { streams: [{ prefix: '/a/' }], ops: ['read'], audiences: ['svc'] }, 403],
    ['an unknown scope key', 'a-5', { streams: [{ prefix: '/a/' }], ops: ['read'], colour: 'red' }, 400],
    ['an unknown operation', 'a-6', { ops: ['fly'] }, 400],
    ['an invalid id', '-bad id', { ops: ['read'] }, 400],
    ['a group side the issuer lacks', 'a-7', { streams: [{ prefix: '/a/' }], groups: { stream: { read: true, write: true } }, ops: ['read'], audiences: ['svc'] }, 403],
    ['an unknown key inside a matcher', 'a-8', { streams: [{ prefix: '/a/', colour: 'red' }], ops: ['read'] }, 400],
    ['an unknown group', 'a-9', { groups: { everything: { read: true, write: true } } }, 400],
    ['an unknown audience', 'a-10', { audiences: ['kafka'] }, 400],
    ['a tenant scope with two stream matchers', 'a-11', { streams: [{ prefix: '/a/x/' }, { prefix: '/a/y/' }], autoPrefixStreams: true }, 400],
  ] as const)('answers an issue of %s as the rules say', async (_label, id, scope, status) => {
    const r = await issue(id, scope, tokens['issuer-a']!);
    expect(r.status).toBe(status);
    if (status === 201) {
      const doc = JSON.parse(r.body) as Record<string, unknown>;
      expect(Object.keys(doc).sort()).toEqual(['createdAtMs', 'id', 'scope', 'token']);
      expect(doc['scope']).toEqual(scope);
    } else {
      expect(JSON.parse(r.body)).toEqual({ error: status === 400 ? 'bad_request' : 'forbidden' });
    }
  });

  const tenantChild = (extra: Record<string, unknown>): Record<string, unknown> => ({
    streams: [{ prefix: '/tenant-c/' }],
    groups: { stream: { read: true, write: false } },
    ops: ['read'],
    audiences: ['svc'],
    autoPrefixStreams: true,
    expiresAtMs: EXPIRY,
    ...extra,
  });
  test.each([
    ['a child within the tenant issuer’s scope', 't-1', tenantChild({}), 201, null],
    ['a child that is not tenant-prefixed', 't-2', tenantChild({ autoPrefixStreams: false }), 403, null],
    ['a child that expires later than its issuer', 't-3', tenantChild({ expiresAtMs: EXPIRY + 1 }), 403, null],
    ['a child that never expires', 't-4', tenantChild({ expiresAtMs: null }), 403, null],
    ['a child under a wider tenant prefix', 't-5', tenantChild({ streams: [{ prefix: '/tenant-' }] }), 400, null],
    ['a child for another tenant', 't-6', tenantChild({ streams: [{ prefix: '/tenant-d/' }] }), 403, null],
    ['an id the issuer’s missing tokens key does not cover', 'x-1', { ops: ['read'] }, 403, 'no-tokens'],
  ] as const)('answers an issue of %s as the rules say', async (_label, id, scope, status, as) => {
    const r = await issue(id, scope, tokens[as ?? 'tenant-issuer']!);
    expect([r.status, status === 201 ? undefined : r.body]).toEqual([status, status === 201 ? undefined : JSON.stringify({ error: status === 400 ? 'bad_request' : 'forbidden' })]);
  });

  test('refuses an anonymous token with the admin audience', async () => {
    const r = await issue('anonymous', { streams: [{ prefix: '/pub/' }], ops: ['read'], audiences: ['svc', 'admin'], groups: { stream: { read: true, write: false } } });
    expect([r.status, r.body]).toEqual([400, '{"error":"bad_request"}']);
  });

  test('applies the anonymous scope to requests without a credential until it is revoked', async () => {
    expect((await call(`${svc}/pub/x`, { method: 'PUT', token: ROOT, headers: { 'content-type': 'text/plain' }, body: 'public' })).status).toBe(201);
    expect((await issue('anonymous', { streams: [{ prefix: '/pub/' }], ops: ['read'], audiences: ['svc'], groups: { stream: { read: true, write: false } } })).status).toBe(201);
    expect(await call(`${svc}/pub/x?format=raw`, { token: null }).then((r) => [r.status, r.body])).toEqual([200, 'public']);
    // Outside the anonymous scope a request without a credential is asked for one (401), on every listener.
    expect(await call(`${svc}/a/x`, { token: null }).then((r) => [r.status, r.body, r.headers.get('www-authenticate')])).toEqual([401, UNAUTH_SVC(ABSENT), 'Bearer']);
    expect(await call(`${ds}/a/x?offset=-1`, { token: null }).then((r) => [r.status, r.body])).toEqual([401, ABSENT]);
    expect(await call(`${admin}/admin/cluster`, { token: null }).then((r) => [r.status, r.body])).toEqual([401, '{"error":"unauthorized"}']);
    expect((await call(`${admin}/admin/tokens/anonymous`, { method: 'DELETE', token: ROOT })).status).toBe(204);
    const after = await call(`${svc}/pub/x`, { token: null });
    expect([after.status, after.body]).toEqual([401, UNAUTH_SVC(ABSENT)]);
  });

  test('makes a revocation effective on the very next request, on every listener', async () => {
    const r = await issue('short-lived', {
      streams: [{ prefix: '/a/' }],
      groups: { stream: { read: true, write: false }, admin: { read: true, write: false } },
      ops: ['read', 'cluster_read'],
      audiences: ['svc', 'durable_streams', 'admin'],
    });
    const t = (JSON.parse(r.body) as { token: string }).token;
    expect((await call(`${svc}/a/x`, { token: t })).status).toBe(200);
    expect((await call(`${ds}/a/x?offset=-1`, { token: t })).status).toBe(200);
    expect((await call(`${admin}/admin/cluster`, { token: t })).status).toBe(200);
    expect((await call(`${admin}/admin/tokens/short-lived`, { method: 'DELETE', token: ROOT })).status).toBe(204);
    const next = await Promise.all([call(`${svc}/a/x`, { token: t }), call(`${ds}/a/x?offset=-1`, { token: t }), call(`${admin}/admin/cluster`, { token: t })]);
    expect(next.map((a) => [a.status, a.body])).toEqual([
      [401, UNAUTH_SVC(UNKNOWN)],
      [401, UNKNOWN],
      [401, '{"error":"unauthorized"}'],
    ]);
  });

  describe('on the node:http engine, which answers pipelined requests', () => {
    // Both requests of a pair go in one TCP write, so the node reads both before the first one's
    // metadata write is durable: the race is certain, not a matter of timing. (The uWS engine does
    // not answer requests pipelined behind one that answers asynchronously, so this node runs on
    // node:http; the token logic is the same.)
    let other: NodeProcess;
    beforeAll(async () => {
      other = await startNode({ engine: 'node', args: ['--auth', 'required', '--auth-bootstrap-token', ROOT] });
    });
    afterAll(async () => {
      await other.stop();
    });

    test('answers one of two concurrent revokes of a token 204 and the other 409 (changed concurrently)', async () => {
      expect((await issue('twice-revoked', streamScope('/a/', ['read'], false), ROOT, other.adminUrl!)).status).toBe(201);
      const answers = await pipelined(other.adminUrl!, [
        { method: 'DELETE', path: '/admin/tokens/twice-revoked' },
        { method: 'DELETE', path: '/admin/tokens/twice-revoked' },
      ]);
      expect(answers).toEqual([
        { status: 204, body: '' },
        { status: 409, body: '{"error":"conflict"}' },
      ]);
      expect((await call(`${other.adminUrl!}/admin/tokens/twice-revoked`, { method: 'DELETE', token: ROOT })).status).toBe(404);
    });

    test('answers one of two concurrent issues of an id 201 and the other 409', async () => {
      const body = JSON.stringify({ id: 'pipelined', scope: streamScope('/a/', ['read'], false) });
      const answers = await pipelined(other.adminUrl!, [
        { method: 'POST', path: '/admin/tokens', body },
        { method: 'POST', path: '/admin/tokens', body },
      ]);
      expect(answers.map((a) => a.status)).toEqual([201, 409]);
      expect(answers[1]!.body).toBe('{"error":"conflict"}');
    });
  });

  test('lists token records without their secrets', async () => {
    const r = await issue('listed', streamScope('/a/', ['read'], false));
    const wire = (JSON.parse(r.body) as { token: string }).token;
    const listed = await call(`${admin}/admin/tokens`, { token: ROOT });
    const doc = JSON.parse(listed.body) as { count: number; tokens: Array<Record<string, unknown>> };
    const rec = doc.tokens.find((t) => t['id'] === 'listed')!;
    expect(Object.keys(rec).sort()).toEqual(['createdAtMs', 'id', 'issuedBy', 'scope']);
    expect(rec['issuedBy']).toBe('root');
    expect(listed.body).not.toContain(wire.split('.')[1]!);
    expect(listed.body).not.toMatch(/secret|hash/i);
  });

  test('answers 404 for revoking an unknown token and lists no secrets', async () => {
    expect(await call(`${admin}/admin/tokens/nobody`, { method: 'DELETE', token: ROOT }).then((r) => [r.status, r.body])).toEqual([404, '{"error":"not_found"}']);
    const list = JSON.parse((await call(`${admin}/admin/tokens`, { token: tokens['issuer-a']! })).body) as { count: number; tokens: Array<Record<string, unknown>> };
    expect(list.tokens.every((t) => String(t['id']).startsWith('a-'))).toBe(true);
    expect(list.count).toBe(list.tokens.length);
    expect(JSON.stringify(list)).not.toContain('secret');
  });
});
