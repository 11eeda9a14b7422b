/**
 * The maintenance lease (docs/cluster.md, "The maintenance lease"): on a 3-node cluster (3 etcd
 * members) exactly one node says `leaseHolder: true`, the others false; when the holder dies
 * (SIGKILL: its liveness lease expires after --node-lease-ttl) another live node takes it.
 * Without --objects, a transfer to another node is refused with 400 (streams cannot move without
 * an object store), to the owner it is `pending: false`, and invalid targets are 400.
 */
import { type TestCluster, startCluster } from '../helpers/svc-cluster';
import { type NodeProcess } from '../helpers/node-process';

jest.setTimeout(90_000);

let c: TestCluster;

beforeAll(async () => {
  c = await startCluster(['--node-lease-ttl', '2']);
});
afterAll(async () => {
  await c?.stop();
});

async function adminJson<T>(n: NodeProcess, path: string, init: RequestInit = {}): Promise<{ status: number; json: T }> {
  const r = await fetch(`${n.adminUrl!}${path}`, { ...init, headers: { ...c.auth, 'content-type': 'application/json' } });
  return { status: r.status, json: (await r.json()) as T };
}

async function holders(nodes: NodeProcess[]): Promise<Array<boolean | null>> {
  return Promise.all(nodes.map(async (n) => (await adminJson<{ leaseHolder: boolean | null }>(n, '/admin/cluster')).json.leaseHolder));
}

async function until<T>(what: string, fn: () => Promise<T | null>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== null) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('exactly one node holds the maintenance lease; when it dies another takes it within the lease TTL', async () => {
  const first = await until('one holder', async () => {
    const h = await holders(c.nodes);
    return h.filter((x) => x === true).length === 1 && h.filter((x) => x === false).length === 2 ? h : null;
  });
  const holder = c.nodes[first.indexOf(true)]!;
  const rest = c.nodes.filter((n) => n !== holder);
  const t0 = Date.now();
  await holder.kill();
  const after = await until('a new holder', async () => {
    const h = await holders(rest);
    return h.filter((x) => x === true).length === 1 && h.filter((x) => x === false).length === 1 ? h : null;
  });
  expect(after.filter((x) => x === true)).toHaveLength(1);
  // TTL 2 s: expiry, the watch's delivery and one create-only write.
  expect(Date.now() - t0).toBeLessThan(6_000);
  c.nodes = rest;
});

test('POST /admin/transfer without --objects: the owner is pending false, another node or a bad target 400', async () => {
  const n = c.nodes[0]!;
  const put = await fetch(`${n.url}/t/one`, { method: 'PUT', headers: c.auth, redirect: 'manual' });
  const target = put.status === 307 ? put.headers.get('location')! : `${n.url}/t/one`;
  if (put.status === 307) expect((await fetch(target, { method: 'PUT', headers: c.auth })).status).toBe(201);
  const owner = await c.ownerOf('/t/one', n);
  const self = await adminJson<Record<string, unknown>>(n, '/admin/transfer', { method: 'POST', body: JSON.stringify({ stream: '/t/one', toNode: owner }) });
  expect(self.status).toBe(200);
  expect(self.json).toMatchObject({ stream: '/t/one', toNode: owner, pending: false });
  expect(typeof self.json['streamId']).toBe('number');
  const live = (await adminJson<{ nodes: Array<{ nodeId: number; live: boolean }> }>(n, '/admin/nodes')).json.nodes.filter((d) => d.live).map((d) => d.nodeId);
  const other = live.find((id) => id !== owner)!;
  expect(await adminJson(n, '/admin/transfer', { method: 'POST', body: JSON.stringify({ stream: '/t/one', toNode: other }) })).toEqual({ status: 400, json: { error: 'bad_request' } });
  expect(await adminJson(n, '/admin/transfer', { method: 'POST', body: JSON.stringify({ stream: '/t/one', toNode: 99 }) })).toEqual({ status: 400, json: { error: 'bad_request' } });
  expect(await adminJson(n, '/admin/transfer', { method: 'POST', body: JSON.stringify({ stream: '/t/none', toNode: owner }) })).toEqual({ status: 404, json: { error: 'not_found' } });
  const overview = await adminJson<{ pendingTransfers: unknown[] }>(n, '/admin/cluster');
  expect(overview.json.pendingTransfers).toEqual([]);
});
