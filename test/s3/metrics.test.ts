import { Histogram, Registry } from 'prom-client';
import { Metrics } from '../../src/s3/metrics';

describe('svc-cache metrics', () => {
  it('exposes request latency exactly as a prom-client histogram with the same observations would', async () => {
    const m = new Metrics(false);
    const reference = new Registry();
    const h = new Histogram({
      name: 'svc_cache_request_duration_seconds',
      help: 'client request latency until the response ends',
      labelNames: ['op', 'result'] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [reference],
    });
    const seen: [string, number, number][] = [
      ['GetObject', 200, 0.0004],
      ['GetObject', 200, 0.0005],
      ['GetObject', 200, 0.0031],
      ['GetObject', 304, 0.02],
      ['PutObject', 200, 10],
      ['PutObject', 200, 11],
      ['HeadObject', 404, 0],
    ];
    for (const [op, status, s] of seen) {
      m.request(op, status, s);
      h.observe({ op, result: String(status) }, s);
    }
    const lines = (text: string) => text.split('\n').filter((l) => l.startsWith('svc_cache_request_duration_seconds')).sort();
    expect(lines(await m.registry.metrics())).toEqual(lines(await reference.metrics()));
    expect(lines(await m.registry.metrics())).toContain('svc_cache_request_duration_seconds_count{op="GetObject",result="200"} 3');
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
