/**
 * Damaged objects in objects mode (docs/cluster.md, "Damaged objects"): 3 etcd members, 3 nodes on
 * one `file:` object store. One byte of one of a stream's objects is flipped, and one object of
 * another stream is deleted; both streams then move to another node, beside an undamaged one.
 * Requests for the damaged ranges are answered `data_corrupt` naming the stream, the seqs and the
 * object (not "being opened" for ever), every other record of those streams and the undamaged
 * stream are served, and the node stops on SIGTERM within its shutdown watchdog.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Ledger } from '../../src/objects';
import { type NodeProcess } from '../helpers/node-process';
import { ObjectsCluster, sleep, until } from './objects-cluster';
import { recorded } from './objects-read';
import { follow } from './writers';

jest.setTimeout(180_000);

let c: ObjectsCluster;
let ledger: Ledger;

beforeAll(async () => {
  c = await ObjectsCluster.start(['--node-lease-ttl', '3']);
  ledger = Ledger.open(c.metadataUrl, { credentials: c.etcd.credentials() });
}, 90_000);
afterAll(async () => {
  ledger?.close();
  await c?.stop();
});

async function append(base: string, stream: string, n: number): Promise<void> {
  let url = `${base}${stream}`;
  for (let i = 0; i < n; i++) {
    const body = JSON.stringify({ records: [{ body: `${stream}#${i}:${'x'.repeat(200)}`, key: `k${i}` }] });
    for (;;) {
      const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body, redirect: 'manual' });
      if (r.status === 307) {
        url = r.headers.get('location')!;
        continue;
      }
      if (r.status !== 200 && r.status !== 204) throw new Error(`append: ${r.status} ${await r.text()}`);
      await r.arrayBuffer();
      break;
    }
  }
}

/** Create `stream` on whichever node places it; the base URL of its owner. */
async function create(stream: string): Promise<string> {
  let url = `${c.any().url}${stream}`;
  for (;;) {
    const r = await fetch(url, { method: 'PUT', headers: { 'content-type': 'text/plain' }, redirect: 'manual' });
    await r.arrayBuffer();
    if (r.status === 307) {
      url = r.headers.get('location')!;
      continue;
    }
    expect([200, 201]).toContain(r.status);
    return url.slice(0, url.length - stream.length);
  }
}

/** Records read from `seq` to the tail, page by page (a page ends where the ranges held so far end). */
async function count(url: string, seq: number): Promise<number> {
  let n = 0;
  for (;;) {
    const r = await follow(`${url}?seq=${seq}&count=1000&format=json`, { method: 'GET' });
    expect(r.status).toBe(200);
    n += ((await r.json()) as unknown[]).length;
    if (r.headers.get('svc-up-to-date') === 'true') return n;
    seq = Number(r.headers.get('svc-next-seq'));
  }
}

/** GET following 307s: status and body. */
async function get(url: string): Promise<{ status: number; body: string }> {
  const r = await follow(url, { method: 'GET' });
  return { status: r.status, body: await r.text() };
}

test('a flipped byte and a deleted object make their streams answer data_corrupt naming stream, seqs and object; the node stops on SIGTERM', async () => {
  const streams = ['/dmg/flip', '/dmg/gone', '/dmg/fine'];
  for (const s of streams) await append(await create(s), s, 120);
  // Several entries per stream (one group object per append, compaction merging the older ones).
  await sleep(2_000);
  const objectOf = async (s: string): Promise<{ o: string; off: number; len: number; from: number; to: number }> => {
    const entries = (await recorded(ledger, s)).filter((e) => e.to > e.from);
    // Not the newest: the damage is in the stream's middle (compaction may have merged the older ones).
    expect(entries.length).toBeGreaterThanOrEqual(2);
    return entries[0]!;
  };
  const flip = await objectOf('/dmg/flip');
  const bytes = fs.readFileSync(path.join(c.objectsDir, flip.o));
  bytes[flip.off + Math.floor(flip.len / 2)]! ^= 0xff;
  fs.writeFileSync(path.join(c.objectsDir, flip.o), bytes);
  const gone = await objectOf('/dmg/gone');
  fs.rmSync(path.join(c.objectsDir, gone.o));
  // All three move to a node that owns neither damaged stream (a local copy would still be served).
  const damagedOwners = [(await c.detail('/dmg/flip')).ownerNodeId, (await c.detail('/dmg/gone')).ownerNodeId];
  const to = [1, 2, 3].find((id) => !damagedOwners.includes(id))!;
  for (const s of streams) {
    const d = await c.detail(s);
    if (d.ownerNodeId !== to) expect((await c.admin('/admin/transfer', { method: 'POST', body: JSON.stringify({ stream: s, toNode: to }) })).status).toBe(200);
  }
  const target: NodeProcess = c.nodes.get(to)!;
  // The undamaged stream is placed and served there, every record.
  await until('the undamaged stream placed on the target', async () => ((await c.detail('/dmg/fine')).state === 'placed' ? true : null), 30_000, 200);
  expect(await count(`${target.url}/dmg/fine`, 0)).toBe(120);
  // The damaged ones: data_corrupt with the stream, the seqs and the object, on the Svc and the DS listener.
  for (const [s, e, why] of [
    ['/dmg/flip', flip, 'is damaged'],
    ['/dmg/gone', gone, 'missing from the object store'],
  ] as const) {
    const r = await until(`${s} answered data_corrupt`, async () => {
      const x = await get(`${target.url}${s}?seq=0&count=10&format=json`);
      return x.status === 500 ? x : null;
    }, 30_000, 500);
    const doc = JSON.parse(r.body) as { error: string; message: string; details?: Record<string, unknown> };
    expect(doc.error).toBe('data_corrupt');
    expect(doc.message).toContain(`stream ${s}: records ${e.from}..${e.to - 1}`);
    expect(doc.message).toContain(`object ${e.o}`);
    expect(doc.message).toContain(why);
    // Every record after the damaged range is served (the stream is read from the object store range by range).
    expect(await count(`${target.url}${s}`, e.to)).toBe(120 - e.to);
    const ds = await get(`${target.dsUrl!}/v1/stream${s}?offset=-1`);
    expect(ds.status).toBe(500);
  }
  // The opener backs off: the node is not kept busy reading the streams again and again.
  const ticks = (): number => {
    const f = fs.readFileSync(`/proc/${target.proc.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return Number(f[11]) + Number(f[12]);
  };
  const t0 = ticks();
  await sleep(5_000);
  expect(ticks() - t0).toBeLessThan(250); // < 2.5 s of CPU in 5 s (clock ticks of 10 ms)
  // SIGTERM: stopped within the shutdown watchdog (10 s), exit code 0.
  const started = Date.now();
  target.proc.kill('SIGTERM');
  await until('the node exited', async () => (target.proc.exitCode !== null || target.proc.signalCode !== null ? true : null), 15_000, 100);
  expect(Date.now() - started).toBeLessThan(10_000);
  expect(target.proc.exitCode).toBe(0);
  c.nodes.delete(to);
});
