/**
 * The admin API on a single node (spec "Admin endpoints"): every endpoint with its statuses and
 * error bodies, fields exactly as the spec names them.
 */
import { type NodeProcess, startNode } from '../../helpers/node-process';

let node: NodeProcess;
let admin: string;

async function call(path: string, method = 'GET', body?: unknown): Promise<{ status: number; json: unknown }> {
  const r = await fetch(admin + path, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, json: text === '' ? null : (JSON.parse(text) as unknown) };
}

beforeAll(async () => {
  node = await startNode();
  admin = node.adminUrl!;
  const put = await fetch(`${node.url}/orders`, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'one' });
  expect(put.status).toBe(201);
});
afterAll(async () => {
  await node.stop();
});

test('GET /health answers 200 and GET /ready gives ready, serving, registered, appliedIndex and nodeId', async () => {
  expect((await fetch(`${admin}/health`)).status).toBe(200);
  const ready = await call('/ready');
  expect(ready.status).toBe(200);
  expect(Object.keys(ready.json as object).sort()).toEqual(['appliedIndex', 'nodeId', 'ready', 'registered', 'serving']);
  expect(ready.json).toEqual({ ready: true, serving: true, registered: true, appliedIndex: ((await call('/admin/cluster')).json as { appliedIndex: number }).appliedIndex, nodeId: 1 });
});

test('GET /admin/cluster gives the cluster overview with the storage counts', async () => {
  const r = await call('/admin/cluster');
  expect(r.status).toBe(200);
  const c = r.json as Record<string, unknown>;
  expect(Object.keys(c).sort()).toEqual(
    ['advertisedAddress', 'appliedIndex', 'clusterId', 'destroyedObjectBacklog', 'leaseHolder', 'nodeEpoch', 'nodeId', 'objectCount', 'pendingTransfers', 'registered', 'streamCount'].sort(),
  );
  expect(c).toMatchObject({ nodeId: 1, nodeEpoch: 1, registered: true, streamCount: 1, objectCount: 0, destroyedObjectBacklog: 0, leaseHolder: true, pendingTransfers: [] });
  expect(c['advertisedAddress']).toBe(node.url.replace('http://', ''));
  expect(typeof c['clusterId']).toBe('string');
  expect(c['appliedIndex']).toBeGreaterThanOrEqual(2);
});

test('GET /admin/nodes lists this node; GET /admin/nodes/{id} gives it or 404', async () => {
  const list = await call('/admin/nodes');
  // The spec's Node fields, then liveness and the other listeners' addresses (docs/cluster.md).
  const expected = {
    nodeId: 1, nodeEpoch: 1, advertisedAddress: node.url.replace('http://', ''), slots: 1024, openingCount: 0, placedCount: 1, local: true,
    live: true, protocol: 'svc', dsAddress: null, kafkaAddress: node.kafka, adminAddress: node.adminUrl!.replace('http://', ''),
  };
  expect(list).toEqual({ status: 200, json: { nodes: [expected] } });
  expect(await call('/admin/nodes/1')).toEqual({ status: 200, json: expected });
  expect(await call('/admin/nodes/7')).toEqual({ status: 404, json: { error: 'not_found' } });
});

test('POST /admin/nodes/{id} sets the slots, and refuses a bad body or an unknown node', async () => {
  const before = (await call('/admin/cluster')).json as { appliedIndex: number };
  const r = await call('/admin/nodes/1', 'POST', { slots: 12 });
  expect(r.status).toBe(200);
  expect((r.json as { slots: number }).slots).toBe(12);
  expect(((await call('/admin/nodes/1')).json as { slots: number }).slots).toBe(12);
  // A metadata command: the applied index moved.
  expect(((await call('/admin/cluster')).json as { appliedIndex: number }).appliedIndex).toBeGreaterThan(before.appliedIndex);
  expect(await call('/admin/nodes/1', 'POST', { slots: -1 })).toEqual({ status: 400, json: { error: 'bad_request' } });
  expect(await call('/admin/nodes/1', 'POST', { slots: 1, colour: 'red' })).toEqual({ status: 400, json: { error: 'bad_request' } });
  expect(await call('/admin/nodes/1', 'POST', 'not json')).toEqual({ status: 400, json: { error: 'bad_request' } });
  expect(await call('/admin/nodes/9', 'POST', { slots: 1 })).toEqual({ status: 404, json: { error: 'not_found' } });
});

test('GET /admin/streams/{stream} gives the stream detail, or 404', async () => {
  const r = await call('/admin/streams/orders');
  expect(r.status).toBe(200);
  const d = r.json as Record<string, unknown>;
  expect(Object.keys(d).sort()).toEqual(
    ['closed', 'contentType', 'endOffset', 'epoch', 'expiresAtMs', 'name', 'nodeId', 'ownerAdvertisedAddress', 'ownerLocal', 'ownerNodeId', 'pendingTransfer', 'startOffset', 'state', 'streamId', 'ttlSeconds'].sort(),
  );
  expect(d).toMatchObject({ name: '/orders', ownerNodeId: 1, ownerLocal: true, contentType: 'text/plain', closed: false, state: 'placed', nodeId: 1, startOffset: 0, endOffset: 1, pendingTransfer: null, ttlSeconds: null, expiresAtMs: null });
  expect(await call('/admin/streams/nothing-here')).toEqual({ status: 404, json: { error: 'not_found' } });
});

test('POST /admin/transfer: this node is the only valid target', async () => {
  const self = await call('/admin/transfer', 'POST', { stream: '/orders', toNode: 1 });
  expect(self.status).toBe(200);
  expect(self.json).toEqual({ stream: '/orders', streamId: (((await call('/admin/streams/orders')).json) as { streamId: number }).streamId, toNode: 1, pending: false });
  expect(await call('/admin/transfer', 'POST', { stream: '/orders', toNode: 2 })).toEqual({ status: 400, json: { error: 'bad_request' } });
  expect(await call('/admin/transfer', 'POST', { stream: '/orders' })).toEqual({ status: 400, json: { error: 'bad_request' } });
  expect(await call('/admin/transfer', 'POST', { stream: '/missing', toNode: 1 })).toEqual({ status: 404, json: { error: 'not_found' } });
});

test('tokens: issue, list without secrets, revoke, 404 and 409', async () => {
  const scope = { streams: [{ prefix: '/a/' }], ops: ['read'], audiences: ['svc'], groups: { stream: { read: true, write: false } } };
  const issued = await call('/admin/tokens', 'POST', { id: 'reader', scope });
  expect(issued.status).toBe(201);
  const doc = issued.json as { id: string; token: string; scope: unknown; createdAtMs: number };
  expect(doc.id).toBe('reader');
  expect(doc.scope).toEqual(scope);
  expect(doc.token).toMatch(/^cmVhZGVy\.[A-Za-z0-9_-]{43}$/);
  expect(await call('/admin/tokens', 'POST', { id: 'reader', scope })).toEqual({ status: 409, json: { error: 'conflict' } });
  const list = await call('/admin/tokens');
  expect(list.status).toBe(200);
  expect(list.json).toEqual({ count: 1, tokens: [{ id: 'reader', scope, createdAtMs: doc.createdAtMs, issuedBy: 'auth-off' }] });
  expect(await call('/admin/tokens/reader', 'DELETE')).toEqual({ status: 204, json: null });
  expect(await call('/admin/tokens/reader', 'DELETE')).toEqual({ status: 404, json: { error: 'not_found' } });
});

test('an unknown admin path is a 404 in the admin shape', async () => {
  expect(await call('/admin/nope')).toEqual({ status: 404, json: { error: 'not_found' } });
});

describe('the storage counts of the cluster overview', () => {
  test('objectCount counts sealed segments and destroyedObjectBacklog the dead ones the reaper has not removed yet', async () => {
    // Small segments, a quick retention sweep (which finds dead segments) and a reaper that waits an hour.
    const n = await startNode({ args: ['--shards', '1', '--segment-bytes', '4096', '--retention-interval-ms', '50', '--reaper-interval-ms', '3600000'] });
    const cluster = async (): Promise<{ objectCount: number; destroyedObjectBacklog: number }> =>
      (await fetch(`${n.adminUrl!}/admin/cluster`)).json() as Promise<{ objectCount: number; destroyedObjectBacklog: number }>;
    expect((await fetch(`${n.url}/big`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } })).status).toBe(201);
    for (let i = 0; i < 12; i++) {
      expect((await fetch(`${n.url}/big`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(1000, i) })).status).toBe(200);
    }
    const full = await cluster();
    expect(full.objectCount).toBeGreaterThanOrEqual(2);
    expect(full.destroyedObjectBacklog).toBe(0);
    expect((await fetch(`${n.url}/big`, { method: 'DELETE' })).status).toBe(204);
    const deadline = Date.now() + 5000;
    let after = await cluster();
    while (after.destroyedObjectBacklog === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      after = await cluster();
    }
    expect(after.destroyedObjectBacklog).toBeGreaterThanOrEqual(2);
    expect(after.destroyedObjectBacklog).toBeLessThanOrEqual(after.objectCount);
    await n.stop();
  });
});
