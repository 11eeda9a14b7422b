/**
 * svc_object_store_* (docs/metrics.md): the figures of real object stores (two file: stores, as two
 * threads would keep them, summed with addObjectStoreStats) exposed through the node's registry,
 * and nothing at all where the node has no object store; svc_objects_compaction_* likewise.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NodeMetrics, type MetricSources } from '../../../src/gateway/metrics';
import { type ObjectStoreStats, addObjectStoreStats, newObjectStoreStats, openObjectStore } from '../../../src/objects';
import { sample } from '../../helpers/metrics-text';

function sources(objectStore: MetricSources['objectStore']): MetricSources {
  return {
    appended: () => ({ records: 0, bytes: 0 }),
    liveReaders: () => ({ sse: 0, longPoll: 0 }),
    kafka: () => null,
    shards: () => Promise.resolve({ appliedIndex: 0, commits: null, readCache: null }),
    shardHealth: () => ({ workersDown: 0, diskFull: false }),
    objectStore,
  };
}

describe('object store metrics', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-object-metrics-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('exposes requests by op and outcome, latency and bytes, summed over every thread', async () => {
    const perThread = [newObjectStoreStats(), newObjectStoreStats()];
    const [a, b] = perThread.map((stats) => openObjectStore(`file:${dir}`, { stats }));
    await a!.put('g/1/1/0/000000000001', Buffer.alloc(1000));
    await b!.put('g/1/1/1/000000000001', [Buffer.alloc(500), Buffer.alloc(500)]);
    await b!.get('g/1/1/0/000000000001', { offset: 100, length: 200 });
    await a!.get('g/absent').catch(() => undefined);
    await a!.delete('g/1/1/1/000000000001');
    for await (const _ of b!.list('g/')) void _;
    const metrics = new NodeMetrics();
    metrics.attach(
      sources(async () => {
        const sum: ObjectStoreStats = newObjectStoreStats();
        for (const s of perThread) addObjectStoreStats(sum, s);
        return sum;
      }),
    );
    const { body } = await metrics.scrape();
    expect(sample(body, 'svc_object_store_requests_total', 'op="put",outcome="ok"')).toBe(2);
    expect(sample(body, 'svc_object_store_requests_total', 'op="put",outcome="error"')).toBe(0);
    expect(sample(body, 'svc_object_store_requests_total', 'op="get",outcome="ok"')).toBe(1);
    expect(sample(body, 'svc_object_store_requests_total', 'op="get",outcome="not_found"')).toBe(1);
    expect(sample(body, 'svc_object_store_requests_total', 'op="delete",outcome="ok"')).toBe(1);
    expect(sample(body, 'svc_object_store_requests_total', 'op="list",outcome="ok"')).toBe(1);
    expect(sample(body, 'svc_object_store_bytes_total', 'op="put"')).toBe(2000);
    expect(sample(body, 'svc_object_store_bytes_total', 'op="get"')).toBe(200);
    expect(sample(body, 'svc_object_store_request_seconds_count', 'op="put"')).toBe(2);
    expect(sample(body, 'svc_object_store_request_seconds_bucket', 'op="put",le="+Inf"')).toBe(2);
    expect(sample(body, 'svc_object_store_request_seconds_sum', 'op="put"')).toBeGreaterThan(0);
    expect(sample(body, 'svc_object_store_retries_total', 'op="put"')).toBe(0);
    expect(body).toMatch(/# TYPE svc_object_store_request_seconds histogram/);
  });

  it("exposes compaction's bytes read and written and its time throttled, and nothing without objects mode", async () => {
    const metrics = new NodeMetrics();
    metrics.attach({ ...sources(() => null), compaction: () => ({ readBytes: 3000, writtenBytes: 2900, throttledMs: 1500 }) });
    const { body } = await metrics.scrape();
    expect(sample(body, 'svc_objects_compaction_bytes_total', 'op="get"')).toBe(3000);
    expect(sample(body, 'svc_objects_compaction_bytes_total', 'op="put"')).toBe(2900);
    expect(sample(body, 'svc_objects_compaction_throttled_seconds_total')).toBe(1.5);
    expect(body).toMatch(/# TYPE svc_objects_compaction_throttled_seconds_total counter/);
    const without = new NodeMetrics();
    without.attach(sources(() => null));
    expect((await without.scrape()).body.split('\n').filter((l) => l.startsWith('svc_objects_compaction'))).toEqual([]);
  });

  it('exposes no object store samples without an object store', async () => {
    for (const objectStore of [undefined, () => null]) {
      const metrics = new NodeMetrics();
      metrics.attach(sources(objectStore));
      const { body } = await metrics.scrape();
      expect(body.split('\n').filter((l) => l.startsWith('svc_object_store'))).toEqual([]);
    }
  });
});
