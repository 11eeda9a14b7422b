/**
 * One process per data directory (src/shards/data-dir-lock.ts): a second `svc serve`, `svc check`
 * or `svc repair` on a running node's directory is refused before it reads or writes anything in
 * it. Before the lock came first, a second start replayed and deleted the running node's sync
 * journal on its way to RocksDB's lock error, so appends acknowledged after it lived only in a
 * deleted file.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { shardOf } from '../../src/shards/placement';
import { MAIN, ROOT, startNode, tempDir } from '../helpers/node-process';
import { pipelinedBurst } from '../helpers/pipelined-burst';

jest.setTimeout(90_000);

const SHARDS = 8;
const ARGS = ['--shard-workers', '1', '--shards', String(SHARDS)];

/** One stream name per shard, so one pipelined burst starts a group on each shard of the worker. */
function onePerShard(): string[] {
  const names = new Array<string | undefined>(SHARDS).fill(undefined);
  for (let i = 0; names.includes(undefined); i++) names[shardOf(`lock-${i}`, SHARDS)] ??= `lock-${i}`;
  return names as string[];
}

/** Every entry under `dir`: name, kind, size, mtime and the content's hash. */
function tree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const st = fs.statSync(p);
      const rel = path.relative(dir, p);
      if (e.isDirectory()) {
        out.set(rel, `dir mtime ${st.mtimeMs}`);
        walk(p);
      } else {
        out.set(rel, `file ${st.size} bytes, mtime ${st.mtimeMs}, sha256 ${createHash('sha256').update(fs.readFileSync(p)).digest('hex')}`);
      }
    }
  };
  walk(dir);
  return out;
}

/** The tree once it has stopped changing (the running node's checkpoint lands within 100 ms of the last write). */
async function settledTree(dir: string): Promise<Map<string, string>> {
  let prev = tree(dir);
  for (let i = 0; i < 30; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = tree(dir);
    if (JSON.stringify([...now]) === JSON.stringify([...prev])) return now;
    prev = now;
  }
  throw new Error(`${dir} kept changing while the node was idle`);
}

/** A second `svc serve` on `dataDir`; resolves with its exit code and output once it exits. */
function secondServe(dataDir: string): Promise<{ code: number | null; out: string }> {
  const proc = spawn(process.execPath, [MAIN, 'serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--kafka-listen', '127.0.0.1:0', '--data-dir', dataDir, ...ARGS], {
    cwd: ROOT,
    env: { SVC_RESERVE_BYTES: '0', ...process.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
  // A second node that started after all would run until killed: the test fails on its exit code.
  const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    proc.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    }),
  );
}

function svc(args: string[]): { status: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [MAIN, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

describe("a second process on a running node's data directory", () => {
  it('is refused having changed no file in it, and every acknowledged record survives a SIGKILL of the first node', async () => {
    const dataDir = tempDir('svc-lock-');
    const names = onePerShard();
    const acked = new Map<string, string[]>(names.map((n) => [n, []]));
    const burst = async (url: string, label: string): Promise<void> => {
      const appends = names.map((n): [string, string] => [n, `${label}-${n}`]);
      expect(await pipelinedBurst(url, appends)).toEqual(names.map(() => 200));
      for (const [n, body] of appends) acked.get(n)!.push(body);
    };
    // The node engine answers pipelined requests, so each burst's 8 groups go through the sync journal.
    const first = await startNode({ dataDir, engine: 'node', args: ARGS });
    for (const n of names) expect((await fetch(`${first.url}/${n}`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })).status).toBe(201);
    for (let b = 0; b < 20; b++) await burst(first.url, `before-${b}`);
    const journal = path.join(dataDir, 'journal', 'worker-0.journal');
    expect(fs.statSync(journal).size).toBeGreaterThan(0);

    const before = await settledTree(dataDir);
    const second = await secondServe(dataDir);
    expect(second.code).not.toBe(0);
    // Names, sizes, mtimes and contents: nothing changed (the journal is still there, with the same bytes).
    expect([...tree(dataDir)]).toEqual([...before]);
    expect(second.out).toContain(`data directory ${dataDir} is locked by another process (pid ${first.proc.pid}, svc serve since`);
    // The offline tools are refused the same way.
    const check = svc(['check', '--data-dir', dataDir]);
    expect(check.status).toBe(1);
    expect(check.err).toContain(`is locked by another process (pid ${first.proc.pid}`);
    const repair = svc(['repair', '--data-dir', dataDir]);
    expect(repair.status).toBe(1);
    expect(repair.err).toContain(`is locked by another process (pid ${first.proc.pid}`);
    expect([...tree(dataDir)]).toEqual([...before]);

    // Acknowledged after the refused start: durable through the same journal, which is still the one on disk.
    for (let b = 0; b < 20; b++) await burst(first.url, `after-${b}`);
    await first.kill();
    const again = await startNode({ dataDir, args: ARGS });
    for (const n of names) {
      const res = await fetch(`${again.url}/${n}?seq=0&count=1000`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as Array<{ body: string }>).map((r) => r.body)).toEqual(acked.get(n));
    }
    expect(await again.stop()).toBe(0);
  });
});
