/**
 * Fencing (docs/cluster.md, "Fencing"): 3 etcd members, 3 nodes on one `file:` object store. An
 * owner is paused with SIGSTOP while its clients keep sending to it; its liveness lease expires and
 * its streams move to the other nodes; it is woken with SIGCONT while the requests sent during the
 * pause are still waiting on its sockets. Not one of those appends is acknowledged by it, and none
 * of their records is visible on the new owners; every append acknowledged before the pause is.
 */
import { ObjectsCluster, sleep, until } from './objects-cluster';
import { missing, readAll } from './writers';

jest.setTimeout(120_000);

let c: ObjectsCluster;

beforeAll(async () => {
  c = await ObjectsCluster.start(['--node-lease-ttl', '2']);
}, 90_000);
afterAll(async () => {
  const paused = [...c.nodes.values()].find((n) => n.proc.signalCode === null && n.proc.exitCode === null);
  paused?.proc.kill('SIGCONT');
  await c?.stop();
});

test('a paused owner woken after its streams moved acknowledges nothing, and nothing it wrote is visible', async () => {
  // Streams owned by node 1, written to directly on node 1 (no redirects followed: the test wants its answers).
  const victim = c.nodes.get(1)!;
  const streams: string[] = [];
  for (let i = 0; streams.length < 4; i++) {
    const name = `/fe/s${i}`;
    const r = await fetch(`${victim.url}${name}`, { method: 'PUT', headers: { 'content-type': 'text/plain' }, redirect: 'manual' });
    if (r.status === 201) streams.push(name);
  }
  const acked = new Map<string, Array<{ seq: number; body: string; key: string; headers: Record<string, string>; at: number }>>(streams.map((s) => [s, []]));
  const append = async (stream: string, body: string, i: number): Promise<Response> =>
    fetch(`${victim.url}${stream}`, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body: JSON.stringify({ records: [{ body, key: `k${i}`, headers: { h: `v${i}` } }] }), redirect: 'manual' });
  for (const s of streams) {
    for (let i = 0; i < 20; i++) {
      const r = await append(s, `before-${i}`, i);
      expect(r.status).toBe(200);
      acked.get(s)!.push({ seq: Number(r.headers.get('svc-start-seq')), body: `before-${i}`, key: `k${i}`, headers: { h: `v${i}` }, at: Date.now() });
    }
  }
  victim.proc.kill('SIGSTOP');
  // Clients keep sending while it is paused: the requests wait on its sockets.
  const during: Array<Promise<{ status: number; body: string }>> = [];
  const sending = (async () => {
    for (let i = 0; i < 30; i++) {
      for (const s of streams) {
        during.push(
          append(s, `during-${i}`, 1000 + i).then(
            async (r) => ({ status: r.status, body: await r.text() }),
            (err: unknown) => ({ status: -1, body: String(err) }),
          ),
        );
      }
      await sleep(100);
    }
  })();
  // The lease expires (2 s), the holder moves every stream of node 1 to nodes 2 and 3, which open them.
  const other = c.nodes.get(2)!;
  await until('the streams moved and placed elsewhere', async () => {
    for (const s of streams) {
      const d = await c.detail(s, other);
      if (d.state !== 'placed' || d.ownerNodeId === 1) return null;
    }
    return true;
  }, 30_000, 100);
  await sending;
  victim.proc.kill('SIGCONT');
  const answers = await Promise.all(during);
  const acknowledged = answers.filter((a) => a.status === 200);
  expect(acknowledged).toEqual([]);
  // Answered with a redirect to the new owner or a retryable refusal, never a success.
  for (const a of answers) expect([307, 503, -1]).toContain(a.status);
  // Nothing written during the pause is visible, and everything acknowledged before it is.
  await sleep(500);
  for (const s of streams) {
    const records = await readAll(c, s);
    expect(records.filter((r) => String(r.body).startsWith('during-'))).toEqual([]);
    expect(missing({ stream: s, kind: 'svc', acked: acked.get(s)!, failures: 0, stop: async () => undefined }, records)).toEqual([]);
  }
  // Whatever the woken node still tries is fenced: an append sent to it now is not acknowledged by it.
  const late = await append(streams[0]!, 'late', 9999);
  expect(late.status).not.toBe(200);
});
