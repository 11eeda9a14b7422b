/**
 * A node started on an empty data directory serves any stream it is given (docs/cluster.md,
 * "Transfers"; docs/objects.md, "An empty data directory"): 3 etcd members, 3 nodes on one `file:`
 * object store, then a fourth node with a new id, nothing on its disk and `--objects-reads remote`
 * (it adopts what it is given and reads the records from the object store, copying none). 100
 * streams with records (keys, headers, several batches each) are transferred to it; it serves every
 * acknowledged record, byte for byte, at its seq, with its key and headers, on its own listener (no
 * redirect).
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { objectsClusterForFile, until } from './objects-cluster';
import { follow } from './writers';

jest.setTimeout(240_000);

const c = objectsClusterForFile(['--node-lease-ttl', '3']);

interface Rec {
  seq: number;
  body: string;
  key: string;
  headers: Record<string, string>;
}


test('a node started on an empty data directory takes over 100 streams and serves every acknowledged record', async () => {
  const STREAMS = 100;
  const names = Array.from({ length: STREAMS }, (_, i) => `/empty/s${String(i).padStart(3, '0')}`);
  const written = new Map<string, Rec[]>();
  await Promise.all(
    Array.from({ length: 8 }, async (_, w) => {
      for (let i = w; i < STREAMS; i += 8) {
        const name = names[i]!;
        const created = await follow(`${c.any().url}${name}`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' } });
        expect([200, 201]).toContain(created.status);
        const recs: Rec[] = [];
        // Three batches of varied records: binary-safe bodies as base64 text, keys and headers.
        for (let b = 0; b < 3; b++) {
          const batch = Array.from({ length: 5 + b }, (_, k) => ({ body: randomBytes(16 + 8 * k).toString('base64'), key: `${name}/k${b}.${k}`, headers: { batch: String(b), n: String(k) } }));
          const r = await follow(`${c.any().url}${name}`, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body: JSON.stringify({ records: batch }) });
          expect(r.status).toBe(200);
          const first = Number(r.headers.get('svc-start-seq'));
          await r.arrayBuffer();
          batch.forEach((x, k) => recs.push({ seq: first + k, ...x }));
        }
        written.set(name, recs);
      }
    }),
  );
  // A fourth node, new id, empty data directory, reading moved streams from the object store.
  await c.startNode(4, undefined, ['--objects-reads', 'remote']);
  await c.waitLive(4);
  const fresh = c.nodes.get(4)!;
  for (const name of names) {
    const r = await c.admin<{ pending: boolean }>('/admin/transfer', { method: 'POST', body: JSON.stringify({ stream: name, toNode: 4 }) });
    expect(r.status).toBe(200);
  }
  await until(
    'every stream placed on the new node',
    async () => {
      for (const name of names) {
        const d = await c.detail(name);
        if (d.ownerNodeId !== 4 || d.state !== 'placed') return null;
      }
      return true;
    },
    120_000,
    500,
  );
  // Read on the new node itself: it holds them now.
  for (const name of names) {
    const r = await fetch(`${fresh.url}${name}?seq=0&count=1000&format=json`, { redirect: 'manual' });
    expect(r.status).toBe(200);
    const got = (await r.json()) as Array<{ seq: number; body: string; key: string | null; headers?: Record<string, string> }>;
    expect(got.map((x) => ({ seq: x.seq, body: x.body, key: x.key, headers: x.headers }))).toEqual(written.get(name));
  }
  // Nothing of them was copied to the new node's disk: its shard logs hold only their own few frames.
  const logBytes = dirBytes(path.join(fresh.dataDir, 'shards'), 'log');
  let recordBytes = 0;
  for (const recs of written.values()) for (const r of recs) recordBytes += r.body.length + r.key.length;
  console.log(`empty node: shard logs ${logBytes} bytes for ${recordBytes} bytes of record bodies and keys`);
  expect(logBytes).toBeLessThan(recordBytes / 2);
});

/** Bytes of the files under every `<name>` directory below `dir`. */
function dirBytes(dir: string, name: string, inside = false): number {
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) n += dirBytes(p, name, inside || e.name === name);
    else if (inside) n += fs.statSync(p).size;
  }
  return n;
}
