/**
 * A full disk, made for real: the data directory lives on a 24 MiB tmpfs (mounted here; the
 * tests run as root). The node answers 503 storage_unavailable when the disk fills, gives back
 * its reserve, refuses creates and appends but accepts the DELETE that frees space, takes
 * appends again by itself once space is back, and never loses, duplicates or half-keeps an
 * append: each one is either acknowledged and kept, or answered 503 and absent. A node started on
 * a full disk says so and recovers the same way.
 *
 * Where tmpfs cannot be mounted (no CAP_SYS_ADMIN), the same node-level behaviour runs with
 * ENOSPC injected into the log writes through the test-only hook (src/shards/worker/test-faults.ts);
 * the DELETE-frees-space part needs a real disk and runs only on tmpfs.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type NodeProcess, startNode, tempDir } from '../helpers/node-process';

const MiB = 1024 * 1024;

function tryMount(dir: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

async function until<T>(what: string, f: () => Promise<T | null>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v !== null) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Fill whatever space is left with one file, as another program on the same disk would. */
function fillUp(file: string): void {
  const fd = fs.openSync(file, 'w');
  const chunk = Buffer.alloc(MiB, 1);
  try {
    for (;;) fs.writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    fs.closeSync(fd);
  }
}

const mnt = tempDir('svc-diskfull-');
const real = process.env['SVC_TEST_NO_TMPFS'] === '1' ? false : tryMount(mnt);
const dataDir = path.join(mnt, 'data');
const faults = path.join(tempDir('svc-diskfull-ctl-'), 'faults');
const ARGS = ['--shards', '1', '--shard-workers', '1', '--segment-bytes', String(MiB / 2), '--reserve-bytes', String(2 * MiB), '--reaper-interval-ms', '200', '--retention-interval-ms', '200'];

describe(real ? 'a node whose data directory is on a 24 MiB tmpfs that fills up' : 'a node whose log writes fail with ENOSPC (injected: tmpfs cannot be mounted here)', () => {
  let node: NodeProcess;
  /** Bodies of /d/keep acknowledged with 200, by seq. */
  const kept = new Map<number, string>();
  const start = (): Promise<NodeProcess> => startNode({ dataDir, args: ARGS, env: { NODE_ENV: 'test', SVC_TEST_FAULTS_FILE: faults } });

  const append = async (name: string, body: string): Promise<Response> => {
    const res = await fetch(`${node.url}/d/${name}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body, signal: AbortSignal.timeout(10_000) });
    if (res.status === 200 && name === 'keep') kept.set(Number(res.headers.get('svc-start-seq')), body);
    return res;
  };
  const ready = async (): Promise<{ status: number; doc: Record<string, unknown> }> => {
    const res = await fetch(`${node.adminUrl}/ready`);
    return { status: res.status, doc: (await res.json()) as Record<string, unknown> };
  };
  const keepIsIntact = async (): Promise<void> => {
    const res = await fetch(`${node.url}/d/keep?seq=0&count=100000&bytes=${64 * MiB}`);
    expect(res.status).toBe(200);
    const records = (await res.json()) as Array<{ seq: number; body: string }>;
    // Exactly what was acknowledged: nothing lost, nothing twice, no 503'd append kept.
    expect(records.map((r) => [r.seq, r.body])).toEqual([...kept.entries()].sort((a, b) => a[0] - b[0]));
  };

  beforeAll(async () => {
    node = await start();
    for (const s of ['keep', 'big']) expect((await fetch(`${node.url}/d/${s}`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
  });
  afterAll(async () => {
    await node?.stop();
    if (real) execFileSync('umount', [mnt]);
    fs.rmSync(mnt, { recursive: true, force: true });
    fs.rmSync(path.dirname(faults), { recursive: true, force: true });
  });

  test('appends are answered 503 storage_unavailable (disk full) when the disk fills', async () => {
    let last: Response | null = null;
    for (let i = 0; i < 5; i++) expect((await append('keep', `first-${i}`)).status).toBe(200);
    if (!real) fs.writeFileSync(faults, 'log-write-enospc');
    for (let i = 0; i < 2000; i++) {
      // The big stream (segments only it uses, so deleting it frees them); near the end every
      // other append goes to the stream that is kept, so the one that fails may be either.
      const near = !real || fs.statfsSync(mnt).bavail * fs.statfsSync(mnt).bsize < 1.5 * MiB;
      const res = await append(near && i % 2 === 1 ? 'keep' : 'big', `${i}:` + 'x'.repeat(near && i % 2 === 1 ? 1000 : 60 * 1024));
      if (res.status !== 200) {
        last = res;
        break;
      }
    }
    expect(last?.status).toBe(503);
    expect(await last!.json()).toMatchObject({ error: 'storage_unavailable', message: expect.stringMatching(/no space left/i) });
    await until('the disk-full error in the log', async () => (/"level":"error".*disk full: creates and appends are refused/.test(node.output()) ? true : null));
  }, 60_000);

  test('while the disk is full the node stays ready, reads, and refuses creates and appends with 503 (disk full)', async () => {
    if (!real) {
      // Injected: the disk itself has room, so the node leaves disk-full mode at its next check; the writes still fail.
      await until('the restarted worker', async () => ((await ready()).status === 200 ? true : null));
      await keepIsIntact();
      const res = await append('keep', 'refused');
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ error: 'storage_unavailable' });
      return;
    }
    const r = await until('the restarted worker in disk-full mode', async () => {
      const x = await ready();
      return x.status === 200 && x.doc['diskFull'] === true ? x : null;
    });
    expect(r.doc['ready']).toBe(true);
    const res = await append('keep', 'refused');
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: 'storage_unavailable', message: expect.stringContaining('the disk is full') });
    const created = await fetch(`${node.url}/d/new`, { method: 'PUT', headers: { 'content-type': 'text/plain' } });
    expect(created.status).toBe(503);
    await keepIsIntact();
  }, 30_000);

  test('a DELETE is accepted on the full disk, frees space, and appends are taken again by themselves', async () => {
    if (real) {
      const del = await fetch(`${node.url}/d/big`, { method: 'DELETE' });
      expect([200, 204]).toContain(del.status);
      expect((await fetch(`${node.url}/d/big`)).status).toBe(404);
    } else {
      fs.rmSync(faults); // injected: the "space" comes back when the fault ends
    }
    await until('appends to be accepted again', async () => ((await append('keep', `after-${Date.now()}`)).status === 200 ? true : null));
    const r = await ready();
    expect(r.status).toBe(200);
    expect(r.doc['diskFull']).toBeUndefined();
    expect(node.output()).toContain('disk space is back');
    await keepIsIntact();
  }, 40_000);

  test('after a restart every acknowledged record is there once', async () => {
    expect(await node.stop()).toBe(0);
    node = await start();
    await keepIsIntact();
  }, 30_000);

  if (real) test('a node started on a full disk says so, serves reads, and takes appends once space is freed', async () => {
    expect(await node.stop()).toBe(0);
    const filler = path.join(mnt, 'filler');
    fillUp(filler);
    node = await start();
    expect(node.output()).toMatch(/"level":"error".*"why":"the node started on a full disk".*disk full/);
    await keepIsIntact();
    const res = await append('keep', 'refused-at-start');
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: 'storage_unavailable', message: expect.stringContaining('the disk is full') });
    fs.rmSync(filler);
    await until('appends to be accepted again', async () => ((await append('keep', `freed-${Date.now()}`)).status === 200 ? true : null));
    await keepIsIntact();
  }, 40_000);

  if (real) test('without a reserve, a node started on a disk with no byte free refuses to start and says the disk is full', async () => {
    expect(await node.stop()).toBe(0);
    fs.rmSync(path.join(dataDir, 'space-reserve'), { force: true });
    const filler = path.join(mnt, 'filler');
    fillUp(filler);
    const args = ARGS.map((a, i) => (ARGS[i - 1] === '--reserve-bytes' ? '0' : a));
    await expect(startNode({ dataDir, args })).rejects.toThrow(/the disk holding the data directory .* is full \(\d+ bytes free\).*free space on that file system/);
    fs.rmSync(filler);
    node = await start();
    await keepIsIntact();
  }, 40_000);
});
