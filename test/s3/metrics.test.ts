import { Metrics } from '../../src/s3/metrics';

describe('svc-cache metrics', () => {
  it('exposes request latency in the Prometheus histogram format, cumulative buckets with le first', async () => {
    const m = new Metrics(false);
    for (const [op, status, s] of [
      ['GetObject', 200, 0.0004],
      ['GetObject', 200, 0.0005], // on a bound: counted in that bucket, as prom-client does
      ['GetObject', 200, 0.0031],
      ['PutObject', 200, 11],
    ] as const)
      m.request(op, status, s);
    const lines = (await m.registry.metrics()).split('\n').filter((l) => l.startsWith('svc_cache_request_duration_seconds'));
    const bounds = ['0.0005', '0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf'];
    const get = bounds.map((le, i) => `svc_cache_request_duration_seconds_bucket{le="${le}",op="GetObject",result="200"} ${i < 3 ? 2 : 3}`);
    const put = bounds.map((le) => `svc_cache_request_duration_seconds_bucket{le="${le}",op="PutObject",result="200"} ${le === '+Inf' ? 1 : 0}`);
    expect(lines).toEqual([
      ...get,
      'svc_cache_request_duration_seconds_sum{op="GetObject",result="200"} 0.004',
      'svc_cache_request_duration_seconds_count{op="GetObject",result="200"} 3',
      ...put,
      'svc_cache_request_duration_seconds_sum{op="PutObject",result="200"} 11',
      'svc_cache_request_duration_seconds_count{op="PutObject",result="200"} 1',
    ]);
    expect(await m.registry.metrics()).toContain('# TYPE svc_cache_request_duration_seconds histogram');
  });

  it('counts hits and bytes between scrapes and keeps the totals across scrapes', async () => {
    const m = new Metrics(false);
    m.hit('memory');
    m.hit('memory');
    m.hit('disk');
    m.sent('cache', 4096);
    let text = await m.registry.metrics();
    expect(text).toContain('svc_cache_hits_total{tier="memory"} 2');
    expect(text).toContain('svc_cache_hits_total{tier="disk"} 1');
    expect(text).toContain('svc_cache_response_bytes_total{source="cache"} 4096');
    m.hit('memory');
    m.sent('cache', 1);
    m.sent('origin', 10);
    text = await m.registry.metrics();
    expect(text).toContain('svc_cache_hits_total{tier="memory"} 3');
    expect(text).toContain('svc_cache_response_bytes_total{source="cache"} 4097');
    expect(text).toContain('svc_cache_response_bytes_total{source="origin"} 10');
  });
});
