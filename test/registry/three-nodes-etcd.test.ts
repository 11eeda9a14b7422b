/**
 * One registry for three nodes sharing etcd metadata: schemas registered through any node get
 * ids no other registration got (ids are taken by compare-and-set on one counter), the same
 * schema registered through all three at once gets one id, concurrent registrations under one
 * subject get distinct versions, and every node answers for ids the others handed out, with the
 * same id for each schema, before and after one of them restarts; a stream schema
 * (`/_schemas/{name}`) written through one node is the subject `svc-{name}` on the others, and
 * the other way round.
 */
import { randomBytes } from 'node:crypto';
import { EtcdCluster } from '../helpers/etcd-cluster';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { registryUrl } from './registry-node';

let etcd: EtcdCluster;
let nodes: NodeProcess[] = [];
let urls: string[] = [];
let args: string[] = [];
const N = 3;

const JSON_TYPE = 'application/vnd.schemaregistry.v1+json';

async function register(url: string, subject: string, schema: unknown): Promise<{ status: number; body: { id?: number; error_code?: number } }> {
  const r = await fetch(`${url}/subjects/${encodeURIComponent(subject)}/versions`, {
    method: 'POST',
    headers: { 'content-type': JSON_TYPE },
    body: JSON.stringify({ schema: JSON.stringify(schema) }),
  });
  return { status: r.status, body: (await r.json()) as { id?: number } };
}

const record = (name: string, fields: string[] = ['a']): unknown => ({ type: 'record', name, fields: fields.map((f) => ({ name: f, type: 'string', default: '' })) });

beforeAll(async () => {
  etcd = await EtcdCluster.start(1);
  args = ['--metadata', etcd.url(`registry/${randomBytes(4).toString('hex')}`), '--shards', '2', '--shard-workers', '1', '--schema-registry-listen', '127.0.0.1:0'];
  nodes = await Promise.all(Array.from({ length: N }, () => startNode({ args })));
  urls = nodes.map(registryUrl);
  // Three node processes and etcd on a loaded machine.
}, 120_000);

afterAll(async () => {
  await Promise.all(nodes.map((n) => n.stop()));
  await etcd?.stop();
});

describe('the schema registry on three nodes sharing etcd', () => {
  test('hands out distinct ids to distinct schemas registered through all nodes at once, and each node serves all of them', async () => {
    const jobs = Array.from({ length: 18 }, (_, i) => register(urls[i % N]!, `distinct-${i}`, record(`R${i}`)));
    const results = await Promise.all(jobs);
    for (const r of results) expect(r.status).toBe(200);
    const ids = results.map((r) => r.body.id!);
    expect(new Set(ids).size).toBe(18);
    for (const [i, id] of ids.entries()) {
      // Read through the nodes that did not register it.
      for (const d of [1, 2]) {
        const r = await fetch(`${urls[(i + d) % N]!}/schemas/ids/${id}`);
        expect(r.status).toBe(200);
        expect(JSON.parse(((await r.json()) as { schema: string }).schema)).toEqual(record(`R${i}`));
      }
    }
  });

  test('gives one id to the same schema registered through all nodes at once under different subjects', async () => {
    const same = record('Shared', ['x', 'y']);
    const [a, b, c] = await Promise.all([register(urls[0]!, 'shared-a', same), register(urls[1]!, 'shared-b', same), register(urls[2]!, 'shared-c', same)]);
    for (const r of [a, b, c]) expect(r.status).toBe(200);
    expect(b.body.id).toBe(a.body.id);
    expect(c.body.id).toBe(a.body.id);
    for (const url of urls) {
      const versions = (await (await fetch(`${url}/schemas/ids/${a.body.id}/versions`)).json()) as Array<{ subject: string; version: number }>;
      expect(versions.sort((x, y) => x.subject.localeCompare(y.subject))).toEqual([
        { subject: 'shared-a', version: 1 },
        { subject: 'shared-b', version: 1 },
        { subject: 'shared-c', version: 1 },
      ]);
    }
  });

  test('gives concurrent registrations under one subject distinct versions', async () => {
    // Each adds a field with a default: compatible with any of the others under BACKWARD.
    const jobs = Array.from({ length: 6 }, (_, i) => register(urls[i % N]!, 'contended', record('C', ['a', `f${i}`])));
    const results = await Promise.all(jobs);
    for (const r of results) expect(r.status).toBe(200);
    const versions = (await (await fetch(`${urls[0]}/subjects/contended/versions`)).json()) as number[];
    expect(versions).toEqual([1, 2, 3, 4, 5, 6]);
    const ids = new Set<number>();
    for (const v of versions) ids.add(((await (await fetch(`${urls[1]}/subjects/contended/versions/${v}`)).json()) as { id: number }).id);
    expect(ids).toEqual(new Set(results.map((r) => r.body.id!)));
  });

  test('applies a compatibility level set through one node to registrations through the others', async () => {
    expect((await register(urls[0]!, 'levels', record('L', ['a']))).status).toBe(200);
    const put = await fetch(`${urls[0]}/config/levels`, { method: 'PUT', headers: { 'content-type': JSON_TYPE }, body: JSON.stringify({ compatibility: 'FORWARD' }) });
    expect(await put.json()).toEqual({ compatibility: 'FORWARD' });
    for (const url of urls.slice(1)) expect(await (await fetch(`${url}/config/levels`)).json()).toEqual({ compatibilityLevel: 'FORWARD' });
    // FORWARD: the old reader must read the new data; dropping `a` (which has a default) is fine, changing its type is not.
    const bad = await register(urls[2]!, 'levels', { type: 'record', name: 'L', fields: [{ name: 'a', type: 'int' }] });
    expect(bad.status).toBe(409);
    expect(bad.body.error_code).toBe(409);
  });

  test('a stream schema put through one node is subject svc-N on the others, and a subject svc-M registered through another is stream schema M on the first', async () => {
    const schema = { type: 'object', properties: { id: { type: 'integer' } } };
    const put = await fetch(`${nodes[0]!.url}/_schemas/shared-view`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'json-schema', schema }) });
    expect(put.status).toBe(201);
    const latest = await fetch(`${urls[1]!}/subjects/svc-shared-view/versions/latest`);
    expect(await latest.json()).toMatchObject({ subject: 'svc-shared-view', version: 1, schemaType: 'JSON', schema: JSON.stringify(schema) });
    expect(await (await fetch(`${nodes[1]!.url}/_schemas/shared-view`)).json()).toMatchObject({ name: 'shared-view', version: 1, schema });

    const reg = await fetch(`${urls[1]!}/subjects/svc-from-registry/versions`, { method: 'POST', headers: { 'content-type': JSON_TYPE }, body: JSON.stringify({ schemaType: 'JSON', schema: JSON.stringify(schema) }) });
    expect(reg.status).toBe(200);
    // The registration is answered once every live node's workers have the stream schema.
    for (const n of nodes) expect(await (await fetch(`${n.url}/_schemas/from-registry`)).json()).toMatchObject({ name: 'from-registry', version: 1, schema });
  });

  test('every node lists every schema with the same id, and a restarted node still does', async () => {
    /** All schemas as one node lists them: subject, version, id. */
    const listing = async (url: string): Promise<string[]> =>
      ((await (await fetch(`${url}/schemas`)).json()) as Array<{ subject: string; version: number; id: number }>).map((s) => `${s.subject}/${s.version}=${s.id}`).sort();
    /** `url`'s listing once it shows `want` (each node's view of etcd follows its watch: wait for it, bounded). */
    const listingOnceEqual = async (url: string, want: string[]): Promise<string[]> => {
      const deadline = Date.now() + 30_000;
      let got = await listing(url);
      while (JSON.stringify(got) !== JSON.stringify(want) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        got = await listing(url);
      }
      return got;
    };
    const before = await listing(urls[0]!);
    expect(before.length).toBeGreaterThan(18);
    for (const url of urls.slice(1)) expect(await listingOnceEqual(url, before)).toEqual(before);

    await nodes[2]!.stop();
    nodes[2] = await startNode({ args });
    urls[2] = registryUrl(nodes[2]!);
    expect(await listingOnceEqual(urls[2]!, before)).toEqual(before);
    // The counter goes on from where the cluster left it: a schema registered through the restarted node gets an id no other has.
    const fresh = await register(urls[2]!, 'after-restart', record('AfterRestart'));
    expect(fresh.status).toBe(200);
    const taken = new Set(before.map((l) => Number(l.split('=')[1])));
    expect(taken.has(fresh.body.id!)).toBe(false);
    expect(fresh.body.id!).toBeGreaterThan(Math.max(...taken));
    for (const url of urls.slice(0, 2)) expect(await listingOnceEqual(url, [...before, `after-restart/1=${fresh.body.id}`].sort())).toContain(`after-restart/1=${fresh.body.id}`);
    // A node's stop and start under load take most of it.
  }, 120_000);
});
