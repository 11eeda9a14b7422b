/**
 * One black-box suite run against both HTTP engines over real sockets: whatever the gateway
 * sees must not depend on which engine serves it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import {
  loadHttpEngine,
  type HttpResponse,
  type HttpServerHandle,
  type ListenOptions,
  type RequestHandler,
} from '../../../src/gateway/http';
import { rawRequest, rawRequestUntilClose } from '../../helpers/raw-http';

const MiB = 1024 * 1024;

const tooLarge: ListenOptions['tooLarge'] = (req) => ({
  status: 413,
  headers: [['content-type', 'application/json']],
  body: JSON.stringify({ error: { code: 'SVC_BODY_TOO_LARGE', message: `request body of ${req.method} ${req.path} too large` } }),
});

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** 'connected', or the error code of a refused connection. */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });
}

/** Chunk `index` of a recognisable byte pattern (its index in the first 4 bytes). */
function patternChunk(index: number, size: number): Buffer {
  const chunk = Buffer.alloc(size, index % 251);
  chunk.writeUInt32BE(index, 0);
  return chunk;
}

interface StreamStats {
  falses: number;
  writables: number;
  firstFalse: { promise: Promise<void>; resolve: () => void };
  sentHash: { promise: Promise<string>; resolve: (hash: string) => void };
}

/** Streams `total` bytes as fast as `write` allows, pausing on false until onWritable. */
function streamPattern(res: HttpResponse, total: number, chunkSize: number, stats: StreamStats, withLength: boolean): void {
  res.writeHead(200, withLength ? [['content-length', String(total)]] : []);
  const hash = createHash('sha256');
  let sent = 0;
  let index = 0;
  const pump = (): void => {
    while (sent < total) {
      const chunk = patternChunk(index++, Math.min(chunkSize, total - sent));
      hash.update(chunk);
      sent += chunk.length;
      if (!res.write(chunk)) {
        stats.falses++;
        stats.firstFalse.resolve();
        return;
      }
    }
    res.end();
    stats.sentHash.resolve(hash.digest('hex'));
  };
  res.onWritable(() => {
    stats.writables++;
    pump();
  });
  pump();
}

describe.each(['uws', 'node'] as const)('the %s HTTP engine', (engineName) => {
  const servers: HttpServerHandle[] = [];
  let agent: Agent;

  beforeEach(() => {
    agent = new Agent({ connections: 1, pipelining: 1 });
  });

  afterEach(async () => {
    // Client side first: a response a failed test left hanging then aborts and close() can finish.
    await agent.destroy();
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  async function start(handler: RequestHandler, bodyLimit = 8 * MiB): Promise<{ server: HttpServerHandle; origin: string }> {
    const warnings: string[] = [];
    const engine = await loadHttpEngine(engineName, { warn: (_obj, msg) => warnings.push(msg) });
    expect(engine.name).toBe(engineName);
    expect(warnings).toEqual([]);
    const server = await engine.listen({ host: '127.0.0.1', port: 0, bodyLimit, tooLarge }, handler);
    servers.push(server);
    return { server, origin: `http://127.0.0.1:${server.port}` };
  }

  const echoHead: RequestHandler = (req, res) => {
    const { method, path, query, headers, body } = req;
    res.send(200, [['content-type', 'application/json']], JSON.stringify({ method, path, query, headers, bodyLength: body.length }));
  };

  const echoBody: RequestHandler = (req, res) => res.send(200, [['content-type', 'application/octet-stream']], req.body);

  it('passes method, query and lower-cased headers, joining a repeated header with a comma', async () => {
    const { origin } = await start(echoHead);
    const res = await request(`${origin}/streams/orders?offset=42&live=long-poll`, {
      dispatcher: agent,
      headers: ['X-Repeat', 'one', 'X-Repeat', 'two', 'Authorization', 'Bearer t0k3n'],
    });
    const seen = (await res.body.json()) as { method: string; path: string; query: string; headers: Record<string, string>; bodyLength: number };
    expect(res.statusCode).toBe(200);
    expect(seen).toMatchObject({ method: 'GET', path: '/streams/orders', query: 'offset=42&live=long-poll', bodyLength: 0 });
    expect(seen.headers['x-repeat']).toBe('one, two');
    expect(seen.headers['authorization']).toBe('Bearer t0k3n');
    expect(Object.keys(seen.headers).every((name) => name === name.toLowerCase())).toBe(true);
  });

  it('reports sent once a status line is committed, and not after a send the engine refused', async () => {
    const seen: Array<[string, boolean]> = [];
    const { origin } = await start((req, res) => {
      seen.push(['before', res.sent]);
      if (req.path === '/bad') {
        try {
          res.send(200, [['x-bad', 'line\r\nbreak']]);
        } catch {
          seen.push(['refused', res.sent]);
        }
      }
      if (req.path === '/stream') {
        res.writeHead(200, [['content-type', 'text/plain']]);
        seen.push(['head', res.sent]);
        res.end('x');
        return;
      }
      res.send(200, [], 'ok');
      seen.push(['sent', res.sent]);
    });
    for (const path of ['/bad', '/stream']) await (await request(`${origin}${path}`, { dispatcher: agent })).body.text();
    expect(seen).toEqual([['before', false], ['refused', false], ['sent', true], ['before', false], ['head', true]]);
  });

  it('writes every response header on its own line, in order, from send and writeHead alike, with a non-ASCII value too', async () => {
    const headers: [string, string][] = [
      ['x-one', '1'],
      ['etag', '"abc"'],
      ['x-tab', 'a\tb'],
      ['x-empty', ''],
      ['x-last', 'z'],
    ];
    const { server } = await start((req, res) => {
      const list: [string, string][] = req.path === '/latin1' ? [...headers, ['x-latin1', 'caf\u00e9']] : headers;
      if (req.path === '/stream') {
        res.writeHead(200, list);
        res.end('ok');
      } else res.send(200, list, 'ok');
    });
    for (const path of ['/send', '/stream', '/latin1']) {
      const r = await rawRequest(server.port, `GET ${path} HTTP/1.1\r\nHost: a\r\n\r\n`);
      expect(r.status).toBe(200);
      const head = r.raw.subarray(0, r.raw.indexOf('\r\n\r\n')).toString('latin1');
      const lines = head.split('\r\n').filter((l) => l.toLowerCase().startsWith('x-') || l.toLowerCase().startsWith('etag'));
      const expected = ['x-one: 1', 'etag: "abc"', 'x-tab: a\tb', 'x-empty: ', 'x-last: z'];
      // (How the two engines encode the non-ASCII char differs; only the line structure is checked here.)
      const seen = lines.map((l) => l.replace(/^([^:]+):\s*/, (_m, n: string) => `${n.toLowerCase()}: `)).map((l) => (l.startsWith('x-latin1: caf') ? 'x-latin1: caf…' : l));
      expect(seen).toEqual(path === '/latin1' ? [...expected, 'x-latin1: caf…'] : expected);
    }
  });

  it('rejects listen on a port another server already holds', async () => {
    const { server } = await start(echoHead);
    const engine = await loadHttpEngine(engineName, { warn: () => {} });
    const second = engine.listen({ host: '127.0.0.1', port: server.port, bodyLimit: MiB, tooLarge }, echoHead);
    await expect(second).rejects.toThrow();
  });

  it('passes a percent-encoded path and query raw, without decoding them', async () => {
    const { origin } = await start(echoHead);
    const res = await request(`${origin}/streams/a%2Fb/caf%C3%A9%20%25?key=x%26y%3Dz`, { dispatcher: agent });
    const seen = (await res.body.json()) as { path: string; query: string };
    expect(seen.path).toBe('/streams/a%2Fb/caf%C3%A9%20%25');
    expect(seen.query).toBe('key=x%26y%3Dz');
  });

  it('gives the handler a small POST body and sends it back intact', async () => {
    const { origin } = await start(echoBody);
    const res = await request(`${origin}/append`, { dispatcher: agent, method: 'POST', body: '{"value":"hello"}' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-length']).toBe('17');
    expect(await res.body.text()).toBe('{"value":"hello"}');
  });

  it('gives the handler a 5 MB POST body and sends it back intact', async () => {
    const { origin } = await start(echoBody);
    const payload = randomBytes(5 * 1000 * 1000);
    const res = await request(`${origin}/append`, { dispatcher: agent, method: 'POST', body: payload });
    const echoed = Buffer.from(await res.body.arrayBuffer());
    expect(res.headers['content-length']).toBe(String(payload.length));
    expect(echoed.equals(payload)).toBe(true);
  });

  it('sends a large body to a slow reader intact, its own Content-Length replacing a wrong one, one after another', async () => {
    const big = randomBytes(12 * MiB);
    const { origin } = await start((req, res) => res.send(200, req.path === '/declared' ? [['content-length', '5']] : [], big));
    for (const path of ['/declared', '/plain', '/plain']) {
      const res = await request(`${origin}${path}`, { dispatcher: agent });
      expect(res.headers['content-length']).toBe(String(big.length));
      expect(res.headers['transfer-encoding']).toBeUndefined();
      const parts: Buffer[] = [];
      for await (const chunk of res.body) {
        parts.push(chunk as Buffer);
        if (parts.length % 16 === 0) await sleep(5); // the socket fills: the rest waits in the engine
      }
      expect(Buffer.concat(parts).equals(big)).toBe(true);
    }
  });

  it('gives the handler a chunked POST body of unknown length', async () => {
    const { origin } = await start(echoBody);
    const parts = [Buffer.from('first,'), Buffer.from('second,'), Buffer.from('third')];
    const res = await request(`${origin}/append`, { dispatcher: agent, method: 'POST', body: Readable.from(parts) });
    expect(await res.body.text()).toBe('first,second,third');
  });

  it('refuses a declared body over the limit with the tooLarge response and keeps serving', async () => {
    let handled = 0;
    const { origin } = await start((req, res) => {
      handled++;
      echoHead(req, res);
    }, 64 * 1024);
    const refused = await request(`${origin}/append`, { dispatcher: agent, method: 'POST', body: Buffer.alloc(MiB) });
    expect(refused.statusCode).toBe(413);
    expect(refused.headers['content-type']).toBe('application/json');
    expect(await refused.body.json()).toEqual({ error: { code: 'SVC_BODY_TOO_LARGE', message: 'request body of POST /append too large' } });
    const after = await request(`${origin}/still-there`, { dispatcher: agent });
    expect(after.statusCode).toBe(200);
    await after.body.dump();
    expect(handled).toBe(1);
  });

  it('refuses a chunked body as soon as it passes the limit and keeps serving', async () => {
    let handled = 0;
    const { origin } = await start((req, res) => {
      handled++;
      echoHead(req, res);
    }, 64 * 1024);
    const chunks = Array.from({ length: 64 }, () => Buffer.alloc(16 * 1024, 1)); // 1 MiB in all
    const refused = await request(`${origin}/append`, { dispatcher: agent, method: 'POST', body: Readable.from(chunks) });
    expect(refused.statusCode).toBe(413);
    expect(await refused.body.json()).toMatchObject({ error: { code: 'SVC_BODY_TOO_LARGE' } });
    const after = await request(`${origin}/still-there`, { dispatcher: agent });
    expect(after.statusCode).toBe(200);
    await after.body.dump();
    expect(handled).toBe(1);
  });

  if (engineName === 'node') {
    it('reads and drops the rest of a refused body and serves the next request on the connection', async () => {
      const { server } = await start(echoHead, 64 * 1024);
      const chunk = `${(4096).toString(16)}\r\n${'z'.repeat(4096)}\r\n`;
      const socket = connect(server.port, '127.0.0.1');
      const text = await new Promise<string>((resolve) => {
        let got = '';
        const timer = setTimeout(() => resolve(got), 3000);
        socket.on('data', (d: Buffer) => {
          got += d.toString();
          if (got.includes('"path":"/next"')) {
            clearTimeout(timer);
            resolve(got);
          }
        });
        socket.once('close', () => resolve(got));
        socket.write(`POST /append HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${chunk.repeat(20)}0\r\n\r\nGET /next HTTP/1.1\r\nHost: x\r\n\r\n`);
      });
      socket.destroy();
      expect(text).toMatch(/^HTTP\/1\.1 413 /);
      expect(text).not.toMatch(/connection: close/i);
      expect(text).toMatch(/HTTP\/1\.1 200 OK[\s\S]*"path":"\/next"/);
    });

    it('closes the connection of a refused body once more than 1 MiB of it was dropped', async () => {
      const { server } = await start(echoHead, 64 * 1024);
      const socket = connect(server.port, '127.0.0.1');
      const closed = new Promise<string>((resolve) => {
        let text = '';
        socket.on('data', (d: Buffer) => (text += d.toString()));
        socket.on('error', () => undefined); // the writes below may meet the close
        socket.once('close', () => resolve(text));
      });
      socket.write('POST /append HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
      const piece = `${(64 * 1024).toString(16)}\r\n${'z'.repeat(64 * 1024)}\r\n`;
      let sent = 0;
      while (!socket.destroyed && sent < 32 * MiB) {
        if (!socket.write(piece)) await new Promise((r) => socket.once('drain', r).once('close', r));
        sent += 64 * 1024;
      }
      if (!socket.destroyed) socket.end();
      expect(await closed).toMatch(/^HTTP\/1\.1 413 /);
      // 1 MiB dropped, plus what the kernel's buffers held when the server closed.
      expect(sent).toBeLessThan(32 * MiB);
    });
  }

  it('lets the handler complete the response after it has returned', async () => {
    const { origin } = await start((_req, res) => {
      setTimeout(() => res.send(202, [['x-waited', 'yes']], 'later'), 50);
    });
    const res = await request(`${origin}/poll`, { dispatcher: agent });
    expect(res.statusCode).toBe(202);
    expect(res.headers['x-waited']).toBe('yes');
    expect(await res.body.text()).toBe('later');
  });

  it('answers HEAD with the caller-supplied Content-Length and no body bytes', async () => {
    const { origin } = await start((req, res) => {
      if (req.path === '/with-body') res.send(200, [['content-type', 'text/plain']], 'twelve bytes');
      else if (req.path === '/streamed') {
        res.writeHead(200, [['content-length', '5']]);
        res.write('abc');
        res.end('de');
      }
      else if (req.method === 'HEAD') res.send(200, [['content-type', 'text/plain'], ['content-length', '1234']]);
      else res.send(200, [['content-type', 'text/plain']], 'after head');
    });
    // One connection: any stray body byte after a HEAD response would corrupt the next response.
    const head = await request(`${origin}/object`, { dispatcher: agent, method: 'HEAD' });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-length']).toBe('1234');
    expect(await head.body.text()).toBe('');
    const headOfBody = await request(`${origin}/with-body`, { dispatcher: agent, method: 'HEAD' });
    expect(headOfBody.headers['content-length']).toBe('12');
    expect(await headOfBody.body.text()).toBe('');
    const streamed = await request(`${origin}/streamed`, { dispatcher: agent, method: 'HEAD' });
    expect(streamed.headers['content-length']).toBe('5');
    expect(await streamed.body.text()).toBe('');
    const get = await request(`${origin}/object`, { dispatcher: agent });
    expect(await get.body.text()).toBe('after head');
  });

  it('delivers the chunks of a streamed response completely and in order', async () => {
    const parts = Array.from({ length: 20 }, (_, i) => `event ${i}\n`);
    const { origin } = await start((_req, res) => {
      res.writeHead(200, [['content-type', 'text/event-stream']]);
      void (async () => {
        for (const part of parts) {
          res.write(part);
          await sleep(5);
        }
        res.end('end\n');
      })();
    });
    const res = await request(`${origin}/live`, { dispatcher: agent });
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(await res.body.text()).toBe(parts.join('') + 'end\n');
  });

  it('streams a body of declared Content-Length without chunked encoding', async () => {
    const { origin } = await start((_req, res) => {
      res.writeHead(200, [['content-length', '11']]);
      res.write('hello ');
      setTimeout(() => res.end('world'), 10);
    });
    const res = await request(`${origin}/object`, { dispatcher: agent });
    expect(res.headers['content-length']).toBe('11');
    expect(res.headers['transfer-encoding']).toBeUndefined();
    expect(await res.body.text()).toBe('hello world');
  });

  it.each([
    ['chunked', false, 64 * MiB],
    ['Content-Length', true, 32 * MiB],
  ])(
    'applies backpressure to a slow reader of a %s stream and delivers every byte intact',
    async (_kind, withLength, total) => {
      const stats: StreamStats = { falses: 0, writables: 0, firstFalse: deferred(), sentHash: deferred<string>() };
      const { origin } = await start((_req, res) => streamPattern(res, total, 64 * 1024, stats, withLength));
      const res = await request(`${origin}/bulk`, { dispatcher: agent });
      // Read nothing until the server has been told to wait.
      await stats.firstFalse.promise;
      const hash = createHash('sha256');
      let received = 0;
      let reads = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        hash.update(chunk);
        received += chunk.length;
        if (++reads % 200 === 0) await sleep(10); // stay a slow reader
      }
      expect(received).toBe(total);
      expect(hash.digest('hex')).toBe(await stats.sentHash.promise);
      expect(stats.falses).toBeGreaterThan(0);
      expect(stats.writables).toBeGreaterThan(0);
    },
    30_000,
  );

  it('delivers bytes buffered under backpressure even when the stream then goes quiet', async () => {
    const total = 8 * MiB;
    const finish = deferred();
    let firstWrite: boolean | undefined;
    const { origin } = await start((_req, res) => {
      res.writeHead(200, []);
      res.onWritable(() => {}); // a live stream with nothing more to say yet
      firstWrite = res.write(Buffer.alloc(total, 7));
      void finish.promise.then(() => res.end());
    });
    const res = await request(`${origin}/live`, { dispatcher: agent });
    await sleep(100); // let the server hit backpressure before reading
    let received = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      received += chunk.length;
      if (received === total) finish.resolve(); // the server ends only once every byte arrived
    }
    expect(firstWrite).toBe(false);
    expect(received).toBe(total);
  }, 15_000);

  it('destroy() closes a stalled stream at once, without onAborted, and lets close() finish', async () => {
    const destroyed = deferred<{ aborted: boolean; writeResult: boolean }>();
    let abortedCalls = 0;
    const { server, origin } = await start((_req, res) => {
      res.onAborted(() => abortedCalls++);
      res.writeHead(200, []);
      res.onWritable(() => {});
      res.write(Buffer.alloc(8 * MiB, 1)); // far more than a client that does not read will take
      setTimeout(() => {
        res.destroy();
        destroyed.resolve({ aborted: res.aborted, writeResult: res.write('after') });
      }, 100);
    });
    // A client that sends its request and never reads.
    const socket = connect(Number(new URL(origin).port), '127.0.0.1');
    socket.pause();
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    socket.write('GET /stalled HTTP/1.1\r\nHost: test\r\n\r\n');
    expect(await destroyed.promise).toEqual({ aborted: false, writeResult: false });
    socket.resume(); // the close is seen once buffered bytes are consumed
    await closed;
    await server.close();
    expect(abortedCalls).toBe(0);
  });

  it('reports a client abort through onAborted and ignores later writes without throwing', async () => {
    const afterAbort = deferred<{ aborted: boolean; writeResult: boolean; threw: unknown }>();
    const { origin } = await start((_req, res) => {
      res.onAborted(() => {
        let threw: unknown;
        let writeResult = true;
        try {
          writeResult = res.write('too late');
          res.end('bye');
          res.send(500, []);
        } catch (err) {
          threw = err;
        }
        afterAbort.resolve({ aborted: res.aborted, writeResult, threw });
      });
      res.writeHead(200, [['content-type', 'text/plain']]);
      res.write('first chunk');
    });
    const res = await request(`${origin}/live`, { dispatcher: agent });
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      expect(chunk.toString()).toBe('first chunk');
      break; // leaving the loop destroys the body and with it the connection
    }
    expect(await afterAbort.promise).toEqual({ aborted: true, writeResult: false, threw: undefined });
  });

  it('refuses new connections after stopAccepting while an in-flight request still completes', async () => {
    const arrived = deferred();
    const release = deferred();
    const { server, origin } = await start((_req, res) => {
      arrived.resolve();
      void release.promise.then(() => res.send(200, [], 'finished'));
    });
    const inFlight = request(`${origin}/poll`, { dispatcher: agent });
    await arrived.promise;
    server.stopAccepting();
    expect(await tryConnect(server.port)).toBe('ECONNREFUSED');
    release.resolve();
    const res = await inFlight;
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toBe('finished');
  });

  it('resolves close() once in-flight responses have ended, closing idle keep-alive connections', async () => {
    const arrived = deferred();
    const release = deferred();
    const { server, origin } = await start((req, res) => {
      if (req.path === '/quick') return res.send(200, [], 'quick');
      arrived.resolve();
      void release.promise.then(() => res.send(200, [], 'slow'));
    });
    const idleAgent = new Agent(); // keeps its connection open after /quick
    try {
      await (await request(`${origin}/quick`, { dispatcher: idleAgent })).body.dump();
      const slow = request(`${origin}/slow`, { dispatcher: agent });
      await arrived.promise;
      let closed = false;
      const closing = server.close().then(() => (closed = true));
      await sleep(50);
      expect(closed).toBe(false);
      release.resolve();
      expect(await (await slow).body.text()).toBe('slow');
      await closing;
      expect(await tryConnect(server.port)).toBe('ECONNREFUSED');
    } finally {
      await idleAgent.destroy();
    }
  });

  it('never runs a malformed head: 400 on node; on uws no byte of answer and the connection idles out (README, "Request heads")', async () => {
    let ran = 0;
    const { server } = await start((_req, res) => {
      ran++;
      res.send(200, [], 'ok');
    });
    const heads = [
      'PUT /bare-lf HTTP/1.1\r\nHost: a\nX: y\r\n\r\n',
      'PUT /bare-cr HTTP/1.1\r\nHost: a\rX: y\r\n\r\n',
      'PUT /nul HTTP/1.1\r\nHost: a\r\nX: y\x00z\r\n\r\n',
      'PUT /obs-fold HTTP/1.1\r\nHost: a\r\nX: y\r\n z\r\n\r\n',
      'PUT /space-in-name HTTP/1.1\r\nHost: a\r\nX Y: z\r\n\r\n',
      'PUT /no-colon HTTP/1.1\r\nHost: a\r\nXYZ\r\n\r\n',
    ];
    // uWS v20.30 closes an idle connection 10 s after its last byte, on a 4 s timer tick.
    const results = await Promise.all(heads.map((h) => rawRequestUntilClose(server.port, h, engineName === 'uws' ? 20_000 : 5000)));
    for (const r of results) {
      if (engineName === 'node') expect(r.status).toBe(400);
      else expect(r.raw.length).toBe(0);
      expect(r.closed).toBe(true);
    }
    // A head over 16 KiB: 431 on both (the uws adapter holds uWS to node's limit).
    const big = await rawRequestUntilClose(server.port, `PUT /big HTTP/1.1\r\nHost: a\r\nX: ${'a'.repeat(20_000)}\r\n\r\n`, 5000);
    expect(big.status).toBe(431);
    expect(ran).toBe(0);
    expect((await rawRequest(server.port, 'GET /ok HTTP/1.1\r\nHost: a\r\n\r\n')).status).toBe(200);
    expect(ran).toBe(1);
  }, 40_000);

});

describe('loadHttpEngine', () => {
  it('falls back to node:http with one warning when uWS cannot be loaded', async () => {
    const warnings: Array<{ obj: object; msg: string }> = [];
    let engine: { name: string } | undefined;
    await jest.isolateModulesAsync(async () => {
      jest.doMock('../../../src/program/http/uws-engine', () => ({
        createUwsEngine: () => {
          throw new Error('No such module: uws_linux_x64_127.node');
        },
      }));
      const { loadHttpEngine: load } = await import('../../../src/gateway/http');
      engine = await load('uws', { warn: (obj, msg) => warnings.push({ obj, msg }) });
    });
    expect(engine?.name).toBe('node');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.msg).toMatch(/node:http/);
  });
});
