/**
 * The HTTP sink in record mode against a target that takes 10 ms per request drains a 20,000
 * record backlog: requests go out concurrently, one write() stops starting requests before its
 * call timeout and the delivered prefix is committed, so the committed offset ends equal to what
 * was delivered. Each request carries Idempotency-Key and topic/partition/offset headers, and
 * /metrics shows the sink's lag fall to 0.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { startRuntime, waitFor, writeRuntimeFiles } from './helpers/runtime-process';

const TOTAL = 20000;

let node: NodeProcess;
let target: http.Server;
const keys = new Map<string, number>();
let missingHeaders = 0;

beforeAll(async () => {
  node = await startNode({ args: ['--no-admin', '--shards', '1', '--shard-workers', '1'] });
  target = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const key = req.headers['idempotency-key'];
      if (typeof key !== 'string' || key !== `${req.headers['svc-topic']}-${req.headers['svc-partition']}-${req.headers['svc-offset']}`) missingHeaders++;
      else keys.set(key, (keys.get(key) ?? 0) + 1);
      setTimeout(() => res.writeHead(204).end(), 10);
    });
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
});

afterAll(async () => {
  target?.closeAllConnections();
  await new Promise((r) => target?.close(r));
  await node?.stop();
});

const lagMetric = (text: string): number | null => {
  const m = /^svc_connector_consumer_lag\{connector_key="hook",topic="backlog",partition="0"\} (\d+)$/m.exec(text);
  return m === null ? null : Number(m[1]);
};

test('drains a 20,000-record backlog at 10 ms per request; committed offset equals delivered; lag falls to 0', async () => {
  await fetch(`${node.url}/backlog`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } });
  for (let i = 0; i < TOTAL; i += 5000) {
    const records = Array.from({ length: 5000 }, (_, j) => ({ body: `r-${i + j}` }));
    const r = await fetch(`${node.url}/backlog`, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body: JSON.stringify({ records }) });
    expect(r.ok).toBe(true);
  }
  const dir = writeRuntimeFiles({
    config: `[kafka]\nbootstrap_servers = "${node.kafka}"\n[connectors]\nconfig_dir = "{dir}/connectors"\n[state]\npath = "{dir}/state"\n[http.metrics]\nenabled = true\n`,
    // A 5 s call timeout: each write() can send only part of a 5,000-record chunk.
    connectors: { 'hook.toml': `type = "sink"\nkey = "hook"\npath = "libsvc_connector_http_sink"\nplugin_timeout = "5s"\n[[topics]]\nnames = ["backlog"]\n[plugin_config]\nurl = "http://127.0.0.1:${(target.address() as AddressInfo).port}/in"\nmode = "record"\nmax_in_flight = 64\n` },
  });
  const rt = await startRuntime(dir);
  let maxLag = 0;
  await waitFor(
    async () => {
      const lag = lagMetric(await (await fetch(`${rt.url}/metrics`)).text());
      if (lag !== null) maxLag = Math.max(maxLag, lag);
      return keys.size >= TOTAL && lag === 0;
    },
    'every record delivered and the lag at 0',
    100_000, // about 20 s on an idle 2-core machine: room for a busy one
  ).catch((err: Error) => {
    throw new Error(`${err.message}; delivered ${keys.size}, lag ${maxLag}\n${rt.output().split('\n').filter((l) => !l.includes('"level":30') || l.includes('commit')).slice(-15).join('\n')}`);
  });
  expect(maxLag).toBeGreaterThan(0);
  expect(missingHeaders).toBe(0);
  const stats = (await (await fetch(`${rt.url}/stats`)).json()) as { connectors: { key: string; status: string; lag_records: number; partitions: { committed_offset: string }[] }[] };
  const hook = stats.connectors.find((c) => c.key === 'hook')!;
  expect(hook.status).toBe('running');
  expect(hook.lag_records).toBe(0);
  expect(hook.partitions[0]!.committed_offset).toBe(String(TOTAL));
  expect(keys.size).toBe(TOTAL);
  await rt.stop();
}, 120_000);
