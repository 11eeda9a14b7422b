/**
 * The shard-health and metadata metrics (docs/metrics.md) on real nodes: `svc_shards` and
 * `svc_shards_unavailable` follow a shard worker stopped by a storage fault (the test-only fault
 * file of src/shards/worker/test-faults.ts) and its recovery; `svc_metadata_sync_duration_seconds`
 * counts the read-index rounds of a node on a real etcd (each authenticated request's token check
 * syncs first), and has no samples on the local store, where sync() waits for nothing.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { EtcdCluster } from '../../helpers/etcd-cluster';
import { type NodeProcess, startNode, tempDir } from '../../helpers/node-process';
import { sample } from '../../helpers/metrics-text';

jest.setTimeout(120_000);

async function scrape(url: string, token?: string): Promise<string> {
  const r = await fetch(`${url}/metrics`, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
  expect(r.status).toBe(200);
  return r.text();
}

async function until<T>(what: string, f: () => Promise<T | null>, timeoutMs = 40_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v !== null) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('shard health', () => {
  const faults = path.join(tempDir('svc-health-ctl-'), 'faults');
  let node: NodeProcess;
  beforeAll(async () => {
    node = await startNode({ args: ['--shards', '3', '--shard-workers', '1'], env: { NODE_ENV: 'test', SVC_TEST_FAULTS_FILE: faults } });
  });

  test('svc_shards_unavailable counts the shards of a stopped worker, and returns to 0 once it is restarted', async () => {
    const healthy = await scrape(node.adminUrl!);
    expect(sample(healthy, 'svc_shards')).toBe(3);
    expect(sample(healthy, 'svc_shards_unavailable')).toBe(0);
    expect(sample(healthy, 'svc_shard_workers_down')).toBe(0);

    expect((await fetch(`${node.url}/h/a`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    fs.writeFileSync(faults, 'index-write');
    // Appends until the checkpoint hits the fault and the worker stops.
    const down = await until('the worker to stop', async () => {
      await fetch(`${node.url}/h/a`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x', signal: AbortSignal.timeout(5000) }).catch(() => null);
      const text = await scrape(node.adminUrl!);
      return sample(text, 'svc_shard_workers_down') === 1 ? text : null;
    });
    // One worker holds all three shards.
    expect(sample(down, 'svc_shards_unavailable')).toBe(3);
    expect(sample(down, 'svc_shards')).toBe(3);

    fs.rmSync(faults);
    const back = await until('the worker to be restarted', async () => {
      const text = await scrape(node.adminUrl!);
      return sample(text, 'svc_shard_workers_down') === 0 ? text : null;
    });
    expect(sample(back, 'svc_shards_unavailable')).toBe(0);
  });
});

describe('metadata sync latency', () => {
  const b64 = (s: string | Buffer): string => Buffer.from(s).toString('base64url');
  const ROOT = `${b64('root')}.${b64(randomBytes(32))}`;
  let cluster: EtcdCluster;
  let node: NodeProcess;
  beforeAll(async () => {
    cluster = await EtcdCluster.start(1);
    node = await startNode({ args: ['--auth', 'required', '--auth-bootstrap-token', ROOT, '--metadata', cluster.url(`sync-metrics/${randomBytes(4).toString('hex')}`)] });
  }, 90_000);
  afterAll(async () => {
    await node?.stop();
    await cluster?.stop();
  });

  test("counts one read-index round per sequential token check, in the histogram's buckets", async () => {
    const before = await scrape(node.adminUrl!, ROOT);
    const n0 = sample(before, 'svc_metadata_sync_duration_seconds_count')!;
    expect(n0).toBeGreaterThanOrEqual(0);
    for (let i = 0; i < 20; i++) {
      const r = await fetch(`${node.url}/m/none-${i}`, { headers: { authorization: `Bearer ${ROOT}` } });
      expect(r.status).toBe(404); // passed the token check (which synced), found no stream
    }
    const after = await scrape(node.adminUrl!, ROOT);
    const n1 = sample(after, 'svc_metadata_sync_duration_seconds_count')!;
    // 20 requests one after another: 20 rounds at least (the scrapes' own checks sync too).
    expect(n1 - n0).toBeGreaterThanOrEqual(20);
    expect(sample(after, 'svc_metadata_sync_duration_seconds_bucket', 'le="+Inf"')).toBe(n1);
    const sum = sample(after, 'svc_metadata_sync_duration_seconds_sum')!;
    expect(sum).toBeGreaterThan(0);
    // An etcd round trip on loopback: well under a second on average.
    expect(sum / n1).toBeLessThan(1);
  });
});

test('a node on the local metadata store exposes no sync samples (its sync() waits for nothing)', async () => {
  const node = await startNode();
  const text = await scrape(node.adminUrl!);
  expect(text).toContain('# TYPE svc_metadata_sync_duration_seconds histogram');
  expect(sample(text, 'svc_metadata_sync_duration_seconds_count')).toBeNull();
  await node.stop();
});
