/**
 * `--protocol ds --gateway-threads 2` (gateway-thread.ts): the Durable Streams listener's stream
 * requests served by two gateway threads, the `__ds` subscription APIs by the main thread. Sixteen
 * keep-alive connections, spread by the kernel over the threads: appends through every one keep
 * the stream's order, reads and long-polls through every one see them, a stream created and
 * appended to on a thread wakes the main thread's pull-wake subscription (the thread posts its
 * stream events), and the threads, not the main thread, did the work.
 */
import type * as http from 'node:http';
import { type Answer, connections, requestOn } from '../helpers/keep-alive';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { threadTicks } from '../helpers/thread-ticks';

const CONNECTIONS = 16;

/** CPU ticks of each of the node's gateway threads. */
const gatewayTicks = (pid: number): number[] => threadTicks(pid, 'svc-gw-');

describe('gateway threads on the Durable Streams listener (--protocol ds --gateway-threads 2)', () => {
  let node: NodeProcess;
  let agents: http.Agent[];
  /** The long-polls' own connections (an agent's one socket would queue the appends behind its poll). */
  let pollAgents: http.Agent[];

  beforeAll(async () => {
    node = await startNode({ args: ['--protocol', 'ds', '--gateway-threads', '2', '--long-poll-timeout', '10000'] });
    agents = connections(CONNECTIONS);
    pollAgents = connections(CONNECTIONS);
  }, 60_000);
  afterAll(async () => {
    for (const a of [...(agents ?? []), ...(pollAgents ?? [])]) a.destroy();
    await node?.stop();
  });

  const request = (c: number, method: string, path: string, body?: string, headers: Record<string, string> = {}, pool = agents): Promise<Answer> => requestOn(pool[c]!, `${node.url}${path}`, method, body, headers);
  const json = { 'content-type': 'application/json' };

  test('appends on every connection keep order, long-polls on every connection wake, a pull-wake subscription is woken, and the threads served them', async () => {
    expect(gatewayTicks(node.proc.pid!)).toHaveLength(2);
    const before = gatewayTicks(node.proc.pid!);
    expect((await request(0, 'PUT', '/v1/stream/wake/pool', '[]', json)).status).toBe(201);
    const sub = await request(1, 'PUT', '/v1/stream/__ds/subscriptions/p', JSON.stringify({ type: 'pull-wake', pattern: 'events/*', wake_stream: 'wake/pool', lease_ttl_ms: 1000 }), json);
    expect(sub.status).toBe(201);

    expect((await request(2, 'PUT', '/v1/stream/events/a', '[]', json)).status).toBe(201);
    const tail = (await request(3, 'HEAD', '/v1/stream/events/a')).headers['stream-next-offset'] as string;
    // A long-poll at the tail on every connection, then appends through every connection.
    const polls = agents.map((_, c) => request(c, 'GET', `/v1/stream/events/a?offset=${tail}&live=long-poll`, undefined, {}, pollAgents));
    await new Promise((r) => setTimeout(r, 300));
    const PER = 10;
    const appends = agents.map(async (_, c) => {
      for (let j = 0; j < PER; j++) expect((await request(c, 'POST', '/v1/stream/events/a', JSON.stringify({ c, j }), json)).status).toBe(204);
    });
    const woken = await Promise.all(polls);
    for (const w of woken) {
      expect(w.status).toBe(200);
      expect((JSON.parse(w.body) as unknown[]).length).toBeGreaterThan(0);
    }
    await Promise.all(appends);

    const all = JSON.parse((await request(5, 'GET', '/v1/stream/events/a?offset=-1')).body) as Array<{ c: number; j: number }>;
    expect(all).toHaveLength(CONNECTIONS * PER);
    for (let c = 0; c < CONNECTIONS; c++) expect(all.filter((m) => m.c === c).map((m) => m.j)).toEqual([...Array(PER).keys()]);

    // The subscription lives on the main thread; the streams' events came from the threads.
    let wakes: Array<{ subscription_id: string }> = [];
    for (let i = 0; i < 50 && !wakes.some((w) => w.subscription_id === 'p'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      wakes = JSON.parse((await request(6, 'GET', '/v1/stream/wake/pool?offset=-1')).body) as typeof wakes;
    }
    expect(wakes.some((w) => w.subscription_id === 'p')).toBe(true);
    const claim = await request(7, 'POST', '/v1/stream/__ds/subscriptions/p/claim', JSON.stringify({ worker: 'w1' }), json);
    expect(claim.status).toBe(200);
    expect((JSON.parse(claim.body) as { streams: Array<{ path: string }> }).streams.map((s) => s.path)).toContain('events/a');

    const after = gatewayTicks(node.proc.pid!);
    // Both threads took connections and served requests (a tick is 10 ms of CPU).
    expect(after.map((t, k) => t - before[k]!).every((d) => d > 0)).toBe(true);
  });
});

describe("--ds-listen's Durable Streams listener beside an Svc one, with --gateway-threads 2", () => {
  test('it gets two threads of its own (svc-gw-ds-*), which serve its appends and reads in order, and the Svc listener sees the same streams', async () => {
    const node = await startNode({ args: ['--gateway-threads', '2', '--ds-listen', '127.0.0.1:0'] });
    const pool = connections(CONNECTIONS);
    try {
      expect(threadTicks(node.proc.pid!, 'svc-gw-ds-')).toHaveLength(2);
      expect(threadTicks(node.proc.pid!, 'svc-gw-')).toHaveLength(2);
      const before = threadTicks(node.proc.pid!, 'svc-gw-ds-');
      const json = { 'content-type': 'application/json' };
      expect((await requestOn(pool[0]!, `${node.dsUrl}/v1/stream/beside`, 'PUT', '[]', json)).status).toBe(201);
      // Enough appends that each thread's share is well over a 10 ms CPU tick.
      const PER = 60;
      await Promise.all(
        pool.map(async (agent, c) => {
          for (let j = 0; j < PER; j++) expect((await requestOn(agent, `${node.dsUrl}/v1/stream/beside`, 'POST', JSON.stringify({ c, j }), json)).status).toBe(204);
        }),
      );
      const all = JSON.parse((await requestOn(pool[1]!, `${node.dsUrl}/v1/stream/beside?offset=-1`, 'GET')).body) as Array<{ c: number; j: number }>;
      expect(all).toHaveLength(CONNECTIONS * PER);
      for (let c = 0; c < CONNECTIONS; c++) expect(all.filter((m) => m.c === c).map((m) => m.j)).toEqual([...Array(PER).keys()]);
      // The same stream through the Svc listener (its own threads).
      const head = await fetch(`${node.url}/beside`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('svc-next-seq')).toBe(String(CONNECTIONS * PER));
      const after = threadTicks(node.proc.pid!, 'svc-gw-ds-');
      // Both of the listener's threads took connections and served requests (a tick is 10 ms of CPU).
      expect(after.map((t, k) => t - before[k]!).every((d) => d > 0)).toBe(true);
    } finally {
      for (const a of pool) a.destroy();
      expect(await node.stop()).toBe(0);
    }
  }, 60_000);
});
