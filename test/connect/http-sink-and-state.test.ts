/**
 * Against a real node and local HTTP servers: the HTTP sink delivers per record, retries a 503
 * and dead-letters a 400; source checkpoints kept over HTTP are saved with an idempotency key
 * after the produce and loaded again at the next start.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeCheckpoint } from '../../src/connect';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { startRuntime, waitFor, writeRuntimeFiles } from './helpers/runtime-process';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

async function server(answer: (r: Seen) => { status: number; body?: string | Buffer }): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const s = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() };
      seen.push(r);
      const a = answer(r);
      res.writeHead(a.status).end(a.body ?? '');
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, seen, close: () => new Promise((r) => s.close(() => r())) };
}

describe('HTTP sink and HTTP checkpoint storage', () => {
  let node: NodeProcess;
  beforeAll(async () => {
    node = await startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1'] });
  });
  afterAll(async () => {
    await node?.stop();
  });

  test('the HTTP sink retries a 503, dead-letters a 400 and delivers the rest', async () => {
    let flakyFailed = false;
    const hook = await server((r) => {
      if (r.body === 'bad-1') return { status: 400 };
      if (r.body === 'flaky-1' && !flakyFailed) {
        flakyFailed = true;
        return { status: 503 };
      }
      return { status: 204 };
    });
    await fetch(`${node.url}/hook-in`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } });
    await fetch(`${node.url}/hook-in`, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body: JSON.stringify({ records: ['ok-1', 'bad-1', 'flaky-1', 'ok-2'].map((body) => ({ body })) }) });
    const dir = writeRuntimeFiles({
      config: `[kafka]\nbootstrap_servers = "${node.kafka}"\n[connectors]\nconfig_dir = "{dir}/connectors"\n[state]\npath = "{dir}/state"\n[http.metrics]\nenabled = true\n`,
      connectors: { 'hook.toml': `type = "sink"\nkey = "hook"\npath = "libsvc_connector_http_sink"\n[[topics]]\nnames = ["hook-in"]\n[plugin_config]\nurl = "${hook.url}/events"\nmode = "record"\nheaders = { authorization = "Bearer t0ken" }\n[error]\ninitial_backoff = "10ms"\ntolerance = "dlq"\ndlq_topic = "hook-dlq"\n` },
    });
    const rt = await startRuntime(dir);
    await waitFor(async () => (await (await fetch(`${rt.url}/metrics`)).text()).includes('svc_connector_messages_processed_total{connector_key="hook"} 3'), 'three records delivered');
    const metrics = await (await fetch(`${rt.url}/metrics`)).text();
    expect(metrics).toContain('svc_connector_dead_lettered_total{connector_key="hook"} 1');
    expect(metrics).toContain('svc_connector_retries_total{connector_key="hook",connector_type="sink"} 1');
    expect(hook.seen.map((s) => s.body)).toEqual(['ok-1', 'bad-1', 'flaky-1', 'ok-2', 'flaky-1']);
    expect(hook.seen[0]).toMatchObject({ method: 'POST', url: '/events', headers: expect.objectContaining({ authorization: 'Bearer t0ken' }) });
    expect(JSON.stringify(await (await fetch(`${rt.url}/sinks/hook/configs/plugin`)).json())).not.toContain('t0ken');
    await rt.stop();
    await hook.close();
  });

  test('checkpoints over HTTP: saved after the produce with an idempotency key, loaded at the next start', async () => {
    const store = new Map<string, string>();
    const state = await server((r) => {
      if (r.method === 'PUT') {
        store.set(r.url, r.body);
        return { status: 204 };
      }
      const v = store.get(r.url);
      return v === undefined ? { status: 404 } : { status: 200, body: v };
    });
    const dir = writeRuntimeFiles({
      config: `[kafka]\nbootstrap_servers = "${node.kafka}"\n[connectors]\nconfig_dir = "{dir}/connectors"\n[state]\nstorage = "http"\n[state.http]\nurl = "${state.url}/cp/"\n`,
      connectors: { 'gen.toml': `type = "source"\nkey = "gen-http"\npath = "libsvc_connector_generator_source"\n[[topics]]\nname = "state-http"\n[plugin_config]\nrate = 0\ncount = 500\n[batch]\nmax_records = 100\n` },
    });
    const rt = await startRuntime(dir);
    expect(rt.output()).toContain('it starts from the beginning');
    await waitFor(() => store.has('/cp/gen-http') && decodeCheckpoint(Buffer.from(store.get('/cp/gen-http')!)).state.toString() === JSON.stringify({ next: 500 }), 'the checkpoint reaches 500');
    await rt.stop();
    const puts = state.seen.filter((s) => s.method === 'PUT');
    expect(puts).toHaveLength(5);
    expect(new Set(puts.map((p) => p.headers['idempotency-key'])).size).toBe(5);
    const records = (await (await fetch(`${node.url}/state-http?format=json`)).json()) as unknown[];
    expect(records).toHaveLength(500);

    const again = await startRuntime(dir);
    expect(again.output()).not.toContain('it starts from the beginning');
    await new Promise((r) => setTimeout(r, 1000));
    expect(((await (await fetch(`${node.url}/state-http?format=json`)).json()) as unknown[]).length).toBe(500);
    await again.stop();
    await state.close();
  });
});
