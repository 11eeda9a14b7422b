/**
 * The embedded MetaStore backend: the contract suite, then what a black-box suite cannot see —
 * consecutive indices, group commit, torn tails, snapshots and their corruption, and durability
 * of acknowledged writes under SIGKILL (a child process on the build in dist/).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { openLocalMetaStore } from '../../src/actors';
import { LocalMetaStore, type LocalMetaStoreOptions } from '../../src/actors/meta/local-meta-store';
import { type Logger } from '../../src/log';
import { metaStoreContract } from './meta-store.contract';

const ROOT = path.resolve(__dirname, '..', '..');
const DIST_ACTORS = path.join(ROOT, 'dist', 'actors', 'index.js');
const CHILD = path.join(__dirname, 'fixtures', 'acked-puts.js');

const dirs: string[] = [];
const stores: LocalMetaStore[] = [];

/** A fresh temporary directory, removed when the file ends. */
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-meta-'));
  dirs.push(dir);
  return dir;
}

/** Open a store, closed after the test. */
async function openStore(dir: string, options?: LocalMetaStoreOptions): Promise<LocalMetaStore> {
  const s = await LocalMetaStore.open(dir, options);
  stores.push(s);
  return s;
}

afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

metaStoreContract('local', async () => {
  const dir = tempDir();
  return { store: await openLocalMetaStore(dir), reopen: () => openLocalMetaStore(dir) };
});

/** A logger that keeps what it is given. */
function collectingLogger(lines: Array<{ level: string; obj: unknown; msg?: string }>): Logger {
  const at =
    (level: string) =>
    (obj: object | string, msg?: string): void => {
      lines.push({ level, obj, msg });
    };
  const log: Logger = { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), child: () => log };
  return log;
}

const logFile = (dir: string): string => path.join(dir, 'meta.log');
const snapshotFile = (dir: string): string => path.join(dir, 'meta.snapshot');

describe('LocalMetaStore', () => {
  it('numbers commands 1, 2, 3, … from a new store, puts and deletes alike', async () => {
    const s = await openStore(tempDir());
    expect(s.appliedIndex).toBe(0);
    expect((await s.put('a', 1)).version).toBe(1);
    expect((await s.put('b', 1)).version).toBe(2);
    await s.delete('a');
    expect(s.appliedIndex).toBe(3);
    expect((await s.put('b', 2)).version).toBe(4);
  });

  it('writes the commands of one event-loop turn with one fdatasync', async () => {
    const s = await openStore(tempDir());
    const before = s.stats.logSyncs;
    const records = await Promise.all(Array.from({ length: 200 }, (_, i) => s.put(`k/${String(i).padStart(3, '0')}`, i)));
    expect(s.stats.logSyncs - before).toBe(1);
    expect(records.map((r) => r.version)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
  });

  it('gathers the calls of every turn that passes while a group is being written into the next group', async () => {
    const dir = tempDir();
    const s = await openStore(dir);
    // Make each fdatasync take 200 ms, so the 20 turns below all pass while the first group syncs.
    const probe = await fsp.open(path.join(dir, 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as fsp.FileHandle;
    await probe.close();
    const datasync = proto.datasync;
    const slow = jest.spyOn(proto, 'datasync').mockImplementation(async function (this: fsp.FileHandle) {
      await new Promise((r) => setTimeout(r, 200));
      return datasync.call(this);
    });
    try {
      const writes: Array<Promise<unknown>> = [];
      for (let t = 0; t < 20; t++) {
        for (let i = 0; i < 10; i++) writes.push(s.put(`k/${t}/${i}`, i));
        await new Promise((r) => setImmediate(r));
      }
      await Promise.all(writes);
    } finally {
      slow.mockRestore();
    }
    expect(s.appliedIndex).toBe(200);
    expect(s.stats.logSyncs).toBe(2);
  });

  it('keeps earlier commands when garbage follows the last frame, and cuts the garbage', async () => {
    const dir = tempDir();
    const s = await LocalMetaStore.open(dir);
    for (let i = 1; i <= 5; i++) await s.put(`tokens/${i}`, { i });
    const records = s.list('');
    await s.close();
    const size = fs.statSync(logFile(dir)).size;
    fs.appendFileSync(logFile(dir), Buffer.from([0, 0, 0, 40, 1, 2, 3, 4, 5, 6, 7, 8, 9]));

    const lines: Array<{ level: string; obj: unknown }> = [];
    const again = await openStore(dir, { log: collectingLogger(lines) });
    expect(again.list('')).toEqual(records);
    expect(again.appliedIndex).toBe(5);
    expect(fs.statSync(logFile(dir)).size).toBe(size);
    expect(lines).toEqual([expect.objectContaining({ level: 'warn', obj: expect.objectContaining({ cutBytes: 13 }) })]);
    // The next command follows the whole ones and survives another restart.
    expect((await again.put('tokens/6', { i: 6 })).version).toBe(6);
    await again.close();
    expect((await openStore(dir)).get('tokens/6')?.version).toBe(6);
  });

  it('drops a command whose frame was cut short, keeping the ones before it', async () => {
    const dir = tempDir();
    const s = await LocalMetaStore.open(dir);
    for (let i = 1; i <= 5; i++) await s.put(`tokens/${i}`, { i });
    await s.close();
    fs.truncateSync(logFile(dir), fs.statSync(logFile(dir)).size - 3);

    const again = await openStore(dir);
    expect(again.appliedIndex).toBe(4);
    expect(again.list('').map((r) => r.key)).toEqual(['tokens/1', 'tokens/2', 'tokens/3', 'tokens/4']);
  });

  it('treats zeros after the last frame as a torn tail', async () => {
    const dir = tempDir();
    const s = await LocalMetaStore.open(dir);
    await s.put('a', 1);
    await s.close();
    fs.appendFileSync(logFile(dir), Buffer.alloc(4096));
    const again = await openStore(dir);
    expect(again.appliedIndex).toBe(1);
    expect(again.get('a')?.value).toBe(1);
  });

  it('writes a snapshot every snapshotEvery commands and recovers the same state from snapshot + log', async () => {
    const dir = tempDir();
    const s = await LocalMetaStore.open(dir, { snapshotEvery: 10 });
    for (let i = 0; i < 37; i++) {
      const key = `tokens/${i % 7}`;
      if (i % 5 === 4) await s.delete(key);
      else await s.put(key, { i });
    }
    expect(s.appliedIndex).toBeGreaterThan(30); // deletes of absent keys write nothing
    expect(s.stats.snapshots).toBe(Math.floor(s.appliedIndex / 10));
    expect(fs.existsSync(snapshotFile(dir))).toBe(true);
    const records = s.list('');
    const applied = s.appliedIndex;
    await s.close();

    const again = await openStore(dir, { snapshotEvery: 10 });
    expect(again.list('')).toEqual(records);
    expect(again.appliedIndex).toBe(applied);
    expect((await again.put('tokens/x', 1)).version).toBe(applied + 1);
  });

  it('snapshots a burst of concurrent writes without losing or reordering any', async () => {
    const dir = tempDir();
    const s = await LocalMetaStore.open(dir, { snapshotEvery: 7 });
    const writes = Array.from({ length: 100 }, (_, i) => s.put(`k/${String(i).padStart(3, '0')}`, i));
    for (let t = 0; t < 5; t++) {
      await new Promise((r) => setImmediate(r));
      writes.push(s.put(`late/${t}`, t));
    }
    const records = await Promise.all(writes);
    await s.close();
    const again = await openStore(dir);
    expect(again.appliedIndex).toBe(105);
    for (const r of records) expect(again.get(r.key)).toEqual(r);
  });

  it('skips log commands a snapshot already holds (a crash between the snapshot and emptying the log)', async () => {
    const dir = tempDir();
    const s = await LocalMetaStore.open(dir, { snapshotEvery: 6 });
    for (let i = 1; i <= 5; i++) await s.put(`k/${i}`, i);
    const oldLog = fs.readFileSync(logFile(dir));
    await s.put('k/6', 6); // the sixth command writes the snapshot and empties the log
    await s.close(); // waits for the snapshot, which runs after the put is answered
    expect(fs.statSync(logFile(dir)).size).toBe(0);
    fs.writeFileSync(logFile(dir), oldLog);

    const again = await openStore(dir, { snapshotEvery: 6 });
    expect(again.appliedIndex).toBe(6);
    expect(again.list('k/').map((r) => r.value)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await again.put('k/7', 7)).version).toBe(7);
  });

  it('refuses to open on a corrupt snapshot', async () => {
    const dir = tempDir();
    const s = await LocalMetaStore.open(dir, { snapshotEvery: 3 });
    for (let i = 1; i <= 4; i++) await s.put(`k/${i}`, i);
    await s.close();
    const good = fs.readFileSync(snapshotFile(dir));

    const flipped = Buffer.from(good);
    flipped[flipped.length - 5]! ^= 0x20;
    fs.writeFileSync(snapshotFile(dir), flipped);
    await expect(LocalMetaStore.open(dir)).rejects.toThrow(/meta\.snapshot is corrupt/);

    fs.writeFileSync(snapshotFile(dir), good.subarray(0, good.length - 1));
    await expect(LocalMetaStore.open(dir)).rejects.toThrow(/meta\.snapshot is corrupt/);

    fs.writeFileSync(snapshotFile(dir), good);
    expect((await openStore(dir)).appliedIndex).toBe(4);
  });

  it('refuses to open a log that does not follow on from the state (a removed snapshot)', async () => {
    const dir = tempDir();
    const s = await LocalMetaStore.open(dir, { snapshotEvery: 3 });
    for (let i = 1; i <= 4; i++) await s.put(`k/${i}`, i);
    await s.close();
    fs.rmSync(snapshotFile(dir));
    await expect(LocalMetaStore.open(dir)).rejects.toThrow(/continues at command 4 but the state ends at 0 and there is no snapshot/);
  });

  it('ignores a snapshot temporary file left by a crash', async () => {
    const dir = tempDir();
    const s = await LocalMetaStore.open(dir, { snapshotEvery: 2 });
    await s.put('a', 1);
    await s.put('b', 2);
    await s.close();
    fs.writeFileSync(snapshotFile(dir) + '.tmp', 'half a snapshot');
    const again = await openStore(dir);
    expect(again.list('').map((r) => r.key)).toEqual(['a', 'b']);
    expect(fs.existsSync(snapshotFile(dir) + '.tmp')).toBe(false);
  });

  it('keeps applying and notifying when a listener throws, and logs it', async () => {
    const lines: Array<{ level: string; obj: unknown }> = [];
    const s = await openStore(tempDir(), { log: collectingLogger(lines) });
    const seen: string[] = [];
    s.onChange(() => {
      throw new Error('listener bug');
    });
    s.onChange((key) => seen.push(key));
    await s.put('a', 1);
    await s.put('b', 2);
    expect(seen).toEqual(['a', 'b']);
    expect(s.get('b')?.value).toBe(2);
    expect(lines.filter((l) => l.level === 'error')).toHaveLength(2);
  });

  it('says its view is always current: it is the only writer, so token checks need no sync', async () => {
    const s = await openStore(tempDir());
    expect(s.viewIsCurrent()).toBe(true);
    await s.put('a', 1);
    expect(s.viewIsCurrent()).toBe(true);
  });

  it('orders keys by code point (UTF-8 byte order, as etcd does)', async () => {
    const s = await openStore(tempDir());
    for (const k of ['k/\u{1F600}', 'k/\uFFFD', 'k/z', 'k/\u00E9']) await s.put(k, 1);
    expect(s.list('k/').map((r) => r.key)).toEqual(['k/z', 'k/\u00E9', 'k/\uFFFD', 'k/\u{1F600}']);
  });

  it('keeps every acknowledged write when the process is killed with SIGKILL', async () => {
    if (!fs.existsSync(DIST_ACTORS)) throw new Error(`${path.relative(ROOT, DIST_ACTORS)} is missing: run \`npm run build\` first (npm test does)`);
    const dir = tempDir();
    const child = spawn(process.execPath, [CHILD, DIST_ACTORS, dir, '300'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        // Kill well into the run: several snapshots have been written, and writes are in flight.
        if (out.length > 120_000) resolve();
      });
      child.once('exit', (code) => reject(new Error(`child exited (${code}) before it was killed:\n${err}`)));
    });
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    // Only whole lines: the last one may have been cut by the kill.
    const acked = out
      .split('\n')
      .slice(0, -1)
      .map((line) => line.split(' '))
      .map(([, key, version, w, i]) => ({ key: key!, version: Number(version), w: Number(w), i: Number(i) }));
    expect(acked.length).toBeGreaterThan(1000);

    const s = await openStore(dir, { snapshotEvery: 300 });
    const lastAcked = new Map<number, number>();
    for (const a of acked) {
      expect(s.get(a.key)).toEqual({ key: a.key, value: expect.objectContaining({ w: a.w, i: a.i }), version: a.version });
      lastAcked.set(a.w, Math.max(lastAcked.get(a.w) ?? -1, a.i));
    }
    for (const [w, i] of lastAcked) expect(s.get<number>(`last/${w}`)!.value).toBeGreaterThanOrEqual(i);
    expect(s.appliedIndex).toBeGreaterThanOrEqual(Math.max(...acked.map((a) => a.version)));
  });
});
