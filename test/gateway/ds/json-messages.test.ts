/**
 * Durable Streams JSON-mode appends as stored (docs/durable-streams.md, "JSON messages are stored as
 * sent, compacted"): the shard's worker splits the body by slicing it, so a message is the client's
 * bytes without whitespace between tokens; the refusals are those of earlier versions, and they come
 * before the stream's own checks.
 */
import { type NodeProcess, startNode } from '../../helpers/node-process';

jest.setTimeout(60_000);

let node: NodeProcess;
let base: string;

beforeAll(async () => {
  node = await startNode({ args: ['--ds-listen', '127.0.0.1:0', '--max-record-bytes', '64'] });
  base = `${node.dsUrl!}/v1/stream`;
});

afterAll(async () => {
  await node.stop();
});

async function create(name: string, body?: string): Promise<void> {
  const r = await fetch(`${base}/${name}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body });
  expect(r.status).toBe(201);
}

function append(name: string, body: string): Promise<Response> {
  return fetch(`${base}/${name}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
}

async function readText(name: string): Promise<string> {
  const r = await fetch(`${base}/${name}?offset=-1`);
  expect(r.status).toBe(200);
  return r.text();
}

it('stores each element of an array as sent, without the whitespace between tokens', async () => {
  await create('compact');
  expect((await append('compact', ' [ {"a" : 1} ,\n {"b": [1, 2], "s": "x ] , \\" y"} , "s p", 1.0, 12345678901234567890123, [] ]\n')).status).toBe(204);
  expect((await append('compact', '{"one":\t"value"}')).status).toBe(204);
  expect(await readText('compact')).toBe('[{"a":1},{"b":[1,2],"s":"x ] , \\" y"},"s p",1.0,12345678901234567890123,[],{"one":"value"}]');
});

it('stores a create body the same way', async () => {
  await create('created', '[ {"a" : 1}, 2.50 ]');
  expect(await readText('created')).toBe('[{"a":1},2.50]');
});

it('refuses invalid JSON, not UTF-8, and [] with 400, and a message over --max-record-bytes with 413', async () => {
  await create('refusals');
  for (const body of ['[1,', '{"a":1,}', "['a']", '[1] 2']) {
    const r = await append('refusals', body);
    expect([body, r.status, await r.text()]).toEqual([body, 400, 'the body is not valid JSON']);
  }
  const notUtf8 = await fetch(`${base}/refusals`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.from([0x5b, 0x22, 0xff, 0x22, 0x5d]) });
  expect(notUtf8.status).toBe(400);
  const empty = await append('refusals', ' [ ] ');
  expect([empty.status, await empty.text()]).toEqual([400, 'an append of [] carries no message']);
  const big = await append('refusals', JSON.stringify([1, 'x'.repeat(64)]));
  expect([big.status, await big.text()]).toEqual([413, 'a message is limited to 64 bytes']);
  // 63 bytes once compacted fits, though the element is longer as sent.
  expect((await append('refusals', `[ [ ${Array.from({ length: 31 }, () => '1').join(' ,')} ] ]`)).status).toBe(204);
  expect(await readText('refusals')).toBe(`[[${Array.from({ length: 31 }, () => '1').join(',')}]]`);
});

it('checks the body before the stream: invalid JSON to a missing or closed stream is still 400', async () => {
  expect((await append('nowhere', '[1,')).status).toBe(400);
  expect((await append('nowhere', '[1]')).status).toBe(404);
  await create('closed');
  const close = await fetch(`${base}/closed`, { method: 'POST', headers: { 'stream-closed': 'true' } });
  expect(close.status).toBe(204);
  expect((await append('closed', '[1,')).status).toBe(400);
  expect((await append('closed', '[1]')).status).toBe(409);
});
