/**
 * The cold read path's timing, which the s3rver origin cannot show (it sends every body at
 * once): an origin held mid-body by the test proves that svc-cache answers with headers and
 * the first bytes before the origin has finished, and that a second reader joins the same
 * fetch. This origin is a plain HTTP server because s3rver cannot be paused; everything else
 * is tested against s3rver (sdk, clients, server tests).
 */
import * as http from 'node:http';
import { type AddressInfo } from 'node:net';
import { type TestCache, startCache } from './helpers/cache-server';
import { type TestOrigin } from './helpers/origin';

const SIZE = 2 * 1024 * 1024;
const FIRST = 64 * 1024;
const data = Buffer.alloc(SIZE);
for (let i = 0; i < SIZE; i += 4) data.writeUInt32BE(i, i);

let server: http.Server;
let gets = 0;
let release: () => void = () => undefined;
let released = false;
let cache: TestCache;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/slow/object.bin') {
      res.writeHead(404, { 'content-type': 'application/xml' }).end('<Error><Code>NoSuchKey</Code></Error>');
      return;
    }
    gets++;
    res.writeHead(200, { etag: '"0123456789abcdef0123456789abcdef"', 'last-modified': 'Mon, 02 Nov 2026 10:00:00 GMT', 'content-length': SIZE, 'content-type': 'application/x-test' });
    res.write(data.subarray(0, FIRST));
    release = () => {
      released = true;
      res.end(data.subarray(FIRST));
    };
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = { url: `http://127.0.0.1:${port}` } as TestOrigin;
  cache = await startCache(origin, { buckets: { ttl_seconds: 3600 } });
});

afterAll(async () => {
  await cache?.stop();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

interface Read {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Resolves with the first body bytes. */
  first: Promise<Buffer>;
  body: Promise<Buffer>;
}

function read(): Promise<Read> {
  return new Promise((resolve, reject) => {
    http
      .get(`${cache.url}/slow/object.bin`, { agent: false }, (res) => {
        const parts: Buffer[] = [];
        let gotFirst: (b: Buffer) => void = () => undefined;
        const first = new Promise<Buffer>((r) => (gotFirst = r));
        const body = new Promise<Buffer>((r, j) => {
          res.on('data', (b: Buffer) => {
            if (parts.length === 0) gotFirst(b);
            parts.push(b);
          });
          res.on('end', () => r(Buffer.concat(parts)));
          res.on('error', j);
        });
        resolve({ status: res.statusCode!, headers: res.headers, first, body });
      })
      .on('error', reject);
  });
}

describe('a cold GET', () => {
  it('answers with headers and the first bytes while the origin is still sending, and a concurrent reader shares the fetch', async () => {
    const a = await read();
    expect(a.status).toBe(200);
    expect(a.headers['x-svc-cache']).toBe('miss');
    expect(a.headers['content-length']).toBe(String(SIZE));
    expect(a.headers.etag).toBe('"0123456789abcdef0123456789abcdef"');
    const firstBytes = await a.first;
    expect(firstBytes.length).toBeGreaterThan(0);
    expect(firstBytes.equals(data.subarray(0, firstBytes.length))).toBe(true);
    // Still held at the origin: these bytes were streamed, not served from a finished fill.
    expect(released).toBe(false);

    const b = await read();
    expect(b.status).toBe(200);
    expect(released).toBe(false);
    release();
    const [bodyA, bodyB] = await Promise.all([a.body, b.body]);
    expect(bodyA.equals(data)).toBe(true);
    expect(bodyB.equals(data)).toBe(true);
    expect(gets).toBe(1);

    // The fill commits its disk file just after the last byte went out.
    for (let i = 0; i < 200 && cache.services.cache.filling('slow', 'object.bin'); i++) await new Promise((r) => setTimeout(r, 10));
    expect(cache.services.cache.filling('slow', 'object.bin')).toBe(false);
    const c = await read();
    expect(c.headers['x-svc-cache']).toBe('hit');
    expect((await c.body).equals(data)).toBe(true);
    expect(gets).toBe(1);
  });
});
