/**
 * Durable Streams appends as the official client sends them (@durable-streams/client, pinned):
 * batches of any number of messages and any size up to --max-request-bytes, binary bodies over
 * --max-record-bytes, and an IdempotentProducer burst that must land exactly once. Also the
 * `Stream-Expires-At` parser (RFC 3339 only, as the Svc listener's).
 */
import { randomBytes } from 'node:crypto';
import { DurableStream, IdempotentProducer } from '@durable-streams/client';
import { type NodeProcess, startNode } from '../../helpers/node-process';
import { rawRequest } from '../../helpers/raw-http';

jest.setTimeout(120_000);

const MiB = 1024 * 1024;
let node: NodeProcess;
let base: string;

beforeAll(async () => {
  node = await startNode({ args: ['--ds-listen', '127.0.0.1:0'] });
  base = `${node.dsUrl!}/v1/stream`;
});

async function createStream(name: string, contentType: string): Promise<DurableStream> {
  return DurableStream.create({ url: `${base}/${name}`, contentType });
}

async function readAll(name: string): Promise<Buffer> {
  const r = await fetch(`${base}/${name}?offset=-1`);
  expect(r.status).toBe(200);
  let body = Buffer.from(await r.arrayBuffer());
  // Reads come in pages: follow Stream-Next-Offset until the stream's end.
  let next = r.headers.get('stream-next-offset');
  while (r.headers.get('stream-up-to-date') === null && next !== null) {
    const more = await fetch(`${base}/${name}?offset=${next}`);
    body = Buffer.concat([body, Buffer.from(await more.arrayBuffer())]);
    if (more.headers.get('stream-up-to-date') !== null) break;
    next = more.headers.get('stream-next-offset');
  }
  return body;
}

async function readJson(name: string): Promise<unknown[]> {
  const out: unknown[] = [];
  let offset = '-1';
  for (;;) {
    const r = await fetch(`${base}/${name}?offset=${offset}`);
    expect(r.status).toBe(200);
    out.push(...((await r.json()) as unknown[]));
    offset = r.headers.get('stream-next-offset')!;
    if (r.headers.get('stream-up-to-date') !== null) return out;
  }
}

it('accepts one JSON append of 15,000 messages (more than the per-batch record limit of Svc appends)', async () => {
  await createStream('many-json', 'application/json');
  const messages = Array.from({ length: 15_000 }, (_, i) => ({ i }));
  const r = await fetch(`${base}/many-json`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(messages) });
  expect(r.status).toBe(204);
  expect(await readJson('many-json')).toEqual(messages);
});

it('stores a 3 MiB binary append as several records and serves the bytes back unchanged', async () => {
  await createStream('big-bytes', 'application/octet-stream');
  const body = randomBytes(3 * MiB + 123);
  const r = await fetch(`${base}/big-bytes`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body });
  expect(r.status).toBe(204);
  // One offset per record: 1 MiB records (the default --max-record-bytes), the last one shorter.
  expect(r.headers.get('stream-next-offset')).toMatch(/4$/);
  expect((await readAll('big-bytes')).equals(body)).toBe(true);
});

it('takes the client default batching: 20,000 concurrent appends all land, once each', async () => {
  const stream = await createStream('batched', 'application/json');
  await Promise.all(Array.from({ length: 20_000 }, (_, i) => stream.append(JSON.stringify({ i }))));
  const got = (await readJson('batched')) as Array<{ i: number }>;
  expect(got).toHaveLength(20_000);
  expect(new Set(got.map((m) => m.i)).size).toBe(20_000);
});

it('lands a 20,000-message IdempotentProducer burst exactly once, in order', async () => {
  const stream = await createStream('producer', 'application/json');
  const errors: Error[] = [];
  const producer = new IdempotentProducer(stream, 'burst-1', { onError: (e) => errors.push(e) });
  for (let i = 0; i < 20_000; i++) producer.append(JSON.stringify({ i, pad: 'x'.repeat(40) }));
  await producer.flush();
  await producer.detach();
  expect(errors).toEqual([]);
  const got = (await readJson('producer')) as Array<{ i: number }>;
  expect(got.map((m) => m.i)).toEqual(Array.from({ length: 20_000 }, (_, i) => i));
});

it('lands a binary IdempotentProducer burst over 1 MiB per batch exactly once', async () => {
  const stream = await createStream('producer-bytes', 'application/octet-stream');
  const errors: Error[] = [];
  const producer = new IdempotentProducer(stream, 'burst-2', { onError: (e) => errors.push(e), maxBatchBytes: 4 * MiB, lingerMs: 50 });
  const chunks = Array.from({ length: 64 }, () => randomBytes(64 * 1024));
  for (const c of chunks) producer.append(c);
  await producer.flush();
  await producer.detach();
  expect(errors).toEqual([]);
  expect((await readAll('producer-bytes')).equals(Buffer.concat(chunks))).toBe(true);
});

it('still refuses an append over --max-request-bytes with 413', async () => {
  await createStream('too-big', 'application/octet-stream');
  // Declared, not sent: the node refuses before reading a byte of it (and closes the connection).
  const r = await rawRequest(Number(new URL(node.dsUrl!).port), `POST /v1/stream/too-big HTTP/1.1\r\nHost: a\r\nContent-Type: application/octet-stream\r\nContent-Length: ${16 * MiB + 1}\r\n\r\n`);
  expect(r.status).toBe(413);
});

describe('Stream-Expires-At', () => {
  it.each(['2026-02-30T00:00:00Z', '1', 'March 7, 2030', '2030-03-07', '2030-03-07T24:00:00Z'])('refuses %j with 400', async (value) => {
    const r = await fetch(`${base}/exp-${encodeURIComponent(value)}`, { method: 'PUT', headers: { 'stream-expires-at': value } });
    expect(r.status).toBe(400);
    expect((await fetch(`${base}/exp-${encodeURIComponent(value)}`, { method: 'HEAD' })).status).toBe(404);
  });

  it('takes an RFC 3339 date-time with an offset and reports it back in UTC', async () => {
    const r = await fetch(`${base}/exp-ok`, { method: 'PUT', headers: { 'stream-expires-at': '2030-03-07T12:00:00+01:00' } });
    expect(r.status).toBe(201);
    const head = await fetch(`${base}/exp-ok`, { method: 'HEAD' });
    expect(head.headers.get('stream-expires-at')).toBe('2030-03-07T11:00:00.000Z');
  });
});
