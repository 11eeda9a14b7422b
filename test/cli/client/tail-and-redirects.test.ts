/**
 * `svc tail` across a node restart (same data directory and port): every record exactly once,
 * in order. And 307 handling: the client follows redirects itself, sends the token on every
 * hop, and stops after --max-redirects hops. The redirecting servers are tiny node:http servers
 * (a cluster answers 307 the same way: the owner's address in Location).
 */
import * as http from 'node:http';
import { type AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { startNode, tempDir, type NodeProcess } from '../../helpers/node-process';
import { clientEnv, spawnSvc, svc } from '../../helpers/svc-cli';

const b64 = (s: string | Buffer): string => Buffer.from(s).toString('base64url');

async function waitFor(cond: () => boolean, what: string, ms = 30_000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function append(node: NodeProcess, stream: string, bodies: string[]): Promise<void> {
  const res = await fetch(node.url + stream, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body: JSON.stringify({ records: bodies.map((body) => ({ body })) }) });
  expect(res.status).toBe(200);
}

describe('svc tail', () => {
  test('survives a node restart on the same data directory without gaps or duplicates', async () => {
    const dataDir = tempDir();
    // node:http rebinds the port at once (SO_REUSEADDR), which the restart on the same port needs.
    let node = await startNode({ dataDir, engine: 'node' });
    const port = new URL(node.url).port;
    const env = clientEnv({ SVC_URL: node.url, SVC_ADMIN_URL: node.adminUrl! });
    await svc(['create', '/tail/r'], { env });
    await append(node, '/tail/r', ['r0', 'r1', 'r2']);

    const tail = spawnSvc(['tail', '/tail/r', '--seq', '1', '-c', '8', '-f', 'json'], { env });
    const seen = () => tail.stdout().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { seq: number; body: string });
    await waitFor(() => seen().length === 2, 'the first records');

    await node.stop();
    await append(await (async () => {
      node = await startNode({ dataDir, engine: 'node', args: ['--listen', `127.0.0.1:${port}`] });
      return node;
    })(), '/tail/r', ['r3', 'r4']);
    await append(node, '/tail/r', ['r5', 'r6', 'r7', 'r8', 'r9']);

    const result = await tail.result;
    expect(result.code).toBe(0);
    expect(seen().map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(seen().map((r) => r.body)).toEqual(['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'r8']);
    expect(result.stderr).toMatch(/resuming at seq 3/);
  });

  test('from now prints only new records, and ends when the stream is sealed', async () => {
    const node = await startNode();
    const env = clientEnv({ SVC_URL: node.url });
    await svc(['create', '/tail/s'], { env });
    await append(node, '/tail/s', ['old']);
    const tail = spawnSvc(['tail', '/tail/s'], { env });
    // Probe until the tail is connected: each probe is a record after "now", so the first one it
    // prints may be any probe, but never "old".
    for (let i = 0; tail.stdout() === ''; i++) {
      if (i > 100) throw new Error('tail printed nothing');
      await append(node, '/tail/s', [`probe${i}`]);
      await new Promise((r) => setTimeout(r, 300));
    }
    await append(node, '/tail/s', ['new1', 'new2']);
    await waitFor(() => tail.stdout().endsWith('new1\nnew2\n'), 'the new records');
    await svc(['seal', '/tail/s'], { env });
    const result = await tail.result;
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).not.toContain('old');
    expect(lines.slice(-2)).toEqual(['new1', 'new2']);
    const probes = lines.slice(0, -2).map((l) => Number(/^probe(\d+)$/.exec(l)![1]));
    expect(probes).toEqual(probes.map((_, i) => probes[0]! + i)); // consecutive: no gaps, no repeats
  });
});

describe('307 redirects', () => {
  const ROOT = `${b64('root')}.${b64(randomBytes(32))}`;
  let node: NodeProcess;
  const servers: http.Server[] = [];
  afterAll(() => servers.forEach((s) => s.close()));

  /** A server that answers every request with 307 to `target(path)` and records what it saw. */
  async function redirector(target: (path: string, self: string) => string): Promise<{ url: string; seen: { path: string; auth: string | undefined }[] }> {
    const seen: { path: string; auth: string | undefined }[] = [];
    const server = http.createServer((req, res) => {
      seen.push({ path: req.url!, auth: req.headers.authorization });
      res.writeHead(307, { location: target(req.url!, url) }).end();
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return { url, seen };
  }

  beforeAll(async () => {
    node = await startNode({ args: ['--auth', 'required', '--auth-bootstrap-token', ROOT] });
  });

  test('are followed across two hops with the token re-sent on each, for writes and reads', async () => {
    const last = await redirector((p) => node.url + p);
    const first = await redirector((p) => last.url + p);
    const env = clientEnv({ SVC_URL: first.url, SVC_ADMIN_URL: node.adminUrl!, SVC_TOKEN: ROOT });
    expect((await svc(['create', '/moved/a'], { env })).code).toBe(0);
    expect((await svc(['append', '/moved/a', 'via-redirect'], { env })).code).toBe(0);
    expect((await svc(['append', '/moved/a'], { env, input: 'x\ny\n' })).code).toBe(0);
    expect((await svc(['read', '/moved/a'], { env })).stdout).toBe('via-redirect\nx\ny\n');
    for (const s of [first, last]) {
      expect(s.seen.length).toBe(4);
      for (const r of s.seen) expect(r.auth).toBe(`Bearer ${ROOT}`);
    }
    expect(first.seen.map((r) => r.path.split('?')[0])).toEqual(['/moved/a', '/moved/a', '/moved/a', '/moved/a']);
  });

  test('a redirect loop stops after --max-redirects hops with exit 1', async () => {
    const loop = await redirector((p, self) => self + p);
    const env = clientEnv({ SVC_URL: loop.url, SVC_TOKEN: ROOT });
    const r = await svc(['head', '/x'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/more than 5 redirects/);
    expect(loop.seen).toHaveLength(6);
    const two = await redirector((p) => loop.url + p);
    const r2 = await svc(['head', '/x', '--max-redirects', '0'], { env: { ...env, SVC_URL: two.url } });
    expect(r2.stderr).toMatch(/more than 0 redirects/);
    expect(two.seen).toHaveLength(1);
  });
});

describe('append retries', () => {
  test('a batch whose answer is lost is sent again and written once (idempotent producer)', async () => {
    const node = await startNode();
    // A proxy that forwards to the node but drops the connection instead of answering the
    // second POST, after the node has written it: the client sees a lost answer.
    let posts = 0;
    const proxy = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length' && k !== 'connection') headers[k] = v;
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const answer = await fetch(node.url + req.url, { method: req.method, headers, body });
      const text = Buffer.from(await answer.arrayBuffer());
      if (req.method === 'POST' && ++posts === 2) {
        req.socket.destroy();
        return;
      }
      const out: Record<string, string> = {};
      answer.headers.forEach((v, k) => {
        if (k !== 'content-length' && k !== 'transfer-encoding' && k !== 'connection' && k !== 'keep-alive') out[k] = v;
      });
      res.writeHead(answer.status, out).end(text);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const env = clientEnv({ SVC_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` });
      const input = Array.from({ length: 5000 }, (_, i) => `r${i}`).join('\n') + '\n';
      const r = await svc(['append', '/retry/a', '--create', '--batch-records', '1000', '-o', 'json'], { env, input });
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/the connection failed before an answer.*retrying/);
      expect(JSON.parse(r.stdout)).toMatchObject({ records: 5000, firstSeq: 0, nextSeq: 5000 });
      expect(posts).toBe(6); // 5 batches, the second one twice
      const back = await svc(['read', '/retry/a'], { env: clientEnv({ SVC_URL: node.url }) });
      expect(back.stdout).toBe(input);
    } finally {
      proxy.close();
    }
  });
});
