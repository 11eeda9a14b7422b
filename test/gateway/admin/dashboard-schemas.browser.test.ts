/**
 * The dashboard's Schemas page (`#/schemas`, dashboard/schemas.js) in a real headless Chromium
 * against a real node with `--auth required`: it lists each registry subject with its versions,
 * latest id and type, compatibility level and the streams bound to it, follows changes within a
 * poll, and links a bound stream to its page. Leaves a screenshot in
 * .ci-artifacts/dashboard-schemas.png.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type Browser, type Page, chromium } from 'playwright-core';
import { type NodeProcess, ROOT, startNode } from '../../helpers/node-process';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = path.join(ROOT, '.ci-artifacts');
const b64url = (b: Buffer | string): string => Buffer.from(b).toString('base64url');
const TOKEN = b64url('root') + '.' + b64url(randomBytes(32));
/** Room for a poll (2 s) and its requests on a loaded machine. */
const POLL = 8000;

let node: NodeProcess;
let admin: string;
let browser: Browser;
let page: Page;
const problems: string[] = [];

async function api(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await res.text();
  return res.status;
}

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install the Debian package chromium (listed in .ci/run)`);
  node = await startNode({ args: ['--auth', 'required', '--auth-bootstrap-token', TOKEN] });
  admin = node.adminUrl!;
  expect(await api('PUT', `${node.url}/_schemas/orders`, { type: 'json-schema', schema: { type: 'object' } })).toBe(201);
  expect(await api('PUT', `${node.url}/shop/orders`, undefined, { 'svc-schema': 'orders' })).toBe(201);
  expect(await api('POST', `${admin}/admin/schemas/users/versions`, { schema: JSON.stringify({ type: 'record', name: 'U', fields: [] }) })).toBe(200);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  await page.goto(`${admin}/`);
  await page.evaluate(`sessionStorage.setItem('svc.token', ${JSON.stringify(TOKEN)})`);
  await page.reload();
  await page.locator('body[data-state="ok"]').waitFor({ timeout: POLL });
});

afterAll(async () => {
  await browser?.close();
  await node?.stop();
});

const cell = (subject: string, k: string) => page.locator(`tr[data-subject="${subject}"] [data-k="${k}"]`);

test('lists subjects with versions, latest id and type, compatibility and bound streams, and follows changes', async () => {
  await page.click('#nav a[data-route="schemas"]');
  await page.locator('tr[data-subject="svc-orders"]').waitFor({ timeout: POLL });
  expect(await cell('svc-orders', 'versions').textContent()).toBe('1');
  expect(await cell('svc-orders', 'type').textContent()).toBe('JSON');
  expect(await cell('svc-orders', 'compatibility').textContent()).toBe('NONE');
  expect(await cell('svc-orders', 'streams').textContent()).toBe('/shop/orders');
  expect(await cell('users', 'type').textContent()).toBe('AVRO');
  expect(await cell('users', 'compatibility').textContent()).toBe('BACKWARD');
  expect(await cell('users', 'streams').textContent()).toBe('–');
  expect(Number(await cell('users', 'id').textContent())).toBeGreaterThan(0);

  // A new version of the stream schema shows up within a poll.
  expect(await api('PUT', `${node.url}/_schemas/orders`, { type: 'json-schema', schema: { type: 'object', required: ['id'] } })).toBe(200);
  await page.locator('tr[data-subject="svc-orders"] [data-k="versions"]', { hasText: /^1, 2$/ }).waitFor({ timeout: POLL });
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-schemas.png'), fullPage: true });

  // A bound stream links to its page.
  await cell('svc-orders', 'streams').locator('a').click();
  await page.locator('body[data-view="stream"]').waitFor({ timeout: POLL });
  expect(problems).toEqual([]);
});
