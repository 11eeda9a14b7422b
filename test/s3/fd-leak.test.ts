/**
 * No file handle is left to the garbage collector. svc-cache runs as its own process (the built
 * bin/svc-cache: run `npm run build` first) with --expose-gc and a full collection every 500 ms
 * (perf/s3/gc-tick.js), under a load of slow and aborted reads of disk-tier objects, misses,
 * conditionals, ranges, evictions racing reads and overwrites racing fills. Node reports a
 * FileHandle dropped without close() as "Closing file descriptor N on garbage collection" on
 * stderr; there must be none, and the open descriptors (/proc/PID/fd) must come back to the
 * count before the load once the connections are gone.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { request } from './helpers/http';
import { ORIGIN_ACCESS_KEY, ORIGIN_SECRET_KEY, type TestOrigin, startOrigin, tempDir } from './helpers/origin';

jest.setTimeout(55_000);

const ROOT = path.resolve(__dirname, '..', '..');
const BIG = 2 * 1024 * 1024; // disk tier only, streamed from a file handle
const SMALL = 100 * 1024; // disk tier, read whole and promoted

let origin: TestOrigin;
let proc: ChildProcess;
let stderr = '';
let base = '';

beforeAll(async () => {
  origin = await startOrigin(['b']);
  proc = spawn(process.execPath, ['--expose-gc', '-r', path.join(ROOT, 'perf', 's3', 'gc-tick.js'), path.join(ROOT, 'bin', 'svc-cache')], {
    env: {
      ...process.env,
      SOAK_GC_MS: '500',
      SVC_CACHE_SERVER_LISTEN: '127.0.0.1:0',
      SVC_CACHE_SERVER_ENGINE: process.env.SVC_CACHE_SERVER_ENGINE === 'node' ? 'node' : 'uws',
      SVC_CACHE_METRICS_LISTEN: '',
      SVC_CACHE_ORIGIN_ENDPOINT: origin.url,
      SVC_CACHE_ORIGIN_ACCESS_KEY_ID: ORIGIN_ACCESS_KEY,
      SVC_CACHE_ORIGIN_SECRET_ACCESS_KEY: ORIGIN_SECRET_KEY,
      SVC_CACHE_CACHE_DIR: tempDir('svc-cache-fd-'),
      SVC_CACHE_CACHE_MEMORY_OBJECT_MAX: String(32 * 1024),
      // Four big objects do not fit: every fill evicts an object someone may be reading.
      SVC_CACHE_CACHE_DISK_BYTES: String(6 * 1024 * 1024),
      SVC_CACHE_BUCKETS_TTL_SECONDS: '1',
      SVC_CACHE_LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  base = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`svc-cache did not start:\n${out}\n${stderr}`)), 20_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /"listen":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    proc.once('exit', (code) => reject(new Error(`svc-cache exited with ${code}:\n${out}\n${stderr}`)));
  });
});

afterAll(async () => {
  if (proc !== undefined && proc.exitCode === null) {
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await exited;
  }
  await origin?.stop();
});

function fdCount(): number {
  return fs.readdirSync(`/proc/${proc.pid}/fd`).length;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A GET read in the given manner: `slow` stops reading for a while after the first chunk (the
 * response is written under backpressure to its last byte), `abort` drops the connection after it.
 */
function read(key: string, how: 'slow' | 'abort', headers: Record<string, string> = {}): Promise<void> {
  return new Promise((resolve) => {
    const req = http.get(`${base}/b/${key}`, { agent: false, headers }, (res) => {
      let first = true;
      res.on('data', () => {
        if (!first) return;
        first = false;
        if (how === 'abort') {
          req.destroy();
          resolve();
        } else {
          res.pause();
          setTimeout(() => res.resume(), 300);
        }
      });
      res.on('end', () => resolve());
      res.on('error', () => resolve());
    });
    req.on('error', () => resolve());
    req.setTimeout(15_000, () => {
      hung.push(`${how} ${key}`);
      req.destroy();
    });
  });
}

/** Requests that got no complete answer within 15 s (a response left hanging is a failure too). */
const hung: string[] = [];
function bounded(what: string, p: Promise<unknown>): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p.catch(() => undefined), new Promise((r) => (timer = setTimeout(() => r(hung.push(what)), 15_000)))]).finally(() => clearTimeout(timer));
}

describe('svc-cache file handles', () => {
  it('closes every file handle it opens: no collector warning, descriptors back to where they were', async () => {
    const big = (i: number) => Buffer.alloc(BIG, i + 1);
    for (let i = 0; i < 4; i++) expect((await request(`${base}/b/big${i}`, { method: 'PUT', body: big(i) })).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await request(`${base}/b/over${i}`, { method: 'PUT', body: big(i) })).status).toBe(200);
    for (let i = 0; i < 8; i++) expect((await request(`${base}/b/small${i}`, { method: 'PUT', body: Buffer.alloc(SMALL, i) })).status).toBe(200);
    await sleep(6000); // the origin's keep-alive connections from the writes close (s3rver: 5 s)
    const baseline = fdCount();

    const until = Date.now() + 8000;
    let rounds = 0;
    const worker = async (w: number): Promise<void> => {
      for (let n = 0; Date.now() < until; n++) {
        const i = (w + n) % 4;
        const head = await request(`${base}/b/big${i}`, { method: 'HEAD' }).catch(() => undefined);
        const etag = head?.headers.etag ?? '"x"';
        await Promise.all([
          read(`big${i}`, 'slow'),
          read(`big${(i + 1) % 4}`, 'abort'),
          read(`big${(i + 2) % 4}`, 'abort', { range: 'bytes=100000-1999999' }),
          read(`small${(w + n) % 8}`, 'abort'),
          bounded('if-none-match', request(`${base}/b/big${i}`, { headers: { 'if-none-match': etag } })),
          bounded('if-match', request(`${base}/b/big${i}`, { headers: { 'if-match': '"nope"' } })),
          bounded('416', request(`${base}/b/big${i}`, { headers: { range: `bytes=${BIG}-` } })),
          bounded('missing', request(`${base}/b/missing-${w}-${n}`)),
          // Writes populating the disk tier (a file written and committed) while reads evict.
          // Not of keys read meanwhile: this origin (s3rver) rewrites an object's file in place,
          // so a read racing the write can get a short body it only ends by closing later.
          n % 2 === 0 ? bounded('put', request(`${base}/b/over${w % 2}`, { method: 'PUT', body: big(n) })) : Promise.resolve(),
        ]);
        rounds++;
      }
    };
    await Promise.all([0, 1, 2, 3].map(worker));
    expect(hung).toEqual([]);
    expect(rounds).toBeGreaterThan(4);

    // Every connection is closed now; origin connections close within s3rver's 5 s.
    let after = fdCount();
    for (let i = 0; i < 30 && after > baseline; i++) {
      await sleep(500);
      after = fdCount();
    }
    await sleep(1500); // three more full collections
    expect(stderr).not.toMatch(/on garbage collection/);
    expect(after).toBeLessThanOrEqual(baseline);
  });
});
