/**
 * Serving stale on origin errors (docs/s3-cache.md, "Stale if error"): with the origin process
 * stopped, an entry past its TTL is answered from the cache while it is within the bucket's
 * stale_if_error_seconds, marked `x-svc-cache: stale` and `Warning: 110/111`; past the window, or
 * for an entry a write through the cache invalidated, the answer is 503 as before.
 */
import { type TestCache, startCache } from './helpers/cache-server';
import { request } from './helpers/http';
import { type TestOrigin, startOrigin } from './helpers/origin';

jest.setTimeout(40_000);

const SMALL = Buffer.from('hello, stale world');
/** Larger than memory_object_max below: a disk-tier entry, read through a file handle. */
const LARGE = Buffer.alloc(64 * 1024, 7);

interface Setup {
  origin: TestOrigin;
  cache: TestCache;
  url: (key: string) => string;
}

const running: Setup[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) {
    await s.cache.stop();
    await s.origin.stop();
  }
});

/** An origin and a cache with a 1 s TTL and the given stale window; PUTs over 1 KiB are not populated. */
async function setup(staleSeconds: number): Promise<Setup> {
  const origin = await startOrigin(['b']);
  const cache = await startCache(origin, {
    populate_max: 1024,
    cache: { memory_object_max: 16 * 1024 },
    buckets: { ttl_seconds: 1, stale_if_error_seconds: staleSeconds },
  });
  const s = { origin, cache, url: (key: string) => `${cache.url}/b/${key}` };
  running.push(s);
  return s;
}

/** Writes through the cache, then reads once so the entry comes from an origin GET. */
async function cached(s: Setup, key: string, body: Buffer): Promise<string> {
  expect((await request(s.url(key), { method: 'PUT', body })).status).toBe(200);
  const r = await request(s.url(key));
  expect(r.status).toBe(200);
  expect(r.body.equals(body)).toBe(true);
  return r.headers.etag as string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('svc-cache stale-if-error', () => {
  it('answers an expired entry from the cache, marked stale, while the origin is down', async () => {
    const s = await setup(60);
    await cached(s, 'small', SMALL);
    await cached(s, 'large', LARGE);
    await s.origin.stop();
    await sleep(1200); // past the 1 s TTL

    for (const [key, body] of [['small', SMALL], ['large', LARGE]] as const) {
      const r = await request(s.url(key));
      expect(r.status).toBe(200);
      expect(r.body.equals(body)).toBe(true);
      expect(r.headers['x-svc-cache']).toBe('stale');
      expect(r.headers.warning).toContain('110');
      expect(r.headers.warning).toContain('111');
      const head = await request(s.url(key), { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers['content-length']).toBe(String(body.length));
      expect(head.headers['x-svc-cache']).toBe('stale');
    }
    // Nothing was ever stored for this key: no stale bytes, 503.
    const none = await request(s.url('never-read'));
    expect(none.status).toBe(503);
    expect(none.body.toString()).toContain('<Code>ServiceUnavailable</Code>');
    expect(s.cache.logs.some((l) => l.includes('origin fetch failed'))).toBe(true);
  });

  it('answers 503 once the entry is older than the TTL plus stale_if_error_seconds', async () => {
    const s = await setup(1);
    await cached(s, 'small', SMALL);
    await s.origin.stop();
    await sleep(1200); // within the window (1 s TTL + 1 s)
    expect((await request(s.url('small'))).headers['x-svc-cache']).toBe('stale');
    await sleep(1200); // past it
    const r = await request(s.url('small'));
    expect(r.status).toBe(503);
    expect(r.body.toString()).toContain('<Code>ServiceUnavailable</Code>');
    expect((await request(s.url('small'), { method: 'HEAD' })).status).toBe(503);
  });

  it('answers conditional requests and ranges from a stale entry as from a fresh one', async () => {
    const s = await setup(60);
    const etagSmall = await cached(s, 'small', SMALL);
    const etagLarge = await cached(s, 'large', LARGE);
    await s.origin.stop();
    await sleep(1200);

    for (const [key, body, etag] of [['small', SMALL, etagSmall], ['large', LARGE, etagLarge]] as const) {
      const notModified = await request(s.url(key), { headers: { 'if-none-match': etag } });
      expect(notModified.status).toBe(304);
      expect(notModified.headers.etag).toBe(etag);
      expect(notModified.headers['x-svc-cache']).toBe('stale');
      expect(notModified.headers.warning).toContain('110');

      const changed = await request(s.url(key), { headers: { 'if-none-match': '"other"' } });
      expect(changed.status).toBe(200);
      expect(changed.body.equals(body)).toBe(true);

      const failed = await request(s.url(key), { headers: { 'if-match': '"other"' } });
      expect(failed.status).toBe(412);
      expect(failed.body.toString()).toContain('<Code>PreconditionFailed</Code>');

      const since = await request(s.url(key), { headers: { 'if-modified-since': new Date(Date.now() + 3600_000).toUTCString() } });
      expect(since.status).toBe(304);

      const range = await request(s.url(key), { headers: { range: 'bytes=2-9' } });
      expect(range.status).toBe(206);
      expect(range.headers['content-range']).toBe(`bytes 2-9/${body.length}`);
      expect(range.body.equals(body.subarray(2, 10))).toBe(true);
      expect(range.headers['x-svc-cache']).toBe('stale');

      const past = await request(s.url(key), { headers: { range: `bytes=${body.length}-` } });
      expect(past.status).toBe(416);
      expect(past.headers['content-range']).toBe(`bytes */${body.length}`);
    }
  });

  it('never serves stale an entry that a write through the cache replaced or deleted', async () => {
    const s = await setup(60);
    await cached(s, 'replaced', SMALL);
    await cached(s, 'deleted', SMALL);
    await cached(s, 'kept', SMALL);
    // Over populate_max: the write invalidates the old entry and stores nothing in its place.
    expect((await request(s.url('replaced'), { method: 'PUT', body: LARGE })).status).toBe(200);
    expect((await request(s.url('deleted'), { method: 'DELETE' })).status).toBe(204);
    await s.origin.stop();
    await sleep(1200);

    expect((await request(s.url('replaced'))).status).toBe(503);
    expect((await request(s.url('replaced'), { method: 'HEAD' })).status).toBe(503);
    expect((await request(s.url('deleted'))).status).toBe(503);
    // Writes still fail while the origin is down; one refused at connect left the entry as it was.
    expect((await request(s.url('kept'), { method: 'PUT', body: Buffer.from('new') })).status).toBe(503);
    expect((await request(s.url('kept'), { method: 'DELETE' })).status).toBe(503);
    const kept = await request(s.url('kept'));
    expect(kept.status).toBe(200);
    expect(kept.body.equals(SMALL)).toBe(true);
    expect(kept.headers['x-svc-cache']).toBe('stale');
  });
});
