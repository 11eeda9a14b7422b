/**
 * Three nodes on one etcd (3 members, loopback) form a cluster (docs/cluster.md): every node
 * registers under its own id with a liveness lease; new streams are placed by slots; a request to
 * a node that does not own the stream is answered 307 with the owner's address, on the Svc and the
 * Durable Streams listeners, and a client that follows it (re-sending Authorization) succeeds;
 * the list is cluster-wide; /admin/cluster and /admin/nodes agree on every node but for identity.
 */
import { randomBytes } from 'node:crypto';
import { rendezvous } from '../../src/actors/cluster/rendezvous';
import { EtcdCluster } from '../helpers/etcd-cluster';
import { type NodeProcess, startNode } from '../helpers/node-process';

jest.setTimeout(120_000);

const b64 = (s: string | Buffer): string => Buffer.from(s).toString('base64url');
const ROOT = `${b64('root')}.${b64(randomBytes(32))}`;
const AUTH = { authorization: `Bearer ${ROOT}` };

let etcd: EtcdCluster;
let nodeArgs: string[] = [];
let nodes: NodeProcess[] = [];
/** Node id → its process. */
const byId = new Map<number, NodeProcess>();

interface NodeDoc {
  nodeId: number;
  nodeEpoch: number;
  advertisedAddress: string;
  slots: number;
  openingCount: number;
  placedCount: number;
  local: boolean;
  live: boolean;
  dsAddress: string | null;
}

async function admin<T>(n: NodeProcess, path: string, init: RequestInit = {}): Promise<{ status: number; json: T }> {
  const r = await fetch(`${n.adminUrl!}${path}`, { ...init, headers: { ...AUTH, 'content-type': 'application/json' } });
  return { status: r.status, json: (await r.json()) as T };
}

async function until<T>(what: string, fn: () => Promise<T | null>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== null) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A request that follows 307s itself, re-sending Authorization on every hop (spec "Client behaviour"). */
async function follow(url: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<{ status: number; hops: string[]; body: string; headers: Headers }> {
  const hops: string[] = [];
  let at = url;
  for (let i = 0; i < 5; i++) {
    const r = await fetch(at, { ...init, headers: { ...AUTH, ...init.headers }, redirect: 'manual' });
    if (r.status !== 307) return { status: r.status, hops, body: await r.text(), headers: r.headers };
    await r.arrayBuffer();
    at = r.headers.get('location')!;
    hops.push(at);
  }
  throw new Error('too many redirects');
}

beforeAll(async () => {
  etcd = await EtcdCluster.start(3);
  const args = ['--auth', 'required', '--auth-bootstrap-token', ROOT, '--metadata', etcd.url(`cluster/${randomBytes(4).toString('hex')}`), '--shards', '2', '--shard-workers', '1', '--ds-listen', '127.0.0.1:0'];
  nodeArgs = args;
  nodes = await Promise.all([startNode({ args }), startNode({ args }), startNode({ args })]);
  for (const n of nodes) {
    const c = await admin<{ nodeId: number }>(n, '/admin/cluster');
    byId.set(c.json.nodeId, n);
  }
}, 90_000);
afterAll(async () => {
  await Promise.all(nodes.map((n) => n.stop()));
  await etcd?.stop();
});

test('three nodes register with distinct ids, a first epoch, their advertised addresses and a live lease', async () => {
  expect([...byId.keys()].sort()).toEqual([1, 2, 3]);
  for (const n of nodes) {
    const ready = await fetch(`${n.adminUrl!}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ready: true, serving: true, registered: true });
  }
  const docs = await until('three live nodes on node 1', async () => {
    const r = await admin<{ nodes: NodeDoc[] }>(nodes[0]!, '/admin/nodes');
    return r.json.nodes.filter((d) => d.live).length === 3 ? r.json.nodes : null;
  });
  for (const d of docs) {
    const n = byId.get(d.nodeId)!;
    expect(d).toMatchObject({ nodeEpoch: 1, advertisedAddress: n.url.replace('http://', ''), dsAddress: n.dsUrl!.replace('http://', ''), slots: 1024, live: true });
  }
});

test('new streams are placed by slots: a node with 0 slots takes none, the others share them', async () => {
  const zero = byId.get(3)!;
  expect((await admin<NodeDoc>(nodes[0]!, '/admin/nodes/3', { method: 'POST', body: JSON.stringify({ slots: 0 }) })).json.slots).toBe(0);
  // Every node sees the new slots before placing.
  await until('slots 0 seen everywhere', async () => {
    const all = await Promise.all(nodes.map((n) => admin<NodeDoc>(n, '/admin/nodes/3')));
    return all.every((r) => r.json.slots === 0) ? true : null;
  });
  const owners = new Map<number, number>();
  for (let i = 0; i < 30; i++) {
    const name = `/spread/s${i}`;
    const r = await follow(`${nodes[i % 3]!.url}${name}`, { method: 'PUT', headers: { 'content-type': 'text/plain' } });
    expect(r.status).toBe(201);
    const detail = await admin<{ ownerNodeId: number; state: string }>(zero, `/admin/streams${name}`);
    owners.set(detail.json.ownerNodeId, (owners.get(detail.json.ownerNodeId) ?? 0) + 1);
  }
  expect(owners.get(3)).toBeUndefined();
  expect(owners.get(1)).toBeGreaterThan(3);
  expect(owners.get(2)).toBeGreaterThan(3);
  await admin(nodes[0]!, '/admin/nodes/3', { method: 'POST', body: JSON.stringify({ slots: 1024 }) });
});

test('every request to a non-owner is answered 307 to the owner; following it with Authorization succeeds', async () => {
  // Streams on every node.
  const names: string[] = [];
  for (let i = 0; names.length < 9 && i < 200; i++) names.push(`/redirect/r${i}`);
  for (const name of names) expect((await follow(`${nodes[0]!.url}${name}`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
  const ownerOf = new Map<string, number>();
  for (const name of names) ownerOf.set(name, (await admin<{ ownerNodeId: number }>(nodes[1]!, `/admin/streams${name}`)).json.ownerNodeId);
  expect(new Set(ownerOf.values()).size).toBeGreaterThan(1);
  for (const name of names) {
    const owner = byId.get(ownerOf.get(name)!)!;
    for (const n of nodes) {
      if (n === owner) continue;
      // Every method of the Svc listener, with a query string kept as sent.
      // DELETE and PATCH are not followed here: only the redirect is checked.
      for (const [method, path] of [['POST', name], ['GET', `${name}?seq=0&count=10`], ['HEAD', name], ['PUT', name], ['DELETE', name], ['GET', `/_streams${name}`], ['PATCH', `/_streams${name}`]] as const) {
        const r = await fetch(`${n.url}${path}`, { method, headers: { ...AUTH, 'content-type': 'text/plain' }, body: method === 'POST' ? 'x' : undefined, redirect: 'manual' });
        expect([method, path, r.status]).toEqual([method, path, 307]);
        expect(r.headers.get('location')).toBe(`${owner.url}${path}`);
        await r.arrayBuffer();
      }
      // Without a credential the guard answers first: a 307 does not tell who owns what.
      expect((await fetch(`${n.url}${name}`, { redirect: 'manual' })).status).toBe(401);
      // The Durable Streams listener redirects to the owner's DS listener, with the protocol's CORS
      // headers: on GET and HEAD without Origin too, on other methods for the Origin every browser
      // sends with them (docs/durable-streams.md).
      for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'DELETE']) {
        const query = method === 'GET' ? '?offset=-1' : '';
        const origin: Record<string, string> = method === 'GET' || method === 'HEAD' ? {} : { origin: 'https://app.example.com' };
        const ds = await fetch(`${n.dsUrl!}/v1/stream${name}${query}`, { method, headers: { ...AUTH, ...origin, 'content-type': 'text/plain' }, body: method === 'POST' ? 'x' : undefined, redirect: 'manual' });
        expect([method, ds.status]).toEqual([method, 307]);
        expect(ds.headers.get('location')).toBe(`${owner.dsUrl!}/v1/stream${name}${query}`);
        expect(ds.headers.get('access-control-allow-origin')).not.toBeNull();
        await ds.arrayBuffer();
      }
    }
    // A following client appends through any node and reads it back through any other.
    const appended = await follow(`${nodes[0]!.url}${name}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' });
    expect(appended.status).toBe(200);
    const read = await follow(`${nodes[2]!.url}${name}?seq=0`);
    expect(read.status).toBe(200);
    expect(read.body).toContain('hello');
    // The same through the Durable Streams listeners.
    const dsAppend = await follow(`${nodes[1]!.dsUrl!}/v1/stream${name}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'via-ds' });
    expect(dsAppend.status).toBe(204);
    const dsRead = await follow(`${nodes[2]!.dsUrl!}/v1/stream${name}?offset=-1`);
    expect(dsRead.status).toBe(200);
    expect(dsRead.body).toContain('via-ds');
  }
});

test('two nodes creating the same name at once agree on one stream', async () => {
  for (let i = 0; i < 5; i++) {
    const name = `/race/r${i}`;
    const results = await Promise.all(nodes.map((n) => follow(`${n.url}${name}`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 201]);
    const owners = await Promise.all(nodes.map((n) => admin<{ ownerNodeId: number; state: string }>(n, `/admin/streams${name}`)));
    expect(new Set(owners.map((o) => o.json.ownerNodeId)).size).toBe(1);
  }
});

test('the list is cluster-wide: every node lists every stream, in name order, paged', async () => {
  for (const n of nodes) {
    const r = await fetch(`${n.url}/?prefix=/spread/`, { headers: AUTH });
    expect(r.status).toBe(200);
    const doc = (await r.json()) as { streams: Array<{ name: string }>; has_more: boolean };
    const expected = Array.from({ length: 30 }, (_, i) => `/spread/s${i}`).sort();
    expect(doc.streams.map((s) => s.name)).toEqual(expected);
    expect(doc.has_more).toBe(false);
    const page = (await (await fetch(`${n.url}/?prefix=/spread/&limit=7&start_after=${encodeURIComponent(expected[3]!)}`, { headers: AUTH })).json()) as { streams: Array<{ name: string }>; has_more: boolean };
    expect(page.streams.map((s) => s.name)).toEqual(expected.slice(4, 11));
    expect(page.has_more).toBe(true);
  }
});

test('/admin/cluster and /admin/nodes are the same on every node but for identity fields', async () => {
  const strip = (c: Record<string, unknown>): Record<string, unknown> => {
    const { nodeId: _a, nodeEpoch: _b, advertisedAddress: _c, registered: _d, appliedIndex: _e, leaseHolder: _f, ...rest } = c;
    return rest;
  };
  await until('the same view on every node', async () => {
    const clusters = await Promise.all(nodes.map((n) => admin<Record<string, unknown>>(n, '/admin/cluster')));
    const lists = await Promise.all(nodes.map((n) => admin<{ nodes: Array<Record<string, unknown>> }>(n, '/admin/nodes')));
    const c0 = JSON.stringify(strip(clusters[0]!.json));
    const l0 = JSON.stringify(lists[0]!.json.nodes.map(({ local: _l, ...r }) => r));
    const same = clusters.every((c) => JSON.stringify(strip(c.json)) === c0) && lists.every((l) => JSON.stringify(l.json.nodes.map(({ local: _l, ...r }) => r)) === l0);
    return same ? true : null;
  });
  const clusters = await Promise.all(nodes.map((n) => admin<Record<string, unknown>>(n, '/admin/cluster')));
  for (const [i, c] of clusters.entries()) {
    expect(c.json['advertisedAddress']).toBe(nodes[i]!.url.replace('http://', ''));
    expect(c.json['registered']).toBe(true);
    expect(c.json['streamCount']).toBe(30 + 9 + 5);
  }
  const lists = await Promise.all(nodes.map((n) => admin<{ nodes: NodeDoc[] }>(n, '/admin/nodes')));
  for (const [i, l] of lists.entries()) {
    const mine = l.json.nodes.filter((d) => d.local);
    expect(mine.map((d) => d.advertisedAddress)).toEqual([nodes[i]!.url.replace('http://', '')]);
    expect(l.json.nodes.reduce((s, d) => s + d.placedCount, 0)).toBe(30 + 9 + 5);
  }
});

let stoppedDataDir = '';
let stoppedStream = '';

test("a stopped node's streams are unavailable (503), and its stream detail says so", async () => {
  const victim = byId.get(2)!;
  const name = await until('a stream on node 2', async () => {
    for (let i = 0; i < 30; i++) {
      const d = await admin<{ ownerNodeId: number }>(nodes[0]!, `/admin/streams/spread/s${i}`);
      if (d.json.ownerNodeId === 2) return `/spread/s${i}`;
    }
    return null;
  });
  await victim.stop();
  nodes = nodes.filter((n) => n !== victim);
  stoppedDataDir = victim.dataDir;
  stoppedStream = name;
  // A clean stop revokes the lease: the others see it gone at once.
  await until('node 2 not live', async () => ((await admin<NodeDoc>(nodes[0]!, '/admin/nodes/2')).json.live ? null : true), 5_000);
  const r = await fetch(`${nodes[0]!.url}${name}`, { headers: AUTH, redirect: 'manual' });
  expect(r.status).toBe(503);
  expect(await r.json()).toMatchObject({ error: 'storage_unavailable' });
  const detail = await admin<Record<string, unknown>>(nodes[1]!, `/admin/streams${name}`);
  expect(detail.status).toBe(200);
  expect(detail.json).toMatchObject({ ownerNodeId: 2, ownerLocal: false, available: false, state: 'placed' });
  // New streams go to the live nodes only.
  for (let i = 0; i < 6; i++) {
    expect((await follow(`${nodes[0]!.url}/after/a${i}`, { method: 'PUT' })).status).toBe(201);
    expect((await admin<{ ownerNodeId: number }>(nodes[0]!, `/admin/streams/after/a${i}`)).json.ownerNodeId).not.toBe(2);
  }
});

test('a restarted node keeps its id from the data directory, takes the next epoch, and serves its streams again', async () => {
  const back = await startNode({ dataDir: stoppedDataDir, args: nodeArgs });
  nodes.push(back);
  const c = await admin<{ nodeId: number; nodeEpoch: number; registered: boolean }>(back, '/admin/cluster');
  expect(c.json).toMatchObject({ nodeId: 2, nodeEpoch: 2, registered: true });
  await until('node 2 live again', async () => ((await admin<NodeDoc>(nodes[0]!, '/admin/nodes/2')).json.live ? true : null), 5_000);
  const r = await follow(`${nodes[0]!.url}${stoppedStream}`, { method: 'HEAD' });
  expect(r.status).toBe(200);
  // --node-id cannot rename a data directory: its streams are node 2's.
  await back.stop();
  nodes = nodes.filter((n) => n !== back);
  await expect(startNode({ dataDir: stoppedDataDir, args: [...nodeArgs, '--node-id', '7'] })).rejects.toThrow('belongs to node 2');
});

test('a node that dies without stopping loses its liveness lease within its TTL, and the others stop sending clients to it', async () => {
  const victim = nodes[nodes.length - 1]!;
  const id = ((await admin<{ nodeId: number }>(victim, '/admin/cluster')).json).nodeId;
  // A name that placement puts on the victim (the same weighted rendezvous over the live nodes' slots).
  const live = (await admin<{ nodes: NodeDoc[] }>(victim, '/admin/nodes')).json.nodes.filter((d) => d.live);
  let name = '';
  for (let i = 0; name === ''; i++) if (rendezvous(`/crash/c${i}`, live) === id) name = `/crash/c${i}`;
  expect((await follow(`${nodes[0]!.url}${name}`, { method: 'PUT' })).status).toBe(201);
  expect((await admin<{ ownerNodeId: number }>(victim, `/admin/streams${name}`)).json.ownerNodeId).toBe(id);
  const t0 = Date.now();
  await victim.kill();
  nodes = nodes.filter((n) => n !== victim);
  await until(`node ${id} not live`, async () => ((await admin<NodeDoc>(nodes[0]!, `/admin/nodes/${id}`)).json.live ? null : true), 15_000);
  // The lease is 10 s: gone after at most that (plus the watch's delivery), and not at once.
  expect(Date.now() - t0).toBeLessThan(13_000);
  expect(Date.now() - t0).toBeGreaterThan(2_000);
  expect((await fetch(`${nodes[0]!.url}${name}`, { headers: AUTH, redirect: 'manual' })).status).toBe(503);
});
