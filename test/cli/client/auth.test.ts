/**
 * Tokens and profiles through the real binary against a node with `--auth required`: login and
 * logout with the file store (and its permission checks), the precedence --token > SVC_TOKEN >
 * stored, whoami, token issue/ls/revoke, and profiles choosing the node.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { startNode, type NodeProcess } from '../../helpers/node-process';
import { clientEnv, svc } from '../../helpers/svc-cli';

/** A loopback port nothing listens on (bound once, then closed). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

const b64 = (s: string | Buffer): string => Buffer.from(s).toString('base64url');
const ROOT = `${b64('root')}.${b64(randomBytes(32))}`;

let node: NodeProcess;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  node = await startNode({ args: ['--auth', 'required', '--auth-bootstrap-token', ROOT] });
  env = clientEnv({ SVC_URL: node.url, SVC_ADMIN_URL: node.adminUrl! });
});

const run = (args: string[], o: { input?: string; env?: NodeJS.ProcessEnv } = {}) => svc(args, { env: { ...env, ...o.env }, input: o.input });

describe('svc login, tokens and profiles', () => {
  test('without a token a request is refused with exit 3 and a hint', async () => {
    const r = await run(['ls']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/401 unauthorized.*svc login/);
  });

  test('login keeps the token in a 0600 file, and a file others can read is refused', async () => {
    const login = await run(['login'], { input: ROOT + '\n' });
    expect(login.code).toBe(0);
    expect(login.stdout).toMatch(/logged in to profile default as root \(token kept in the file .*tokens\.json\)/);
    const file = path.join(env['SVC_CONFIG_DIR']!, 'tokens.json');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(env['SVC_CONFIG_DIR']!).mode & 0o077).toBe(0);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ default: ROOT });
    expect((await run(['ls'])).code).toBe(0);

    fs.chmodSync(file, 0o644);
    const refused = await run(['ls']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/tokens\.json has permissions 0644; it must be readable by its owner only/);
    expect((await run(['login', ROOT])).code).toBe(1);
    fs.chmodSync(file, 0o600);
    expect((await run(['ls'])).code).toBe(0);
  });

  test('whoami, token issue/ls/revoke, and --token > SVC_TOKEN > the stored token', async () => {
    await run(['login', ROOT]);
    const me = JSON.parse((await run(['whoami', '-o', 'json'])).stdout);
    expect(me).toMatchObject({ profile: 'default', tokenId: 'root', source: 'store' });
    expect(me.scope.ops).toContain('issue_token');

    const issued = JSON.parse((await run(['token', 'issue', 'reader', '--prefix', '/a/', '--ops', 'read,head,list', '--expires-in', '1d', '-o', 'json'])).stdout);
    expect(issued).toMatchObject({ id: 'reader', scope: { streams: [{ prefix: '/a/' }], ops: ['read', 'head', 'list'], audiences: ['svc'], groups: { stream: { read: true, write: false } } } });
    const reader: string = issued.token;
    // Schema registry operations get the schemas group's sides (docs/schema-registry.md).
    const producer = JSON.parse((await run(['token', 'issue', 'producer', '--prefix', '/_subjects/orders-', '--ops', 'schema_read,schema_write', '--audiences', 'schema_registry', '-o', 'json'])).stdout);
    expect(producer.scope.groups).toEqual({ stream: { read: false, write: false }, tokens: { read: false, write: false }, admin: { read: false, write: false }, schemas: { read: true, write: true } });
    const blind = await run(['token', 'issue', 'blind', '--ops', 'read,append']);
    expect(blind.code).toBe(0);
    expect(blind.stderr).toMatch(/warning: token blind has stream operations but no --prefix or --stream, so it can reach no stream/);
    expect((await run(['token', 'issue', 'lister', '--prefix', '', '--ops', 'list'])).stderr).not.toMatch(/warning/);
    expect((await run(['token', 'issue', 'reader', '--ops', 'read'])).code).toBe(5); // id exists
    const scopeFile = path.join(env['SVC_CONFIG_DIR']!, 'writer.json');
    fs.writeFileSync(scopeFile, JSON.stringify({ streams: [{ prefix: '/b/' }], groups: { stream: { read: true, write: true } }, ops: ['create', 'append', 'read'], audiences: ['svc'] }));
    const writer = (await run(['token', 'issue', 'writer', '--scope-file', scopeFile])).stdout.trim();
    expect(writer).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect((await run(['token', 'issue', 'bad', '--scope-file', scopeFile, '--token', writer])).code).toBe(3); // the writer may not issue

    const ls = (await run(['token', 'ls'])).stdout;
    expect(ls).toMatch(/^ID\s+ISSUEDBY/);
    expect(ls).toMatch(/reader\s+root/);
    expect(ls).not.toContain(reader.split('.')[1]); // never a secret

    // Stored root, SVC_TOKEN the reader: the reader is used (it may not create).
    const viaEnv = await run(['create', '/b/x'], { env: { SVC_TOKEN: reader } });
    expect(viaEnv.code).toBe(3);
    expect(viaEnv.stderr).toMatch(/403 forbidden/);
    expect(JSON.parse((await run(['whoami', '-o', 'json'], { env: { SVC_TOKEN: reader } })).stdout)).toMatchObject({ tokenId: 'reader', source: 'env' });
    // --token wins over SVC_TOKEN.
    expect((await run(['create', '/b/x', '--token', writer], { env: { SVC_TOKEN: reader } })).code).toBe(0);
    expect(JSON.parse((await run(['whoami', '-o', 'json', '--token', writer], { env: { SVC_TOKEN: reader } })).stdout)).toMatchObject({ tokenId: 'writer', source: 'flag' });

    expect((await run(['token', 'revoke', 'reader'])).stdout).toBe('revoked reader\n');
    expect((await run(['ls', '/a/'], { env: { SVC_TOKEN: reader } })).code).toBe(3);
    expect((await run(['token', 'revoke', 'reader'])).code).toBe(4);

    expect((await run(['logout'])).stdout).toBe('logged out of profile default\n');
    expect((await run(['ls'])).code).toBe(3);
    expect(JSON.parse((await run(['whoami', '-o', 'json'])).stdout)).toMatchObject({ tokenId: null, source: 'none' });
  });

  test('profiles choose the node and keep a token each', async () => {
    const penv = clientEnv();
    const p = (args: string[], input?: string) => svc(args, { env: penv, input });
    expect((await p(['profile', 'list'])).stdout).toMatch(/^no profiles/);
    expect((await p(['profile', 'create', 'local', '--url', node.url.replace('http://', ''), '--admin-url', node.adminUrl!])).stdout).toBe('profile local saved (current)\n');
    const closed = await closedPort();
    expect((await p(['profile', 'create', 'nowhere', '--url', `127.0.0.1:${closed}`, '--admin-url', `127.0.0.1:${closed}`])).code).toBe(0);
    const list = (await p(['profile', 'list'])).stdout.split('\n');
    expect(list[1]).toMatch(/^\*\s+local\s+http:\/\/127\.0\.0\.1:\d+/);
    expect((await p(['login', ROOT])).code).toBe(0);
    expect((await p(['ls'])).code).toBe(0);
    const far = await p(['ls', '--profile', 'nowhere']);
    expect(far.code).toBe(1);
    expect(far.stderr).toMatch(/cannot reach the node \(ECONNREFUSED\)/);
    expect((await p(['ls', '--profile', 'missing'])).code).toBe(2);
    // The token belongs to the profile it was stored for.
    await p(['profile', 'use', 'nowhere']);
    expect(JSON.parse((await p(['whoami', '-o', 'json'])).stdout)).toMatchObject({ profile: 'nowhere', tokenId: null });
    expect((await p(['ls', '--profile', 'local'])).code).toBe(0);
    expect((await p(['profile', 'delete', 'local'])).code).toBe(0);
    const tokens = JSON.parse(fs.readFileSync(path.join(penv['SVC_CONFIG_DIR']!, 'tokens.json'), 'utf8'));
    expect(tokens).toEqual({});
    expect((await p(['profile', 'use', 'local'])).code).toBe(4);
  });
});
