import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { type TestCache, startCache } from './helpers/cache-server';
import { loopbackLookup, request } from './helpers/http';
import { type TestOrigin, startOrigin, tempDir } from './helpers/origin';

const BUCKET = 'plain';
let origin: TestOrigin;
const caches: TestCache[] = [];

beforeAll(async () => {
  origin = await startOrigin([BUCKET, 'nocache', 'vhost']);
});
afterAll(async () => {
  for (const c of caches) await c.stop();
  await origin?.stop();
});
afterEach(async () => {
  expect((await origin.stats()).log).toEqual([]);
});

async function cacheWith(over: Parameters<typeof startCache>[1] = {}, dir?: string): Promise<TestCache> {
  const c = await startCache(origin, over, dir);
  caches.push(c);
  return c;
}

async function put(c: TestCache, key: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<void> {
  const r = await request(`${c.url}/${BUCKET}/${key}`, { method: 'PUT', body, headers });
  expect(r.status).toBe(200);
}

describe('svc-cache server basics (anonymous auth)', () => {
  let c: TestCache;
  beforeAll(async () => {
    c = await cacheWith({ populate_max: 1024 });
  });

  it('answers GET /-/health with ok', async () => {
    const r = await request(`${c.url}/-/health`);
    expect(r.status).toBe(200);
    expect(r.body.toString()).toBe('ok');
  });

  it('serves a second read from the cache and says so in x-svc-cache', async () => {
    await put(c, 'big.bin', Buffer.alloc(4096, 'q'));
    const first = await request(`${c.url}/${BUCKET}/big.bin`);
    expect(first.headers['x-svc-cache']).toBe('miss');
    const before = (await origin.stats()).verified;
    const second = await request(`${c.url}/${BUCKET}/big.bin`);
    expect(second.headers['x-svc-cache']).toBe('hit');
    expect(second.body.equals(Buffer.alloc(4096, 'q'))).toBe(true);
    expect(second.headers['accept-ranges']).toBe('bytes');
    expect((await origin.stats()).verified).toBe(before);
  });

  it('gives every response its own request id: 16 upper-case hex digits, a fixed prefix and a counter', async () => {
    await put(c, 'ids.bin', Buffer.alloc(16, 'i'));
    const ids: string[] = [];
    for (let i = 0; i < 300; i++) ids.push(String((await request(`${c.url}/${BUCKET}/ids.bin`)).headers['x-amz-request-id']));
    for (const id of ids) expect(id).toMatch(/^[0-9A-F]{16}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids.map((id) => id.slice(0, 8))).size).toBe(1);
    // The counter part counts up by one per request, carrying across its bytes (300 passes 0xFF).
    const counters = ids.map((id) => parseInt(id.slice(8), 16));
    for (let i = 1; i < counters.length; i++) expect(counters[i]).toBe(counters[i - 1]! + 1);
  });

  it('answers a missing key with the origin\'s S3 XML NoSuchKey', async () => {
    const r = await request(`${c.url}/${BUCKET}/does-not-exist`);
    expect(r.status).toBe(404);
    expect(r.body.toString()).toContain('<Code>NoSuchKey</Code>');
    const h = await request(`${c.url}/${BUCKET}/does-not-exist`, { method: 'HEAD' });
    expect(h.status).toBe(404);
  });

  it('answers a range past the end with 416 and Content-Range bytes */size', async () => {
    await put(c, 'small.txt', 'twelve bytes');
    for (let i = 0; i < 2; i++) {
      const r = await request(`${c.url}/${BUCKET}/small.txt`, { headers: { range: 'bytes=12-' } });
      expect(r.status).toBe(416);
      expect(r.headers['content-range']).toBe('bytes */12');
      expect(r.body.toString()).toContain('<Code>InvalidRange</Code>');
    }
  });

  it('serves HEAD from the metadata cache after the first one', async () => {
    await put(c, 'head-only.bin', Buffer.alloc(5000, 'h'));
    const a = await request(`${c.url}/${BUCKET}/head-only.bin`, { method: 'HEAD' });
    expect(a.headers['content-length']).toBe('5000');
    const before = (await origin.stats()).verified;
    const b = await request(`${c.url}/${BUCKET}/head-only.bin`, { method: 'HEAD' });
    expect(b.status).toBe(200);
    expect(b.headers.etag).toBe(a.headers.etag);
    expect((await origin.stats()).verified).toBe(before);
  });

  it('handles Expect: 100-continue on a PUT', async () => {
    const r = await request(`${c.url}/${BUCKET}/continued.txt`, { method: 'PUT', body: 'after continue', headers: { expect: '100-continue' }, expectContinue: true });
    expect(r.status).toBe(200);
    expect((await request(`${c.url}/${BUCKET}/continued.txt`)).body.toString()).toBe('after continue');
  });

  it('ignores an Expect value other than 100-continue, as S3 does, instead of answering 417', async () => {
    for (const expectValue of ['200', '']) {
      const r = await request(`${c.url}/${BUCKET}/expect-other.txt`, { method: 'PUT', body: `expect ${expectValue}`, headers: { expect: expectValue } });
      expect(r.status).toBe(200);
      expect((await request(`${c.url}/${BUCKET}/expect-other.txt`)).body.toString()).toBe(`expect ${expectValue}`);
    }
  });

  it('forwards reads with a versionId or response override to the origin', async () => {
    await put(c, 'override.txt', 'override me');
    await request(`${c.url}/${BUCKET}/override.txt`);
    const r = await request(`${c.url}/${BUCKET}/override.txt?response-content-type=text/x-test`);
    expect(r.headers['x-svc-cache']).toBeUndefined();
    expect(r.body.toString()).toBe('override me');
  });

  it('answers a CORS preflight without Origin with 400 BadRequest, as S3 does', async () => {
    const r = await request(`${c.url}/${BUCKET}/k`, { method: 'OPTIONS' });
    expect(r.status).toBe(400);
    expect(r.body.toString()).toContain('<Code>BadRequest</Code>');
  });

  it('never stores aws-chunked as the object\'s Content-Encoding', async () => {
    for (const [sent, stored] of [
      ['gzip, aws-chunked', 'gzip'],
      ['aws-chunked', undefined],
      ['aws-chunked, aws-chunked', undefined],
    ] as const) {
      await put(c, 'encoded.txt', '', { 'content-encoding': sent });
      const direct = await request(`${origin.directUrl}/${BUCKET}/encoded.txt`, { method: 'HEAD' });
      expect(direct.headers['content-encoding']).toBe(stored);
      expect((await request(`${c.url}/${BUCKET}/encoded.txt`, { method: 'HEAD' })).headers['content-encoding']).toBe(stored);
    }
  });

  it('exposes Prometheus metrics on the metrics listener', async () => {
    const r = await request(`${c.metricsUrl}/metrics`);
    const text = r.body.toString();
    for (const name of ['svc_cache_hits_total', 'svc_cache_misses_total', 'svc_cache_coalesced_total', 'svc_cache_response_bytes_total', 'svc_cache_evictions_total', 'svc_cache_origin_errors_total', 'svc_cache_request_duration_seconds_bucket'])
      expect(text).toContain(name);
    expect(text).toMatch(/svc_cache_hits_total\{tier="memory"\} [1-9]/);
  });
});

describe('svc-cache cache policy', () => {
  it('revalidates an expired entry with If-None-Match and keeps it when unchanged', async () => {
    const c = await cacheWith({ buckets: { ttl_seconds: 0 } });
    await put(c, 'ttl.txt', 'short lived');
    expect((await request(`${c.url}/${BUCKET}/ttl.txt`)).body.toString()).toBe('short lived');
    const r = await request(`${c.url}/${BUCKET}/ttl.txt`);
    expect(r.headers['x-svc-cache']).toBe('revalidated');
    expect(r.body.toString()).toBe('short lived');
  });

  it('forwards everything for a bucket whose policy says cache = false', async () => {
    const c = await cacheWith({ buckets: { override: { nocache: { cache: false } } } });
    expect((await request(`${c.url}/nocache/k`, { method: 'PUT', body: 'x' })).status).toBe(200);
    const r = await request(`${c.url}/nocache/k`);
    expect(r.body.toString()).toBe('x');
    expect(r.headers['x-svc-cache']).toBeUndefined();
  });

  it('answers a small range of an object above max_object_bytes without fetching or storing the whole object', async () => {
    const c = await cacheWith({ populate_max: 0, buckets: { max_object_bytes: 1024 * 1024 } });
    const data = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < data.length; i++) data[i] = i % 253;
    await put(c, 'huge.bin', data);
    for (const [range, start, end] of [
      ['bytes=10-19', 10, 20],
      ['bytes=-10', data.length - 10, data.length],
    ] as const) {
      const r = await request(`${c.url}/${BUCKET}/huge.bin`, { headers: { range } });
      expect(r.status).toBe(206);
      expect(r.body.equals(data.subarray(start, end))).toBe(true);
      expect(r.headers['content-range']).toBe(`bytes ${start}-${end - 1}/${data.length}`);
    }
    expect(c.services.cache.stats.diskObjects).toBe(0);
    const whole = await request(`${c.url}/${BUCKET}/huge.bin`);
    expect(whole.body.equals(data)).toBe(true);
    expect(c.services.cache.stats.diskObjects).toBe(0);
  });

  it('sizes 50 concurrent cold range reads of a large object with one origin HEAD', async () => {
    const c = await cacheWith({ populate_max: 0, buckets: { max_object_bytes: 1024 * 1024 } });
    const data = Buffer.alloc(2 * 1024 * 1024);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7) % 251;
    await put(c, 'coalesce.bin', data);
    const heads = (await origin.stats()).byMethod.HEAD ?? 0;
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) => request(`${c.url}/${BUCKET}/coalesce.bin`, { headers: { range: `bytes=${i * 1000}-${i * 1000 + 99}` } })),
    );
    replies.forEach((r, i) => {
      expect(r.status).toBe(206);
      expect(r.body.equals(data.subarray(i * 1000, i * 1000 + 100))).toBe(true);
    });
    expect(((await origin.stats()).byMethod.HEAD ?? 0) - heads).toBe(1);
    expect(c.services.cache.stats.diskObjects).toBe(0);
  });

  it('keeps the disk tier across a restart', async () => {
    const dir = tempDir('svc-cache-restart-');
    const first = await startCache(origin, { cache: { memory_bytes: 0 } }, dir);
    await put(first, 'persist.bin', Buffer.alloc(10_000, 'p'));
    expect((await request(`${first.url}/${BUCKET}/persist.bin`)).headers['x-svc-cache']).toBe('hit');
    await first.stop(true);
    const second = await cacheWith({ cache: { memory_bytes: 0 } }, dir);
    const before = (await origin.stats()).verified;
    const r = await request(`${second.url}/${BUCKET}/persist.bin`);
    expect(r.headers['x-svc-cache']).toBe('hit');
    expect(r.body.equals(Buffer.alloc(10_000, 'p'))).toBe(true);
    expect((await origin.stats()).verified).toBe(before);
  });

  it('evicts the least recently used objects when the disk tier is full', async () => {
    const c = await cacheWith({ cache: { memory_bytes: 0, disk_bytes: 25_000 } });
    for (const k of ['e1', 'e2', 'e3']) await put(c, k, Buffer.alloc(10_000, k));
    expect(c.services.cache.stats.diskObjects).toBe(2);
    expect(c.services.cache.stats.diskBytes).toBeLessThanOrEqual(25_000);
    expect((await request(`${c.url}/${BUCKET}/e1`)).headers['x-svc-cache']).toBe('miss');
    expect((await request(`${c.url}/${BUCKET}/e3`)).headers['x-svc-cache']).toBe('hit');
  });

  it('answers 503 with an S3 XML error when the origin is unreachable', async () => {
    const c = await cacheWith({ origin: { endpoint: 'http://127.0.0.1:1' } });
    const r = await request(`${c.url}/${BUCKET}/anything`);
    expect(r.status).toBe(503);
    expect(r.body.toString()).toContain('<Code>ServiceUnavailable</Code>');
    const w = await request(`${c.url}/${BUCKET}/anything`, { method: 'PUT', body: 'x' });
    expect(w.status).toBe(503);
  });
});

describe('svc-cache addressing', () => {
  it('serves virtual-hosted clients and talks virtual-hosted to the origin', async () => {
    const c = await cacheWith({
      server: { addressing: { style: 'virtual_hosted', domain: 's3.test' } },
      origin: { endpoint: `http://s3.localhost:${origin.port}`, virtual_hosted: true },
    });
    const port = new URL(c.url).port;
    const s3 = new S3Client({
      endpoint: `http://s3.test:${port}`,
      region: 'us-east-1',
      forcePathStyle: false,
      credentials: { accessKeyId: 'any', secretAccessKey: 'any' },
      requestHandler: new NodeHttpHandler({ httpAgent: new http.Agent({ lookup: loopbackLookup }) }),
    });
    await s3.send(new PutObjectCommand({ Bucket: 'vhost', Key: 'dir/v h.txt', Body: 'virtual' }));
    const got = await s3.send(new GetObjectCommand({ Bucket: 'vhost', Key: 'dir/v h.txt' }));
    expect(await got.Body!.transformToString()).toBe('virtual');
    // Path style still works on the bare domain.
    const r = await request(`${c.url}/vhost/dir/v%20h.txt`, { host: `s3.test:${port}` });
    expect(r.body.toString()).toBe('virtual');
    s3.destroy();
  });

  it('verifies static signatures of virtual-hosted clients (the bucket signed in the Host header, not the path)', async () => {
    const c = await cacheWith({
      server: { addressing: { style: 'virtual_hosted', domain: 's3.test' } },
      auth: { mode: 'static', access_key_id: 'VHKEY', secret_access_key: 'vh/secret' },
    });
    const port = new URL(c.url).port;
    const sdk = (secret: string, forcePathStyle: boolean) =>
      new S3Client({
        endpoint: `http://s3.test:${port}`,
        region: 'us-east-1',
        forcePathStyle,
        credentials: { accessKeyId: 'VHKEY', secretAccessKey: secret },
        requestHandler: new NodeHttpHandler({ httpAgent: new http.Agent({ lookup: loopbackLookup }) }),
      });
    const s3 = sdk('vh/secret', false);
    await s3.send(new PutObjectCommand({ Bucket: 'vhost', Key: 'signed/ké y+1.txt', Body: 'signed virtual' }));
    for (let i = 0; i < 2; i++) {
      const got = await s3.send(new GetObjectCommand({ Bucket: 'vhost', Key: 'signed/ké y+1.txt' }));
      expect(await got.Body!.transformToString()).toBe('signed virtual');
    }
    const pathStyle = sdk('vh/secret', true);
    expect(await (await pathStyle.send(new GetObjectCommand({ Bucket: 'vhost', Key: 'signed/ké y+1.txt' }))).Body!.transformToString()).toBe('signed virtual');
    const wrong = sdk('wrong', false);
    await expect(wrong.send(new GetObjectCommand({ Bucket: 'vhost', Key: 'signed/ké y+1.txt' }))).rejects.toMatchObject({ name: 'SignatureDoesNotMatch' });
    for (const x of [s3, pathStyle, wrong]) x.destroy();
  });
});

describe('svc-cache uploads', () => {
  it('decodes an SDK streaming upload (aws-chunked with a CRC32 trailer) before it reaches the origin', async () => {
    const c = await cacheWith();
    const s3 = new S3Client({ endpoint: c.url, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'any', secretAccessKey: 'any' } });
    const data = Buffer.alloc(300_000, 'c');
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'streamed.bin', Body: Readable.from([data.subarray(0, 100_000), data.subarray(100_000)]), ContentLength: data.length }));
    const direct = await request(`${origin.directUrl}/${BUCKET}/streamed.bin`);
    expect(direct.body.equals(data)).toBe(true);
    s3.destroy();
  });
});

describe('svc-cache TLS', () => {
  it('terminates TLS with the configured certificate and key, for raw HTTPS and for the AWS SDK with static auth', async () => {
    const dir = tempDir('svc-cache-tls-');
    const key = path.join(dir, 'key.pem');
    const cert = path.join(dir, 'cert.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    const c = await cacheWith({ server: { tls: { cert, key } }, auth: { mode: 'static', access_key_id: 'TLSKEY', secret_access_key: 'tls-secret' } });
    expect(c.url.startsWith('https://')).toBe(true);
    const ca = fs.readFileSync(cert);
    expect((await request(`${c.url}/-/health`, { ca })).body.toString()).toBe('ok');
    // Unsigned: refused, over TLS too.
    const unsigned = await request(`${c.url}/${BUCKET}/tls.txt`, { ca });
    expect(unsigned.status).toBe(403);
    expect(unsigned.body.toString()).toContain('<Code>AccessDenied</Code>');
    const sdk = (secret: string) =>
      new S3Client({
        endpoint: c.url,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials: { accessKeyId: 'TLSKEY', secretAccessKey: secret },
        requestHandler: new NodeHttpHandler({ httpsAgent: new https.Agent({ ca }) }),
      });
    const s3 = sdk('tls-secret');
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'tls.txt', Body: 'over tls' }));
    for (let i = 0; i < 2; i++) {
      const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'tls.txt', Range: 'bytes=5-' }));
      expect(await got.Body!.transformToString()).toBe('tls');
      expect(got.ContentRange).toBe('bytes 5-7/8');
    }
    const wrong = sdk('not the secret');
    await expect(wrong.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'tls.txt' }))).rejects.toMatchObject({ name: 'SignatureDoesNotMatch' });
    s3.destroy();
    wrong.destroy();
    // A plain-HTTP client gets no answer from the TLS listener.
    const plain = await request(c.url.replace('https:', 'http:') + '/-/health').then((r) => r.status, () => 'refused');
    expect(plain).not.toBe(200);
  });
});
