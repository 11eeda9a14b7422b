/**
 * Requests an attacker (or a broken client) sends, against a real node on both HTTP engines:
 * raw non-ASCII bytes in the path and in header values (one such PUT used to end the process on
 * uWS), ambiguous body framing (request smuggling, RFC 9112 §6.3) and malformed heads.
 */
import { type NodeProcess, startNode } from '../../helpers/node-process';
import { rawRequest, rawRequestUntilClose } from '../../helpers/raw-http';

jest.setTimeout(60_000);

const portOf = (url: string): number => Number(new URL(url).port);

describe.each(['uws', 'node'] as const)('the %s engine', (engine) => {
  let node: NodeProcess;
  let svc: number;
  let ds: number;
  let admin: number;

  beforeAll(async () => {
    node = await startNode({ engine, args: ['--ds-listen', '127.0.0.1:0'] });
    svc = portOf(node.url);
    ds = portOf(node.dsUrl!);
    admin = portOf(node.adminUrl!);
  });

  const ready = async (): Promise<number> => (await fetch(`${node.adminUrl!}/ready`)).status;

  it('answers 400 to a PUT whose raw path holds bytes above 0x7e, on the Svc and DS listeners, and stays up', async () => {
    for (const raw of ['/\xe2\x9c\x93', '/\xff', '/a\xf0\x9f\x98\x80', '/x\x80y']) {
      const a = await rawRequest(svc, `PUT ${raw} HTTP/1.1\r\nHost: a\r\n\r\n`);
      expect(a.status).toBe(400);
      const b = await rawRequest(ds, `PUT /v1/stream${raw} HTTP/1.1\r\nHost: a\r\n\r\n`);
      expect(b.status).toBe(400);
      const c = await rawRequest(admin, `GET ${raw} HTTP/1.1\r\nHost: a\r\n\r\n`);
      expect(c.status).toBe(400);
    }
    expect(node.proc.exitCode).toBeNull();
    expect(await ready()).toBe(200);
    // The same name percent-encoded is a fine stream name, and its Location is ASCII.
    const ok = await fetch(`${node.url}/%E2%9C%93-${engine}`, { method: 'PUT' });
    expect(ok.status).toBe(201);
    expect(ok.headers.get('location')).toBe(`/%E2%9C%93-${engine}`);
  });

  it('creates a DS stream whose Host and Content-Type carry raw UTF-8 and keeps serving it', async () => {
    const created = await rawRequest(ds, `PUT /v1/stream/raw-host-${engine} HTTP/1.1\r\nHost: h\xe2\x9c\x93st\r\nContent-Type: text/\xe2\x9c\x93\r\n\r\n`);
    expect(created.status).toBe(201);
    // A Host that is not a host name is not echoed into Location.
    expect(created.headers['location']).toBe(`http://localhost/v1/stream/raw-host-${engine}`);
    const head = await rawRequest(ds, `HEAD /v1/stream/raw-host-${engine} HTTP/1.1\r\nHost: a\r\n\r\n`);
    expect(head.status).toBe(200);
    // node:http keeps the value byte for byte (latin1 in, latin1 out); this uWS build hands values
    // over cut at their first byte above 0x7f.
    const expected = engine === 'node' ? 'text/\xe2\x9c\x93' : 'text/';
    expect(Buffer.from(head.headers['content-type']!, 'latin1')).toEqual(Buffer.from(expected, 'latin1'));
    expect(await ready()).toBe(200);
  });

  it('refuses two Content-Length headers with 400 (RFC 9112 §6.3), in either order, equal or not', async () => {
    for (const [first, second] of [[5, 5], [1, 5], [5, 1]] as const) {
      const body = 'hello'.slice(0, Math.max(first, second));
      const r = await rawRequestUntilClose(svc, `POST /target-${engine} HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nContent-Length: ${first}\r\nContent-Length: ${second}\r\n\r\n${body}`);
      expect(r.status).toBe(400);
      expect(r.closed).toBe(true);
    }
    expect((await fetch(`${node.url}/target-${engine}`, { method: 'HEAD' })).status).toBe(404);
  });

  it('never runs a request smuggled behind two Content-Length headers', async () => {
    const smuggled = `PUT /smuggled-${engine} HTTP/1.1\r\nHost: a\r\n\r\n`;
    for (const [first, second] of [[0, smuggled.length], [smuggled.length, 0]] as const) {
      const r = await rawRequestUntilClose(svc, `POST /target-${engine} HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nContent-Length: ${first}\r\nContent-Length: ${second}\r\n\r\n${smuggled}`);
      // node:http answers 400. With bytes pipelined behind the bad head, this uWS build closes the
      // connection without an answer (it drops a connection that pipelines behind a pending response).
      if (engine === 'node') expect(r.status).toBe(400);
      else expect([null, 400]).toContain(r.status);
      expect(r.raw.toString('latin1').match(/HTTP\/1\.1 /g)?.length ?? 0).toBeLessThanOrEqual(1);
      expect(r.closed).toBe(true);
    }
    expect((await fetch(`${node.url}/smuggled-${engine}`, { method: 'HEAD' })).status).toBe(404);
    expect(await ready()).toBe(200);
  });

  it('never runs a request whose framing is ambiguous: Content-Length beside Transfer-Encoding, a signed length', async () => {
    const smuggled = `PUT /smuggled2-${engine} HTTP/1.1\r\nHost: a\r\n\r\n`;
    const te = await rawRequestUntilClose(svc, `POST /t-${engine} HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${smuggled}`, 1500);
    const signed = await rawRequestUntilClose(svc, `POST /t-${engine} HTTP/1.1\r\nHost: a\r\nContent-Length: +3\r\n\r\nabc`, 1500);
    for (const r of [te, signed]) {
      // node:http answers 400; this uWS build drops such a head without a word and closes (docs: gateway/http README).
      if (engine === 'node') expect(r.status).toBe(400);
      else expect([r.raw.length, r.closed]).toEqual([0, true]);
    }
    expect((await fetch(`${node.url}/smuggled2-${engine}`, { method: 'HEAD' })).status).toBe(404);
    expect(await ready()).toBe(200);
  });

  it('answers malformed header lines and an oversized head without running them, and stays up', async () => {
    const heads = [
      `PUT /m1-${engine} HTTP/1.1\r\nHost: a\nX: y\r\n\r\n`,
      `PUT /m2-${engine} HTTP/1.1\r\nHost: a\rX: y\r\n\r\n`,
      `PUT /m3-${engine} HTTP/1.1\r\nHost: a\r\nX: y\x00z\r\n\r\n`,
      `PUT /m4-${engine} HTTP/1.1\r\nHost: a\r\nX: y\r\n z\r\n\r\n`,
      `PUT /m5-${engine} HTTP/1.1\r\nHost: a\r\nX Y: z\r\n\r\n`,
      `PUT /m6-${engine} HTTP/1.1\r\nHost: a\r\nXYZ\r\n\r\n`,
    ];
    const results = await Promise.all(heads.map((h) => rawRequestUntilClose(svc, h, 1500)));
    const big = await rawRequestUntilClose(svc, `PUT /m7-${engine} HTTP/1.1\r\nHost: a\r\nX: ${'a'.repeat(70_000)}\r\n\r\n`, 1500);
    // Over 16 KiB: node answers 431. uWS v20.30 hands a large head to the adapter (which answers
    // 431, node's limit) only when the head arrived in one read; one split across reads outgrows
    // uWS's own buffer and uWS closes the connection without an answer (gateway/http README). On
    // loopback either can happen: both refuse the request, and the HEAD checks below show it never ran.
    if (engine === 'node') expect(big.status).toBe(431);
    else expect(big.status === 431 || (big.raw.length === 0 && big.closed)).toBe(true);
    if (engine === 'node') {
      for (const r of results) expect(r.status).toBe(400);
    } else {
      // This uWS build drops such heads without an answer (gateway/http README); nothing of them runs.
      for (const r of results) expect(r.raw.length).toBe(0);
    }
    for (let i = 1; i <= 7; i++) expect((await fetch(`${node.url}/m${i}-${engine}`, { method: 'HEAD' })).status).toBe(404);
    expect(node.proc.exitCode).toBeNull();
    expect(await ready()).toBe(200);
  });
});
