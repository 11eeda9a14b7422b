/**
 * `--gateway-threads 2` (gateway-thread.ts): the Svc listener's stream requests served by two
 * threads, each with its own channels to the shard workers. Many keep-alive connections, spread
 * by the kernel over the threads (SO_REUSEPORT hashes each connection; with 16 of them the chance
 * that all land on one thread is 2 × 2⁻¹⁶), append, read and wait live through every thread.
 */
import * as http from 'node:http';
import { randomBytes } from 'node:crypto';
import { type Answer, connections, requestOn } from '../helpers/keep-alive';
import { type NodeProcess, startNode } from '../helpers/node-process';

const b64 = (x: string | Buffer): string => Buffer.from(x).toString('base64url');
const ROOT = `${b64('root')}.${b64(randomBytes(32))}`;
const ALL_OPS = ['read', 'head', 'list', 'create', 'append', 'close', 'delete'];
const SCOPE = { streams: [{ prefix: '/' }], groups: { stream: { read: true, write: true } }, ops: ALL_OPS, audiences: ['svc'] };
const CONNECTIONS = 16;
/** Where record `{"n": n}` is in an SSE stream's text (its body is a JSON string there, quotes escaped). */
const at = (text: string, n: number): number => text.search(new RegExp(`n\\\\?":${n}\\b`));

/** One request on `agent`'s one keep-alive connection, with the bearer token. */
function request(node: NodeProcess, agent: http.Agent, method: string, path: string, token: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> {
  return requestOn(agent, `${node.url}${path}`, method, body, { authorization: `Bearer ${token}`, ...headers });
}

describe('gateway threads (--gateway-threads 2, auth required)', () => {
  let node: NodeProcess | undefined;
  let agents: http.Agent[] | undefined;

  beforeAll(async () => {
    node = await startNode({ args: ['--gateway-threads', '2', '--auth', 'required', '--auth-bootstrap-token', ROOT, '--long-poll-timeout', '60000'] });
    agents = connections(CONNECTIONS);
  }, 60_000);

  afterAll(async () => {
    for (const a of agents ?? []) a.destroy();
    await node?.stop();
  });

  test('appends from many connections keep each stream\'s order and seqs; reads through every thread see them', async () => {
    const streams = ['/gw/a', '/gw/b', '/gw/c', '/gw/d'];
    for (const s of streams) expect((await request(node!, agents![0]!, 'PUT', s, ROOT, undefined, { 'content-type': 'application/json' })).status).toBe(201);
    const PER = 15;
    await Promise.all(
      agents!.map(async (agent, c) => {
        const s = streams[c % streams.length]!;
        for (let j = 0; j < PER; j++) {
          const r = await request(node!, agent, 'POST', s, ROOT, JSON.stringify({ c, j }), { 'content-type': 'application/json' });
          expect(r.status).toBe(200);
        }
      }),
    );
    for (const s of streams) {
      // Read through every connection: each thread sees the same records in the same order.
      const bodies = await Promise.all(agents!.map((a) => request(node!, a, 'GET', `${s}?seq=0&count=1000`, ROOT)));
      for (const b of bodies) expect(b.body).toBe(bodies[0]!.body);
      const records = JSON.parse(bodies[0]!.body) as Array<{ seq: number; body: string }>;
      expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i));
      const values = records.map((r) => JSON.parse(r.body) as { c: number; j: number });
      expect(values).toHaveLength((CONNECTIONS / streams.length) * PER);
      expect(bodies[0]!.headers['svc-next-seq']).toBe(String(values.length));
      // Each connection's appends in the order it made them.
      const last = new Map<number, number>();
      for (const v of values) {
        expect(v.j).toBe((last.get(v.c) ?? -1) + 1);
        last.set(v.c, v.j);
      }
      const head = await request(node!, agents![1]!, 'HEAD', s, ROOT);
      expect(head.headers['svc-next-seq']).toBe(String(values.length));
    }
  }, 120_000);

  test('long-poll and SSE readers on every thread get appends made through another', async () => {
    const s = '/gw/live';
    expect((await request(node!, agents![0]!, 'PUT', s, ROOT, undefined, { 'content-type': 'application/json' })).status).toBe(201);
    // A long-poll on each connection but the last, an SSE reader on its own connection.
    const polls = agents!.slice(0, CONNECTIONS - 1).map((a) => request(node!, a, 'GET', `${s}?seq=0&live=long-poll`, ROOT));
    const sse = new Promise<string>((resolve, reject) => {
      const req = http.request(`${node!.url}${s}?seq=0&live=sse`, { headers: { authorization: `Bearer ${ROOT}` } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
          if (at(text, 2) >= 0) {
            req.destroy();
            resolve(text);
          }
        });
      });
      req.on('error', (e) => (e.message.includes('aborted') || e.message.includes('socket hang up') ? undefined : reject(e)));
      req.end();
    });
    // Most readers are waiting live by then; one that is not gets the same records as a catch-up read.
    await new Promise((r) => setTimeout(r, 500));
    const writer = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let n = 0; n < 3; n++) expect((await request(node!, writer, 'POST', s, ROOT, JSON.stringify({ n }), { 'content-type': 'application/json' })).status).toBe(200);
    } finally {
      writer.destroy();
    }
    for (const p of await Promise.all(polls)) {
      expect(p.status).toBe(200);
      const first = (JSON.parse(p.body) as Array<{ seq: number; body: string }>)[0]!;
      expect([first.seq, JSON.parse(first.body)]).toEqual([0, { n: 0 }]);
    }
    const events = await sse;
    expect(at(events, 0)).toBeGreaterThanOrEqual(0);
    expect(at(events, 0)).toBeLessThan(at(events, 1));
    expect(at(events, 1)).toBeLessThan(at(events, 2));
  }, 120_000);

  test('a revoked token is refused on the very next request on every connection, whichever thread holds it', async () => {
    const r = await fetch(`${node!.adminUrl!}/admin/tokens`, { method: 'POST', headers: { authorization: `Bearer ${ROOT}`, 'content-type': 'application/json' }, body: JSON.stringify({ id: 'short-lived', scope: SCOPE }) });
    expect(r.status).toBe(201);
    const token = ((await r.json()) as { token: string }).token;
    // Issued: accepted on every connection at once.
    for (const a of agents!) expect((await request(node!, a, 'HEAD', '/gw/a', token)).status).toBe(200);
    const revoked = await fetch(`${node!.adminUrl!}/admin/tokens/short-lived`, { method: 'DELETE', headers: { authorization: `Bearer ${ROOT}` } });
    expect(revoked.status).toBeLessThan(300);
    for (const a of agents!) expect((await request(node!, a, 'HEAD', '/gw/a', token)).status).toBe(401);
    // The root token still works everywhere, the list (main thread) included.
    for (const a of agents!) expect((await request(node!, a, 'HEAD', '/gw/a', ROOT)).status).toBe(200);
    expect((await request(node!, agents![0]!, 'GET', '/', ROOT)).status).toBe(200);
  }, 120_000);
});
