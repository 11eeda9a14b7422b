/**
 * Node ids (docs/cluster.md, "Nodes"): --node-id, or the id kept in the data directory, or the
 * smallest free id claimed with a create-only write — two nodes starting at once never share one.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type MetaStore, openLocalMetaStore, resolveNodeId } from '../../../src/actors';

const dirs: string[] = [];
const stores: MetaStore[] = [];
function temp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-node-id-'));
  dirs.push(d);
  return d;
}
async function store(): Promise<MetaStore> {
  const s = await openLocalMetaStore(path.join(temp(), 'meta'));
  stores.push(s);
  return s;
}
afterAll(async () => {
  for (const s of stores) await s.close();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

test('concurrent first starts on one metadata store claim distinct ids, the smallest free ones', async () => {
  const meta = await store();
  const ids = await Promise.all([temp(), temp(), temp()].map((dataDir) => resolveNodeId(meta, { flag: 0, dataDir, clustered: true, defaultSlots: 1024 })));
  expect([...ids].sort()).toEqual([1, 2, 3]);
});

test('the data directory keeps its id; a different --node-id on it is refused', async () => {
  const meta = await store();
  const dataDir = temp();
  expect(await resolveNodeId(meta, { flag: 0, dataDir, clustered: true, defaultSlots: 1024 })).toBe(1);
  expect(fs.readFileSync(path.join(dataDir, 'node-id'), 'utf8').trim()).toBe('1');
  expect(await resolveNodeId(meta, { flag: 0, dataDir, clustered: true, defaultSlots: 1024 })).toBe(1);
  expect(await resolveNodeId(meta, { flag: 1, dataDir, clustered: true, defaultSlots: 1024 })).toBe(1);
  await expect(resolveNodeId(meta, { flag: 5, dataDir, clustered: true, defaultSlots: 1024 })).rejects.toThrow('belongs to node 1');
});

test('--node-id is taken as given; without a cluster the id is 1', async () => {
  const meta = await store();
  expect(await resolveNodeId(meta, { flag: 42, dataDir: temp(), clustered: true, defaultSlots: 1024 })).toBe(42);
  expect(await resolveNodeId(meta, { flag: 0, dataDir: temp(), clustered: false, defaultSlots: 1024 })).toBe(1);
});

test('a node-id file that does not hold an id stops the start with what it is for', async () => {
  const meta = await store();
  const dataDir = temp();
  fs.writeFileSync(path.join(dataDir, 'node-id'), 'banana\n');
  await expect(resolveNodeId(meta, { flag: 0, dataDir, clustered: true, defaultSlots: 1024 })).rejects.toThrow('not a node id');
});
