/**
 * The dashboard's cluster page in a real headless Chromium against one node of a real 3-node
 * cluster (3 etcd members, 3 nodes, auth required; docs/cluster.md, docs/dashboard.md): it lists
 * the three nodes with their addresses, slots, placed counts and liveness as /admin/nodes gives
 * them, marks the node it is served by, and shows a node that stops as down. Leaves a screenshot
 * in .ci-artifacts/dashboard-cluster-3-nodes.png.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type Browser, type Page, chromium } from 'playwright-core';
import { ROOT } from '../../helpers/node-process';
import { startCluster, type TestCluster } from '../../helpers/svc-cluster';

jest.setTimeout(90_000);

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = path.join(ROOT, '.ci-artifacts');
/** Room for a poll (2 s) and its requests on a loaded machine. */
const POLL = 8000;

let cluster: TestCluster;
let browser: Browser;
let page: Page;
const problems: string[] = [];

interface NodeDoc {
  nodeId: number;
  advertisedAddress: string;
  slots: number;
  placedCount: number;
  live: boolean;
}

async function nodesOf(adminUrl: string): Promise<NodeDoc[]> {
  return ((await (await fetch(`${adminUrl}/admin/nodes`, { headers: cluster.auth })).json()) as { nodes: NodeDoc[] }).nodes;
}

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install the Debian package chromium (listed in .ci/run)`);
  cluster = await startCluster();
  // Streams on every node, and node 3 with fewer slots, so the rows differ.
  const entry = cluster.byId.get(1)!;
  for (let i = 0; i < 9; i++) {
    const name = `/dash/s${i}`;
    const owner = cluster.byId.get(cluster.placedOn(name))!;
    expect((await fetch(`${owner.url}${name}`, { method: 'PUT', headers: cluster.auth })).status).toBe(201);
  }
  expect((await fetch(`${entry.adminUrl!}/admin/nodes/3`, { method: 'POST', headers: { ...cluster.auth, 'content-type': 'application/json' }, body: JSON.stringify({ slots: 512 }) })).status).toBe(200);

  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (m) => {
    if ((m.type() === 'error' && !m.text().startsWith('Failed to load resource')) || /Content Security Policy|Refused to/i.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  await page.goto(`${entry.adminUrl!}/`);
  await page.evaluate(`sessionStorage.setItem('svc.token', ${JSON.stringify(cluster.token)})`);
  await page.reload();
  await page.locator('body[data-state="ok"]').waitFor({ timeout: POLL });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await cluster?.stop();
});

test('the cluster page lists the three nodes with their addresses, slots, placed counts and liveness', async () => {
  const entry = cluster.byId.get(1)!;
  await page.evaluate(`window.location.hash = '#/cluster'`);
  // Wait for the poll that carries node 3's new slots and all nine placements.
  const expected = await (async () => {
    for (const end = Date.now() + POLL; ; ) {
      const docs = await nodesOf(entry.adminUrl!);
      if (docs.find((d) => d.nodeId === 3)?.slots === 512 && docs.reduce((s, d) => s + d.placedCount, 0) === 9) return docs;
      if (Date.now() > end) throw new Error('the nodes never showed the slots and placements');
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const rows = page.locator('tr[data-cluster-node]');
  // In the page (a string: the test's TypeScript has no DOM types): three rows, nine placed, node 3 at 512.
  // Polled with page.evaluate, not waitForFunction: a string predicate that is not true at once is
  // polled by eval inside the page, which the dashboard's CSP (script-src 'self') refuses.
  const shown = `(() => {
      const trs = [...document.querySelectorAll('tr[data-cluster-node]')];
      const placed = trs.reduce((s, tr) => s + Number(tr.querySelector('[data-k="placedCount"]')?.textContent ?? 0), 0);
      return trs.length === 3 && placed === 9 && document.querySelector('tr[data-cluster-node="3"] input[data-k="slots-input"]')?.value === '512';
    })()`;
  for (const end = Date.now() + POLL; !(await page.evaluate(shown)); ) {
    if (Date.now() > end) throw new Error('the cluster page never showed three nodes, nine placed and node 3 at 512 slots');
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(await rows.count()).toBe(3);
  for (const d of expected) {
    const row = page.locator(`tr[data-cluster-node="${d.nodeId}"]`);
    expect(await row.locator('th').textContent()).toBe(String(d.nodeId));
    expect(await row.locator('[data-k="advertisedAddress"]').textContent()).toBe(cluster.byId.get(d.nodeId)!.url.replace('http://', ''));
    expect(await row.locator('[data-k="live"]').textContent()).toBe('live');
    expect(await row.locator('input[data-k="slots-input"]').inputValue()).toBe(String(d.slots));
    expect(await row.locator('[data-k="placedCount"]').textContent()).toBe(String(d.placedCount));
    expect(await row.locator('[data-k="local"]').textContent()).toBe(d.nodeId === 1 ? 'yes' : 'no');
    // The listeners beyond the spec's fields are shown in the "More" column.
    expect(await row.locator('[data-k="more"]').textContent()).toContain(cluster.byId.get(d.nodeId)!.dsUrl!.replace('http://', ''));
  }
  expect(expected.map((d) => d.slots).sort()).toEqual([1024, 1024, 512]);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-cluster-3-nodes.png'), fullPage: true });
  expect(problems).toEqual([]);
});

test('a node that stops is shown down at the next poll', async () => {
  const victim = cluster.byId.get(3)!;
  await victim.stop();
  cluster.nodes.splice(cluster.nodes.indexOf(victim), 1);
  await page.locator('tr[data-cluster-node="3"] [data-k="live"]', { hasText: /^down$/ }).waitFor({ timeout: POLL });
  expect(await page.locator('tr[data-cluster-node="2"] [data-k="live"]').textContent()).toBe('live');
  expect(await page.locator('tr[data-cluster-node]').count()).toBe(3);
  expect(problems).toEqual([]);
});
