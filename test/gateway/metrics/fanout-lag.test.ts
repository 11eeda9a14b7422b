/**
 * svc_live_fanout_lag_seconds (docs/metrics.md) against a real node: 40 SSE readers wait at the
 * tail of a stream; one append wakes them all; once every reader has the record, the histogram
 * has counted exactly 40 deliveries, each no longer than the time the whole fan-out took.
 */
import { type NodeProcess, startNode } from '../../helpers/node-process';

let node: NodeProcess;
const READERS = 40;

function sample(text: string, name: string): number | null {
  for (const line of text.split('\n')) {
    const sp = line.lastIndexOf(' ');
    if (line.slice(0, sp) === name) return Number(line.slice(sp + 1));
  }
  return null;
}

const scrape = async (): Promise<string> => (await fetch(`${node.adminUrl!}/metrics`)).text();

beforeAll(async () => {
  node = await startNode();
});
afterAll(async () => {
  await node.stop();
});

test('one append delivered to 40 SSE readers counts 40 fan-out deliveries', async () => {
  expect((await fetch(`${node.url}/fan`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
  expect(sample(await scrape(), 'svc_live_fanout_lag_seconds_count')).toBe(0);
  const ac = new AbortController();
  const got: Array<Promise<void>> = [];
  for (let i = 0; i < READERS; i++) {
    const res = await fetch(`${node.url}/fan?live=sse&seq=0`, { signal: ac.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    got.push(
      (async () => {
        let text = '';
        while (!text.includes('fan-out-record')) {
          const { value, done } = await reader.read();
          if (done) throw new Error('stream ended');
          text += Buffer.from(value).toString();
        }
      })(),
    );
  }
  // Every reader is waiting at the tail before the append.
  for (let i = 0; i < 100; i++) {
    if (/svc_live_readers\{kind="sse"\} 40/.test(await scrape())) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const started = performance.now();
  expect((await fetch(`${node.url}/fan`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'fan-out-record' })).status).toBe(200);
  await Promise.all(got);
  const took = (performance.now() - started) / 1000;
  const text = await scrape();
  expect(sample(text, 'svc_live_fanout_lag_seconds_count')).toBe(READERS);
  expect(sample(text, 'svc_live_fanout_lag_seconds_bucket{le="+Inf"}')).toBe(READERS);
  const sum = sample(text, 'svc_live_fanout_lag_seconds_sum')!;
  expect(sum).toBeGreaterThan(0);
  expect(sum / READERS).toBeLessThanOrEqual(took);
  ac.abort();
});
