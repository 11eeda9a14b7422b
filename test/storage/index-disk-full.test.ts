/**
 * A real RocksDB write error: the shard's index directory is its own 8 MiB tmpfs (mounted here;
 * the tests run as root), filled up by another file while the node runs. The log still takes
 * appends, so the error hits the checkpoint (a timer, off any request). The worker must stop
 * in order, its calls fail at once with 503, /ready say so, and once the space is back it must
 * be restarted and recover from its log with every acknowledged record there once.
 *
 * Where tmpfs cannot be mounted (no CAP_SYS_ADMIN), the index write error is injected instead
 * through the test-only hook (src/shards/worker/test-faults.ts), and the file says so in its title.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type NodeProcess, startNode, tempDir } from '../helpers/node-process';

function tryMount(dir: string, size: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

async function until<T>(what: string, f: () => Promise<T | null>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v !== null) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const dataDir = tempDir('svc-indexfull-');
const indexDir = path.join(dataDir, 'shards', '0', 'index');
fs.mkdirSync(indexDir, { recursive: true });
const real = process.env['SVC_TEST_NO_TMPFS'] === '1' ? false : tryMount(indexDir, '8m');
const filler = path.join(indexDir, 'zz-filler');
const faults = path.join(tempDir('svc-indexfull-ctl-'), 'faults');

describe(real ? 'a shard whose index disk (a real 8 MiB tmpfs) fills up while its log still has room' : 'a shard whose index writes fail (injected: tmpfs cannot be mounted here)', () => {
  let node: NodeProcess;
  const acked = new Map<number, string>();

  const append = async (body: string): Promise<Response> => {
    const res = await fetch(`${node.url}/i/a`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body, signal: AbortSignal.timeout(10_000) });
    if (res.status === 200) acked.set(Number(res.headers.get('svc-start-seq')), body);
    return res;
  };
  const ready = async (): Promise<{ status: number; doc: Record<string, unknown> }> => {
    const res = await fetch(`${node.adminUrl}/ready`);
    return { status: res.status, doc: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    node = await startNode({ dataDir, args: ['--shards', '1', '--shard-workers', '1', '--reserve-bytes', '0'], env: { NODE_ENV: 'test', SVC_TEST_FAULTS_FILE: faults } });
    expect((await fetch(`${node.url}/i/a`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    for (let i = 0; i < 5; i++) expect((await append(`before-${i}`)).status).toBe(200);
  });
  afterAll(async () => {
    await node?.stop();
    if (real) execFileSync('umount', [indexDir]);
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(path.dirname(faults), { recursive: true, force: true });
  });

  test('the checkpoint fails, the worker stops, its calls fail at once and /ready is 503', async () => {
    if (real) {
      // Fill the index's file system, as another program on the same disk would.
      const fd = fs.openSync(filler, 'w');
      try {
        for (;;) fs.writeSync(fd, Buffer.alloc(64 * 1024, 1));
      } catch (err) {
        expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
      } finally {
        fs.closeSync(fd);
      }
    } else {
      fs.writeFileSync(faults, 'index-write');
    }
    // Writes go to the log (another file system) until a checkpoint hits the full index. RocksDB
    // buffers its log writes (no sync), so it takes about a MiB of index entries: streams with long names.
    const statuses: number[] = [];
    const long = 'n'.repeat(900);
    for (let i = 0; i < 20_000 && !statuses.includes(503); i++) {
      statuses.push((await append(`during-${i}`)).status);
      const created = await fetch(`${node.url}/i/${long}-${i}`, { method: 'PUT', headers: { 'content-type': 'text/plain' }, signal: AbortSignal.timeout(10_000) });
      statuses.push(created.status);
    }
    expect(statuses).toContain(503);
    const r = await until('/ready to answer 503', async () => {
      const x = await ready();
      return x.status === 503 ? x : null;
    });
    expect(r.doc['unavailable']).toEqual([expect.objectContaining({ worker: 0, shards: [0], error: expect.stringMatching(real ? /no space left/i : /injected index write failure/) })]);
    const t = Date.now();
    const res = await append('while-down');
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: 'storage_unavailable' });
    expect(Date.now() - t).toBeLessThan(1000);
  }, 60_000);

  test('once the index disk has room the worker is restarted and recovers every acknowledged record once', async () => {
    fs.rmSync(real ? filler : faults);
    await until('the worker back and appends accepted', async () => ((await ready()).status === 200 && (await append(`after-${Date.now()}`)).status === 200 ? true : null), 60_000);
    const res = await fetch(`${node.url}/i/a?seq=0&count=100000`);
    const records = (await res.json()) as Array<{ seq: number; body: string }>;
    expect(records.map((x) => [x.seq, x.body])).toEqual([...acked.entries()].sort((a, b) => a[0] - b[0]));
    expect(node.output()).toContain('shard worker restarted');
  }, 90_000);
});
