/**
 * GET /metrics with gateway threads (`--gateway-threads 2`, docs/metrics.md): the requests, appends
 * and live readers the threads serve are counted as the main thread's are. Sixteen keep-alive
 * connections, spread by the kernel over the threads; every figure must equal the work done.
 */
import type * as http from 'node:http';
import { type Answer, connections, requestOn } from '../../helpers/keep-alive';
import { sample } from '../../helpers/metrics-text';
import { type NodeProcess, startNode } from '../../helpers/node-process';
import { threadTicks } from '../../helpers/thread-ticks';

const CONNECTIONS = 16;

describe('metrics of the gateway threads', () => {
  let node: NodeProcess;
  let agents: http.Agent[];
  let pollAgents: http.Agent[];
  beforeAll(async () => {
    node = await startNode({ args: ['--gateway-threads', '2', '--long-poll-timeout', '20000'] });
    agents = connections(CONNECTIONS);
    pollAgents = connections(4);
  }, 60_000);
  afterAll(async () => {
    for (const a of [...(agents ?? []), ...(pollAgents ?? [])]) a.destroy();
    await node?.stop();
  });

  const on = (a: http.Agent, method: string, path: string, body?: string): Promise<Answer> => requestOn(a, `${node.url}${path}`, method, body, body === undefined ? {} : { 'content-type': 'text/plain' });
  const scrape = async (): Promise<string> => (await fetch(`${node.adminUrl!}/metrics`)).text();

  test('requests by listener, op and status, appended records and live readers count what the threads served', async () => {
    const pid = node.proc.pid!;
    const before = threadTicks(pid, 'svc-gw-');
    expect(before).toHaveLength(2);
    expect((await on(agents[0]!, 'PUT', '/gm/a', '')).status).toBe(201);
    const PER = 10;
    await Promise.all(
      agents.map(async (a, k) => {
        for (let j = 0; j < PER; j++) expect((await on(a, 'POST', '/gm/a', `${k}-${j}`)).status).toBe(200);
        expect((await on(a, 'GET', `/gm/missing-${k}`)).status).toBe(404);
      }),
    );
    // A long-poll at the tail on each of 4 more connections: live readers while they wait.
    const tail = (await on(agents[1]!, 'HEAD', '/gm/a')).headers['svc-next-seq'] as string;
    const polls = pollAgents.map((a) => on(a, 'GET', `/gm/a?seq=${tail}&live=long-poll`));
    let text = '';
    for (let i = 0; i < 50; i++) {
      text = await scrape();
      if (sample(text, 'svc_live_readers', 'kind="long_poll"') === 4) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(sample(text, 'svc_live_readers', 'kind="long_poll"')).toBe(4);
    const appends = CONNECTIONS * PER;
    expect(sample(text, 'svc_http_requests_total', 'listener="svc",op="append",status="2xx"')).toBe(appends);
    expect(sample(text, 'svc_http_request_duration_seconds_count', 'listener="svc",op="append"')).toBe(appends);
    expect(sample(text, 'svc_http_request_duration_seconds_bucket', 'listener="svc",op="append",le="+Inf"')).toBe(appends);
    expect(sample(text, 'svc_http_requests_total', 'listener="svc",op="create",status="2xx"')).toBe(1);
    expect(sample(text, 'svc_http_requests_total', 'listener="svc",op="read",status="4xx"')).toBe(CONNECTIONS);
    expect(sample(text, 'svc_http_requests_total', 'listener="svc",op="head",status="2xx"')).toBe(1);
    expect(sample(text, 'svc_appended_records_total')).toBe(appends);
    // The appends release the polls: each answered 200, then counted as a read.
    expect((await on(agents[2]!, 'POST', '/gm/a', 'wake')).status).toBe(200);
    for (const p of await Promise.all(polls)) expect(p.status).toBe(200);
    text = await scrape();
    expect(sample(text, 'svc_live_readers', 'kind="long_poll"')).toBe(0);
    expect(sample(text, 'svc_http_requests_total', 'listener="svc",op="read",status="2xx"')).toBe(4);
    expect(sample(text, 'svc_appended_records_total')).toBe(appends + 1);
    // Both threads served (a tick is 10 ms of CPU): the figures above are theirs, not the main thread's.
    const after = threadTicks(pid, 'svc-gw-');
    expect(after.map((t, k) => t - before[k]!).every((d) => d > 0)).toBe(true);
  });
});
