/**
 * Share groups over HTTP (docs/protocol.md "Share groups") on a real node: leases, the three
 * acknowledgements, lock expiry and redelivery with its delivery count, the dead-letter stream
 * past the limit, many workers draining one stream with every record accepted exactly once, and
 * a node killed (SIGKILL) mid-lease that keeps every answered acknowledgement.
 */
import { type NodeProcess, startNode, tempDir } from '../helpers/node-process';

jest.setTimeout(110_000);

interface Leased {
  seq: number;
  deliveryCount: number;
  body?: string;
}
interface Lease {
  lease: string;
  lockedUntilMs: number;
  records: Leased[];
}
interface AckAnswer {
  applied: number[];
  refused: Array<{ seq: number; reason: string }>;
  archived: number[];
}

const JSON_TYPE = { 'content-type': 'application/json' };

function client(node: () => NodeProcess, stream: string, group: string) {
  const at = (q: string): string => `${node().url}/_share${stream}?group=${encodeURIComponent(group)}${q}`;
  return {
    async lease(max: number, lock = '1s'): Promise<Lease> {
      const r = await fetch(at(`&op=lease&max=${max}&lock=${lock}`), { method: 'POST' });
      expect(r.status).toBe(200);
      return (await r.json()) as Lease;
    },
    async ack(lease: string, acks: { accept?: number[]; release?: number[]; reject?: number[] }): Promise<AckAnswer> {
      const r = await fetch(at('&op=ack'), { method: 'POST', headers: JSON_TYPE, body: JSON.stringify({ lease, ...acks }) });
      expect(r.status).toBe(200);
      return (await r.json()) as AckAnswer;
    },
    async config(doc: Record<string, unknown>): Promise<Response> {
      return fetch(at(''), { method: 'PATCH', headers: JSON_TYPE, body: JSON.stringify(doc) });
    },
    async state(): Promise<{ startSeq: number | null; records: Record<string, number> | null }> {
      return (await (await fetch(at(''))).json()) as { startSeq: number | null; records: Record<string, number> | null };
    },
  };
}

async function createWith(node: NodeProcess, stream: string, n: number): Promise<void> {
  expect((await fetch(`${node.url}${stream}`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
  for (let i = 0; i < n; i += 1000) {
    const records = Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({ body: `r${i + j}` }));
    const r = await fetch(`${node.url}${stream}`, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body: JSON.stringify({ records }) });
    expect(r.status).toBe(200);
  }
}

/** Lease until `pred` holds for a lease's records (locks expire on the node's clock: poll, never sleep a fixed time). */
async function leaseUntil(c: ReturnType<typeof client>, max: number, pred: (l: Lease) => boolean, ms = 30_000): Promise<Lease> {
  const end = Date.now() + ms;
  for (;;) {
    const l = await c.lease(max);
    if (pred(l)) return l;
    if (Date.now() > end) throw new Error(`no lease matched within ${ms} ms; last ${JSON.stringify(l)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('share groups over HTTP', () => {
  let node: NodeProcess;
  afterEach(() => node?.stop());

  it('leases, accepts, releases, rejects, redelivers after the lock with the delivery count, and dead-letters past the limit', async () => {
    node = await startNode({ dataDir: tempDir(), engine: 'node' });
    await createWith(node, '/orders', 10);
    const c = client(() => node, '/orders', 'billing');
    expect((await c.config({ 'share.auto.offset.reset': 'nope' })).status).toBe(400);
    const cfg = await c.config({ 'share.auto.offset.reset': 'earliest', 'group.share.delivery.count.limit': 2, 'errors.deadletterqueue.topic.name': '/orders.dlq' });
    expect(cfg.status).toBe(200);
    expect(((await cfg.json()) as { config: Record<string, unknown> }).config).toMatchObject({ 'group.share.delivery.count.limit': 2, 'errors.deadletterqueue.topic.name': '/orders.dlq' });

    // A 5 s lock: long enough for the acknowledgements below on a loaded machine, short enough to wait out.
    const a = await c.lease(5, '5s');
    expect(a.records.map((r) => [r.seq, r.deliveryCount, r.body])).toEqual([0, 1, 2, 3, 4].map((s) => [s, 1, `r${s}`]));
    // Another worker gets the next records, never the ones a lock holds.
    const b = await c.lease(3, '60s');
    expect(b.records.map((r) => r.seq)).toEqual([5, 6, 7]);
    expect(await c.ack(a.lease, { accept: [0, 1], reject: [2], release: [3] })).toMatchObject({ applied: [0, 1, 2, 3], refused: [], archived: [2] });
    // Only the lease holding a record may acknowledge it.
    expect((await c.ack(b.lease, { accept: [4] })).refused).toEqual([{ seq: 4, reason: 'not_owner' }]);
    expect((await c.ack(b.lease, { accept: [5, 6, 7] })).applied).toEqual([5, 6, 7]);
    // The released record comes first, delivered a second time; then the rest of the stream.
    const d = await c.lease(5, '60s'); // held through the wait below for lease a's lock to end
    expect(d.records.map((r) => [r.seq, r.deliveryCount])).toEqual([
      [3, 2],
      [8, 1],
      [9, 1],
    ]);
    expect((await c.ack(d.lease, { accept: [8, 9] })).applied).toEqual([8, 9]);
    // Record 4's lock (lease a) expires: it is delivered again, with delivery count 2.
    const e = await leaseUntil(c, 5, (l) => l.records.some((r) => r.seq === 4));
    expect(e.records.map((r) => [r.seq, r.deliveryCount])).toEqual([[4, 2]]);
    expect((await c.ack(a.lease, { accept: [4] })).refused).toEqual([{ seq: 4, reason: 'not_owner' }]);
    expect((await c.ack(e.lease, { accept: [4] })).applied).toEqual([4]);
    // Record 3, delivered twice (the limit), is released again: archived, and dead-lettered.
    expect((await c.ack(d.lease, { release: [3] })).archived).toEqual([3]);
    expect(await c.state()).toMatchObject({ startSeq: 10, records: { available: 0, acquired: 0, acknowledged: 0, archived: 0 } });
    const dlq = (await (await fetch(`${node.url}/orders.dlq`)).json()) as Array<{ body: string; headers: Record<string, string> }>;
    expect(dlq.map((r) => [r.body, r.headers['svc-share-seq'], r.headers['svc-share-delivery-count'], r.headers['svc-share-group']])).toEqual([
      ['r2', '2', '1', 'billing'],
      ['r3', '3', '2', 'billing'],
    ]);
    // Nothing left to lease; refusals of the request itself.
    expect((await c.lease(5)).records).toEqual([]);
    expect((await fetch(`${node.url}/_share/orders?group=billing&op=lease&max=0`, { method: 'POST' })).status).toBe(400);
    expect((await fetch(`${node.url}/_share/orders?group=billing&op=lease&lock=10ms`, { method: 'POST' })).status).toBe(400);
    expect((await fetch(`${node.url}/_share/orders?group=billing&op=nap`, { method: 'POST' })).status).toBe(400);
    expect((await fetch(`${node.url}/_share/orders?op=lease`, { method: 'POST' })).status).toBe(400);
    expect((await fetch(`${node.url}/_share/missing?group=g&op=lease`, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`${node.url}/_share/orders?group=billing`, { method: 'PUT' })).headers.get('allow')).toBe('GET, HEAD, POST, PATCH, DELETE');
  });

  it('8 workers drain one stream with every record accepted exactly once, one of them dying mid-lease', async () => {
    node = await startNode({ dataDir: tempDir(), engine: 'node' });
    const N = 4000;
    await createWith(node, '/jobs', N);
    const c = client(() => node, '/jobs', 'w');
    expect((await c.config({ 'share.auto.offset.reset': 'earliest' })).status).toBe(200);
    // A worker leases 50 records and dies: they come back once its lock (1 s) expires.
    const dead = await c.lease(50);
    expect(dead.records).toHaveLength(50);
    const accepted = new Map<number, number>();
    let redelivered = 0;
    const worker = async (): Promise<void> => {
      for (;;) {
        const l = await c.lease(100, '60s');
        if (l.records.length === 0) {
          if (accepted.size >= N) return;
          await new Promise((r) => setTimeout(r, 50));
          continue;
        }
        for (const r of l.records) if (r.deliveryCount > 1) redelivered++;
        const ans = await c.ack(l.lease, { accept: l.records.map((r) => r.seq) });
        expect(ans.refused).toEqual([]);
        for (const s of ans.applied) accepted.set(s, (accepted.get(s) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    expect(accepted.size).toBe(N);
    expect([...accepted.values()].every((n) => n === 1)).toBe(true);
    expect(redelivered).toBe(50);
    expect((await c.ack(dead.lease, { accept: [dead.records[0]!.seq] })).refused[0]!.reason).toBe('not_acquired');
    expect((await c.state()).startSeq).toBe(N);
  });

  it('a node killed mid-lease keeps every answered acknowledgement and redelivers only the rest, after the lock', async () => {
    const dataDir = tempDir();
    node = await startNode({ dataDir, engine: 'node' });
    await createWith(node, '/tasks', 20);
    const c = client(() => node, '/tasks', 'g');
    expect((await c.config({ 'share.auto.offset.reset': 'earliest' })).status).toBe(200);
    // A lock that outlasts a node restart on a loaded machine: the state read after it still holds the locks.
    const l = await c.lease(20, '15s');
    expect((await c.ack(l.lease, { accept: [0, 1, 2, 5, 7] })).applied).toEqual([0, 1, 2, 5, 7]);
    await node.kill();
    node = await startNode({ dataDir, engine: 'node' });
    // The locks survive the restart: nothing is delivered again before they end …
    expect(await c.state()).toMatchObject({ startSeq: 3, records: { acquired: 15, acknowledged: 2 } });
    // … the lease that holds them may still acknowledge within its lock (or its lock ended already on a slow machine).
    const late = await c.ack(l.lease, { accept: [3] });
    expect(late.applied.length + late.refused.filter((r) => r.reason === 'lock_expired' || r.reason === 'not_acquired').length).toBe(1);
    // Then exactly the unacknowledged records come back, delivered a second time.
    const again = await leaseUntil(c, 20, (x) => x.records.length > 0);
    const rest = [4, 6, ...Array.from({ length: 12 }, (_, i) => 8 + i)];
    const got = [...again.records];
    while (got.length < rest.length + (late.applied.length === 0 ? 1 : 0)) got.push(...(await leaseUntil(c, 20, (x) => x.records.length > 0)).records);
    const expected = late.applied.length === 0 ? [3, ...rest] : rest;
    expect(got.map((r) => r.seq).sort((a, b) => a - b)).toEqual(expected);
    expect(got.every((r) => r.deliveryCount === 2)).toBe(true);
  });
});
