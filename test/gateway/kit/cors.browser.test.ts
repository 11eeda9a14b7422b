/**
 * CORS as a browser enforces it: a page served by a second loopback server (another origin) in a
 * real headless Chromium creates, appends with producer headers (a non-simple request, so the
 * browser sends a preflight first), reads an exposed `Svc-*` header, and tails with `EventSource`
 * on the Svc listener, and appends and tails on the Durable Streams listener. A node whose
 * `--cors-origins` does not list the page's origin is refused by the browser. Uses the system
 * Chromium (`/usr/bin/chromium`, Debian package `chromium`), as the dashboard's browser test does.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import { type AddressInfo } from 'node:net';
import { type Browser, type Page, chromium } from 'playwright-core';
import { type NodeProcess, startNode } from '../../helpers/node-process';

const CHROMIUM = '/usr/bin/chromium';

let pageServer: http.Server;
let pageOrigin: string;
let open: NodeProcess;
let closed: NodeProcess;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install the Debian package chromium (listed in .ci/run)`);
  pageServer = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>another origin</title><p>cross-origin client</p>');
  });
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  pageOrigin = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}`;
  open = await startNode({ args: ['--ds-listen', '127.0.0.1:0'] });
  closed = await startNode({ args: ['--cors-origins', 'https://app.example.com'] });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  page = await browser.newPage();
  await page.goto(`${pageOrigin}/`);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => pageServer?.close(resolve));
});

/** What the page's scripts use of the browser (the test compiles without the DOM library). */
interface PageWindow {
  events: string[];
  dsEvents: string[];
  EventSource: new (url: string) => { addEventListener(type: string, cb: (e: { data: string }) => void): void };
}

test('a page on another origin appends with fetch() and reads the exposed Svc headers', async () => {
  expect(new URL(open.url).origin).not.toBe(pageOrigin);
  const r = await page.evaluate(async (svc) => {
    const created = await fetch(`${svc}/web/orders`, { method: 'PUT', headers: { 'content-type': 'text/plain' } });
    const appended = await fetch(`${svc}/web/orders`, {
      method: 'POST',
      // Non-simple: custom headers make the browser send a preflight first.
      headers: { 'content-type': 'text/plain', 'svc-producer-id': 'page-1', 'svc-producer-epoch': '0', 'svc-producer-seq': '0' },
      body: 'n0',
    });
    const again = await fetch(`${svc}/web/orders`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'svc-producer-id': 'page-1', 'svc-producer-epoch': '0', 'svc-producer-seq': '0' },
      body: 'n0',
    });
    const read = await fetch(`${svc}/web/orders?format=json`);
    return {
      created: created.status,
      appended: appended.status,
      nextSeq: appended.headers.get('svc-next-seq'),
      duplicate: again.headers.get('svc-producer-duplicate'),
      read: read.status,
      upToDate: read.headers.get('svc-up-to-date'),
      records: ((await read.json()) as Array<{ body: unknown }>).map((x) => x.body),
    };
  }, open.url);
  expect(r).toEqual({ created: 201, appended: 200, nextSeq: '1', duplicate: 'true', read: 200, upToDate: 'true', records: ['n0'] });
});

test('a page on another origin tails with EventSource and sees records appended later', async () => {
  await page.evaluate((svc) => {
    const w = globalThis as unknown as PageWindow;
    w.events = [];
    const es = new w.EventSource(`${svc}/web/orders?live=sse`);
    es.addEventListener('record', (e) => w.events.push(e.data));
  }, open.url);
  await page.waitForFunction(() => (globalThis as unknown as PageWindow).events.length >= 1, undefined, { timeout: 10_000 });
  for (const n of [1, 2]) {
    const a = await fetch(`${open.url}/web/orders`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: `n${n}` });
    expect(a.status).toBe(200);
  }
  await page.waitForFunction(() => (globalThis as unknown as PageWindow).events.length >= 3, undefined, { timeout: 10_000 });
  const events = await page.evaluate(() => (globalThis as unknown as PageWindow).events.map((d) => (JSON.parse(d) as { seq: number; body: unknown })));
  expect(events.map((e) => [e.seq, e.body])).toEqual([
    [0, 'n0'],
    [1, 'n1'],
    [2, 'n2'],
  ]);
});

test('a page on another origin appends and tails on the Durable Streams listener', async () => {
  const ds = `${open.dsUrl!}/v1/stream`;
  const r = await page.evaluate(async (base) => {
    const created = await fetch(`${base}/web-ds`, { method: 'PUT', headers: { 'content-type': 'text/plain' } });
    const appended = await fetch(`${base}/web-ds`, { method: 'POST', headers: { 'content-type': 'text/plain', 'producer-id': 'p', 'producer-epoch': '0', 'producer-seq': '0' }, body: 'first' });
    const w = globalThis as unknown as PageWindow;
    w.dsEvents = [];
    const es = new w.EventSource(`${base}/web-ds?offset=-1&live=sse`);
    es.addEventListener('data', (e) => w.dsEvents.push(e.data));
    return { created: created.status, appended: appended.status, next: appended.headers.get('stream-next-offset') };
  }, ds);
  expect(r.created).toBe(201);
  expect(r.appended).toBe(200);
  expect(r.next).not.toBeNull();
  await page.waitForFunction(() => (globalThis as unknown as PageWindow).dsEvents.length >= 1, undefined, { timeout: 10_000 });
  const more = await fetch(`${ds}/web-ds`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'second' });
  expect(more.status).toBe(204);
  await page.waitForFunction(() => (globalThis as unknown as PageWindow).dsEvents.join('').includes('second'), undefined, { timeout: 10_000 });
  expect(await page.evaluate(() => (globalThis as unknown as PageWindow).dsEvents.join('|'))).toBe('first|second');
});

test('the browser refuses a node whose --cors-origins does not list the page', async () => {
  const r = await page.evaluate(async (svc) => {
    try {
      await fetch(`${svc}/web/x`, { method: 'PUT' });
      return 'answered';
    } catch (err) {
      return (err as Error).name;
    }
  }, closed.url);
  expect(r).toBe('TypeError');
  // A PUT needs a preflight; its answer allowed nothing, so the browser never sent the PUT.
  expect((await fetch(`${closed.url}/web/x`, { method: 'HEAD' })).status).toBe(404);
});
