/**
 * A cluster on etcd over TLS with authentication (docs/cluster.md; docs/config.md, "Metadata on
 * etcd"): three Debian etcd-server members serving clients over TLS only, asking for a client
 * certificate, with `auth enable`; certificates made here with openssl. Two `svc serve` nodes in
 * objects mode reach it with `etcds://`, `--metadata-ca`, `--metadata-cert`/`--metadata-key`,
 * `--metadata-user` and the password (one from a file, one from the environment): create,
 * append, transfer and failover work as on plain etcd. A wrong password, CA or client certificate
 * stops `svc serve` at once with exit code 1 and a message naming the setting, never a hang.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EtcdCluster } from '../helpers/etcd-cluster';
import { type NodeProcess, startNode, tempDir } from '../helpers/node-process';
import { until } from './objects-cluster';

jest.setTimeout(150_000);

const MAIN = path.join(__dirname, '..', '..', 'dist', 'main.js');
const USER = 'svc';
const PASSWORD = randomBytes(9).toString('base64url');

let etcd: EtcdCluster;
let url: string;
let objectsDir: string;
let passwordFile: string;
const nodes = new Map<number, NodeProcess>();

function tlsArgs(o: { ca?: string; cert?: string; key?: string } = {}): string[] {
  const t = etcd.tls!;
  return ['--metadata', url, '--metadata-ca', o.ca ?? t.ca, '--metadata-cert', o.cert ?? t.clientCert, '--metadata-key', o.key ?? t.clientKey, '--metadata-user', USER];
}

beforeAll(async () => {
  etcd = await EtcdCluster.start(3, { tls: true });
  etcd.enableAuth(USER, PASSWORD);
  url = etcd.url(`tls/${randomBytes(4).toString('hex')}`);
  objectsDir = tempDir('svc-objects-');
  passwordFile = path.join(tempDir('svc-secret-'), 'etcd-password');
  fs.writeFileSync(passwordFile, PASSWORD + '\n', { mode: 0o600 });
  const common = ['--objects', `file:${objectsDir}`, '--shards', '2', '--shard-workers', '1', '--rebalance', 'off', '--node-lease-ttl', '3'];
  const [a, b] = await Promise.all([
    startNode({ args: [...tlsArgs(), '--metadata-password-file', passwordFile, ...common, '--node-id', '1'] }),
    startNode({ args: [...tlsArgs(), ...common, '--node-id', '2'], env: { SVC_METADATA_PASSWORD: PASSWORD } }),
  ]);
  nodes.set(1, a);
  nodes.set(2, b);
}, 150_000);

afterAll(async () => {
  await Promise.all([...nodes.values()].map((n) => n.kill()));
  await etcd?.stop();
});

async function follow(path_: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}, via?: NodeProcess): Promise<Response> {
  let target = `${(via ?? [...nodes.values()][0]!).url}${path_}`;
  for (let hop = 0; hop < 5; hop++) {
    const r = await fetch(target, { ...init, redirect: 'manual', signal: AbortSignal.timeout(15_000) });
    if (r.status !== 307) return r;
    target = r.headers.get('location')!;
  }
  throw new Error('too many redirects');
}

async function admin<T>(p: string, init: RequestInit = {}, via?: NodeProcess): Promise<{ status: number; json: T }> {
  const n = via ?? [...nodes.values()][0]!;
  const r = await fetch(`${n.adminUrl!}${p}`, { ...init, headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(10_000) });
  return { status: r.status, json: (await r.json()) as T };
}

const owner = async (stream: string, via?: NodeProcess): Promise<{ ownerNodeId: number; state: string }> => (await admin<{ ownerNodeId: number; state: string }>(`/admin/streams${stream}`, {}, via)).json;

async function appendN(stream: string, from: number, n: number): Promise<void> {
  for (let i = from; i < from + n; i++) {
    const r = await until(`append ${i}`, async () => {
      const res = await follow(stream, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ i }) });
      return res.status === 200 ? res : null;
    });
    expect(r.status).toBe(200);
  }
}

/** Every record's `i`, page by page: a moved stream's page ends where the object store's ranges held so far end. */
async function values(stream: string): Promise<number[]> {
  const out: number[] = [];
  for (let seq = 0; ; ) {
    const r = await follow(`${stream}?seq=${seq}&count=1000&format=json`);
    expect(r.status).toBe(200);
    // A JSON stream's record comes back as its document, or as its text in `body`.
    for (const x of (await r.json()) as Array<{ value?: unknown; body?: unknown }>) {
      const v = x.value ?? x.body;
      out.push((typeof v === 'string' ? (JSON.parse(v) as { i: number }) : (v as { i: number })).i);
    }
    if (r.headers.get('svc-up-to-date') === 'true') return out;
    seq = Number(r.headers.get('svc-next-seq'));
  }
}

test('create, append, transfer and failover over etcds:// with a client certificate and an etcd user', async () => {
  expect((await follow('/tls/s', { method: 'PUT', headers: { 'content-type': 'application/json' } })).status).toBe(201);
  await appendN('/tls/s', 0, 20);
  const first = (await owner('/tls/s')).ownerNodeId;
  const other = first === 1 ? 2 : 1;
  // Transfer to the other node: every record there, appends go on.
  expect((await admin('/admin/transfer', { method: 'POST', body: JSON.stringify({ stream: '/tls/s', toNode: other }) })).status).toBe(200);
  await until('placed on the other node', async () => {
    const d = await owner('/tls/s');
    return d.state === 'placed' && d.ownerNodeId === other ? d : null;
  });
  await appendN('/tls/s', 20, 10);
  expect(await values('/tls/s')).toEqual(Array.from({ length: 30 }, (_, i) => i));
  // Failover: the owner is killed; the survivor takes the stream (its lease, the ledger: all over TLS with auth).
  const survivor = nodes.get(first)!;
  await nodes.get(other)!.kill();
  nodes.delete(other);
  await until('failed over to the survivor', async () => {
    const d = await owner('/tls/s', survivor);
    return d.state === 'placed' && d.ownerNodeId === first ? d : null;
  }, 60_000, 200);
  await appendN('/tls/s', 30, 10);
  expect(await values('/tls/s')).toEqual(Array.from({ length: 40 }, (_, i) => i));
});

/** `svc serve` that should not start: its exit code, how long it took and what it said. */
function refusedStart(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; ms: number; out: string }> {
  const t0 = Date.now();
  const dataDir = tempDir();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, 'serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--kafka-listen', '127.0.0.1:0', '--data-dir', dataDir, ...args],
      { env: { ...process.env, SVC_RESERVE_BYTES: '0', ...env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : null, ms: Date.now() - t0, out: stdout + stderr }),
    );
  });
}

test('a wrong password is a clear startup error', async () => {
  const r = await refusedStart([...tlsArgs(), '--metadata-password', 'not-the-password']);
  expect(r.code).toBe(1);
  expect(r.out).toContain('etcd refused the user or password (--metadata-user svc)');
  expect(r.out).not.toContain('not-the-password');
});

test('a CA that did not sign the members\' certificates is a clear startup error', async () => {
  const r = await refusedStart([...tlsArgs({ ca: etcd.tls!.otherCa }), '--metadata-password-file', passwordFile]);
  expect(r.code).toBe(1);
  expect(r.out).toContain('certificate is not trusted (--metadata-ca)');
});

test('a client certificate etcd does not trust is a clear startup error', async () => {
  const r = await refusedStart([...tlsArgs({ cert: etcd.tls!.otherCert, key: etcd.tls!.otherKey }), '--metadata-password-file', passwordFile]);
  expect(r.code).toBe(1);
  expect(r.out).toContain('etcd refused this node\'s client certificate (--metadata-cert, --metadata-key)');
});

test('a key that is not the certificate\'s, and settings that do not fit together, are refused before connecting', async () => {
  const wrongKey = await refusedStart([...tlsArgs({ key: etcd.tls!.otherKey }), '--metadata-password-file', passwordFile]);
  expect(wrongKey.code).toBe(1);
  expect(wrongKey.out).toContain('--metadata-key');
  const plain = await refusedStart(['--metadata', url.replace('etcds://', 'etcd://'), '--metadata-ca', etcd.tls!.ca]);
  expect(plain.code).toBe(2);
  expect(plain.out).toContain('needs --metadata etcds://');
  const noPassword = await refusedStart(['--metadata', url, '--metadata-user', USER]);
  expect(noPassword.code).toBe(2);
  expect(noPassword.out).toContain('needs --metadata-password or --metadata-password-file');
});
