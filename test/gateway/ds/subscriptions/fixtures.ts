/**
 * What the subscription tests share: an in-memory stand-in for the DS listener (streams with
 * DS offsets, reporting every change as the listener must), a real webhook receiver on
 * 127.0.0.1, and a way to call `Subscriptions.handle` as the listener would. Every helper that
 * creates a resource registers its cleanup with `afterEach`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo } from 'node:net';
import { createPublicKey, verify, type JsonWebKey } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Logger } from '../../../../src/log';
import { Subscriptions, type SubscriptionHost, type SubscriptionsOptions } from '../../../../src/gateway/ds/subscriptions';

export const BASE = 'http://127.0.0.1:4437/v1/stream/';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A logger that keeps its lines, so a test can look for a warning. */
export function memoryLogger(lines: Array<{ level: string; msg: string; obj: object }> = []): Logger {
  const at =
    (level: string) =>
    (objOrMsg: object | string, msg?: string): void => {
      if (typeof objOrMsg === 'string') lines.push({ level, msg: objOrMsg, obj: {} });
      else lines.push({ level, msg: msg ?? '', obj: objOrMsg });
    };
  const log: Logger = { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), child: () => log };
  return log;
}

/** The DS offset after `n` messages, in the listener's `%016d_%016d` format. */
export const offsetAfter = (n: number): string => `0000000000000000_${String(n).padStart(16, '0')}`;

/** The listener, reduced to what subscriptions see: streams of messages, reporting every change. */
export class FakeListener implements SubscriptionHost {
  readonly streams = new Map<string, unknown[]>();
  subs: Subscriptions | null = null;
  /** When false, `listStreams` is absent (the optional part of the host contract). */
  readonly listStreams?: (prefix: string) => Promise<string[]>;

  constructor(withListing = true) {
    if (withListing) this.listStreams = (prefix) => Promise.resolve([...this.streams.keys()].filter((p) => p.startsWith(prefix)));
  }

  tailOffset(path: string): Promise<string | null> {
    const s = this.streams.get(path);
    return Promise.resolve(s ? offsetAfter(s.length) : null);
  }

  appendJson(path: string, value: unknown): Promise<void> {
    if (!this.streams.has(path)) return Promise.reject(new Error(`no stream ${path}`));
    this.post(path, value);
    return Promise.resolve();
  }

  /** PUT a stream, with initial messages. */
  put(path: string, ...messages: unknown[]): string {
    this.streams.set(path, [...messages]);
    return this.#changed(path);
  }

  /** POST one message. */
  post(path: string, message: unknown): string {
    this.streams.get(path)!.push(message);
    return this.#changed(path);
  }

  delete(path: string): void {
    this.streams.delete(path);
    this.subs?.onStreamDeleted(path);
  }

  #changed(path: string): string {
    const tail = offsetAfter(this.streams.get(path)!.length);
    this.subs?.onStreamChanged(path, tail);
    return tail;
  }
}

export interface Reply {
  status: number;
  headers: Record<string, string>;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

/** A Subscriptions wired to a FakeListener, closed after the test. */
export function start(over: Partial<SubscriptionsOptions> & { listener?: FakeListener } = {}): {
  subs: Subscriptions;
  listener: FakeListener;
  call: (method: string, subpath: string, body?: unknown, headers?: Record<string, string>) => Promise<Reply>;
} {
  const listener = over.listener ?? new FakeListener();
  const subs = new Subscriptions({ host: listener, log: memoryLogger(), ...over });
  listener.subs = subs;
  cleanups.push(() => subs.close());
  const call = async (method: string, subpath: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> => {
    const raw = body === undefined ? Buffer.alloc(0) : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    const res = await subs.handle({ method, subpath, headers, body: raw, streamBaseUrl: BASE });
    const text = res.body.toString();
    return { status: res.status, headers: res.headers, text, json: text === '' ? undefined : JSON.parse(text) };
  };
  return { subs, listener, call };
}

export interface Received {
  body: {
    subscription_id: string;
    wake_id: string;
    generation: number;
    callback_url: string;
    callback_token: string;
    streams: Array<{ path: string; link_type: string; acked_offset: string; tail_offset: string; has_pending: boolean }>;
  };
  rawBody: string;
  signature: string | null;
}

type Answer = { status?: number; body?: unknown };

/** A webhook receiver on 127.0.0.1, port 0; `answer` decides each response (default 200 `{}`), and may take its time. */
export async function webhookReceiver(answer: (n: number, r: Received) => Answer | Promise<Answer> = () => ({})): Promise<{
  answered: number;
  url: string;
  received: Received[];
  waitFor: (count: number, timeoutMs?: number) => Promise<Received>;
}> {
  const received: Received[] = [];
  let wakeUp: () => void = () => undefined;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const sig = req.headers['webhook-signature'];
      const r: Received = { body: JSON.parse(rawBody) as Received['body'], rawBody, signature: typeof sig === 'string' ? sig : null };
      received.push(r);
      wakeUp();
      const a = await answer(received.length, r);
      res.on('finish', () => void receiver.answered++);
      res.writeHead(a.status ?? 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(a.body ?? {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  const waitFor = async (count: number, timeoutMs = 5000): Promise<Received> => {
    const deadline = Date.now() + timeoutMs;
    while (received.length < count) {
      if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for webhook ${count}, got ${received.length}`);
      await new Promise<void>((resolve) => {
        wakeUp = resolve;
        setTimeout(resolve, 25);
      });
    }
    return received[count - 1]!;
  };
  const receiver = { answered: 0, url: `http://127.0.0.1:${port}/webhook`, received, waitFor };
  return receiver;
}

/** The conformance suite's check of a `Webhook-Signature` header against a JWK set. */
export function verifySignature(rawBody: string, header: string | null, jwks: { keys: ReadonlyArray<{ kid?: string }> }): boolean {
  const m = /^t=(\d+),kid=([^,]+),ed25519=([A-Za-z0-9_-]+)$/.exec(header ?? '');
  if (!m) return false;
  const [, t, kid, sig] = m;
  const key = jwks.keys.find((k) => k.kid === kid);
  if (!key) return false;
  if (Math.abs(Math.floor(Date.now() / 1000) - Number(t)) > 300) return false;
  return verify(null, Buffer.from(`${t}.${rawBody}`), createPublicKey({ key: key as JsonWebKey, format: 'jwk' }), Buffer.from(sig!, 'base64url'));
}

/** Poll `predicate` every 25 ms until it holds (the suite's waitForCondition). */
export async function waitUntil(predicate: () => boolean | Promise<boolean>, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A fresh directory for state files, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ds-subs-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
