/**
 * The unary gRPC call over node:http2 (grpc-unary.ts) against an HTTP/2 server in this process
 * that answers the way a gRPC server may: a message and an OK status, an error status in the
 * trailers or in a Trailers-Only answer, an HTTP error, a malformed body, silence, a dropped
 * connection. Each call must settle, and the channel must work for the next call afterwards.
 */
import * as http2 from 'node:http2';
import { type AddressInfo } from 'node:net';
import { GrpcStatusError, GrpcUnaryChannel } from '../../src/actors/meta/etcd/grpc-unary';

type Behaviour = (stream: http2.ServerHttp2Stream, request: Buffer, headers: http2.IncomingHttpHeaders) => void;

const frame = (m: Buffer): Buffer => Buffer.concat([Buffer.from([0]), Buffer.from([m.length >>> 24, (m.length >>> 16) & 255, (m.length >>> 8) & 255, m.length & 255]), m]);
const ok: Behaviour = (s, req) => {
  s.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  s.on('wantTrailers', () => s.sendTrailers({ 'grpc-status': '0' }));
  s.end(frame(Buffer.concat([Buffer.from('echo:'), req.subarray(5)])));
};

let server: http2.Http2Server;
let endpoint: string;
let behaviour: Behaviour = ok;
const seen: http2.IncomingHttpHeaders[] = [];
const sessions = new Set<http2.ServerHttp2Session>();

async function listen(port = 0): Promise<void> {
  server = http2.createServer();
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  server.on('stream', (stream, headers) => {
    seen.push(headers);
    const chunks: Buffer[] = [];
    stream.on('data', (d: Buffer) => chunks.push(d));
    stream.on('end', () => behaviour(stream, Buffer.concat(chunks), headers));
    stream.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  endpoint = `127.0.0.1:${(server.address() as AddressInfo).port}`;
}
async function shut(): Promise<void> {
  for (const s of sessions) s.destroy();
  await new Promise<void>((r) => server.close(() => r()));
}

/** A channel to the test server for one test, closed after it. */
async function withChannel(f: (ch: GrpcUnaryChannel) => Promise<void>): Promise<void> {
  const ch = new GrpcUnaryChannel(endpoint);
  try {
    await f(ch);
  } finally {
    ch.close();
  }
}

beforeAll(() => listen());
afterAll(() => shut());
beforeEach(() => {
  behaviour = ok;
  seen.length = 0;
});

it('sends one framed message with the gRPC headers and returns the answer message', () =>
  withChannel(async (ch) => {
    const answer = await ch.call('/etcdserverpb.KV/Txn', Buffer.from('hello'), 1000);
    expect(answer.toString()).toBe('echo:hello');
    expect(seen[0]).toMatchObject({ ':method': 'POST', ':path': '/etcdserverpb.KV/Txn', 'content-type': 'application/grpc', te: 'trailers', 'grpc-timeout': '1000m' });
    // Calls side by side share the one session.
    const many = await Promise.all(Array.from({ length: 20 }, (_, i) => ch.call('/x/Y', Buffer.from(String(i)), 1000)));
    expect(many.map((m) => m.toString())).toEqual(Array.from({ length: 20 }, (_, i) => `echo:${i}`));
    expect(sessions.size).toBe(1);
  }));

it('a status other than OK, in the trailers or Trailers-Only, rejects with its code and decoded message', () =>
  withChannel(async (ch) => {
    behaviour = (s) => {
      s.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      s.on('wantTrailers', () => s.sendTrailers({ 'grpc-status': '3', 'grpc-message': 'etcdserver:%20too%20many%20operations%20in%20txn%20request' }));
      s.end();
    };
    const e1 = await ch.call('/x/Y', Buffer.from('a'), 1000).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(GrpcStatusError);
    expect((e1 as GrpcStatusError).code).toBe(3);
    expect((e1 as Error).message).toContain('etcdserver: too many operations in txn request');

    behaviour = (s) => {
      s.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '14', 'grpc-message': 'unavailable' }, { endStream: true });
    };
    const e2 = await ch.call('/x/Y', Buffer.from('a'), 1000).catch((e: unknown) => e);
    expect(e2).toBeInstanceOf(GrpcStatusError);
    expect((e2 as GrpcStatusError).code).toBe(14);
  }));

it('an HTTP error, a missing status or a malformed body rejects; the next good call succeeds', () =>
  withChannel(async (ch) => {
    const cases: Behaviour[] = [
      (s) => s.respond({ ':status': 503 }, { endStream: true }),
      (s) => {
        s.respond({ ':status': 200, 'content-type': 'application/grpc' });
        s.end(frame(Buffer.from('no status')));
      },
      (s) => {
        s.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        s.on('wantTrailers', () => s.sendTrailers({ 'grpc-status': '0' }));
        s.end(Buffer.from([0, 0, 0, 0, 9, 1, 2])); // says 9 bytes, holds 2
      },
      (s) => {
        s.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        s.on('wantTrailers', () => s.sendTrailers({ 'grpc-status': '0' }));
        s.end(Buffer.concat([Buffer.from([1]), frame(Buffer.from('zz')).subarray(1)])); // "compressed"
      },
      (s) => s.close(http2.constants.NGHTTP2_INTERNAL_ERROR),
    ];
    for (const c of cases) {
      behaviour = c;
      await expect(ch.call('/x/Y', Buffer.from('a'), 1000)).rejects.toThrow(/grpc|stream|HTTP|closed|Stream/i);
    }
    behaviour = ok;
    expect((await ch.call('/x/Y', Buffer.from('b'), 1000)).toString()).toBe('echo:b');
  }));

it('a call without an answer rejects at its deadline and the channel goes on', () =>
  withChannel(async (ch) => {
    behaviour = () => undefined; // never answers
    const t0 = Date.now();
    await expect(ch.call('/x/Y', Buffer.from('a'), 200)).rejects.toThrow(/no answer within 200 ms/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
    expect(Date.now() - t0).toBeLessThan(2000);
    behaviour = ok;
    // The server is alive (it answers the ping): the session is kept and the next call works.
    expect((await ch.call('/x/Y', Buffer.from('c'), 1000)).toString()).toBe('echo:c');
  }));

it('a connection dropped mid-call rejects that call; the next call opens a new session', () =>
  withChannel(async (ch) => {
    behaviour = () => {
      for (const s of sessions) s.destroy();
    };
    await expect(ch.call('/x/Y', Buffer.from('a'), 2000)).rejects.toThrow();
    behaviour = ok;
    expect((await ch.call('/x/Y', Buffer.from('d'), 2000)).toString()).toBe('echo:d');
  }));

it('a server that is not there rejects at once; one that comes back is used', async () => {
  const port = Number(endpoint.split(':')[1]);
  await shut();
  const ch = new GrpcUnaryChannel(endpoint);
  try {
    const t0 = Date.now();
    await expect(ch.call('/x/Y', Buffer.from('a'), 3000)).rejects.toThrow();
    expect(Date.now() - t0).toBeLessThan(2500);
    await listen(port);
    expect((await ch.call('/x/Y', Buffer.from('e'), 2000)).toString()).toBe('echo:e');
  } finally {
    ch.close();
  }
  await expect(ch.call('/x/Y', Buffer.from('f'), 1000)).rejects.toThrow(/closed/);
});
