/**
 * Every page of the dashboard in a real headless Chromium against a real node with
 * `--auth required`, fed by real clients (HTTP appends, a kafkajs consumer group):
 * the charts draw from the node's metrics, the streams list searches and pages, the stream page
 * shows its detail and a live tail that shows an append within a second, the consumer group shows
 * its member, assignment and lag, a token issued in the UI works and stops working once revoked
 * in the UI, slots edited in the UI change the node, and a read-only token sees the data but no
 * action button. Leaves a screenshot of each page in .ci-artifacts/dashboard-<page>.png.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Kafka, type Consumer, logLevel } from 'kafkajs';
import { type Browser, type Page, chromium } from 'playwright-core';
import { type NodeProcess, ROOT, startNode } from '../../helpers/node-process';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = path.join(ROOT, '.ci-artifacts');
const b64url = (b: Buffer | string): string => Buffer.from(b).toString('base64url');
const TOKEN = b64url('root') + '.' + b64url(randomBytes(32));
/** Room for a poll (2 s) and its requests on a loaded machine. */
const POLL = 5000;

let node: NodeProcess;
let admin: string;
let browser: Browser;
let page: Page;
let consumer: Consumer | null = null;
const problems: string[] = [];

async function api(method: string, url: string, body?: unknown, token: string | null = TOKEN): Promise<{ status: number; json: Record<string, unknown> | null }> {
  const headers: Record<string, string> = {};
  if (token !== null) headers['authorization'] = `Bearer ${token}`;
  if (body !== undefined && typeof body !== 'string') headers['content-type'] = 'application/json';
  else if (typeof body === 'string') headers['content-type'] = 'text/plain';
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  let json: Record<string, unknown> | null;
  try {
    json = text === '' ? null : (JSON.parse(text) as Record<string, unknown>);
  } catch {
    json = null;
  }
  return { status: res.status, json };
}

const append = (stream: string, body: string): Promise<{ status: number }> => api('POST', `${node.url}${stream}`, body);

async function shot(name: string): Promise<void> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `dashboard-${name}.png`), fullPage: true });
}

async function useToken(token: string): Promise<void> {
  await page.evaluate(`sessionStorage.setItem('svc.token', ${JSON.stringify(token)})`);
  await page.reload();
  await page.locator('body[data-state="ok"]').waitFor({ timeout: POLL });
}

async function go(route: string): Promise<void> {
  await page.evaluate(`window.location.hash = ${JSON.stringify(route)}`);
}

/** Text of the element at `selector` once it matches `re`. */
async function waitText(selector: string, re: RegExp, timeout = POLL): Promise<string> {
  const loc = page.locator(selector, { hasText: re });
  await loc.first().waitFor({ timeout });
  return (await loc.first().textContent()) ?? '';
}

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install the Debian package chromium (listed in .ci/run)`);
  node = await startNode({ args: ['--auth', 'required', '--auth-bootstrap-token', TOKEN] });
  if (node.adminUrl === null) throw new Error('the node has no admin listener');
  admin = node.adminUrl;

  // Streams: /orders with 5 records, /logs/app, and 55 under /p/ to page through.
  expect((await api('PUT', `${node.url}/orders`, 'r0')).status).toBe(201);
  for (let i = 1; i < 5; i++) expect((await append('/orders', `r${i}`)).status).toBe(200);
  expect((await api('PUT', `${node.url}/logs/app`)).status).toBe(201);
  await Promise.all(Array.from({ length: 55 }, (_, i) => api('PUT', `${node.url}/p/${String(i).padStart(3, '0')}`)));

  // A consumer group: consumes the 6 records of a topic and commits, then pauses; 3 more records make lag 3.
  const kafka = new Kafka({ clientId: 'dash-test', brokers: [node.kafka], logLevel: logLevel.NOTHING, sasl: { mechanism: 'plain', username: 'root', password: TOKEN } });
  const kadmin = kafka.admin();
  await kadmin.connect();
  await kadmin.createTopics({ topics: [{ topic: 'dash-k' }] });
  await kadmin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: 'dash-k', acks: -1, messages: Array.from({ length: 6 }, (_, i) => ({ value: `k${i}` })) });
  consumer = kafka.consumer({ groupId: 'dash-group', sessionTimeout: 10000, heartbeatInterval: 1000 });
  await consumer.connect();
  await consumer.subscribe({ topic: 'dash-k', fromBeginning: true });
  let seen = 0;
  const c = consumer;
  const consumed = new Promise<void>((resolve) => {
    void c.run({
      autoCommitThreshold: 1,
      eachMessage: async () => {
        if (++seen === 6) resolve();
      },
    });
  });
  await consumed;
  c.pause([{ topic: 'dash-k' }]);
  // Wait until the group's commit of offset 6 is in (autocommit runs after each message).
  for (let i = 0; i < 100; i++) {
    const g = (await api('GET', `${admin}/admin/groups`)).json as { groups: Array<{ groupId: string; offsets: Array<{ committed: number }> }> };
    if (g.groups.find((x) => x.groupId === 'dash-group')?.offsets[0]?.committed === 6) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await producer.send({ topic: 'dash-k', acks: -1, messages: Array.from({ length: 3 }, (_, i) => ({ value: `late${i}` })) });
  await producer.disconnect();

  // A share group leasing /orders over HTTP: two records leased, one accepted, one still in flight.
  const shareAt = (q: string): string => `${node.url}/_share/orders?group=dash-share${q}`;
  expect((await api('PATCH', shareAt(''), { 'share.auto.offset.reset': 'earliest' })).status).toBe(200);
  const leased = await api('POST', shareAt('&op=lease&max=2&lock=600s'));
  expect(leased.status).toBe(200);
  expect((await api('POST', shareAt('&op=ack'), { lease: leased.json!['lease'], accept: [0] })).json).toMatchObject({ applied: [0] });

  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (m) => {
    // Answers with an error status (the 401 before the token is given) are asserted where they matter, not here.
    if ((m.type() === 'error' && !m.text().startsWith('Failed to load resource')) || /Content Security Policy|Refused to/i.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  // window.confirm (revoking) is answered yes.
  page.on('dialog', (d) => void d.accept());
  await page.goto(`${admin}/`);
  await useToken(TOKEN);
}, 120000);

afterAll(async () => {
  await consumer?.disconnect().catch(() => undefined);
  await browser?.close();
});

describe('the dashboard pages against a real node', () => {
  it('draws the throughput and latency charts from the node metrics while appends run', async () => {
    await go('#/');
    await page.locator('#who [data-k="who-mode"]', { hasText: 'read-write' }).waitFor({ timeout: POLL });
    // Appends every 100 ms for 5 s: the appends/s chart must show them.
    const until = Date.now() + 5000;
    let acked = 0;
    while (Date.now() < until) {
      if ((await append('/orders', `load ${acked}`)).status === 200) acked++;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(acked).toBeGreaterThan(10);
    for (const chart of ['appends', 'bytes', 'reads', 'p99']) {
      const fig = page.locator(`figure[data-chart="${chart}"]`);
      await fig.locator('canvas').waitFor({ timeout: POLL });
      expect(Number(await fig.getAttribute('data-points'))).toBeGreaterThanOrEqual(1);
    }
    // The highest appends/s the page computed is a real rate of what was acknowledged: above
    // zero, and at most the 10/s this loop can send (plus rounding of the scrape times).
    const fig = page.locator('figure[data-chart="appends"]');
    await page.locator('figure[data-chart="appends"]:not([data-max="0"])').waitFor({ timeout: POLL });
    const max = Number(await fig.getAttribute('data-max'));
    expect(max).toBeGreaterThan(0);
    expect(max).toBeLessThanOrEqual(12);
    expect(await fig.locator('canvas').count()).toBe(1);
    await shot('overview');
  });

  it('lists streams with their sizes, searches by prefix and pages through 55 streams', async () => {
    await go('#/streams');
    const orders = page.locator('tr[data-stream="/orders"]');
    await orders.waitFor({ timeout: POLL });
    const detail = (await api('GET', `${admin}/admin/streams/orders`)).json!;
    await page.locator('tr[data-stream="/orders"] [data-k="records"]', { hasText: new RegExp(`^${Number(detail['endOffset']) - Number(detail['startOffset'])}$`) }).waitFor({ timeout: POLL });
    await page.locator('tr[data-stream="/logs/app"]').waitFor();
    // Appends to /orders while the list refreshes: its rate becomes a positive figure, /logs/app's stays 0.
    let stop = false;
    const load = (async () => {
      while (!stop) {
        await append('/orders', 'rate');
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    try {
      await page.locator('tr[data-stream="/orders"] [data-k="rate"]', { hasText: /^[1-9]\d*\.\d$|^0\.[1-9]$/ }).waitFor({ timeout: 2 * POLL });
      expect(await page.textContent('tr[data-stream="/logs/app"] [data-k="rate"]')).toBe('0.0');
      await shot('streams');
    } finally {
      stop = true;
      await load;
    }

    await page.fill('#stream-prefix', '/p/');
    await page.click('#stream-search button[type="submit"]');
    // Not /p/000: the unfiltered page shown before the search has it too (then /orders and /p/047
    // end it); /p/049 is only on the search's first page.
    await page.locator('tr[data-stream="/p/049"]').waitFor({ timeout: POLL });
    expect(await page.locator('#stream-rows tr').count()).toBe(50);
    expect(await page.locator('tr[data-stream="/orders"]').count()).toBe(0);
    await page.click('#streams-next');
    await page.locator('tr[data-stream="/p/054"]').waitFor({ timeout: POLL });
    expect(await page.locator('#stream-rows tr').count()).toBe(5);
    expect(await page.textContent('[data-k="streams-page"]')).toBe('page 2');
    await page.click('#streams-prev');
    await page.locator('tr[data-stream="/p/000"]').waitFor({ timeout: POLL });
  });

  it('shows a stream page with detail, config and a live tail that shows an append within a second', async () => {
    await go('#/streams');
    await page.fill('#stream-prefix', '/orders');
    await page.click('#stream-search button[type="submit"]');
    await page.click('tr[data-stream="/orders"] a');
    await page.locator('body[data-view="stream"]').waitFor();
    await waitText('#stream-detail [data-k="fact-name"]', /^\/orders$/);
    await waitText('#stream-config [data-k="fact-contentType"]', /^text\/plain$/);
    await page.locator('#tail-rows tr[data-seq]').first().waitFor({ timeout: POLL });
    // Single node: the transfer button is there (this token may transfer) but disabled, with the reason.
    expect(await page.isVisible('#transfer-submit')).toBe(true);
    expect(await page.isDisabled('#transfer-submit')).toBe(true);
    expect(await page.textContent('[data-k="transfer-note"]')).toContain('only node');

    const marker = `tail-check-${randomBytes(4).toString('hex')}`;
    expect((await append('/orders', marker)).status).toBe(200);
    const acked = Date.now();
    await page.locator('#tail-rows tr td[data-k="body"]', { hasText: marker }).waitFor({ timeout: 1000 });
    const shownAfter = Date.now() - acked;
    expect(shownAfter).toBeLessThanOrEqual(1000);
    const seq = Number(await page.locator('#tail-rows tr', { hasText: marker }).getAttribute('data-seq'));
    const end = Number((await api('GET', `${admin}/admin/streams/orders`)).json!['endOffset']);
    expect(seq).toBe(end - 1);
    await shot('stream');
  });

  it('shows the consumer group with its member, assignment and lag per partition, and the share group with its stream in flight', async () => {
    await go('#/groups');
    const group = page.locator('[data-group="dash-group"]');
    await group.waitFor({ timeout: POLL });
    await waitText('[data-group="dash-group"] tr[data-partition="dash-k/0"] [data-k="lag"]', /^3$/);
    expect(await group.locator('[data-k="committed"]').textContent()).toBe('6');
    expect(await group.locator('[data-k="end"]').textContent()).toBe('9');
    expect(await group.locator('[data-k="state"]').textContent()).toBe('Stable');
    expect(await group.locator('[data-k="assignment"]').textContent()).toBe('dash-k [0]');
    expect(await group.getAttribute('data-kind')).toBe('classic');
    // The share group: its stream with one record in flight and one acknowledged.
    const share = page.locator('[data-group="dash-share"][data-kind="share"] tr[data-share-stream="/orders"]');
    await share.waitFor({ timeout: POLL });
    expect(await share.locator('[data-k="in-flight"]').textContent()).toBe('1');
    expect(await share.locator('[data-k="acknowledged"]').textContent()).toBe('1');
    // Record 0 is done: the rest of the stream (other tests append to it) is the lag.
    expect(await share.locator('[data-k="start"]').textContent()).toBe('1');
    expect(Number(await share.locator('[data-k="lag"]').textContent())).toBe(Number(await share.locator('[data-k="end"]').textContent()) - 1);
    await shot('groups');
  });

  it('issues a token in the UI that works, and revokes it in the UI so that it stops working', async () => {
    await go('#/tokens');
    await page.locator('tr[data-token-id="root"]').waitFor({ timeout: POLL });
    await page.locator('#issue-box').waitFor();
    await page.fill('#issue-id', 'ui-reader');
    // Default choices: read operations on every stream, svc and durable_streams audiences, no admin.
    await page.click('#issue-submit');
    const wire = await waitText('[data-k="issued-token"]', /\./);
    await page.locator('tr[data-token-id="ui-reader"]').waitFor({ timeout: POLL });
    const record = ((await api('GET', `${admin}/admin/tokens`)).json!['tokens'] as Array<{ id: string; scope: { ops: string[]; audiences: string[] } }>).find((t) => t.id === 'ui-reader')!;
    expect(record.scope.ops).toContain('read');
    expect(record.scope.ops).not.toContain('append');
    expect(record.scope.audiences).not.toContain('admin');
    expect((await api('GET', `${node.url}/orders?count=1`, undefined, wire)).status).toBe(200);
    expect((await api('POST', `${node.url}/orders`, 'by reader', wire)).status).toBe(403);
    await shot('tokens');

    await page.click('tr[data-token-id="ui-reader"] button[data-action="revoke"]');
    await page.locator('tr[data-token-id="ui-reader"]').waitFor({ state: 'detached', timeout: POLL });
    expect((await api('GET', `${node.url}/orders?count=1`, undefined, wire)).status).toBe(401);
  });

  it('shows the cluster page and changes a node slots from it', async () => {
    await go('#/cluster');
    const nodeId = String((await api('GET', `${admin}/ready`, undefined, null)).json!['nodeId']);
    const row = page.locator(`tr[data-cluster-node="${nodeId}"]`);
    await row.waitFor({ timeout: POLL });
    expect(await row.locator('[data-k="local"]').textContent()).toBe('yes');
    await waitText('#cluster-facts [data-k="fact-leaseHolder"]', /^yes$/);
    await waitText('[data-k="no-transfers"]', /^none$/);
    await row.locator('input[data-k="slots-input"]').fill('11');
    await row.locator('button[data-action="save-slots"]').click();
    await waitText('[data-k="slots-note"]', /11 slots/);
    expect((await api('GET', `${admin}/admin/nodes/${nodeId}`)).json!['slots']).toBe(11);
    await shot('cluster');
  });

  it('shows a read-only token every page with its data and no action button', async () => {
    const viewer = await api('POST', `${admin}/admin/tokens`, {
      id: 'viewer',
      scope: {
        streams: [{ prefix: '' }],
        tokens: [{ prefix: '' }],
        groups: { stream: { read: true, write: false }, tokens: { read: true, write: false }, admin: { read: true, write: false } },
        ops: ['read', 'head', 'list', 'list_tokens', 'cluster_read', 'node_read', 'stream_inspect'],
        audiences: ['admin', 'svc'],
        expiresAtMs: null,
      },
    });
    expect(viewer.status).toBe(201);
    await useToken(String(viewer.json!['token']));
    await page.locator('#who [data-k="who-mode"]', { hasText: 'read-only' }).waitFor({ timeout: POLL });
    const checks: Array<[string, string]> = [
      ['#/', 'figure[data-chart="appends"] canvas'],
      ['#/streams', 'tr[data-stream="/orders"]'],
      ['#/stream/' + encodeURIComponent('/orders'), '#tail-rows tr[data-seq]'],
      ['#/groups', '[data-group="dash-group"]'],
      ['#/tokens', 'tr[data-token-id="viewer"]'],
      ['#/cluster', 'tr[data-cluster-node]'],
    ];
    for (const [route, data] of checks) {
      await go(route);
      await page.locator(data).first().waitFor({ timeout: POLL });
      expect([route, await page.locator('button.action:visible, [data-action]:visible').count()]).toEqual([route, 0]);
    }
    await go('#/tokens');
    expect(await page.isVisible('#issue-box')).toBe(false);
    await shot('read-only');
  });

  it('ran without script errors or content security policy violations', () => {
    expect(problems).toEqual([]);
  });
});
