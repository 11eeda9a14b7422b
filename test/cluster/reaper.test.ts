/**
 * The destroyed-object reaper on a real 3-node cluster in objects mode (docs/cluster.md,
 * "Compaction and the reaper"): 3 etcd members, 3 `svc serve` processes sharing one `file:`
 * object store. Streams are filled, then some deleted and some trimmed; the maintenance lease
 * holder reaps, is SIGKILLed while dead objects remain, another node takes the lease and drains
 * the backlog. Checked through the ledger and the store themselves: only lease holders reaped,
 * nothing live was deleted (every remaining entry's object exists and the acknowledged records read
 * back), and in the end `destroyedObjectBacklog` is 0 and `objectCount` is exactly the objects
 * still referenced.
 */
import { randomBytes } from 'node:crypto';
import { EtcdLink, parseEtcdUrl } from '../../src/actors';
import { Ledger, type ObjectStore, openObjectStore } from '../../src/objects';
import { parseFrame } from '../../src/shards/worker/frame';
import { decodeRecords } from '../../src/util/record-batch';
import { type NodeProcess } from '../helpers/node-process';
import { ObjectsCluster, until } from './objects-cluster';

jest.setTimeout(240_000);

let c: ObjectsCluster;
let link: EtcdLink;
let ledger: Ledger;
let store: ObjectStore;

beforeAll(async () => {
  c = await ObjectsCluster.start(['--node-lease-ttl', '2', '--reaper-interval-ms', '1000']);
  const args = c.nodes.get(1)!.proc.spawnargs;
  const url = args[args.indexOf('--metadata') + 1]!;
  link = new EtcdLink(c.etcd.endpoints, { access: c.etcd.access() });
  ledger = new Ledger(link, parseEtcdUrl(url).prefix);
  store = openObjectStore(`file:${c.objectsDir}`);
}, 120_000);
afterAll(async () => {
  link?.close();
  await store?.close();
  await c?.stop();
});

interface Cluster {
  leaseHolder: boolean | null;
  objectCount: number;
  destroyedObjectBacklog: number;
}
const overview = async (n: NodeProcess): Promise<Cluster> => (await (await fetch(`${n.adminUrl!}/admin/cluster`, { signal: AbortSignal.timeout(10_000) })).json()) as Cluster;


/** The node that holds the lease now, by its own word, or null (none, or more than one, say so). */
async function holderNow(among: number[]): Promise<number | null> {
  const hs = await Promise.all(among.map(async (id) => ((await overview(c.nodes.get(id)!)).leaseHolder === true ? id : null)));
  const ids = hs.filter((x): x is number => x !== null);
  return ids.length === 1 ? ids[0]! : null;
}

/**
 * What a node's log says its reaper did: the work of its ticks (destroyed, deleted, orphans), and
 * whether any of it came before the node first said it holds the maintenance lease.
 */
function reaperLog(n: NodeProcess): { work: number; beforeHolding: number; held: boolean } {
  let work = 0;
  let beforeHolding = 0;
  let held = false;
  for (const line of n.output().split('\n')) {
    // ('object reaper running …' is logged the moment the node's view makes it the holder.)
    if (line.includes('this node holds the maintenance lease')) held = true;
    if (!line.includes('"object reaper"')) continue;
    const j = JSON.parse(line) as { destroyed: number; deleted: number; orphans: number };
    const w = j.destroyed + j.deleted + j.orphans;
    work += w;
    if (!held) beforeHolding += w;
  }
  return { work, beforeHolding, held };
}
const reaperWork = (n: NodeProcess): number => reaperLog(n).work;

/** Every record of a stream as the ledger and the store hold it: seq → value (frames checked). */
async function recordsOf(name: string): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (const e of await ledger.entries(name)) {
    const buf = await store.get(e.o, { offset: e.off, length: e.len });
    for (let pos = 0; pos < buf.length; ) {
      const f = parseFrame(buf, pos, true);
      if (f === null) throw new Error(`entry ${e.key}: no valid frame at byte ${pos} of ${e.o}`);
      if (f.type === 1) for (const r of decodeRecords(f.payload)) out.set(r.offset, r.value!.toString());
      pos += f.size;
    }
  }
  return out;
}

/**
 * Object keys the ledger's entries point into, o/ records of objects nothing refers to (no entry
 * points into them, and no r/<object>/<stream> key: a group object's reference marker counts only
 * through the entries it names), and d/ records.
 */
async function ledgerState(): Promise<{ referenced: Set<string>; unreferenced: number; destroyed: number }> {
  const root = ledger.keys.root;
  const referenced = new Set<string>();
  for (const kv of (await link.rangePrefix(`${root}i/`, 10_000)).kvs) referenced.add((JSON.parse(kv.value.toString()) as { o: string }).o);
  let unreferenced = 0;
  for (const kv of (await link.rangePrefix(ledger.keys.objects, 10_000)).kvs) {
    const objectKey = kv.key.slice(ledger.keys.objects.length);
    if (referenced.has(objectKey)) continue;
    const refs = (await link.rangePrefix(ledger.keys.refs(objectKey), 10_000)).kvs.filter((r) => r.key !== ledger.keys.referenceMarker(objectKey));
    if (refs.length === 0) unreferenced++;
  }
  return { referenced, unreferenced, destroyed: await link.countPrefix(ledger.keys.destroyedObjects, 10_000) };
}

test('trim and delete make objects dead; only the lease holder reaps; a holder killed mid-reap is succeeded and the backlog drains', async () => {
  const tag = randomBytes(3).toString('hex');
  const names = Array.from({ length: 9 }, (_, i) => `/rp-${tag}-${i}`);
  const via = c.nodes.get(1)!;
  for (const name of names) expect((await fetch(`${via.url}${name}`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
  // 200 appends of 2 KiB per stream, one at a time per stream (each its own group object, mostly).
  const acked = new Map<string, Map<number, string>>();
  await Promise.all(
    names.map(async (name) => {
      const mine = new Map<number, string>();
      acked.set(name, mine);
      for (let i = 0; i < 200; i++) {
        const body = `${name}:${i}:${'x'.repeat(2048)}`;
        const r = await fetch(`${via.url}${name}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body });
        expect(r.status).toBeLessThan(300);
        mine.set(Number(r.headers.get('svc-next-seq')) - 1, body);
      }
    }),
  );
  const deleted = names.slice(0, 4);
  const trimmed = names.slice(4, 6);
  const kept = names.slice(6);
  for (const name of deleted) expect((await fetch(`${via.url}${name}`, { method: 'DELETE' })).status).toBeLessThan(300);
  for (const name of trimmed) expect((await fetch(`${via.url}${name}`, { method: 'POST', headers: { 'svc-trim-seq': '150' } })).status).toBeLessThan(300);
  // Every entry below the start goes but the newest, which a trim keeps whatever its seqs (ledger.ts
  // trim; in the records format the newest one indexed may be below the start when the trim came).
  await until('the trims in the ledger', async () => ((await Promise.all(trimmed.map(async (n) => (await ledger.entries(n)).every((e, i, all) => e.to > 150 || i === all.length - 1)))).every(Boolean) ? true : null));

  // The holder reaps; the moment the node holding the lease has done some work (dead objects
  // remain), it is killed. (With a 2 s lease on a loaded machine the lease may move before that:
  // the one killed is whoever holds it once it has reaped.)
  const first = await until(
    'the holder reaping',
    async () => {
      const h = await holderNow([...c.nodes.keys()]);
      return h !== null && reaperWork(c.nodes.get(h)!) > 0 ? h : null;
    },
    60_000,
    20,
  );
  const firstNode = c.nodes.get(first)!;
  await firstNode.kill();
  c.nodes.delete(first);
  const atKill = await ledgerState();
  expect(atKill.unreferenced + atKill.destroyed).toBeGreaterThan(0);

  const rest = [...c.nodes.keys()];
  const workAtKill = rest.reduce((sum, id) => sum + reaperWork(c.nodes.get(id)!), 0);
  const second = await until('a new lease holder', () => holderNow(rest));
  expect(second).not.toBe(first);

  // The backlog drains: no d/ record, no o/ record without references; objectCount is what entries use.
  const done = await until(
    'the backlog drained',
    async () => {
      const s = await ledgerState();
      const o = await overview(c.nodes.get(second)!);
      // (objectCount is cached 1.5 s: asked until it caught up with the ledger read just before.)
      return s.destroyed === 0 && s.unreferenced === 0 && o.destroyedObjectBacklog === 0 && o.objectCount === s.referenced.size ? { s, o } : null;
    },
    90_000,
    500,
  );
  // The same figures as gauges (docs/metrics.md).
  await until('the object gauges', async () => {
    const metrics = await (await fetch(`${c.nodes.get(second)!.adminUrl!}/metrics`)).text();
    return /^svc_objects_destroyed_backlog 0$/m.test(metrics) && Number(/^svc_objects (\d+)$/m.exec(metrics)?.[1]) === done.s.referenced.size ? true : null;
  });
  // Only lease holders reaped: no node's reaper did anything before it said it held the lease, a
  // node that never held it did nothing, and the backlog left at the kill was drained by the others.
  const logs = new Map([[first, reaperLog(firstNode)], ...rest.map((id) => [id, reaperLog(c.nodes.get(id)!)] as const)]);
  for (const [id, l] of logs) {
    expect({ id, beforeHolding: l.beforeHolding }).toEqual({ id, beforeHolding: 0 });
    if (!l.held) expect({ id, work: l.work }).toEqual({ id, work: 0 });
  }
  expect(logs.get(first)!.work).toBeGreaterThan(0);
  expect(logs.get(second)!.held).toBe(true);
  expect(rest.reduce((sum, id) => sum + logs.get(id)!.work, 0)).toBeGreaterThan(workAtKill);
  // The same seen from the object store's own figures: store deletes come from the reaper only.
  const deletes = async (id: number): Promise<number> => {
    const text = await (await fetch(`${c.nodes.get(id)!.adminUrl!}/metrics`)).text();
    return Number(/^svc_object_store_requests_total\{op="delete",outcome="ok"\} (\d+)$/m.exec(text)?.[1] ?? 0);
  };
  const restDeletes = await Promise.all(rest.map(async (id) => ({ id, deletes: await deletes(id), held: logs.get(id)!.held })));
  expect(restDeletes.reduce((sum, d) => sum + d.deletes, 0)).toBeGreaterThan(0);
  for (const d of restDeletes) if (!d.held) expect(d).toEqual({ ...d, deletes: 0 });

  // Nothing live was deleted: every entry's object is in the store, and the records read back.
  // The ledger is read again beside each listing: the owners' compaction may still replace entries
  // (and the reaper delete what they named) after the backlog drained, so a set read earlier can
  // name an object rightly gone since. Data lost would never settle.
  const missingNow = async (): Promise<string[]> => {
    const { referenced } = await ledgerState();
    const inStore = new Set<string>();
    for (const p of ['c/', 'g/']) for await (const o of store.list(p)) inStore.add(o.key);
    const again = (await ledgerState()).referenced;
    return [...referenced].filter((key) => again.has(key) && !inStore.has(key));
  };
  await until('every referenced object in the store', async () => ((await missingNow()).length === 0 ? true : null), 30_000, 1_000).catch(async () => {
    expect(await missingNow()).toEqual([]);
  });
  for (const name of deleted) expect(await ledger.entries(name)).toEqual([]);
  for (const name of kept) expect([...(await recordsOf(name))].sort((a, b) => a[0] - b[0])).toEqual([...acked.get(name)!].sort((a, b) => a[0] - b[0]));
  for (const name of trimmed) {
    const got = await recordsOf(name);
    for (const [seq, body] of acked.get(name)!) if (seq >= 150) expect(got.get(seq)).toBe(body);
  }
});
