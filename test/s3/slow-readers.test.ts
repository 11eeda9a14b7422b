/**
 * Many readers of 32 MiB objects through svc-cache at once, half of them reading slowly (2 MiB/s:
 * 16 s a body), on both engines: one object cold (its readers share the fill from the s3rver
 * origin), one warm (served from the cache's disk tier). Every body arrives whole and byte-identical: a
 * response being written to a client that keeps reading is paced by backpressure and never timed
 * out (src/program/http/README.md, "Write pacing and the idle timeout"); on uWS its fixed 10 s
 * timeout used to cut such bodies.
 */
import { createHash } from 'node:crypto';
import * as http from 'node:http';
import { startCache } from './helpers/cache-server';
import { type TestOrigin, startOrigin } from './helpers/origin';
import { throttledGet } from '../helpers/throttled-get';

const BUCKET = 'slow-readers';
const MiB = 1024 * 1024;
const SIZE = 32 * MiB;
/** Concurrent readers in all; half on each object, every other one at SLOW_RATE. */
const READERS = 64;
const SLOW_RATE = 2 * MiB;

jest.setTimeout(180_000);

let origin: TestOrigin;
beforeAll(async () => {
  origin = await startOrigin([BUCKET]);
});
afterAll(async () => {
  await origin?.stop();
});

/** An object of `size` bytes that says at every 16 bytes which object and offset it is. */
function objectBytes(tag: string, size: number): Buffer {
  const b = Buffer.alloc(size);
  for (let at = 0; at < size; at += 16) b.write(`${tag}${at.toString(16).padStart(12, '0')}`.slice(-16), at, 'latin1');
  return b;
}

/** PUT straight to s3rver, so svc-cache has never seen the object (a cold read). */
function putToOrigin(key: string, body: Buffer): Promise<number> {
  const u = new URL(origin.directUrl);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: `/${BUCKET}/${key}`, method: 'PUT', headers: { 'content-length': body.length, 'content-type': 'application/octet-stream' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe.each(['uws', 'node'] as const)('%s engine', (engine) => {
  test(`${READERS} concurrent readers of 32 MiB objects (one cold, one warm), half of them at 2 MiB/s, all get them whole`, async () => {
    const cold = objectBytes(`${engine}-cold-`, SIZE);
    const warm = objectBytes(`${engine}-warm-`, SIZE);
    expect(await putToOrigin(`${engine}/cold.bin`, cold)).toBe(200);
    expect(await putToOrigin(`${engine}/warm.bin`, warm)).toBe(200);
    const want = { cold: createHash('sha256').update(cold).digest('hex'), warm: createHash('sha256').update(warm).digest('hex') };
    const cache = await startCache(origin, { server: { engine }, buckets: { ttl_seconds: 3600 } });
    try {
      // The warm object is read once, so its readers below are served from the cache's disk.
      const first = await throttledGet(cache.url, `/${BUCKET}/${engine}/warm.bin`);
      expect([first.status, first.sha256]).toEqual([200, want.warm]);
      const readers = Array.from({ length: READERS }, (_, i) => ({ object: i % 4 < 2 ? ('cold' as const) : ('warm' as const), slow: i % 2 === 1 }));
      const results = await Promise.all(readers.map((r) => throttledGet(cache.url, `/${BUCKET}/${engine}/${r.object}.bin`, { bytesPerSecond: r.slow ? SLOW_RATE : 0 })));
      const bad = results
        .map((r, i) => ({ ...r, ...readers[i]!, i }))
        .filter((r) => r.status !== 200 || !r.complete || r.length !== SIZE || r.sha256 !== want[r.object])
        .map((r) => `#${r.i} ${r.object}${r.slow ? ' (slow)' : ''}: ${r.status} ${r.received}/${r.length}, head at ${r.headMs} ms, last bytes at ${r.lastMs} ms, closed at ${r.ms} ms`);
      expect(bad).toEqual([]);
      expect(cache.logs.filter((l) => l.includes('response cut'))).toEqual([]);
    } finally {
      await cache.stop();
    }
  });
});
