/**
 * The root token's bootstrap (flag or file; idempotent across restarts and nodes; a different token
 * under the same id stops startup with a clear message) and the durability of token changes: a
 * token issued and a token revoked just before a SIGKILL are still issued and revoked after the
 * restart, because the metadata store fsyncs before the admin API answers.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type NodeProcess, startNode, tempDir } from '../../helpers/node-process';

const b64 = (s: string | Buffer): string => Buffer.from(s).toString('base64url');
const wireToken = (id: string): string => `${b64(id)}.${b64(randomBytes(32))}`;
const ROOT = wireToken('root');

async function get(url: string, token: string | null): Promise<{ status: number; body: string }> {
  const r = await fetch(url, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
  return { status: r.status, body: await r.text() };
}

async function send(method: string, url: string, token: string, body?: unknown): Promise<{ status: number; body: string }> {
  const r = await fetch(url, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: r.status, body: await r.text() };
}

const required = (token: string): string[] => ['--auth', 'required', '--auth-bootstrap-token', token];
const READ_A = { streams: [{ prefix: '/a/' }], groups: { stream: { read: true, write: false } }, ops: ['read'], audiences: ['svc'] };

describe('the bootstrap token', () => {
  test('is read from a file, survives restarts given as a flag, and another token under its id stops startup', async () => {
    const dataDir = tempDir();
    const file = path.join(tempDir(), 'root-token');
    fs.writeFileSync(file, `${ROOT}\n`, { mode: 0o600 });
    let node: NodeProcess = await startNode({ dataDir, args: ['--auth', 'required', '--auth-bootstrap-token-file', file] });
    expect((await get(`${node.adminUrl!}/admin/cluster`, ROOT)).status).toBe(200);
    const first = JSON.parse((await get(`${node.adminUrl!}/admin/tokens`, ROOT)).body) as { tokens: Array<{ id: string; createdAtMs: number; issuedBy: string; scope: unknown }> };
    expect(first.tokens).toEqual([
      {
        id: 'root',
        issuedBy: 'bootstrap',
        createdAtMs: expect.any(Number),
        // The root scope: every stream, every token, every op, every audience, no expiry.
        scope: {
          streams: [{ prefix: '' }],
          tokens: [{ prefix: '' }],
          groups: { stream: { read: true, write: true }, tokens: { read: true, write: true }, admin: { read: true, write: true }, schemas: { read: true, write: true } },
          ops: ['read', 'head', 'list', 'create', 'append', 'trim', 'close', 'delete', 'issue_token', 'revoke_token', 'list_tokens', 'cluster_read', 'node_read', 'stream_inspect', 'transfer_stream', 'update_node_slots', 'schema_read', 'schema_write', 'schema_delete', 'schema_config'],
          audiences: ['svc', 'durable_streams', 'admin', 'schema_registry'],
          autoPrefixStreams: false,
          expiresAtMs: null,
        },
      },
    ]);
    expect(await node.stop()).toBe(0);

    // The same token again (now as a flag): the record is kept as it was.
    node = await startNode({ dataDir, args: required(ROOT) });
    expect(JSON.parse((await get(`${node.adminUrl!}/admin/tokens`, ROOT)).body)).toEqual(first);
    expect(await node.stop()).toBe(0);

    // Another secret under the id `root`: startup fails and says why.
    const other = wireToken('root');
    await expect(startNode({ dataDir, args: required(other) })).rejects.toThrow(
      'a different token with id \\"root\\" already exists: the bootstrap token must be the one this cluster was first started with',
    );
  });

  test('seeds every node that is given it, each on its own metadata', async () => {
    const [a, b] = await Promise.all([startNode({ args: required(ROOT) }), startNode({ args: required(ROOT) })]);
    for (const n of [a, b]) expect((await get(`${n.adminUrl!}/admin/cluster`, ROOT)).status).toBe(200);
    await Promise.all([a.stop(), b.stop()]);
  });

  test.each([
    ['no token at all', ['--auth', 'required'], '--auth required, but no token exists yet: seed the first one with --auth-bootstrap-token or --auth-bootstrap-token-file'],
    ['a token that is not a wire token', required('root:secret'), 'the bootstrap token is not a wire token (BASE64URL(id).BASE64URL(32 random bytes), no padding)'],
    ['the reserved id anonymous', required(wireToken('anonymous')), 'the bootstrap token cannot use the reserved id anonymous'],
    ['a file that cannot be read', ['--auth', 'required', '--auth-bootstrap-token-file', '/nonexistent/root-token'], '--auth-bootstrap-token-file: cannot read /nonexistent/root-token'],
  ])('stops startup with a clear message given %s', async (_label, args, message) => {
    await expect(startNode({ args })).rejects.toThrow(message);
  });
});

describe('token changes and a crash', () => {
  test('an issued token and a revocation acknowledged before SIGKILL hold after the restart', async () => {
    const dataDir = tempDir();
    let node = await startNode({ dataDir, args: required(ROOT) });
    const put = await fetch(`${node.url}/a/x`, { method: 'PUT', headers: { authorization: `Bearer ${ROOT}`, 'content-type': 'text/plain' }, body: 'kept' });
    expect(put.status).toBe(201);
    const victim = JSON.parse((await send('POST', `${node.adminUrl!}/admin/tokens`, ROOT, { id: 'victim', scope: READ_A })).body) as { token: string };
    const survivor = await send('POST', `${node.adminUrl!}/admin/tokens`, ROOT, { id: 'survivor', scope: READ_A });
    expect(survivor.status).toBe(201);
    const survivorToken = (JSON.parse(survivor.body) as { token: string }).token;
    expect((await send('DELETE', `${node.adminUrl!}/admin/tokens/victim`, ROOT)).status).toBe(204);
    const before = JSON.parse((await get(`${node.adminUrl!}/admin/cluster`, ROOT)).body) as { appliedIndex: number };
    // No clean shutdown: whatever the answers promised must already be on disk.
    await node.kill();

    node = await startNode({ dataDir, args: required(ROOT) });
    expect(await get(`${node.url}/a/x?format=raw`, survivorToken)).toEqual({ status: 200, body: 'kept' });
    expect(await get(`${node.url}/a/x?format=raw`, victim.token)).toEqual({ status: 401, body: JSON.stringify({ error: 'unauthorized', message: 'the token is unknown or revoked' }) });
    const list = JSON.parse((await get(`${node.adminUrl!}/admin/tokens`, ROOT)).body) as { tokens: Array<{ id: string }> };
    expect(list.tokens.map((t) => t.id)).toEqual(['root', 'survivor']);
    const after = JSON.parse((await get(`${node.adminUrl!}/admin/cluster`, ROOT)).body) as { appliedIndex: number };
    // Restarting writes this node's record again (a new epoch): the index only grows.
    expect(after.appliedIndex).toBeGreaterThan(before.appliedIndex);
    await node.stop();
  });
});
