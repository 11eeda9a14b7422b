/**
 * The client's smaller options, each through the real binary against a real node: `token
 * bootstrap` (a token the node accepts at start-up), named offsets under scoped tokens,
 * `append --key-sep`, output templates (`-o template=…`, `--template`), the JSON error of an
 * unknown command with `-o json`, and `bench` pointed at a node that does not own its stream.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { type AddressInfo } from 'node:net';
import { startNode, tempDir, type NodeProcess } from '../../helpers/node-process';
import { clientEnv, svc } from '../../helpers/svc-cli';

jest.setTimeout(60_000);

let node: NodeProcess;
let root: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  // The node's root token is one `svc token bootstrap` made: the node must accept it.
  const made = await svc(['token', 'bootstrap', 'ops']);
  expect([made.code, made.stderr]).toEqual([0, '']);
  root = made.stdout.trim();
  node = await startNode({ args: ['--auth', 'required', '--auth-bootstrap-token', root] });
  env = clientEnv({ SVC_URL: node.url, SVC_ADMIN_URL: node.adminUrl!, SVC_TOKEN: root });
});

const auth = () => ({ authorization: `Bearer ${root}` });

async function append(stream: string, records: Array<{ body: string; key?: string }>): Promise<void> {
  const res = await fetch(node.url + stream, { method: 'POST', headers: { ...auth(), 'content-type': 'application/vnd.svc.batch+json' }, body: JSON.stringify({ records }) });
  expect(res.status).toBe(200);
}

test('token bootstrap prints a wire token the node takes as its root token; --file writes it 0600', async () => {
  expect(root).toMatch(/^b3Bz\.[A-Za-z0-9_-]{43}$/); // BASE64URL("ops") "." BASE64URL(32 bytes)
  const who = await svc(['whoami', '-o', 'json'], { env });
  expect(who.code).toBe(0);
  expect(JSON.parse(who.stdout)).toMatchObject({ tokenId: 'ops', scope: { expiresAtMs: null } });
  expect((await svc(['ls'], { env: { ...env, SVC_TOKEN: '' } })).code).toBe(3);
  const file = path.join(tempDir('svc-cli-boot-'), 'root.token');
  const r = await svc(['token', 'bootstrap', '--file', file]);
  expect(r.code).toBe(0);
  expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  expect(fs.readFileSync(file, 'utf8')).toMatch(/^cm9vdA\.[A-Za-z0-9_-]{43}\n$/); // id "root" by default
  expect((await svc(['token', 'bootstrap', '--file', file])).code).toBe(1); // never overwritten
  expect((await svc(['token', 'bootstrap', 'no spaces'])).code).toBe(2);
});

test('named offsets: a read-only token commits within its prefix and is refused outside it', async () => {
  for (const s of ['/ro/s', '/other/s']) expect((await fetch(node.url + s, { method: 'PUT', headers: auth() })).status).toBe(201);
  await append('/ro/s', [{ body: 'a' }, { body: 'b' }]);
  const issued = await svc(['token', 'issue', 'reader', '--prefix', '/ro/', '--ops', 'read,head'], { env });
  expect(issued.code).toBe(0);
  const reader = { ...env, SVC_TOKEN: issued.stdout.trim() };
  const t = await svc(['tail', '/ro/s', '--group', 'g', '--seq', '0', '-c', '2'], { env: reader });
  expect([t.code, t.stdout, t.stderr]).toEqual([0, 'a\nb\n', '']);
  const get = (s: string, token: string) => fetch(`${node.url}/_offsets${s}?group=g`, { headers: { authorization: `Bearer ${token}` } });
  expect(await (await get('/ro/s', issued.stdout.trim())).json()).toMatchObject({ group: 'g', stream: '/ro/s', seq: 2 });
  expect((await get('/other/s', issued.stdout.trim())).status).toBe(403);
  const put = (seq: number) => fetch(`${node.url}/_offsets/ro/s?group=g`, { method: 'PUT', headers: { ...auth(), 'content-type': 'application/json' }, body: JSON.stringify({ seq }) });
  expect(await (await put(3)).json()).toMatchObject({ error: 'seq_out_of_range', next_seq: 2 });
  expect((await put(0)).status).toBe(200);
  expect((await fetch(`${node.url}/_offsets/ro/s?group=g`, { method: 'DELETE', headers: auth() })).status).toBe(204);
  expect(await (await get('/ro/s', root)).json()).toMatchObject({ seq: null, committedAtMs: null });
  expect((await get('/missing', root)).status).toBe(404);
});

test('append --key-sep splits each line at its first separator into key and body', async () => {
  expect((await fetch(`${node.url}/keys`, { method: 'PUT', headers: auth() })).status).toBe(201);
  const r = await svc(['append', '/keys', '-K', '::'], { env, input: 'user-1::{"a":1}\nuser-2::x::y\nno separator\n' });
  expect(r.code).toBe(0);
  const rows = (await (await fetch(`${node.url}/keys?format=json`, { headers: auth() })).json()) as Array<{ key?: string; body: string }>;
  expect(rows.map((x) => [x.key ?? null, x.body])).toEqual([['user-1', '{"a":1}'], ['user-2', 'x::y'], [null, 'no separator']]);
  const one = await svc(['append', '/keys', 'k9=v9', '--key-sep', '='], { env });
  expect(one.code).toBe(0);
  expect((await svc(['read', '/keys', '--last', '1', '--template', '%k|%s'], { env })).stdout).toBe('k9|v9');
});

test('output templates: placeholders and escapes, by -o template= or --template', async () => {
  expect((await fetch(`${node.url}/tpl`, { method: 'PUT', headers: auth() })).status).toBe(201);
  await append('/tpl', [{ body: 'hello', key: 'k1' }, { body: 'wörld' }]);
  const a = await svc(['read', '/tpl', '-o', 'template=%o %k %s (%S bytes, key %K) %t\\n'], { env });
  expect([a.code, a.stdout]).toEqual([0, '0 k1 hello (5 bytes, key 2) /tpl\n1  wörld (6 bytes, key 0) /tpl\n']);
  const b = await svc(['read', '/tpl', '--template', '%T\\t%d\\t100%%\\n', '-n', '1'], { env });
  const [ms, iso, pct] = b.stdout.trimEnd().split('\t');
  expect(new Date(iso!).getTime()).toBe(Number(ms));
  expect(pct).toBe('100%');
  const bad = await svc(['read', '/tpl', '--template', '%q'], { env });
  expect([bad.code, bad.stderr]).toEqual([2, 'svc: template: unknown placeholder "%q" (known: %s %k %o %T %d %t %h %S %K %%)\n']);
});

test('an unknown command with -o json is one JSON error on stderr, not the help', async () => {
  for (const args of [['bogus', '-o', 'json'], ['bogus', '--output=json']]) {
    const r = await svc(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(JSON.parse(r.stderr)).toEqual({ status: null, error: 'usage', message: 'unknown command "bogus"', exitCode: 2 });
  }
  const plain = await svc(['bogus']);
  expect([plain.code, plain.stderr]).toEqual([2, expect.stringMatching(/^svc: unknown command "bogus"\n\nUsage:/)]);
});

test('bench pointed at a node that does not own the stream loads the owner, and names error causes', async () => {
  // A node that owns nothing: every request is answered 307 to the real node, as in a cluster.
  const redirector = http.createServer((req, res) => {
    res.writeHead(307, { location: `${node.url}${req.url}` }).end();
  });
  await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
  try {
    const url = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
    const r = await svc(['bench', 'append', '--url', url, '-c', '1', '--duration', '1', '-o', 'json'], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/is owned by http:\/\/127\.0\.0\.1:\d+: loading that node/);
    const out = JSON.parse(r.stdout) as { requests: number; errors: number; errorsBy: Record<string, number> };
    expect(out.requests).toBeGreaterThan(0);
    expect([out.errors, out.errorsBy]).toEqual([0, {}]);
  } finally {
    redirector.close();
  }
});
