import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { smithySigner } from './helpers/smithy-oracle';
import { type TestCache, startCache } from './helpers/cache-server';
import { type TestOrigin, startOrigin } from './helpers/origin';

const BUCKET = 'sdk-bucket';
const AK = 'CLIENTKEY';
const SK = 'client/secret+key';
let origin: TestOrigin;
let cache: TestCache;
let s3: S3Client;

beforeAll(async () => {
  origin = await startOrigin([BUCKET]);
  cache = await startCache(origin, { populate_max: 64 * 1024, auth: { mode: 'static', access_key_id: AK, secret_access_key: SK }, buckets: { ttl_seconds: 3600 } });
  s3 = new S3Client({ endpoint: cache.url, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: AK, secretAccessKey: SK } });
});

afterAll(async () => {
  s3?.destroy();
  await cache?.stop();
  await origin?.stop();
});

afterEach(async () => {
  const st = await origin.stats();
  expect(st.log).toEqual([]);
});

async function text(body: unknown): Promise<string> {
  return (body as { transformToString(): Promise<string> }).transformToString();
}

describe('svc-cache with the AWS SDK v3 client', () => {
  it('puts, gets (from the cache), heads and deletes an object', async () => {
    const put = await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'hello.txt', Body: 'hello world', ContentType: 'text/plain', Metadata: { colour: 'blue' } }));
    expect(put.ETag).toBeDefined();
    // Populated by the PUT (≤ populate_max): the read never reaches the origin.
    const before = (await origin.stats()).verified;
    const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'hello.txt' }));
    expect(await text(got.Body)).toBe('hello world');
    expect(got.ETag).toBe(put.ETag);
    expect(got.ContentType).toBe('text/plain');
    expect(got.Metadata).toEqual({ colour: 'blue' });
    expect((await origin.stats()).verified).toBe(before);
    const head = await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'hello.txt' }));
    expect(head.ContentLength).toBe(11);
    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: 'hello.txt' }));
    await expect(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'hello.txt' }))).rejects.toMatchObject({ name: 'NoSuchKey' });
  });

  it('returns the new bytes after an overwrite even with a long namespace TTL (read your writes)', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'ryw.txt', Body: 'version one' }));
    expect(await text((await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'ryw.txt' }))).Body)).toBe('version one');
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'ryw.txt', Body: 'version two!' }));
    expect(await text((await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'ryw.txt' }))).Body)).toBe('version two!');
    // Larger than populate_max: invalidated, fetched again on the next read.
    const big = Buffer.alloc(100 * 1024, 'z');
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'ryw.txt', Body: big }));
    const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'ryw.txt' }));
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(big)).toBe(true);
  });

  describe('ranges', () => {
    const data = Buffer.from(Array.from({ length: 100 * 1024 }, (_, i) => i % 251));
    beforeAll(async () => {
      await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'ranged.bin', Body: data }));
      await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'ranged-cold.bin', Body: data }));
    });

    async function range(key: string, r: string): Promise<{ body: Buffer; contentRange: string | undefined; length: number | undefined }> {
      const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key, Range: r }));
      return { body: Buffer.from(await got.Body!.transformToByteArray()), contentRange: got.ContentRange, length: got.ContentLength };
    }

    it.each([
      ['bytes=0-9', 0, 10],
      ['bytes=-10', data.length - 10, data.length],
      ['bytes=100000-', 100000, data.length],
      ['bytes=50-50', 50, 51],
      ['bytes=102000-999999', 102000, data.length],
    ])('answers %s with 206 and the right bytes, cold and warm', async (r, start, end) => {
      for (const key of ['ranged-cold.bin', 'ranged.bin']) {
        const got = await range(key, r);
        expect(got.contentRange).toBe(`bytes ${start}-${end - 1}/${data.length}`);
        expect(got.length).toBe(end - start);
        expect(got.body.equals(data.subarray(start, end))).toBe(true);
      }
    });

    it('answers a range past the end with 416 and the size in Content-Range', async () => {
      const err = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'ranged.bin', Range: `bytes=${data.length}-` })).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'InvalidRange', $metadata: { httpStatusCode: 416 } });
      const res = await fetch(`${cache.url}/${BUCKET}/ranged.bin`, { headers: { range: 'bytes=999999-' } });
      expect(res.status).toBe(403); // unsigned: static auth answers first
    });
  });

  describe('conditional requests', () => {
    let etag = '';
    let lastModified: Date;
    beforeAll(async () => {
      etag = (await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'cond.txt', Body: 'conditional' }))).ETag!;
      lastModified = (await s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'cond.txt' }))).LastModified!;
    });
    const past = () => new Date(lastModified.getTime() - 3600_000);
    const future = () => new Date(lastModified.getTime() + 3600_000);

    async function status(o: Partial<{ IfMatch: string; IfNoneMatch: string; IfModifiedSince: Date; IfUnmodifiedSince: Date }>): Promise<number> {
      try {
        const r = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'cond.txt', ...o }));
        await text(r.Body);
        return r.$metadata.httpStatusCode!;
      } catch (err) {
        return (err as { $metadata: { httpStatusCode: number } }).$metadata.httpStatusCode;
      }
    }

    it('answers If-Match and If-None-Match', async () => {
      expect(await status({ IfMatch: etag })).toBe(200);
      expect(await status({ IfMatch: '"0000"' })).toBe(412);
      expect(await status({ IfNoneMatch: etag })).toBe(304);
      expect(await status({ IfNoneMatch: '"0000"' })).toBe(200);
      expect(await status({ IfMatch: '*' })).toBe(200);
    });

    it('answers If-Modified-Since and If-Unmodified-Since', async () => {
      expect(await status({ IfModifiedSince: past() })).toBe(200);
      expect(await status({ IfModifiedSince: future() })).toBe(304);
      expect(await status({ IfUnmodifiedSince: future() })).toBe(200);
      expect(await status({ IfUnmodifiedSince: past() })).toBe(412);
    });

    it('gives If-Match precedence over If-Unmodified-Since and If-None-Match over If-Modified-Since, as S3 does', async () => {
      expect(await status({ IfMatch: etag, IfUnmodifiedSince: past() })).toBe(200);
      expect(await status({ IfNoneMatch: '"0000"', IfModifiedSince: future() })).toBe(200);
      expect(await status({ IfNoneMatch: etag, IfModifiedSince: past() })).toBe(304);
      expect(await status({ IfMatch: '"0000"', IfNoneMatch: etag })).toBe(412);
    });
  });

  it('uploads in parts and serves the completed object, invalidating an older cached copy', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'multi.bin', Body: 'old small body' }));
    expect(await text((await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'multi.bin' }))).Body)).toBe('old small body');
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'multi.bin' }));
    const p1 = Buffer.alloc(5 * 1024 * 1024, 'a');
    const p2 = Buffer.from('tail part');
    const e1 = await s3.send(new UploadPartCommand({ Bucket: BUCKET, Key: 'multi.bin', UploadId, PartNumber: 1, Body: p1 }));
    const e2 = await s3.send(new UploadPartCommand({ Bucket: BUCKET, Key: 'multi.bin', UploadId, PartNumber: 2, Body: p2 }));
    expect(await text((await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'multi.bin' }))).Body)).toBe('old small body');
    await s3.send(
      new CompleteMultipartUploadCommand({ Bucket: BUCKET, Key: 'multi.bin', UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: e1.ETag }, { PartNumber: 2, ETag: e2.ETag }] } }),
    );
    const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'multi.bin' }));
    const body = Buffer.from(await got.Body!.transformToByteArray());
    expect(body.length).toBe(p1.length + p2.length);
    expect(body.subarray(p1.length).toString()).toBe('tail part');
  });

  it('copies an object and serves the new destination, not a stale cached one', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'copy-src', Body: 'source bytes' }));
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'copy-dst', Body: 'old destination' }));
    expect(await text((await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'copy-dst' }))).Body)).toBe('old destination');
    await s3.send(new CopyObjectCommand({ Bucket: BUCKET, Key: 'copy-dst', CopySource: `${BUCKET}/copy-src` }));
    expect(await text((await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'copy-dst' }))).Body)).toBe('source bytes');
  });

  it('deletes awkward keys with DeleteObjects and invalidates every one of them', async () => {
    const keys = ['space key', 'amp&ersand', 'plus+sign', 'ünïcødé/ключ', "quote'(paren)!*", 'percent%20literal', 'lt<gt>', 'tilde~dot./..'];
    for (const k of keys) {
      await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: k, Body: `body of ${k}` }));
      expect(await text((await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: k }))).Body)).toBe(`body of ${k}`);
    }
    const res = await s3.send(new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: keys.map((Key) => ({ Key })) } }));
    expect(res.Errors ?? []).toEqual([]);
    for (const k of keys) await expect(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: k }))).rejects.toMatchObject({ name: 'NoSuchKey' });
  });

  it('forwards listings', async () => {
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'list/a', Body: 'a' }));
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'list/b', Body: 'b' }));
    const l = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'list/' }));
    expect((l.Contents ?? []).map((c) => c.Key)).toEqual(['list/a', 'list/b']);
  });

  it('shares one origin fetch among concurrent cold reads and streams a large object', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < big.length; i += 4096) big.writeUInt32BE(i, i);
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'coalesce.bin', Body: big }));
    const before = (await origin.stats()).verified;
    const bodies = await Promise.all(
      Array.from({ length: 8 }, async () => Buffer.from(await (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'coalesce.bin' }))).Body!.transformToByteArray())),
    );
    for (const b of bodies) expect(b.equals(big)).toBe(true);
    const after = (await origin.stats()).verified;
    expect(after - before).toBe(1); // one GET to the origin
  });

  describe('authentication', () => {
    const presigner = () => smithySigner(AK, SK, 'us-east-1');
    const u = () => new URL(cache.url);

    async function presign(method: string, key: string, expiresIn: number, at = new Date()): Promise<string> {
      const signed = await presigner().presign(
        { method, protocol: 'http:', hostname: u().hostname, port: Number(u().port), path: `/${BUCKET}/${encodeURIComponent(key)}`, query: {}, headers: { host: u().host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } },
        { expiresIn, signingDate: at },
      );
      const qs = Object.entries(signed.query ?? {}).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join('&');
      return `${cache.url}${signed.path}?${qs}`;
    }

    it('accepts presigned PUT and GET URLs', async () => {
      const put = await fetch(await presign('PUT', 'presigned file.txt', 300), { method: 'PUT', body: 'presigned body' });
      expect(put.status).toBe(200);
      const get = await fetch(await presign('GET', 'presigned file.txt', 300));
      expect(get.status).toBe(200);
      expect(await get.text()).toBe('presigned body');
    });

    it('rejects an expired presigned URL and a forged signature', async () => {
      const old = await fetch(await presign('GET', 'presigned file.txt', 60, new Date(Date.now() - 3600_000)));
      expect(old.status).toBe(403);
      expect(await old.text()).toContain('<Code>AccessDenied</Code>');
      const url = new URL(await presign('GET', 'presigned file.txt', 300));
      url.searchParams.set('X-Amz-Signature', createHash('sha256').update('forged').digest('hex'));
      const forged = await fetch(url);
      expect(forged.status).toBe(403);
      expect(await forged.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
      const wrong = new S3Client({ endpoint: cache.url, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: AK, secretAccessKey: 'not the secret' } });
      await expect(wrong.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'presigned file.txt' }))).rejects.toMatchObject({ name: 'SignatureDoesNotMatch' });
      wrong.destroy();
    });

    it('rejects unsigned requests with an S3 XML AccessDenied', async () => {
      const res = await fetch(`${cache.url}/${BUCKET}/presigned%20file.txt`);
      expect(res.status).toBe(403);
      expect(res.headers.get('content-type')).toBe('application/xml');
      expect(await res.text()).toContain('<Code>AccessDenied</Code>');
    });
  });
});
