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
import { tempDir } from '../helpers/node-process';
import { sleep, until } from './objects-cluster';
import { objectsNodeForFile } from './objects-node';
import { fromObjects } from './objects-read';

jest.setTimeout(120_000);

const faults = path.join(tempDir('svc-faults-'), 'faults');
// A bound on compaction's I/O far above what this test moves: the setting reaches the thread, and its figures the metrics.
const c = objectsNodeForFile({ shards: 1, env: { NODE_ENV: 'test', SVC_TEST_FAULTS_FILE: faults, SVC_OBJECTS_COMPACT_BYTES_PER_SECOND: String(64 << 20) } });
afterAll(() => fs.rmSync(faults, { force: true }));

/** Compacted objects in the store now. */
const compacted = (): string[] => {
  const dir = path.join(c.objectsDir, 'c');
  return fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && !e.name.startsWith('.')).map((e) => e.name) : [];
};

/** `n` appends one after another (each its own group commit, so its own ledger entry); their values. */
async function appendEach(name: string, from: number, n: number): Promise<string[]> {
  const values: string[] = [];
  for (let i = from; i < from + n; i++) {
    const r = await fetch(`${c.node.url}${name}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: `v${i}` });
    expect(r.status).toBeLessThan(300);
    values.push(`v${i}`);
  }
  return values;
}

/** svc_objects_compaction_bytes_total{op} from GET /metrics, or null while it has no sample. */
async function compactionBytes(op: 'get' | 'put'): Promise<number | null> {
  const body = await (await fetch(`${c.node.adminUrl!}/metrics`)).text();
  const line = body.split('\n').find((l) => l.startsWith(`svc_objects_compaction_bytes_total{op="${op}"} `));
  return line === undefined ? null : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const restarts = (): number => c.node.output().split('\n').filter((l) => l.includes('the object maintenance thread ended; starting it again')).length;

test('compaction runs on the maintenance thread; a failed thread is started again and the node serves meanwhile', async () => {
  const name = `/mt-${randomBytes(3).toString('hex')}`;
  expect((await fetch(`${c.node.url}${name}`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
  const acked = await appendEach(name, 0, 80);
  // More than 32 entries: the stream is crowded, compacted at the thread's next tick.
  await until('a compacted object', async () => (compacted().length > 0 ? true : null), 15_000);
  // The thread reports what compaction read and wrote (every 500 ms): it reads each small group
  // object whole, so at least the bytes it writes (the objects' own framing besides the records).
  const moved = await until('compaction bytes in the metrics', async () => {
    const [get, put] = [await compactionBytes('get'), await compactionBytes('put')];
    return get !== null && put !== null && put > 0 && get >= put ? get : null;
  }, 15_000);

  fs.writeFileSync(faults, 'maintenance-thread');
  await until('two restarts of the failing thread', async () => (restarts() >= 2 ? true : null), 15_000);
  // While the thread fails at each start, appends and the admin API are served, and nothing is compacted.
  const before = compacted().length;
  acked.push(...(await appendEach(name, 80, 80)));
  expect((await fetch(`${c.node.adminUrl!}/admin/cluster`)).status).toBe(200);
  expect((await fetch(`${c.node.adminUrl!}/metrics`)).status).toBe(200);
  await sleep(1_500);
  expect(compacted().length).toBe(before);
  expect(c.node.output()).toContain('injected object maintenance thread failure');

  fs.rmSync(faults);
  await until('compaction after the fault', async () => (compacted().length > before ? true : null), 15_000);
  // The figures of the threads that ended are kept: the counters only grow.
  expect(await compactionBytes('get')).toBeGreaterThanOrEqual(moved);
  expect(c.node.proc.exitCode).toBeNull();
  // Every acknowledged record, in order, through the ledger's entries and the objects they name.
  const { records } = await fromObjects(c.ledger, c.store, name);
  expect(records.map(([, v]) => v)).toEqual(acked);
  expect(records.map(([seq]) => seq)).toEqual(acked.map((_, i) => i));
});
