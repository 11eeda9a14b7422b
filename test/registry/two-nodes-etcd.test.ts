/**
 * One registry for two nodes sharing etcd metadata: schemas registered through either node get
 * ids no other registration got (ids are taken by compare-and-set on one counter), the same
 * schema registered through both at once gets one id, concurrent registrations under one subject
 * get distinct versions, and each node answers for ids the other handed out; a stream schema
 * (`/_schemas/{name}`) written through one node is the subject `svc-{name}` on the other, and the
 * other way round.
 */
import { randomBytes } from 'node:crypto';
import { EtcdCluster } from '../helpers/etcd-cluster';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { registryUrl } from './registry-node';

let etcd: EtcdCluster;
let nodes: NodeProcess[] = [];
let urls: string[] = [];

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
  const args = ['--metadata', etcd.url(`registry/${randomBytes(4).toString('hex')}`), '--shards', '2', '--shard-workers', '1', '--schema-registry-listen', '127.0.0.1:0'];
  nodes = await Promise.all([startNode({ args }), startNode({ args })]);
  urls = nodes.map(registryUrl);
});

afterAll(async () => {
  await Promise.all(nodes.map((n) => n.stop()));
  await etcd?.stop();
});

describe('the schema registry on two nodes sharing etcd', () => {
  test('hands out distinct ids to distinct schemas registered through both nodes at once, and each node serves all of them', async () => {
    const jobs = Array.from({ length: 16 }, (_, i) => register(urls[i % 2]!, `distinct-${i}`, record(`R${i}`)));
    const results = await Promise.all(jobs);
    for (const r of results) expect(r.status).toBe(200);
    const ids = results.map((r) => r.body.id!);
    expect(new Set(ids).size).toBe(16);
    for (const [i, id] of ids.entries()) {
      // Read through the node that did not register it.
      const other = urls[(i + 1) % 2]!;
      const r = await fetch(`${other}/schemas/ids/${id}`);
      expect(r.status).toBe(200);
      expect(JSON.parse(((await r.json()) as { schema: string }).schema)).toEqual(record(`R${i}`));
    }
  });

  test('gives one id to the same schema registered through both nodes at once under different subjects', async () => {
    const same = record('Shared', ['x', 'y']);
    const [a, b] = await Promise.all([register(urls[0]!, 'shared-a', same), register(urls[1]!, 'shared-b', same)]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.body.id).toBe(b.body.id);
    const versions = (await (await fetch(`${urls[1]}/schemas/ids/${a.body.id}/versions`)).json()) as Array<{ subject: string; version: number }>;
    expect(versions.sort((x, y) => x.subject.localeCompare(y.subject))).toEqual([
      { subject: 'shared-a', version: 1 },
      { subject: 'shared-b', version: 1 },
    ]);
  });

  test('gives concurrent registrations under one subject distinct versions', async () => {
    // Each adds a field with a default: compatible with any of the others under BACKWARD.
    const jobs = Array.from({ length: 6 }, (_, i) => register(urls[i % 2]!, 'contended', record('C', ['a', `f${i}`])));
    const results = await Promise.all(jobs);
    for (const r of results) expect(r.status).toBe(200);
    const versions = (await (await fetch(`${urls[0]}/subjects/contended/versions`)).json()) as number[];
    expect(versions).toEqual([1, 2, 3, 4, 5, 6]);
    const ids = new Set<number>();
    for (const v of versions) ids.add(((await (await fetch(`${urls[1]}/subjects/contended/versions/${v}`)).json()) as { id: number }).id);
    expect(ids).toEqual(new Set(results.map((r) => r.body.id!)));
  });

  test('applies a compatibility level set through one node to registrations through the other', async () => {
    expect((await register(urls[0]!, 'levels', record('L', ['a']))).status).toBe(200);
    const put = await fetch(`${urls[0]}/config/levels`, { method: 'PUT', headers: { 'content-type': JSON_TYPE }, body: JSON.stringify({ compatibility: 'FORWARD' }) });
    expect(await put.json()).toEqual({ compatibility: 'FORWARD' });
    expect(await (await fetch(`${urls[1]}/config/levels`)).json()).toEqual({ compatibilityLevel: 'FORWARD' });
    // FORWARD: the old reader must read the new data; dropping `a` (which has a default) is fine, changing its type is not.
    const bad = await register(urls[1]!, 'levels', { type: 'record', name: 'L', fields: [{ name: 'a', type: 'int' }] });
    expect(bad.status).toBe(409);
    expect(bad.body.error_code).toBe(409);
  });

  test('a stream schema put through one node is subject svc-N on the other, and a subject svc-M registered through the other is stream schema M on the first', async () => {
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
});
