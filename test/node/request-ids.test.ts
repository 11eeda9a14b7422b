/**
 * A real node: an error reply on each HTTP listener (Svc, Durable Streams, admin) names an
 * Svc-Request-Id, and the node's own output holds one log line with that id, so an operator can
 * go from a client's error to the node's log.
 */
import { type NodeProcess, startNode } from '../helpers/node-process';

let node: NodeProcess;
beforeAll(async () => {
  node = await startNode({ args: ['--ds-listen', '127.0.0.1:0', '--max-request-bytes', '1024', '--max-record-bytes', '1024'] });
}, 30_000);

/** The node's JSON log lines that name `id`. */
function linesWith(id: string): Array<Record<string, unknown>> {
  return node
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l['requestId'] === id);
}

/** Waits (up to 5 s) for the node's output to hold a line naming `id`: the pipe delivers it after the reply. */
async function waitForLines(id: string): Promise<Array<Record<string, unknown>>> {
  for (let i = 0; i < 100; i++) {
    const lines = linesWith(id);
    if (lines.length > 0) return lines;
    await new Promise((r) => setTimeout(r, 50));
  }
  return [];
}

test.each([
  ['svc', () => `${node.url}/no/such/stream`, 404],
  ['ds', () => `${node.dsUrl}/v1/stream/no-such-stream`, 404],
  ['admin', () => `${node.adminUrl}/admin/streams/no-such-stream`, 404],
] as const)('an error on the %s listener carries an id that is in the log', async (listener, url, status) => {
  const r = await fetch(url());
  expect(r.status).toBe(status);
  const id = r.headers.get('svc-request-id');
  expect(id).toMatch(/^[0-9a-f]{16}$/);
  await r.arrayBuffer();
  const lines = await waitForLines(id!);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ level: 'info', listener, status, method: 'GET', msg: 'request answered with an error' });
});

test.each([
  ['svc', () => `${node.url}/big/a`],
  ['ds', () => `${node.dsUrl}/v1/stream/big-a`],
] as const)('a body the engine refuses as too large on the %s listener carries an id that is in the log', async (listener, url) => {
  const r = await fetch(url(), { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(4096) });
  expect(r.status).toBe(413);
  const id = r.headers.get('svc-request-id');
  expect(id).toMatch(/^[0-9a-f]{16}$/);
  await r.arrayBuffer();
  const lines = await waitForLines(id!);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ level: 'info', listener, status: 413, method: 'POST', msg: 'request answered with an error' });
});

test('a success carries no id and logs nothing', async () => {
  const before = node.output().length;
  const r = await fetch(`${node.url}/ok/a`, { method: 'PUT', headers: { 'content-type': 'text/plain' } });
  expect(r.status).toBe(201);
  expect(r.headers.get('svc-request-id')).toBeNull();
  // An error after it: once its line is in, any line of the success would be too.
  const e = await fetch(`${node.url}/ok/missing`);
  expect(e.status).toBe(404);
  expect(await waitForLines(e.headers.get('svc-request-id')!)).toHaveLength(1);
  const after = node.output().slice(before).split('\n').filter((l) => l.includes('request answered with an error'));
  expect(after).toHaveLength(1);
});
