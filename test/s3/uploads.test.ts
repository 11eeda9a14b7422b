/** Upload bodies in static auth mode: signed aws-chunked streams and hashed payloads, checked before the origin completes anything. */
import { createHash, createHmac } from 'node:crypto';
import { type TestCache, startCache } from './helpers/cache-server';
import { request } from './helpers/http';
import { type TestOrigin, startOrigin } from './helpers/origin';
import { smithySigner } from './helpers/smithy-oracle';

const BUCKET = 'up';
const AK = 'UPKEY';
const SK = 'up-secret';
let origin: TestOrigin;
let cache: TestCache;

beforeAll(async () => {
  origin = await startOrigin([BUCKET]);
  cache = await startCache(origin, { auth: { mode: 'static', access_key_id: AK, secret_access_key: SK } });
});
afterAll(async () => {
  await cache?.stop();
  await origin?.stop();
});

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const hmac = (k: Buffer | string, s: string) => createHmac('sha256', k).update(s).digest();

async function signedHeaders(method: string, key: string, headers: Record<string, string>): Promise<Record<string, string>> {
  const u = new URL(cache.url);
  const signed = await smithySigner(AK, SK, 'us-east-1').sign({ method, protocol: 'http:', hostname: u.hostname, port: Number(u.port), path: `/${BUCKET}/${key}`, query: {}, headers: { host: u.host, ...headers } });
  return Object.fromEntries(Object.entries(signed.headers).map(([k, v]) => [k, String(v)]));
}

/** A STREAMING-AWS4-HMAC-SHA256-PAYLOAD body: every chunk signed, chained from the seed signature. */
function chunkedBody(chunks: Buffer[], auth: string, amzDate: string, tamper = false): Buffer {
  const seed = /Signature=([0-9a-f]{64})/.exec(auth)![1]!;
  const date = amzDate.slice(0, 8);
  const scope = `${date}/us-east-1/s3/aws4_request`;
  const key = hmac(hmac(hmac(hmac('AWS4' + SK, date), 'us-east-1'), 's3'), 'aws4_request');
  let prev = seed;
  const parts: Buffer[] = [];
  for (const c of [...chunks, Buffer.alloc(0)]) {
    const sig = hmac(key, `AWS4-HMAC-SHA256-PAYLOAD\n${amzDate}\n${scope}\n${prev}\n${sha('')}\n${sha(c)}`).toString('hex');
    prev = sig;
    const data = tamper && c.length > 0 ? Buffer.from(c).fill('X', 0, 1) : c;
    parts.push(Buffer.from(`${c.length.toString(16)};chunk-signature=${sig}\r\n`), data, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

async function streamingPut(key: string, chunks: Buffer[], tamper = false) {
  const decoded = chunks.reduce((n, c) => n + c.length, 0);
  // The framed length does not depend on the signatures' values, only on their size.
  const framed = chunkedBody(chunks, 'Signature=' + '0'.repeat(64), '20000101T000000Z').length;
  const headers = await signedHeaders('PUT', key, {
    'content-encoding': 'aws-chunked',
    'content-length': String(framed),
    'x-amz-decoded-content-length': String(decoded),
    'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
    'content-type': 'text/plain',
  });
  const body = chunkedBody(chunks, headers['authorization']!, headers['x-amz-date']!, tamper);
  delete headers['content-length'];
  return request(`${cache.url}/${BUCKET}/${key}`, { method: 'PUT', headers, body });
}

describe('uploads with static auth', () => {
  it('decodes a signed aws-chunked upload, checking every chunk signature, and stores the plain bytes', async () => {
    const chunks = [Buffer.alloc(65536, 'a'), Buffer.alloc(1000, 'b')];
    const r = await streamingPut('streamed.txt', chunks);
    expect(r.status).toBe(200);
    const direct = await request(`${origin.directUrl}/${BUCKET}/streamed.txt`);
    expect(direct.body.equals(Buffer.concat(chunks))).toBe(true);
    expect((await origin.stats()).log).toEqual([]);
  });

  it('rejects a signed aws-chunked upload with a tampered chunk, and the origin never gets the object', async () => {
    const r = await streamingPut('tampered.txt', [Buffer.alloc(2000, 'a'), Buffer.alloc(10, 'b')], true);
    expect(r.status).toBe(403);
    expect(r.body.toString()).toContain('<Code>SignatureDoesNotMatch</Code>');
    expect((await request(`${origin.directUrl}/${BUCKET}/tampered.txt`)).status).toBe(404);
  });

  it('rejects a body that does not match its signed x-amz-content-sha256, before the origin completes the upload', async () => {
    const body = Buffer.from('the real body');
    const headers = await signedHeaders('PUT', 'hashed.txt', { 'x-amz-content-sha256': sha('another body'), 'content-length': String(body.length) });
    delete headers['content-length'];
    const r = await request(`${cache.url}/${BUCKET}/hashed.txt`, { method: 'PUT', headers, body });
    expect(r.status).toBe(400);
    expect(r.body.toString()).toContain('<Code>XAmzContentSHA256Mismatch</Code>');
    expect((await request(`${origin.directUrl}/${BUCKET}/hashed.txt`)).status).toBe(404);
    const ok = await signedHeaders('PUT', 'hashed.txt', { 'x-amz-content-sha256': sha(body), 'content-length': String(body.length) });
    delete ok['content-length'];
    expect((await request(`${cache.url}/${BUCKET}/hashed.txt`, { method: 'PUT', headers: ok, body })).status).toBe(200);
  });
});
