/**
 * The object maintenance thread (src/object-maintenance.ts): compaction and the reaper run on a
 * thread of their own. A real node in objects mode (one Debian etcd member, `file:` objects):
 * compaction rewrites a crowded stream's entries while appends go on; a thread that fails (the
 * test fault hook, src/util/test-fault.ts) is started again and again while the fault lasts,
 * the node serves appends and its admin API meanwhile, and once the fault is gone compaction
 * goes on, with every acknowledged record found through the ledger.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EtcdLink } from '../../src/actors';
import { Ledger, type ObjectStore, openObjectStore } from '../../src/objects';
import { EtcdCluster } from '../helpers/etcd-cluster';
import { type NodeProcess, startNode, tempDir } from '../helpers/node-process';
import { sleep, until } from './objects-cluster';
import { fromObjects } from './objects-read';

jest.setTimeout(120_000);

let etcd: EtcdCluster;
let node: NodeProcess;
let link: EtcdLink;
let ledger: Ledger;
let store: ObjectStore;
let objectsDir: string;
const faults = path.join(tempDir('svc-faults-'), 'faults');

beforeAll(async () => {
  etcd = await EtcdCluster.start(1);
  const prefix = `objects/${randomBytes(4).toString('hex')}`;
  objectsDir = tempDir('svc-objects-');
  node = await startNode({
    args: ['--metadata', etcd.url(prefix), '--objects', `file:${objectsDir}`, '--shards', '1', '--shard-workers', '1'],
    env: { NODE_ENV: 'test', SVC_TEST_FAULTS_FILE: faults },
  });
  link = new EtcdLink(etcd.endpoints);
  ledger = new Ledger(link, prefix);
  store = openObjectStore(`file:${objectsDir}`);
}, 90_000);
afterAll(async () => {
  fs.rmSync(faults, { force: true });
  await node?.stop();
  link?.close();
  await store?.close();
  await etcd?.stop();
});

/** Compacted objects in the store now. */
const compacted = (): string[] => {
  const dir = path.join(objectsDir, 'c');
  return fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && !e.name.startsWith('.')).map((e) => e.name) : [];
};

/** `n` appends one after another (each its own group commit, so its own ledger entry); their values. */
async function appendEach(name: string, from: number, n: number): Promise<string[]> {
  const values: string[] = [];
  for (let i = from; i < from + n; i++) {
    const r = await fetch(`${node.url}${name}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: `v${i}` });
    expect(r.status).toBeLessThan(300);
    values.push(`v${i}`);
  }
  return values;
}

const restarts = (): number => node.output().split('\n').filter((l) => l.includes('the object maintenance thread ended; starting it again')).length;

test('compaction runs on the maintenance thread; a failed thread is started again and the node serves meanwhile', async () => {
  const name = `/mt-${randomBytes(3).toString('hex')}`;
  expect((await fetch(`${node.url}${name}`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
  const acked = await appendEach(name, 0, 80);
  // More than 32 entries: the stream is crowded, compacted at the thread's next tick.
  await until('a compacted object', async () => (compacted().length > 0 ? true : null), 15_000);

  fs.writeFileSync(faults, 'maintenance-thread');
  await until('two restarts of the failing thread', async () => (restarts() >= 2 ? true : null), 15_000);
  // While the thread fails at each start, appends and the admin API are served, and nothing is compacted.
  const before = compacted().length;
  acked.push(...(await appendEach(name, 80, 80)));
  expect((await fetch(`${node.adminUrl!}/admin/cluster`)).status).toBe(200);
  expect((await fetch(`${node.adminUrl!}/metrics`)).status).toBe(200);
  await sleep(1_500);
  expect(compacted().length).toBe(before);
  expect(node.output()).toContain('injected object maintenance thread failure');

  fs.rmSync(faults);
  await until('compaction after the fault', async () => (compacted().length > before ? true : null), 15_000);
  expect(node.proc.exitCode).toBeNull();
  // Every acknowledged record, in order, through the ledger's entries and the objects they name.
  const { records } = await fromObjects(ledger, store, name);
  expect(records.map(([, v]) => v)).toEqual(acked);
  expect(records.map(([seq]) => seq)).toEqual(acked.map((_, i) => i));
});
