/**
 * Named offsets (docs/protocol.md "Named offsets"): `/_offsets/{stream}?group=` on a real node —
 * the answers and refusals, and durability: a commit that was answered survives a kill -9.
 */
import { startNode, tempDir } from '../helpers/node-process';

jest.setTimeout(60_000);

test('a committed named offset is answered, refused where it must be, and survives kill -9', async () => {
  const dataDir = tempDir();
  let node = await startNode({ dataDir, engine: 'node' });
  const at = (q = 'group=billing%2Feu') => `${node.url}/_offsets/orders/eu?${q}`;
  const put = (body: string, type = 'application/json', q?: string) => fetch(at(q), { method: 'PUT', headers: { 'content-type': type }, body });
  expect((await fetch(`${node.url}/orders/eu`, { method: 'PUT' })).status).toBe(201);
  expect((await fetch(`${node.url}/orders/eu`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: 'x' })).status).toBe(200);

  expect(await (await fetch(at())).json()).toEqual({ group: 'billing/eu', stream: '/orders/eu', seq: null, committedAtMs: null });
  const ok = await put('{"seq": 1}');
  expect(ok.status).toBe(200);
  const doc = (await ok.json()) as { seq: number; committedAtMs: number };
  expect(doc).toMatchObject({ group: 'billing/eu', stream: '/orders/eu', seq: 1 });

  expect(await (await put('{"seq": 2}')).json()).toEqual({ error: 'seq_out_of_range', message: 'seq 2 is beyond the tail (next_seq 1)', next_seq: 1 });
  expect((await put('{"seq": -1}')).status).toBe(400);
  expect((await put('1')).status).toBe(400);
  expect((await put('{"seq": 0}', 'text/plain')).status).toBe(415);
  expect((await fetch(at(''))).status).toBe(400); // no group
  expect((await fetch(at('group=g&seq=1'))).status).toBe(400);
  expect((await fetch(at(), { method: 'POST' })).headers.get('allow')).toBe('GET, HEAD, PUT, DELETE');
  expect((await fetch(`${node.url}/_offsets/missing?group=g`)).status).toBe(404);
  // Another group of the same stream, and the same group of another stream, are their own.
  expect(((await (await fetch(at('group=billing'))).json()) as { seq: null }).seq).toBeNull();

  await node.kill();
  node = await startNode({ dataDir, engine: 'node' });
  expect(await (await fetch(at())).json()).toEqual({ group: 'billing/eu', stream: '/orders/eu', seq: 1, committedAtMs: doc.committedAtMs });
  expect((await fetch(at(), { method: 'DELETE' })).status).toBe(204);
  expect(((await (await fetch(at())).json()) as { seq: null }).seq).toBeNull();
});
