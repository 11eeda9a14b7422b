/**
 * Write pacing and the write-idle timeout, both engines (src/program/http/README.md, "Write pacing
 * and the idle timeout"): a response whose client reads, however slowly, or pauses for less than
 * the write-idle timeout, is never cut — uWS's own fixed 10 s timeout cut such a client — and one
 * whose client takes nothing for the timeout is cut, logged with its reason, and seen by its
 * handler as an abort.
 */
import { createHash } from 'node:crypto';
import type * as Http from '../../../src/gateway/http';
import { type HttpServerHandle, type RequestHandler, loadHttpEngine } from '../../../src/gateway/http';
import { throttledGet } from '../../helpers/throttled-get';

const MiB = 1024 * 1024;
const tooLarge = (): { status: number; headers: []; body: string } => ({ status: 413, headers: [], body: '' });
/** Far more than loopback's socket buffers (a few MiB each way), so the server is left holding most of it. */
const BODY = Buffer.alloc(48 * MiB);
for (let i = 0; i < BODY.length; i += 4) BODY.writeUInt32BE(i, i);
const BODY_SHA = createHash('sha256').update(BODY).digest('hex');

jest.setTimeout(90_000);

describe.each(['uws', 'node'] as const)('%s engine', (engineName) => {
  const servers: HttpServerHandle[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  async function start(handler: RequestHandler, writeIdleMs?: number): Promise<{ url: string; cuts: object[] }> {
    const cuts: object[] = [];
    const engine = await loadHttpEngine(engineName, { warn: (obj) => cuts.push(obj) });
    const server = await engine.listen({ host: '127.0.0.1', port: 0, bodyLimit: MiB, tooLarge, name: 'test listener', ...(writeIdleMs === undefined ? {} : { writeIdleMs }) }, handler);
    servers.push(server);
    return { url: `http://127.0.0.1:${server.port}`, cuts };
  }

  /** `/fixed`: the body in one send(); `/chunked`: the body in 1 MiB writes with backpressure, no Content-Length. */
  const serve =
    (aborts: string[]): RequestHandler =>
    (req, res) => {
      res.onAborted(() => aborts.push(req.path));
      if (req.path === '/fixed') {
        res.send(200, [['content-type', 'application/octet-stream']], BODY);
        return;
      }
      res.writeHead(200, [['content-type', 'application/octet-stream']]);
      let at = 0;
      const pump = (): void => {
        while (at < BODY.length) {
          const chunk = BODY.subarray(at, at + MiB);
          at += chunk.length;
          if (!res.write(chunk)) return;
        }
        res.end();
      };
      res.onWritable(pump);
      pump();
    };

  test('a client that stops reading for 15 s (longer than uWS’s own 10 s timeout) and then reads on gets every byte', async () => {
    const aborts: string[] = [];
    const { url, cuts } = await start(serve(aborts));
    const [fixed, chunked] = await Promise.all([
      throttledGet(url, '/fixed', { holdAfter: 1, holdMs: 15_000 }),
      throttledGet(url, '/chunked', { holdAfter: 1, holdMs: 15_000 }),
    ]);
    expect([fixed.status, fixed.complete, fixed.sha256]).toEqual([200, true, BODY_SHA]);
    expect([chunked.status, chunked.chunkedEnd]).toEqual([200, true]);
    expect(chunked.received).toBeGreaterThan(BODY.length);
    expect(fixed.ms).toBeGreaterThan(15_000);
    expect(cuts).toEqual([]);
    expect(aborts).toEqual([]);
  });

  test('a client that reads slowly is never cut, even with a write-idle timeout shorter than the whole transfer', async () => {
    const aborts: string[] = [];
    const { url, cuts } = await start(serve(aborts), 6_000);
    // 48 MiB at 3 MiB/s: about 16 s, well over the write-idle timeout.
    const [fixed, chunked] = await Promise.all([throttledGet(url, '/fixed', { bytesPerSecond: 3 * MiB }), throttledGet(url, '/chunked', { bytesPerSecond: 3 * MiB })]);
    expect([fixed.status, fixed.complete, fixed.sha256]).toEqual([200, true, BODY_SHA]);
    expect([chunked.status, chunked.chunkedEnd]).toEqual([200, true]);
    expect(fixed.ms).toBeGreaterThan(12_000);
    expect(cuts).toEqual([]);
    expect(aborts).toEqual([]);
  });

  test('a client that takes nothing for the write-idle timeout is cut, the cut logged with its reason, and the handler sees an abort', async () => {
    const aborts: string[] = [];
    const { url, cuts } = await start(serve(aborts), 3_000);
    const started = Date.now();
    const [fixed, chunked] = await Promise.all([
      throttledGet(url, '/fixed', { holdAfter: 1, holdMs: 12_000 }),
      throttledGet(url, '/chunked', { holdAfter: 1, holdMs: 12_000 }),
    ]);
    // Cut (the connection closed short of the body) while the client was holding.
    expect(fixed.complete).toBe(false);
    expect(fixed.received).toBeLessThan(BODY.length);
    expect(chunked.chunkedEnd).toBe(false);
    expect(cuts).toHaveLength(2);
    for (const c of cuts) expect(c).toMatchObject({ reason: 'write_idle', listener: 'test listener', idleMs: expect.any(Number) });
    for (const c of cuts as Array<{ idleMs: number }>) expect(c.idleMs).toBeGreaterThanOrEqual(3_000);
    expect(aborts.sort()).toEqual(['/chunked', '/fixed']);
    // The cut came soon after the timeout (paced every 2 s), not when the client read again.
    expect(Date.now() - started).toBeLessThan(40_000);
  });
});

describe('uws engine with I/O threads (--sse-threads)', () => {
  // The threads start dist/program/http/io-thread.js: the engine is loaded from dist/ (built by pretest).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const dist = require('../../../dist/gateway/http') as typeof Http;

  test('a thread paces a slow client, and cuts a silent one, logged on the main thread, the handler seeing an abort', async () => {
    const cuts: object[] = [];
    const aborts: string[] = [];
    const engine = await dist.loadHttpEngine('uws', { warn: (obj) => cuts.push(obj) });
    // '/slow': the body in one send(); '/silent': a stream the handler has not ended (the main
    // thread follows a response until its end, so only then can an abort reach its handler).
    const server = await engine.listen({ host: '127.0.0.1', port: 0, bodyLimit: MiB, tooLarge, threads: 2, name: 'threaded listener', writeIdleMs: 5_000 }, (req, res) => {
      res.onAborted(() => aborts.push(req.path));
      if (req.path === '/slow') res.send(200, [['content-type', 'application/octet-stream']], BODY);
      else {
        res.writeHead(200, [['content-type', 'application/octet-stream']]);
        res.write(BODY.subarray(0, 16 * MiB));
      }
    });
    try {
      const url = `http://127.0.0.1:${server.port}`;
      const [slow, silent] = await Promise.all([throttledGet(url, '/slow', { bytesPerSecond: 4 * MiB }), throttledGet(url, '/silent', { holdAfter: 1, holdMs: 15_000 })]);
      expect([slow.status, slow.complete, slow.sha256]).toEqual([200, true, BODY_SHA]);
      expect(silent.complete).toBe(false);
      expect(cuts).toHaveLength(1);
      expect(cuts[0]).toMatchObject({ reason: 'write_idle', listener: 'threaded listener' });
      expect(aborts).toEqual(['/silent']);
    } finally {
      await server.close();
    }
  });
});
