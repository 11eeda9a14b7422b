/**
 * Restart in objects mode (docs/cluster.md, "Restart"): a node killed (SIGKILL) and started again
 * on its data directory before its liveness lease expired reopens its streams at a new epoch (row
 * and fence), brings its local copies up to the ledger's and serves them with every acknowledged
 * record; appends go on. A node whose streams moved away while it was down drops its stale copies.
 */
import { ObjectsCluster, until } from './objects-cluster';
import { type Writer, missing, readAll, svcWriter } from './writers';

jest.setTimeout(120_000);

let c: ObjectsCluster;

beforeAll(async () => {
  // A long lease: the node is back before the others would move its streams.
  c = await ObjectsCluster.start(['--node-lease-ttl', '30']);
}, 90_000);
afterAll(async () => {
  await c?.stop();
});

test('a node restarted on its data directory reopens its streams at the next epoch with every acknowledged record', async () => {
  const writers: Writer[] = [];
  for (let i = 0; i < 6; i++) writers.push(await svcWriter(c, `/rs/s${i}`));
  await until('appends', async () => (writers.every((w) => w.acked.length >= 20) ? true : null), 30_000);
  const owner = (await c.detail(writers[0]!.stream)).ownerNodeId;
  const mine = [];
  for (const w of writers) {
    const d = await c.detail(w.stream);
    if (d.ownerNodeId === owner) mine.push({ w, epoch: d.epoch });
  }
  const n = c.nodes.get(owner)!;
  await n.kill();
  c.nodes.delete(owner);
  const back = await c.startNode(owner, n.dataDir);
  for (const { w, epoch } of mine) {
    const d = await until(`${w.stream} reopened`, async () => {
      const x = await c.detail(w.stream, back);
      return x.state === 'placed' && x.epoch > epoch ? x : null;
    }, 30_000);
    expect(d).toMatchObject({ ownerNodeId: owner, epoch: epoch + 1, pendingTransfer: null });
  }
  const counts = writers.map((w) => w.acked.length);
  await until('appends go on', async () => (writers.every((w, i) => w.acked.length > counts[i]! + 10) ? true : null), 30_000);
  for (const w of writers) await w.stop();
  for (const w of writers) expect(missing(w, await readAll(c, w.stream))).toEqual([]);
});

test('a node whose streams moved while it was down drops its copies when it comes back', async () => {
  const w = await svcWriter(c, '/rs/moving');
  await until('appends', async () => (w.acked.length >= 20 ? true : null));
  const from = (await c.detail('/rs/moving')).ownerNodeId;
  const to = [1, 2, 3].find((id) => id !== from)!;
  const n = c.nodes.get(from)!;
  await n.kill();
  c.nodes.delete(from);
  // Moved by hand while it is down (its lease has not expired yet: a transfer to a live node is valid).
  const r = await c.admin('/admin/transfer', { method: 'POST', body: JSON.stringify({ stream: '/rs/moving', toNode: to }) });
  expect(r.json).toMatchObject({ pending: true });
  await until('placed on the new owner', async () => {
    const d = await c.detail('/rs/moving');
    return d.state === 'placed' && d.ownerNodeId === to ? true : null;
  }, 30_000);
  const back = await c.startNode(from, n.dataDir);
  // Its copy is gone: a read on it is a redirect to the owner, and the owner has every record.
  const direct = await fetch(`${back.url}/rs/moving?seq=0`, { redirect: 'manual' });
  expect(direct.status).toBe(307);
  await until('the local copy dropped', async () => {
    const page = (await (await fetch(`${back.url}/?prefix=/rs/moving`, { headers: { 'svc-list-scope': 'node' } })).json()) as { streams: unknown[] };
    return page.streams.length === 0 ? true : null;
  });
  await w.stop();
  expect(missing(w, await readAll(c, '/rs/moving'))).toEqual([]);
});

test('a node restarted on a wiped data directory before its lease expired makes its streams again from the object store', async () => {
  const writers: Writer[] = [];
  for (let i = 0; i < 4; i++) writers.push(await svcWriter(c, `/rw/s${i}`));
  await until('appends', async () => (writers.every((w) => w.acked.length >= 20) ? true : null), 30_000);
  const owner = (await c.detail(writers[0]!.stream)).ownerNodeId;
  const mine: Array<{ w: Writer; epoch: number }> = [];
  for (const w of writers) {
    const d = await c.detail(w.stream);
    if (d.ownerNodeId === owner) mine.push({ w, epoch: d.epoch });
  }
  await c.killAndWipe(owner);
  const back = await c.startNode(owner);
  for (const { w, epoch } of mine) {
    await until(`${w.stream} reopened`, async () => {
      const x = await c.detail(w.stream, back);
      return x.state === 'placed' && x.ownerNodeId === owner && x.epoch === epoch + 1 ? x : null;
    }, 30_000);
  }
  const counts = writers.map((w) => w.acked.length);
  await until('appends go on', async () => (writers.every((w, i) => w.acked.length > counts[i]! + 10) ? true : null), 30_000);
  for (const w of writers) await w.stop();
  for (const w of writers) expect(missing(w, await readAll(c, w.stream))).toEqual([]);
});
