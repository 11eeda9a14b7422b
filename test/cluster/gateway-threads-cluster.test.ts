/**
 * Gateway threads in a cluster (`--gateway-threads 2` on every node of a 3-node objects cluster,
 * gateway/cluster/served-streams.ts): a node's threads serve the reads and appends of the streams
 * placed on it, its main thread the rest (307 for a stream owned elsewhere, creates, deletes).
 * Sixteen keep-alive connections to a node, spread by the kernel over its threads:
 *
 * - every connection appends to and reads the node's stream, and the threads did the work;
 *   every connection gets a 307 for a stream of another node;
 * - while the node's stream moves away and back (transfers, round after round), a writer that
 *   never leaves the old owner sends on every connection; each record answered 307 or 503 `moved`
 *   must not be in the stream, each acknowledged one must be there once, at its seq; readers on
 *   the old owner's connections get 200 or 307, never the 404 of a dropped copy. A writer that
 *   follows the 307s writes beside it, each record stored once;
 * - the same with a node whose protocol listener speaks Durable Streams (`--protocol ds`): its
 *   threads serve its streams, answer 307 to the owner's Durable Streams listener for the others,
 *   and a stubborn appender there through moves has each record stored at most once, never one it
 *   was told was not stored.
 */
import type * as http from 'node:http';
import { type Answer, connections, requestOn } from '../helpers/keep-alive';
import { threadTicks } from '../helpers/thread-ticks';
import { objectsClusterForFile, sleep, until } from './objects-cluster';
import { readAll } from './writers';
import { runAlone } from '../helpers/run-alone';

jest.setTimeout(150_000);

const CONNECTIONS = 16;
/** Rounds of transfers (each moves the stream away from node 1 and back). */
const ROUNDS = Number(process.env['GATEWAY_CLUSTER_ROUNDS'] ?? 12);

// Timing across a whole cluster: not beside another such suite (run-alone.ts).
runAlone();

const c = objectsClusterForFile(['--gateway-threads', '2', '--node-lease-ttl', '3']);

let agents: http.Agent[] = [];
beforeAll(() => {
  agents = connections(CONNECTIONS);
});
afterAll(() => {
  for (const a of agents) a.destroy();
});

const node1 = (): string => c.nodes.get(1)!.url;
const on = (k: number, method: string, path: string, body?: string): Promise<Answer> =>
  requestOn(agents[k]!, `${node1()}${path}`, method, body, body === undefined ? {} : { 'content-type': 'text/plain' });

async function placeOn(stream: string, node: number): Promise<void> {
  const r = await fetch(`${node1()}${stream}`, { method: 'PUT', headers: { 'content-type': 'text/plain' }, redirect: 'follow' });
  expect([200, 201]).toContain(r.status);
  if ((await c.detail(stream)).ownerNodeId !== node) await c.admin('/admin/transfer', { method: 'POST', body: JSON.stringify({ stream, toNode: node }) });
  await until(`${stream} placed on node ${node}`, async () => {
    const d = await c.detail(stream);
    return d.state === 'placed' && d.ownerNodeId === node ? true : null;
  });
}

async function transfer(stream: string, to: number): Promise<void> {
  const r = await c.admin<Record<string, unknown>>('/admin/transfer', { method: 'POST', body: JSON.stringify({ stream, toNode: to }) });
  expect(r.json).toMatchObject({ pending: true, toNode: to });
  await until(`${stream} placed on node ${to}`, async () => {
    const d = await c.detail(stream);
    return d.state === 'placed' && d.ownerNodeId === to ? true : null;
  }, 20_000, 10);
}

test('the threads serve the node\'s own streams on every connection; a stream of another node gets 307 on every one', async () => {
  await placeOn('/gw/here', 1);
  await placeOn('/gw/there', 2);
  const pid = c.nodes.get(1)!.proc.pid!;
  expect(threadTicks(pid, 'svc-gw-')).toHaveLength(2);
  // The node hears of its placed streams once its own are open: wait until a thread serves it (a 200 with no hop).
  await until('the threads serve /gw/here', async () => ((await on(0, 'GET', '/gw/here?seq=0&format=json')).status === 200 ? true : null));
  const before = threadTicks(pid, 'svc-gw-');
  const PER = 40;
  await Promise.all(
    agents.map(async (_, k) => {
      for (let j = 0; j < PER; j++) expect((await on(k, 'POST', '/gw/here', `${k}-${j}`)).status).toBe(200);
      const read = await on(k, 'GET', '/gw/here?seq=0&count=10000&format=json');
      expect(read.status).toBe(200);
      expect((JSON.parse(read.body) as Array<{ body: string }>).filter((r) => r.body.startsWith(`${k}-`)).map((r) => r.body)).toEqual([...Array(PER).keys()].map((j) => `${k}-${j}`));
      for (const [method, body] of [['GET', undefined], ['POST', 'x']] as const) {
        const away = await on(k, method, '/gw/there', body);
        expect(away.status).toBe(307);
        expect(away.headers['location']).toBe(`${c.nodes.get(2)!.url}/gw/there`);
      }
    }),
  );
  const after = threadTicks(pid, 'svc-gw-');
  // Both threads took connections and served appends (a tick is 10 ms of CPU).
  expect(after.map((t, k) => t - before[k]!).every((d) => d > 0)).toBe(true);
});

test('while the stream moves away and back, a writer that stays on the old owner\'s connections has nothing stored that was answered 307 or moved, and every acknowledged record once; readers there never meet the dropped copy', async () => {
  const stream = '/gw/moving';
  await placeOn(stream, 1);
  await until('the threads serve it', async () => ((await on(0, 'GET', `${stream}?seq=0&format=json`)).status === 200 ? true : null));
  const acked: Array<{ id: string; seq: number }> = [];
  const notStored: string[] = [];
  const unknown: string[] = [];
  const wrong: string[] = [];
  let stop = false;
  // The stubborn writer: every connection to node 1, whatever it answers.
  const stubborn = agents.slice(0, 12).map(async (_, k) => {
    for (let i = 0; !stop; i++) {
      const id = `s-${k}-${i}`;
      const r = await on(k, 'POST', stream, id).catch((err: unknown) => ({ status: 0, headers: {}, body: String(err) }) as Answer);
      if (r.status === 200) acked.push({ id, seq: Number(r.headers['svc-start-seq']) });
      else if (r.status === 307 || (r.status === 503 && r.body.includes('"error":"moved"'))) notStored.push(id);
      else if (r.status === 503) unknown.push(`${id}: ${r.body.slice(0, 200)}`);
      else wrong.push(`append ${id}: ${r.status} ${r.body.slice(0, 200)}`);
      if (r.status !== 200) await sleep(5);
    }
  });
  // Readers on the old owner's other connections: the stream or a 307, never a 404 from a dropped copy.
  let reads = 0;
  const readers = agents.slice(12).map(async (_, j) => {
    const k = 12 + j;
    while (!stop) {
      const r = await on(k, 'GET', `${stream}?seq=0&count=1&format=json`);
      reads++;
      if (r.status !== 200 && r.status !== 307) wrong.push(`read: ${r.status} ${r.body.slice(0, 200)}`);
      await sleep(2);
    }
  });
  // A writer that follows the 307s (the same record again, where the 307 says).
  const followed: Array<{ id: string; seq: number }> = [];
  const follower = (async () => {
    for (let i = 0; !stop; i++) {
      const id = `f-${i}`;
      let at = node1();
      for (let tries = 0; tries < 50; tries++) {
        const r = await fetch(`${at}${stream}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: id, redirect: 'manual' });
        const text = await r.text();
        if (r.status === 200) {
          followed.push({ id, seq: Number(r.headers.get('svc-start-seq')) });
          break;
        }
        if (r.status === 307) at = new URL(r.headers.get('location')!).origin;
        else if (r.status === 503 && text.includes('"error":"moved"')) await sleep(20);
        else {
          unknown.push(`${id}: ${r.status} ${text.slice(0, 200)}`);
          break;
        }
      }
    }
  })();
  try {
    await until('acknowledgements before the first move', async () => (acked.length > 50 ? true : null));
    for (let round = 0; round < ROUNDS; round++) {
      await transfer(stream, 2);
      await sleep(100);
      await transfer(stream, 1);
      await sleep(100);
    }
  } finally {
    stop = true;
    await Promise.all([...stubborn, ...readers, follower]);
  }
  const records = await readAll(c, stream);
  const seqsOf = new Map<string, number[]>();
  for (const r of records) seqsOf.set(r.body!, [...(seqsOf.get(r.body!) ?? []), r.seq]);
  const problems = [...wrong];
  for (const [id, seqs] of seqsOf) if (seqs.length > 1) problems.push(`${id} stored ${seqs.length} times`);
  for (const id of notStored) if (seqsOf.has(id)) problems.push(`${id} answered 307 or moved, but stored`);
  const bySeq = new Map(records.map((r) => [r.seq, r.body]));
  for (const a of [...acked, ...followed]) if (bySeq.get(a.seq) !== a.id) problems.push(`${a.id} acknowledged at ${a.seq}, read ${JSON.stringify(bySeq.get(a.seq) ?? null)}`);
  console.log(`gateway threads in a cluster: ${ROUNDS * 2} transfers; stubborn writer acked ${acked.length}, refused ${notStored.length}, unknown ${unknown.length}; follower acked ${followed.length}; reads ${reads}; problems ${problems.length}\n${problems.slice(0, 20).join('\n')}\n${unknown.slice(0, 5).join('\n')}`);
  expect(problems).toEqual([]);
  // Some of the stubborn writer's records went to the old owner while the stream was away.
  expect(notStored.length).toBeGreaterThan(0);
  expect(acked.length).toBeGreaterThan(100);
  expect(followed.length).toBeGreaterThan(20);
});

test('with --protocol ds: the threads serve the node\'s Durable Streams, 307 for the others, and a stubborn appender through moves stores nothing it was told was not stored', async () => {
  // Node 3 again, its protocol listener speaking Durable Streams (its streams move away as it stops).
  await c.nodes.get(3)!.stop();
  c.nodes.delete(3);
  const n3 = await c.startNode(3, undefined, ['--protocol', 'ds']);
  await c.waitLive(3);
  const json = { 'content-type': 'application/json' };
  const ds = (k: number, method: string, path: string, body?: string): Promise<Answer> => requestOn(agents[k]!, `${n3.url}/v1/stream${path}`, method, body, body === undefined ? {} : json);
  const createOn = async (stream: string, node: number): Promise<void> => {
    const r = await fetch(`${n3.url}/v1/stream${stream}`, { method: 'PUT', headers: json, body: '[]', redirect: 'follow' });
    expect([200, 201]).toContain(r.status);
    if ((await c.detail(stream)).ownerNodeId !== node) await transfer(stream, node);
  };
  const stream = '/gw/ds';
  await createOn(stream, 3);
  await createOn('/gw/ds-there', 1);
  await until('the threads serve it', async () => ((await ds(0, 'GET', `${stream}?offset=-1`)).status === 200 ? true : null));
  for (let k = 0; k < CONNECTIONS; k++) {
    const away = await ds(k, 'GET', '/gw/ds-there?offset=-1');
    expect(away.status).toBe(307);
    expect(away.headers['location']).toBe(`${c.nodes.get(1)!.dsUrl!}/v1/stream/gw/ds-there?offset=-1`);
  }
  const acked: Array<{ id: string; seq: number }> = [];
  const notStored: string[] = [];
  const wrong: string[] = [];
  let stop = false;
  const ticks = threadTicks(n3.proc.pid!, 'svc-gw-');
  expect(ticks).toHaveLength(2);
  const writers = agents.map(async (_, k) => {
    for (let i = 0; !stop; i++) {
      const id = `d-${k}-${i}`;
      const r = await ds(k, 'POST', stream, JSON.stringify(id)).catch((err: unknown) => ({ status: 0, headers: {}, body: String(err) }) as Answer);
      if (r.status === 200 || r.status === 204) acked.push({ id, seq: Number(String(r.headers['stream-next-offset']).split('_')[1]) - 1 });
      else if (r.status === 307 || (r.status === 503 && r.body.includes('moved to another node'))) notStored.push(id);
      else if (r.status !== 503) wrong.push(`append ${id}: ${r.status} ${r.body.slice(0, 200)}`);
      if (r.status !== 200 && r.status !== 204) await sleep(5);
    }
  });
  try {
    await until('acknowledgements before the first move', async () => (acked.length > 50 ? true : null));
    for (let round = 0; round < ROUNDS / 2; round++) {
      await transfer(stream, 1);
      await sleep(100);
      await transfer(stream, 3);
      await sleep(100);
    }
  } finally {
    stop = true;
    await Promise.all(writers);
  }
  const stored: string[] = [];
  for (let offset = '-1'; ; ) {
    const r = await fetch(`${n3.url}/v1/stream${stream}?offset=${offset}`);
    expect(r.status).toBe(200);
    stored.push(...((await r.json()) as string[]));
    if (r.headers.get('stream-up-to-date') === 'true') break;
    offset = r.headers.get('stream-next-offset')!;
  }
  const problems = [...wrong];
  const seen = new Set<string>();
  for (const id of stored) {
    if (seen.has(id)) problems.push(`${id} stored twice`);
    seen.add(id);
  }
  for (const id of notStored) if (seen.has(id)) problems.push(`${id} answered 307 or moved, but stored`);
  for (const a of acked) if (stored[a.seq] !== a.id) problems.push(`${a.id} acknowledged at ${a.seq}, read ${JSON.stringify(stored[a.seq] ?? null)}`);
  console.log(`gateway threads in a cluster, Durable Streams: ${ROUNDS} transfers; acked ${acked.length}, refused ${notStored.length}; problems ${problems.length}\n${problems.slice(0, 20).join('\n')}`);
  expect(problems).toEqual([]);
  expect(notStored.length).toBeGreaterThan(0);
  expect(acked.length).toBeGreaterThan(100);
  // Both of node 3's threads served appends (a tick is 10 ms of CPU).
  expect(threadTicks(n3.proc.pid!, 'svc-gw-').every((t, k) => t > ticks[k]!)).toBe(true);
});
