/**
 * GET /metrics (docs/metrics.md) on a real node: the counters move exactly as the work done
 * (records the clients had acknowledged, requests by status), the gauges show what is open,
 * and the endpoint follows the admin listener's auth rules (--metrics-listen: without them).
 */
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { type NodeProcess, startNode } from '../../helpers/node-process';
import { freePort } from '../../helpers/free-ports';
import { sample } from '../../helpers/metrics-text';

async function scrape(url: string, token?: string): Promise<{ status: number; text: string; type: string | null }> {
  const r = await fetch(`${url}/metrics`, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
  return { status: r.status, text: await r.text(), type: r.headers.get('content-type') };
}

describe('metrics under load (auth off)', () => {
  let node: NodeProcess;
  beforeAll(async () => {
    node = await startNode();
  });

  test('appended records equal the acknowledged ones; requests counted by listener, op and status class', async () => {
    const before = await scrape(node.adminUrl!);
    expect(before.status).toBe(200);
    expect(before.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(sample(before.text, 'svc_appended_records_total')).toBe(0);
    expect(sample(before.text, 'svc_process_cpu_user_seconds_total')).not.toBeNull();
    expect(sample(before.text, 'svc_nodejs_eventloop_lag_p99_seconds')).not.toBeNull();

    // Bounded load: 4 streams, 50 concurrent appends of 1-5 records each, over HTTP.
    const streams = ['/m/a', '/m/b', '/m/c', '/m/d'];
    for (const s of streams) expect((await fetch(node.url + s, { method: 'PUT' })).status).toBe(201);
    let acked = 0;
    let ackedRequests = 0;
    await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const n = 1 + (i % 5);
        const body = JSON.stringify({ records: Array.from({ length: n }, (_, k) => ({ body: `r${i}-${k}` })) });
        const r = await fetch(node.url + streams[i % streams.length]!, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body });
        await r.arrayBuffer();
        if (r.status === 200 || r.status === 201 || r.status === 204) {
          acked += n;
          ackedRequests++;
        }
      }),
    );
    expect(ackedRequests).toBe(50);
    // 7 reads of a stream that does not exist: 404s.
    for (let i = 0; i < 7; i++) expect((await fetch(`${node.url}/m/missing-${i}`)).status).toBe(404);

    // Kafka: a topic and 30 records produced by a real client (acks: all).
    const kafka = new Kafka({ clientId: 'metrics-test', brokers: [node.kafka], logLevel: logLevel.NOTHING, retry: { retries: 0 } });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'metrics-k' }] });
    await admin.disconnect();
    const producer = kafka.producer();
    await producer.connect();
    const sent = await producer.send({ topic: 'metrics-k', acks: -1, messages: Array.from({ length: 30 }, (_, i) => ({ value: `k${i}` })) });
    expect(sent[0]!.errorCode).toBe(0);
    acked += 30;

    const after = await scrape(node.adminUrl!);
    expect(after.status).toBe(200);
    expect(sample(after.text, 'svc_appended_records_total')).toBe(acked);
    expect(sample(after.text, 'svc_appended_bytes_total')).toBeGreaterThan(0);
    expect(sample(after.text, 'svc_http_requests_total', 'listener="svc",op="append",status="2xx"')).toBe(50);
    expect(sample(after.text, 'svc_http_requests_total', 'listener="svc",op="create",status="2xx"')).toBe(4);
    expect(sample(after.text, 'svc_http_requests_total', 'listener="svc",op="read",status="4xx"')).toBe(7);
    expect(sample(after.text, 'svc_http_requests_total', 'listener="svc",op="read",status="2xx"')).toBeNull();
    expect(sample(after.text, 'svc_http_request_duration_seconds_count', 'listener="svc",op="append"')).toBe(50);
    expect(sample(after.text, 'svc_http_request_duration_seconds_bucket', 'listener="svc",op="append",le="+Inf"')).toBe(50);
    // The first scrape itself is counted on the admin listener.
    expect(sample(after.text, 'svc_http_requests_total', 'listener="admin",op="read",status="2xx"')).toBe(1);
    expect(sample(after.text, 'svc_kafka_requests_total', 'api="Produce"')).toBe(1);
    expect(sample(after.text, 'svc_kafka_requests_total', 'api="CreateTopics"')).toBe(1);
    expect(sample(after.text, 'svc_kafka_connections')).toBeGreaterThanOrEqual(1);
    expect(sample(after.text, 'svc_metadata_applied_index')).toBeGreaterThan(0);
    expect(sample(after.text, 'svc_shard_workers_down')).toBe(0);
    expect(sample(after.text, 'svc_disk_full')).toBe(0);
    // Group commits, from the shard workers: every append above is at least one frame of a group.
    const groups = sample(after.text, 'svc_group_commit_frames_count')!;
    expect(groups).toBeGreaterThanOrEqual(1);
    expect(sample(after.text, 'svc_group_commit_frames_sum')).toBeGreaterThanOrEqual(50 + 4 + 1);
    expect(sample(after.text, 'svc_group_commit_frames_bucket', 'le="+Inf"')).toBe(groups);
    expect(sample(after.text, 'svc_group_commit_duration_seconds_count')).toBe(groups);
    expect(sample(after.text, 'svc_group_commit_duration_seconds_sum')).toBeGreaterThan(0);
    // No ledger without --objects: its histogram is left out.
    expect(after.text).not.toMatch(/^svc_objects_ledger_commit_seconds/m);

    await producer.disconnect();
    // Closed connections leave the gauge (the server sees the close a moment later).
    let connections: number | null = null;
    for (let i = 0; i < 50; i++) {
      connections = sample((await scrape(node.adminUrl!)).text, 'svc_kafka_connections');
      if (connections === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(connections).toBe(0);
  });

  test("each scrape carries the node's clock, for rates over the node's own interval (the dashboard's charts)", async () => {
    const at = sample((await scrape(node.adminUrl!)).text, 'svc_scrape_time_seconds')!;
    expect(Math.abs(at - Date.now() / 1000)).toBeLessThan(5);
    await new Promise((r) => setTimeout(r, 1100));
    expect(sample((await scrape(node.adminUrl!)).text, 'svc_scrape_time_seconds')! - at).toBeGreaterThanOrEqual(1);
  });

  test('live readers gauge counts waiting long-polls and SSE streams', async () => {
    expect((await fetch(node.url + '/m/live', { method: 'PUT' })).status).toBe(201);
    const ac = new AbortController();
    const poll = fetch(`${node.url}/m/live?live=long-poll&seq=0`, { signal: ac.signal }).catch(() => null);
    const sse = await fetch(`${node.url}/m/live?live=sse&seq=0`, { signal: ac.signal });
    expect(sse.status).toBe(200);
    let text = '';
    for (let i = 0; i < 50; i++) {
      text = (await scrape(node.adminUrl!)).text;
      if (sample(text, 'svc_live_readers', 'kind="long_poll"') === 1 && sample(text, 'svc_live_readers', 'kind="sse"') === 1) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(sample(text, 'svc_live_readers', 'kind="long_poll"')).toBe(1);
    expect(sample(text, 'svc_live_readers', 'kind="sse"')).toBe(1);
    ac.abort();
    await poll;
  });
});

describe('metrics with --auth required', () => {
  const b64 = (s: string | Buffer): string => Buffer.from(s).toString('base64url');
  const ROOT = `${b64('root')}.${b64(randomBytes(32))}`;
  let node: NodeProcess;
  let metricsPort: number;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    metricsPort = await freePort();
    node = await startNode({ args: ['--auth', 'required', '--auth-bootstrap-token', ROOT, '--metrics-listen', `127.0.0.1:${metricsPort}`] });
    const grant = async (id: string, scope: unknown): Promise<void> => {
      const r = await fetch(`${node.adminUrl!}/admin/tokens`, { method: 'POST', headers: { authorization: `Bearer ${ROOT}`, 'content-type': 'application/json' }, body: JSON.stringify({ id, scope }) });
      expect(r.status).toBe(201);
      tokens[id] = ((await r.json()) as { token: string }).token;
    };
    await grant('scraper', { groups: { admin: { read: true, write: false } }, ops: ['node_read'], audiences: ['admin'] });
    await grant('stream-reader', { streams: [{ prefix: '/' }], groups: { stream: { read: true, write: false } }, ops: ['read'], audiences: ['svc', 'admin'] });
  });

  test('401 without a token, 403 with a token that may not read nodes, 200 with an admin read token', async () => {
    const none = await scrape(node.adminUrl!);
    expect(none.status).toBe(401);
    expect(none.text).not.toContain('svc_http_requests_total');
    const wrong = await scrape(node.adminUrl!, tokens['stream-reader']);
    expect(wrong.status).toBe(403);
    const ok = await scrape(node.adminUrl!, tokens['scraper']);
    expect(ok.status).toBe(200);
    // The refusals above were counted, by status class.
    expect(sample(ok.text, 'svc_http_requests_total', 'listener="admin",op="read",status="4xx"')).toBe(2);
  });

  test('--metrics-listen serves GET /metrics without a token, and nothing else', async () => {
    const open = await scrape(`http://127.0.0.1:${metricsPort}`);
    expect(open.status).toBe(200);
    expect(sample(open.text, 'svc_appended_records_total')).toBe(0);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/admin/tokens`)).status).toBe(404);
  });
});

describe('--no-metrics', () => {
  test('the endpoint is gone', async () => {
    const node = await startNode({ args: ['--no-metrics'] });
    expect((await fetch(`${node.adminUrl!}/metrics`)).status).toBe(404);
  });
});
