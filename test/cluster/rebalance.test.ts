/**
 * Balanced placement and rebalance in objects mode (docs/cluster.md, "Placement", "Rebalance"):
 * 3 etcd members, 3 nodes on one `file:` object store.
 * - A 6-partition topic created with kafkajs is placed 2/2/2.
 * - POST /admin/rebalance with a dry run lists the moves and moves nothing; without, the nodes even out.
 * - A node SIGKILLed under load (its streams fail over to the others) and started again on its
 *   data directory gets back its share by the lease holder's automatic rebalance, within ±20 % of
 *   an even share, while Svc and Durable Streams writers append through it all: every
 *   acknowledged record readable, none stored twice.
 */
import { Kafka, logLevel } from 'kafkajs';
import { objectsClusterForFile, sleep, until } from './objects-cluster';
import { type Writer, dsWriter, missing, readAll, svcWriter } from './writers';

jest.setTimeout(240_000);

const c = objectsClusterForFile(['--node-lease-ttl', '3', '--rebalance', 'auto']);

interface Overview {
  pendingTransfers: unknown[];
  rebalance: { auto: boolean; running: boolean; planned: number; done: number; skipped: number } | null;
}
interface Plan {
  moves: Array<{ stream: string; fromNode: number; toNode: number }>;
  dryRun: boolean;
  started: boolean;
}

/** Streams per owner node, from the cluster-wide list of one node's admin view. */
async function owners(names: readonly string[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const name of names) {
    const d = await c.detail(name);
    out.set(d.ownerNodeId, (out.get(d.ownerNodeId) ?? 0) + 1);
  }
  return out;
}

async function createStream(name: string): Promise<void> {
  let url = `${c.any().url}${name}`;
  for (let i = 0; i < 5; i++) {
    const r = await fetch(url, { method: 'PUT', headers: { 'content-type': 'text/plain' }, redirect: 'manual' });
    if (r.status === 307) {
      url = r.headers.get('location')!;
      continue;
    }
    if (r.status !== 201 && r.status !== 200) throw new Error(`PUT ${name}: ${r.status} ${await r.text()}`);
    return;
  }
  throw new Error(`PUT ${name}: too many redirects`);
}

test('a 6-partition topic created with kafkajs is placed 2/2/2 on 3 nodes', async () => {
  const admin = new Kafka({ clientId: 'balance', brokers: [...c.nodes.values()].map((n) => n.kafka), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    expect(await admin.createTopics({ topics: [{ topic: 'six', numPartitions: 6 }], waitForLeaders: true })).toBe(true);
    const md = await admin.fetchTopicMetadata({ topics: ['six'] });
    const leaders = new Map<number, number>();
    for (const p of md.topics[0]!.partitions) leaders.set(p.leader, (leaders.get(p.leader) ?? 0) + 1);
    expect([...leaders.values()]).toEqual([2, 2, 2]);
  } finally {
    await admin.disconnect();
  }
  const names = ['/six', ...[1, 2, 3, 4, 5].map((p) => `/six/${p}`)];
  expect([...(await owners(names)).values()]).toEqual([2, 2, 2]);
});

test('a dry run lists the moves and moves nothing; a rebalance evens the nodes out', async () => {
  // Twelve streams on one node: slots 0 on the other two while they are created.
  const [first, ...others] = [...c.nodes.keys()].sort();
  for (const id of others) expect((await c.admin(`/admin/nodes/${id}`, { method: 'POST', body: JSON.stringify({ slots: 0 }) })).status).toBe(200);
  const names = Array.from({ length: 12 }, (_, i) => `/rb/s${i}`);
  try {
    for (const n of names) await createStream(n);
  } finally {
    for (const id of others) await c.admin(`/admin/nodes/${id}`, { method: 'POST', body: JSON.stringify({ slots: 1024 }) });
  }
  expect(await owners(names)).toEqual(new Map([[first, 12]]));
  const dry = await c.admin<Plan>('/admin/rebalance', { method: 'POST', body: JSON.stringify({ dryRun: true }) });
  expect(dry.status).toBe(200);
  expect(dry.json).toMatchObject({ dryRun: true, started: false });
  // 18 streams in all (the topic's 6 spread 2/2/2): 6 each, so 8 of the 12 move.
  expect(dry.json.moves).toHaveLength(8);
  expect(dry.json.moves.every((m) => m.fromNode === first && names.includes(m.stream))).toBe(true);
  await sleep(500);
  expect(await owners(names)).toEqual(new Map([[first, 12]]));
  // The real one (or the lease holder's automatic one, whichever comes first).
  const run = await c.admin<Plan>('/admin/rebalance', { method: 'POST', body: '{}' });
  expect(run.status).toBe(200);
  await until(
    'the nodes evened out',
    async () => {
      const o = await owners(names);
      return [...c.nodes.keys()].every((id) => o.get(id) === 4) ? true : null;
    },
    60_000,
    250,
  );
  const overview = await c.admin<Overview>('/admin/cluster');
  expect(overview.json.rebalance).toMatchObject({ auto: true });
});

test('a node killed under load and started again gets back its share, with no record lost or stored twice', async () => {
  const writers: Writer[] = [];
  for (let i = 0; i < 4; i++) writers.push(await svcWriter(c, `/rb/w${i}`));
  for (let i = 0; i < 2; i++) writers.push(await dsWriter(c, `/rb/d${i}`));
  const names = [...Array.from({ length: 12 }, (_, i) => `/rb/s${i}`), ...writers.map((w) => w.stream), '/six', ...[1, 2, 3, 4, 5].map((p) => `/six/${p}`)];
  await until('records flowing', async () => (writers.every((w) => w.acked.length >= 20) ? true : null), 30_000);
  // The node with the most streams.
  const before = await owners(names);
  const victim = [...before.entries()].sort((a, b) => b[1] - a[1])[0]![0];
  const node = c.nodes.get(victim)!;
  c.nodes.delete(victim);
  await node.kill();
  await until(`node ${victim}'s streams served elsewhere`, async () => ((await owners(names)).get(victim) === undefined ? true : null), 60_000, 250);
  await c.startNode(victim, node.dataDir);
  await c.waitLive(3);
  const even = names.length / 3;
  await until(
    `node ${victim} back at its share`,
    async () => {
      const n = (await owners(names)).get(victim) ?? 0;
      return n >= even * 0.8 && n <= even * 1.2 ? true : null;
    },
    90_000,
    500,
  );
  const counts = await owners(names);
  for (const id of c.nodes.keys()) expect(Math.abs((counts.get(id) ?? 0) - even)).toBeLessThanOrEqual(even * 0.2);
  await sleep(1_000);
  await Promise.all(writers.map((w) => w.stop()));
  for (const w of writers) {
    const records = await readAll(c, w.stream);
    expect(missing(w, records)).toEqual([]);
    const bodies = records.map((r) => r.body);
    const twice = bodies.filter((b, i) => bodies.indexOf(b) !== i);
    expect({ stream: w.stream, twice }).toEqual({ stream: w.stream, twice: [] });
  }
});
