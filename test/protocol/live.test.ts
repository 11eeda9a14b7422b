/**
 * Live reads (spec/stream-service.md "Read" and "Events"; docs/protocol.md "Live reads"):
 * `live=long-poll` and `live=sse` over real HTTP, on both engines. The node runs with a short
 * `--long-poll-timeout` so that the time-out answer can be observed.
 */
import * as http from 'node:http';
import * as net from 'node:net';
import { Agent, type Dispatcher, request } from 'undici';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { ENGINES, type JsonRecord, sleep } from './client';

const LONG_POLL_TIMEOUT_MS = 3000;
const TEXT = { 'content-type': 'text/plain' };

interface Res {
  status: number;
  headers: Record<string, string>;
  text: string;
}

interface SseEvent {
  event: string;
  id?: string;
  data: string;
}

/** A server-sent event stream read with node:http, parsed as it arrives. */
interface SseStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  events: SseEvent[];
  /** Comment lines (`: keep-alive`). */
  comments: string[];
  /** Resolves when the server ends the response (or the connection closes). */
  ended: Promise<void>;
  /** The first event (from `from` on) that matches; rejects after `ms`. */
  waitFor(pred: (e: SseEvent) => boolean, ms?: number, from?: number): Promise<SseEvent>;
  /** Drop the connection. */
  close(): void;
}

function openSse(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      const events: SseEvent[] = [];
      const comments: string[] = [];
      const listeners = new Set<() => void>();
      let buf = '';
      let endResolve: () => void = () => undefined;
      const ended = new Promise<void>((r) => (endResolve = r));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const e: SseEvent = { event: 'message', data: '' };
          let isEvent = false;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line);
            else {
              const c = line.indexOf(':');
              const field = line.slice(0, c);
              const value = line.slice(c + 1).replace(/^ /, '');
              isEvent = true;
              if (field === 'event') e.event = value;
              else if (field === 'id') e.id = value;
              else if (field === 'data') e.data = e.data === '' ? value : `${e.data}\n${value}`;
            }
          }
          if (isEvent) events.push(e);
        }
        for (const l of listeners) l();
      });
      res.on('end', () => endResolve());
      res.on('close', () => endResolve());
      res.on('error', () => endResolve());
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        events,
        comments,
        ended,
        waitFor(pred, ms = 5000, from = 0) {
          return new Promise((ok, fail) => {
            const check = (): boolean => {
              const e = events.slice(from).find(pred);
              if (e === undefined) return false;
              listeners.delete(listener);
              clearTimeout(timer);
              ok(e);
              return true;
            };
            const listener = (): void => void check();
            const timer = setTimeout(() => {
              listeners.delete(listener);
              fail(new Error(`no matching event within ${ms} ms; got ${JSON.stringify(events.slice(-5))}`));
            }, ms);
            listeners.add(listener);
            check();
            void ended.then(() => setTimeout(() => check() || undefined, 0));
          });
        },
        close() {
          req.destroy();
          res.destroy();
        },
      });
    });
    req.on('error', reject);
  });
}

describe.each(ENGINES)('live reads over the %s engine', (engine) => {
  let node: NodeProcess;
  let agent: Agent;
  let counter = 0;
  const name = (label: string): string => `/live-${++counter}-${label}-${Math.random().toString(36).slice(2, 8)}`;

  beforeAll(async () => {
    node = await startNode({ engine, args: ['--long-poll-timeout', String(LONG_POLL_TIMEOUT_MS)] });
    agent = new Agent({ connections: 256, keepAliveTimeout: 2000 });
  });
  afterAll(async () => {
    await agent.close();
    await node.stop();
  });

  async function call(method: Dispatcher.HttpMethod, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<Res> {
    const r = await request(node.url + path, { method, headers, body, dispatcher: agent, headersTimeout: 60_000, bodyTimeout: 60_000 });
    const text = await r.body.text();
    const h: Record<string, string> = {};
    for (const [k, v] of Object.entries(r.headers)) if (v !== undefined) h[k] = Array.isArray(v) ? v.join(', ') : v;
    return { status: r.statusCode, headers: h, text };
  }
  const create = async (path: string): Promise<void> => {
    expect((await call('PUT', path, TEXT)).status).toBe(201);
  };
  const append = async (path: string, body: string, headers: Record<string, string> = {}): Promise<Res> => {
    const r = await call('POST', path, { ...TEXT, ...headers }, body);
    expect(r.status).toBe(200);
    return r;
  };
  const catchUp = async (path: string): Promise<JsonRecord[]> => JSON.parse((await call('GET', path)).text) as JsonRecord[];

  describe('long-poll', () => {
    test('a long-poll returns the moment a record lands, well before the timeout, with the record', async () => {
      const s = name('lp');
      await create(s);
      await append(s, 'first');
      const started = Date.now();
      const poll = call('GET', `${s}?live=long-poll&seq=1`);
      await sleep(300);
      await append(s, 'second');
      const res = await poll;
      const elapsed = Date.now() - started;
      expect(res.status).toBe(200);
      expect(elapsed).toBeLessThan(300 + 700);
      expect(elapsed).toBeLessThan(LONG_POLL_TIMEOUT_MS / 2);
      const records = JSON.parse(res.text) as JsonRecord[];
      expect(records).toEqual([{ seq: 1, timestamp: expect.any(Number), body: 'second' }]);
      expect(res.headers['svc-next-seq']).toBe('2');
      expect(res.headers['svc-up-to-date']).toBe('true');
    });

    test('a long-poll with records already at seq answers at once, as a catch-up read', async () => {
      const s = name('lp-now');
      await create(s);
      await append(s, 'a');
      await append(s, 'b');
      const started = Date.now();
      const res = await call('GET', `${s}?live=long-poll&seq=0`);
      expect(Date.now() - started).toBeLessThan(500);
      expect(res.status).toBe(200);
      expect((JSON.parse(res.text) as JsonRecord[]).map((r) => r.body)).toEqual(['a', 'b']);
    });

    test('a long-poll from seq=now waits for the next record and returns only it', async () => {
      const s = name('lp-tail');
      await create(s);
      await append(s, 'old');
      const poll = call('GET', `${s}?live=long-poll&seq=now&format=raw`);
      await sleep(200);
      await append(s, 'new');
      const res = await poll;
      expect(res.status).toBe(200);
      expect(res.text).toBe('new');
      expect(res.headers['svc-next-seq']).toBe('2');
    });

    test('a long-poll with no new record answers 204 after --long-poll-timeout, with Svc-Next-Seq and Svc-Up-To-Date', async () => {
      const s = name('lp-timeout');
      await create(s);
      await append(s, 'only');
      const started = Date.now();
      const res = await call('GET', `${s}?live=long-poll&seq=1`);
      const elapsed = Date.now() - started;
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(elapsed).toBeGreaterThanOrEqual(LONG_POLL_TIMEOUT_MS - 100);
      expect(elapsed).toBeLessThan(LONG_POLL_TIMEOUT_MS + 2000);
      expect(res.headers['svc-next-seq']).toBe('1');
      expect(res.headers['svc-up-to-date']).toBe('true');
    });

    test('100 long-pollers on one stream are all woken by one append', async () => {
      const s = name('lp-100');
      await create(s);
      const polls = Array.from({ length: 100 }, () => call('GET', `${s}?live=long-poll&seq=0`));
      await sleep(500);
      const appendedAt = Date.now();
      await append(s, 'wake');
      const results = await Promise.all(polls);
      const elapsed = Date.now() - appendedAt;
      expect(results.map((r) => r.status)).toEqual(Array(100).fill(200));
      for (const r of results) expect((JSON.parse(r.text) as JsonRecord[]).map((x) => x.body)).toEqual(['wake']);
      expect(elapsed).toBeLessThan(LONG_POLL_TIMEOUT_MS / 2);
    });

    test('live takes long-poll or sse only', async () => {
      const s = name('lp-bad');
      await create(s);
      const res = await call('GET', `${s}?live=websocket`);
      expect(res.status).toBe(400);
      expect(JSON.parse(res.text)).toMatchObject({ error: 'invalid_parameter' });
    });
  });

  describe('server-sent events', () => {
    test('an SSE reader receives records as they land, id = seq and data = the JSON record', async () => {
      const s = name('sse');
      await create(s);
      const sse = await openSse(`${node.url}${s}?live=sse`);
      try {
        expect(sse.status).toBe(200);
        expect(sse.headers['content-type']).toBe('text/event-stream');
        expect(sse.headers['cache-control']).toBe('no-cache');
        // Caught up at once (the stream is empty).
        const hello = await sse.waitFor((e) => e.event === 'control');
        expect(JSON.parse(hello.data)).toEqual({ next_seq: 0, up_to_date: true });
        await append(s, 'one', { 'svc-key': 'k1' });
        await sse.waitFor((e) => e.event === 'record' && e.id === '0');
        await append(s, 'two');
        await append(s, 'three "quoted"\nnext line');
        await sse.waitFor((e) => e.event === 'record' && e.id === '2');
        const records = sse.events.filter((e) => e.event === 'record');
        expect(records.map((e) => e.id)).toEqual(['0', '1', '2']);
        // Each data payload is exactly the record of the JSON read format.
        expect(records.map((e) => JSON.parse(e.data) as JsonRecord)).toEqual(await catchUp(s));
        const last = await sse.waitFor((e) => e.event === 'control' && JSON.parse(e.data).next_seq === 3);
        expect(JSON.parse(last.data)).toEqual({ next_seq: 3, up_to_date: true });
      } finally {
        sse.close();
      }
    });

    test('an SSE reader starts at seq, or at seq=now', async () => {
      const s = name('sse-start');
      await create(s);
      for (const b of ['a', 'b', 'c']) await append(s, b);
      const from1 = await openSse(`${node.url}${s}?live=sse&seq=1`);
      const fromNow = await openSse(`${node.url}${s}?live=sse&seq=now`);
      try {
        await from1.waitFor((e) => e.event === 'control');
        expect(from1.events.filter((e) => e.event === 'record').map((e) => e.id)).toEqual(['1', '2']);
        await fromNow.waitFor((e) => e.event === 'control');
        await append(s, 'd');
        const d = await fromNow.waitFor((e) => e.event === 'record');
        expect(d.id).toBe('3');
        expect(fromNow.events.filter((e) => e.event === 'record')).toHaveLength(1);
      } finally {
        from1.close();
        fromNow.close();
      }
    });

    test('an SSE reader that reconnects with Last-Event-ID misses nothing and sees nothing twice', async () => {
      const s = name('sse-resume');
      await create(s);
      const total = 150;
      let stop = false;
      let written = 0;
      const writer = (async () => {
        for (let i = 0; i < total && !stop; i++) {
          await append(s, `r${i}`);
          written = i + 1;
          if (i % 10 === 0) await sleep(5);
        }
      })();
      const seen: SseEvent[] = [];
      let lastId: string | undefined;
      let reconnectsWhileWriting = 0;
      try {
        for (let attempt = 0; attempt < 50 && (seen.length === 0 || seen[seen.length - 1]!.id !== String(total - 1)); attempt++) {
          if (lastId !== undefined && written < total) reconnectsWhileWriting++;
          const sse = await openSse(`${node.url}${s}?live=sse`, lastId === undefined ? {} : { 'last-event-id': lastId });
          // Take a few records, then drop the connection mid-stream.
          const want = seen.length + 20 + attempt * 3;
          await sse
            .waitFor((e) => e.event === 'record' && Number(e.id) >= Math.min(want, total - 1), 10_000)
            .catch(() => undefined);
          sse.close();
          const records = sse.events.filter((e) => e.event === 'record');
          seen.push(...records);
          if (records.length > 0) lastId = records[records.length - 1]!.id;
        }
      } finally {
        stop = true;
        await writer;
      }
      expect(reconnectsWhileWriting).toBeGreaterThanOrEqual(2);
      expect(seen.map((e) => Number(e.id))).toEqual(Array.from({ length: total }, (_, i) => i));
      expect(seen.map((e) => (JSON.parse(e.data) as JsonRecord).body)).toEqual(Array.from({ length: total }, (_, i) => `r${i}`));
    });

    test('live=sse refuses other formats and count/bytes with 400', async () => {
      const s = name('sse-bad');
      await create(s);
      expect((await call('GET', `${s}?live=sse&format=raw`)).status).toBe(400);
      expect((await call('GET', `${s}?live=sse&count=5`)).status).toBe(400);
      expect((await call('GET', `${s}`, { 'last-event-id': 'x' })).status).toBe(200); // ignored without live=sse
      expect((await call('GET', `${s}?live=sse`, { 'last-event-id': 'x' })).status).toBe(400);
      expect((await call('GET', `/live-missing-${Math.random()}?live=sse`)).status).toBe(404);
    });
  });

  describe('seal and delete', () => {
    test('a sealed stream ends every live reader: long-pollers get Svc-Closed: true, SSE readers get end', async () => {
      const s = name('seal');
      await create(s);
      await append(s, 'before');
      const polls = Array.from({ length: 5 }, () => call('GET', `${s}?live=long-poll&seq=1`));
      const readers = await Promise.all(Array.from({ length: 5 }, () => openSse(`${node.url}${s}?live=sse&seq=1`)));
      try {
        for (const r of readers) await r.waitFor((e) => e.event === 'control');
        await sleep(200);
        const sealed = await call('POST', s, { 'svc-closed': 'true' });
        expect(sealed.status).toBe(200);
        const answers = await Promise.all(polls);
        for (const a of answers) {
          expect(a.status).toBe(200);
          expect(a.headers['svc-closed']).toBe('true');
          expect(a.headers['svc-next-seq']).toBe('1');
          expect(JSON.parse(a.text)).toEqual([]);
        }
        for (const r of readers) {
          const end = await r.waitFor((e) => e.event === 'end');
          expect(JSON.parse(end.data)).toEqual({ next_seq: 1, closed: true });
          await r.ended; // the server ends the response
        }
        // A reader arriving after the seal gets the records and the end at once.
        const late = await call('GET', `${s}?live=long-poll&seq=0`);
        expect(late.headers['svc-closed']).toBe('true');
        expect((JSON.parse(late.text) as JsonRecord[]).map((r) => r.body)).toEqual(['before']);
      } finally {
        for (const r of readers) r.close();
      }
    });

    test('a seal that carries a final record delivers it, then ends the SSE stream', async () => {
      const s = name('seal-record');
      await create(s);
      const poll = call('GET', `${s}?live=long-poll&seq=0`);
      const sse = await openSse(`${node.url}${s}?live=sse`);
      try {
        await sse.waitFor((e) => e.event === 'control');
        await sleep(100);
        await append(s, 'last words', { 'svc-closed': 'true' });
        const p = await poll;
        expect(p.headers['svc-closed']).toBe('true');
        expect((JSON.parse(p.text) as JsonRecord[]).map((r) => r.body)).toEqual(['last words']);
        await sse.waitFor((e) => e.event === 'end');
        expect(sse.events.map((e) => e.event)).toEqual(['control', 'record', 'end']);
      } finally {
        sse.close();
      }
    });

    test('a deleted stream wakes its waiters: long-polls answer 404, SSE readers get an error event and the end', async () => {
      const s = name('delete');
      await create(s);
      const polls = Array.from({ length: 3 }, () => call('GET', `${s}?live=long-poll&seq=0`));
      const sse = await openSse(`${node.url}${s}?live=sse`);
      try {
        await sse.waitFor((e) => e.event === 'control');
        await sleep(200);
        const started = Date.now();
        expect((await call('DELETE', s)).status).toBe(204);
        for (const p of await Promise.all(polls)) {
          expect(p.status).toBe(404);
          expect(JSON.parse(p.text)).toMatchObject({ error: 'not_found' });
        }
        const err = await sse.waitFor((e) => e.event === 'error');
        expect(JSON.parse(err.data)).toMatchObject({ error: 'not_found' });
        await sse.ended;
        expect(Date.now() - started).toBeLessThan(LONG_POLL_TIMEOUT_MS / 2);
      } finally {
        sse.close();
      }
    });
  });

  describe('backpressure', () => {
    test('a slow SSE reader is dropped after the buffer bound with a slow_reader error, and the node holds no more than the bound for it', async () => {
      const s = name('slow');
      expect((await call('PUT', s, { 'content-type': 'application/octet-stream' })).status).toBe(201);
      const record = Buffer.alloc(512 * 1024, 0x61); // 512 KiB
      const appendMiB = async (mib: number): Promise<void> => {
        for (let i = 0; i < mib * 2; i++) {
          const r = await call('POST', s, { 'content-type': 'application/octet-stream' }, record);
          expect(r.status).toBe(200);
        }
      };
      // A client that sends its request and then never reads its socket.
      const sock = net.connect(Number(new URL(node.url).port), '127.0.0.1');
      await new Promise((r) => sock.once('connect', r));
      sock.write(`GET ${s}?live=sse&seq=now HTTP/1.1\r\nHost: test\r\n\r\n`);
      sock.pause();
      await sleep(300);
      // Far more than the socket buffers (a few MiB on loopback) plus the 1 MiB bound. The error
      // event waits in the engine until the client reads; a client that reads nothing is cut only
      // after the engine's write-idle timeout (60 s, src/program/http/README.md). It used to be uWS's
      // fixed 10 s timeout and a 10 s grace of the SSE stream's own, which a loaded machine's
      // appends outlasted: the event was lost with the connection.
      await appendMiB(48);
      await sleep(300);
      // Now read everything the node sent: records, then the error event, then the end of the
      // response. Every byte the node held for this reader, in its own buffers or the kernel's, is
      // sent once the client reads: a node that kept buffering for the reader sends all 48 MiB, one
      // that stopped at the bound sends the socket buffers' worth and the bound (measured here:
      // 4.5 MiB; 44 MiB from a build that paused the reader only past 40 MiB). An exact count,
      // unlike the node's RSS, which the appends' uncollected garbage moved by 0–31 MiB from run
      // to run.
      let text = '';
      let received = 0;
      sock.setEncoding('latin1');
      sock.on('data', (d: string) => {
        received += d.length;
        text = (text + d).slice(-4096);
      });
      sock.resume();
      const deadline = Date.now() + 15_000;
      while (!text.includes('\r\n0\r\n\r\n') && Date.now() < deadline) await sleep(50);
      sock.destroy();
      const m = /event: error\ndata: (\{[^\n]*\})\n\n/.exec(text);
      expect(m).not.toBeNull();
      expect(JSON.parse(m![1]!)).toMatchObject({ error: 'slow_reader', next_seq: expect.any(Number) });
      expect(received).toBeLessThan(24 * 1024 * 1024);
      expect(text.endsWith('\r\n0\r\n\r\n')).toBe(true);
    });
  });
});

describe.each(ENGINES)('live reads and shutdown on the %s engine', (engine) => {
  test('stopping the node answers waiting long-polls with 204 and ends SSE streams with a control event, at once', async () => {
    const node = await startNode({ engine });
    const s = '/live-shutdown';
    expect((await fetch(node.url + s, { method: 'PUT', headers: TEXT })).status).toBe(201);
    const poll = fetch(`${node.url}${s}?live=long-poll&seq=0`).then(async (r) => ({ status: r.status, next: r.headers.get('svc-next-seq') }));
    const sse = await openSse(`${node.url}${s}?live=sse`);
    await sse.waitFor((e) => e.event === 'control');
    await sleep(200);
    const started = Date.now();
    const exit = node.stop();
    expect(await poll).toEqual({ status: 204, next: '0' });
    const last = await sse.waitFor((e) => JSON.parse(e.data).shutting_down === true);
    expect(last.event).toBe('control');
    expect(JSON.parse(last.data)).toEqual({ next_seq: 0, shutting_down: true });
    await sse.ended;
    expect(await exit).toBe(0);
    // Long before the default 30 s long-poll timeout.
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
