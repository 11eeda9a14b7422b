/**
 * Fencing (docs/cluster.md, "Fencing"): 3 etcd members, 3 nodes on one `file:` object store. An
 * owner is paused with SIGSTOP while its clients keep sending to it; its liveness lease expires and
 * its streams move to the other nodes; it is woken with SIGCONT while the requests sent during the
 * pause are still waiting on its sockets. Not one of those appends is acknowledged by it, and none
 * of their records is visible on the new owners; every append acknowledged before the pause is.
 */
import { ObjectsCluster, sleep, until } from './objects-cluster';
import { readAll } from './writers';

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

interface Answer {
  stream: string;
  body: string;
  sentAt: number;
  status: number;
  seq: number | null;
}

test('a paused owner woken after its streams moved acknowledges nothing, and nothing it wrote is visible', async () => {
  // Streams owned by node 1, written to directly on node 1 (no redirects followed: the test wants its answers).
  const victim = c.nodes.get(1)!;
  const streams: string[] = [];
  for (let i = 0; streams.length < 4; i++) {
    const name = `/fe/s${i}`;
    const r = await fetch(`${victim.url}${name}`, { method: 'PUT', headers: { 'content-type': 'text/plain' }, redirect: 'manual' });
    if (r.status === 201) streams.push(name);
  }
  const answers: Answer[] = [];
  let n = 0;
  let pumping = true;
  const append = async (stream: string): Promise<void> => {
    const i = n++;
    const body = `w-${i}`;
    const sentAt = Date.now();
    try {
      const r = await fetch(`${victim.url}${stream}`, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body: JSON.stringify({ records: [{ body, key: `k${i}`, headers: { h: `v${i}` } }] }), redirect: 'manual' });
      await r.arrayBuffer();
      answers.push({ stream, body, sentAt, status: r.status, seq: r.status === 200 ? Number(r.headers.get('svc-start-seq')) : null });
    } catch {
      answers.push({ stream, body, sentAt, status: -1, seq: null });
    }
  };
  // Two clients per stream, each sending its next append as soon as the last is answered.
  const pumps = streams.flatMap((s) => [0, 1].map(async () => {
    while (pumping) await append(s);
  }));
  await until('appends acknowledged', async () => (answers.filter((a) => a.status === 200).length >= 100 ? true : null), 30_000);
  const stoppedAt = Date.now();
  victim.proc.kill('SIGSTOP');
  // The lease expires (2 s), the holder moves every stream of node 1 to nodes 2 and 3, which open them.
  const other = c.nodes.get(2)!;
  let movedAt = 0;
  let deadAt = 0;
  await until('the streams moved and placed elsewhere', async () => {
    // (A stream detail asks the owner's admin listener: not while the owner is paused and still live.)
    if (deadAt === 0 && !(await c.admin<{ live: boolean }>('/admin/nodes/1', {}, other)).json.live) deadAt = Date.now();
    if (deadAt === 0) return null;
    for (const s of streams) {
      const d = await c.detail(s, other);
      if (movedAt === 0 && d.ownerNodeId !== 1) movedAt = Date.now();
      if (d.state !== 'placed' || d.ownerNodeId === 1) return null;
    }
    return true;
  }, 30_000, 20);
  const placedAt = Date.now();
  await sleep(300);
  const pausedMs = Date.now() - stoppedAt;
  victim.proc.kill('SIGCONT');
  // Its clients still send for a while after it woke.
  await sleep(1_000);
  pumping = false;
  await Promise.all(pumps);
  const inFlight = answers.filter((a) => a.sentAt < stoppedAt && answers.indexOf(a) >= 0);
  const lastBefore = answers.filter((a) => a.sentAt >= stoppedAt);
  const statuses = (xs: Answer[]): string => JSON.stringify(Object.fromEntries([...new Set(xs.map((a) => a.status))].map((st) => [st, xs.filter((a) => a.status === st).length])));
  // Sent while it was paused or after it woke: not one acknowledged by it.
  expect(lastBefore.filter((a) => a.status === 200)).toEqual([]);
  for (const a of lastBefore) expect([307, 503, -1]).toContain(a.status);
  // Everything it acknowledged is visible on the new owners at its seq. Nothing it was sent is
  // visible beyond that, except appends in flight at the pause answered `storage_unavailable`
  // (their group outlived the stall limit while the node was paused: outcome unknown, as after a
  // timeout; docs/cluster.md, "Fencing"). A `moved` answer (a 307 here) means nothing was stored.
  const acked = new Map(answers.filter((a) => a.status === 200).map((a) => [a.body, a]));
  const unknown = new Set(answers.filter((a) => a.sentAt < stoppedAt && (a.status === 503 || a.status === -1)).map((a) => a.body));
  for (const s of streams) {
    const records = await readAll(c, s);
    const visible = records.filter((r) => String(r.body).startsWith('w-'));
    const extra = visible.filter((r) => !acked.has(String(r.body)) && !unknown.has(String(r.body)));
    if (extra.length > 0) console.log(`visible, not acknowledged: ${JSON.stringify(extra.map((r) => ({ ...r, answer: answers.find((a) => a.body === r.body), stoppedAt })))}`);
    expect(extra.map((r) => r.body)).toEqual([]);
    const mine = answers.filter((a) => a.stream === s && a.status === 200);
    const bySeq = new Map(records.map((r) => [r.seq, r]));
    expect(mine.filter((a) => bySeq.get(a.seq!)?.body !== a.body)).toEqual([]);
  }
  const unanswered = inFlight.filter((a) => a.status !== 200);
  console.log(`fencing: lease gone after ${deadAt - stoppedAt} ms, moved after ${movedAt - stoppedAt} ms, placed after ${placedAt - stoppedAt} ms, paused ${pausedMs} ms; ${answers.length} appends sent to node 1; sent before the pause ${statuses(inFlight)}, during or after it ${statuses(lastBefore)}; the last ${unanswered.length} in flight at the pause refused after it woke`);
});
