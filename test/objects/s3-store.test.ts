/**
 * The s3:// object store against a real S3 server: s3rver (npm) behind a shim that checks every
 * request's SigV4 signature with the AWS SDK's own signer (test/s3/fixtures/origin-server.js),
 * so a request signed wrongly fails loudly. The same contract suite as file:, then what only a
 * network store shows: S3 error codes, retries, unreachable and garbage endpoints, and the store
 * talking to svc-cache in front of s3rver.
 */
import * as http from 'node:http';
import * as net from 'node:net';
import { type ObjectStore, ObjectStoreError, type ObjectStoreStats, newObjectStoreStats, openObjectStore } from '../../src/objects';
import { startCache, type TestCache } from '../s3/helpers/cache-server';
import { ORIGIN_ACCESS_KEY, ORIGIN_SECRET_KEY, type TestOrigin, startOrigin } from '../s3/helpers/origin';
import { objectStoreContract } from './contract';

const BUCKET = 'svc-objects';
const ENV = { AWS_ACCESS_KEY_ID: ORIGIN_ACCESS_KEY, AWS_SECRET_ACCESS_KEY: ORIGIN_SECRET_KEY };

let origin: TestOrigin;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  origin = await startOrigin([BUCKET]);
});
afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await origin?.stop();
});

let prefixes = 0;
const url = (endpoint: string, prefix: string, bucket = BUCKET) => `s3://${bucket}/${prefix}?endpoint=${endpoint}&region=us-east-1`;

/** Fails on unexpected requests: every request the shim saw carried a valid signature. */
async function expectAllSigned(): Promise<void> {
  const s = await origin.stats();
  expect(s.log).toEqual([]);
  expect(s.rejected).toBe(0);
}

async function rejection(p: Promise<unknown>): Promise<ObjectStoreError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(ObjectStoreError);
  return err as ObjectStoreError;
}

describe('s3:// object store (s3rver)', () => {
  describe('contract', () => {
    let prefix = '';
    objectStoreContract({
      pages: true,
      dirWalkOrder: true,
      open: async (o) => {
        if (o.pageSize === undefined || prefix === '') prefix = `run/${++prefixes}`;
        return openObjectStore(url(origin.url, prefix), { stats: o.stats, env: ENV, s3: o.pageSize === undefined ? {} : { listPageSize: o.pageSize } });
      },
    });
    afterAll(expectAllSigned);
  });

  it('keeps objects under its prefix in the bucket, and describes itself without credentials', async () => {
    const store = openObjectStore(url(origin.url, 'nested/prefix'), { env: ENV });
    await store.put('g/1/1/0/000000000001', Buffer.from('bytes'));
    const direct = await fetch(`${origin.directUrl}/${BUCKET}/nested/prefix/g/1/1/0/000000000001`);
    expect(await direct.text()).toBe('bytes');
    expect(store.describe).toBe(`s3://${BUCKET}/nested/prefix?endpoint=${origin.url}&region=us-east-1&style=path`);
    expect(store.describe).not.toContain(ORIGIN_SECRET_KEY);
    await store.close();
    await expectAllSigned();
  });

  it("carries S3's error code: a missing bucket is NoSuchBucket, not a missing object", async () => {
    const stats = newObjectStoreStats();
    const store = openObjectStore(url(origin.url, 'p', 'no-such-bucket'), { env: ENV, stats });
    const put = await rejection(store.put('k', Buffer.from('x')));
    expect(put.code).toBe('NoSuchBucket');
    expect(put.status).toBe(404);
    expect(put.message).toMatch(/NoSuchBucket/);
    const get = await rejection(store.get('k'));
    expect(get.code).toBe('NoSuchBucket');
    expect(get.name).toBe('ObjectStoreError');
    expect(stats.put).toMatchObject({ ok: 0, errors: 1, retries: 0 });
    await store.close();
  });

  it('refuses to open without credentials, naming the variables', () => {
    expect(() => openObjectStore(url(origin.url, 'p'), { env: {} })).toThrow(/AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/);
  });

  it('gives an unreachable endpoint a clear error after its retries, with no unhandled rejection', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(port));
      });
    });
    const stats = newObjectStoreStats();
    const store = openObjectStore(url(`http://127.0.0.1:${closed}`, 'p'), { env: ENV, stats, s3: { retries: 2, backoffMs: 10 } });
    const started = Date.now();
    for (const call of [() => store.put('k', Buffer.from('x')), () => store.get('k'), () => store.delete('k'), () => collect(store.list(''))]) {
      const err = await rejection(call());
      expect(err.code).toBe('Unreachable');
      expect(err.message).toContain(`http://127.0.0.1:${closed} gave no answer (3 attempts)`);
      expect(err.message).toMatch(/ECONNREFUSED/);
    }
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(stats.put).toMatchObject({ errors: 1, retries: 2 });
    await store.close();
    await new Promise((r) => setTimeout(r, 50));
    expect(unhandled).toEqual([]);
  });

  it('gives an endpoint that does not speak HTTP a clear error, and one that does not speak S3 its status', async () => {
    // resume(): read the request, so the client's FIN arrives and the socket closes.
    const garbage = net.createServer((sock) => sock.resume().end('garbage, not HTTP at all\r\n\r\n'));
    const notS3 = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>a web page</html>'));
    await Promise.all([garbage, notS3].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()))));
    try {
      const g = openObjectStore(url(`http://127.0.0.1:${(garbage.address() as net.AddressInfo).port}`, 'p'), { env: ENV, s3: { retries: 1, backoffMs: 5 } });
      const err = await rejection(g.get('k'));
      expect(err.code).toBe('InvalidResponse');
      expect(err.message).toMatch(/is not HTTP/);
      await g.close();
      const w = openObjectStore(url(`http://127.0.0.1:${(notS3.address() as net.AddressInfo).port}`, 'p'), { env: ENV, s3: { retries: 0 } });
      const listErr = await rejection(collect(w.list('')));
      expect(listErr.code).toBe('InvalidResponse');
      expect(listErr.message).toMatch(/not a ListObjectsV2 result/);
      await w.close();
    } finally {
      await Promise.all([garbage, notS3].map((s) => new Promise((r) => s.close(r))));
    }
    expect(unhandled).toEqual([]);
  });

  it('gives up on a store that accepts and never answers after each attempt\'s deadline', async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((sock) => {
      sockets.add(sock.resume());
      sock.on('close', () => sockets.delete(sock));
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const stats = newObjectStoreStats();
    const store = openObjectStore(url(`http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`, 'p'), { env: ENV, stats, s3: { timeoutMs: 200, retries: 1, backoffMs: 5 } });
    const started = Date.now();
    const err = await rejection(store.put('k', Buffer.from('x')));
    expect(err.code).toBe('Unreachable');
    expect(err.message).toMatch(/gave no answer \(2 attempts\): no answer within 200 ms/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(stats.put).toMatchObject({ errors: 1, retries: 1 });
    await store.close();
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent.close(r));
  });

  it('retries a 503 SlowDown and a dropped connection, then succeeds against the real store', async () => {
    // A proxy that fails the first requests of each kind, then forwards to the shim.
    let slowDowns = 0;
    let drops = 0;
    const target = new URL(origin.url);
    const proxy = http.createServer((req, res) => {
      if (req.method === 'PUT' && slowDowns < 2) {
        slowDowns++;
        req.resume();
        res.writeHead(503, { 'content-type': 'application/xml' }).end('<?xml version="1.0"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>');
        return;
      }
      if (req.method === 'GET' && drops < 1) {
        drops++;
        req.socket.destroy();
        return;
      }
      const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (ures) => {
        res.writeHead(ures.statusCode ?? 502, ures.headers);
        ures.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    const port = (proxy.address() as net.AddressInfo).port;
    // The Host header names the proxy: the shim verifies the signature with it as signed.
    const stats = newObjectStoreStats();
    const store = openObjectStore(url(`http://127.0.0.1:${port}`, `retry/${++prefixes}`), { env: ENV, stats, s3: { backoffMs: 5 } });
    try {
      await store.put('k', Buffer.from('after two SlowDowns'));
      expect((await store.get('k')).toString()).toBe('after two SlowDowns');
      expect(stats.put).toMatchObject({ ok: 1, errors: 0, retries: 2 });
      expect(stats.get).toMatchObject({ ok: 1, errors: 0, retries: 1 });
    } finally {
      await store.close();
      await new Promise((r) => proxy.close(r));
    }
    await expectAllSigned();
  });

  describe('through svc-cache in front of s3rver', () => {
    let cache: TestCache;
    const AK = 'objects-client';
    const SK = 'objects-client-secret';
    let prefix = '';
    beforeAll(async () => {
      cache = await startCache(origin, { auth: { mode: 'static', access_key_id: AK, secret_access_key: SK } });
    });
    afterAll(async () => {
      await cache?.stop();
    });
    objectStoreContract({
      pages: true,
      dirWalkOrder: true,
      open: async (o) => {
        if (o.pageSize === undefined || prefix === '') prefix = `cached/${++prefixes}`;
        return openObjectStore(url(cache.url, prefix), { stats: o.stats, env: { AWS_ACCESS_KEY_ID: AK, AWS_SECRET_ACCESS_KEY: SK }, s3: o.pageSize === undefined ? {} : { listPageSize: o.pageSize } });
      },
    });
  });
});

async function collect(it: AsyncIterable<{ key: string; size: number }>): Promise<Array<{ key: string; size: number }>> {
  const out: Array<{ key: string; size: number }> = [];
  for await (const x of it) out.push(x);
  return out;
}

export type { ObjectStore, ObjectStoreStats };
