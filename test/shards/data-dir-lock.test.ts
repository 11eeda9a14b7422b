/**
 * The data directory's lock (src/shards/data-dir-lock.ts): one process at a time, shared within
 * the process that holds it, let go with its last release.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { lockDataDir } from '../../src/shards/data-dir-lock';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** Try the lock from another process: its error message, or 'taken'. */
function fromAnotherProcess(dir: string): string {
  const r = spawnSync(
    process.execPath,
    ['-e', `try { require(${JSON.stringify(path.resolve(__dirname, '..', '..', 'dist', 'shards', 'data-dir-lock.js'))}).lockDataDir(${JSON.stringify(dir)}, 'check'); console.log('taken'); } catch (e) { console.log(e.message); }`],
    { encoding: 'utf8', timeout: 20_000 },
  );
  return r.stdout.trim();
}

describe('the data directory lock', () => {
  it('refuses another process while any holder in this process keeps it, naming this pid, and is free once the last one releases it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-lock-unit-'));
    dirs.push(dir);
    const a = lockDataDir(dir, 'serve');
    const b = lockDataDir(dir, 'serve'); // the node's start and its ShardClient: one lock
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'svc.lock'), 'utf8'))).toMatchObject({ pid: process.pid, command: 'serve' });
    expect(fromAnotherProcess(dir)).toBe(`data directory ${dir} is locked by another process (pid ${process.pid}, svc serve since ${(JSON.parse(fs.readFileSync(path.join(dir, 'svc.lock'), 'utf8')) as { since: string }).since}): stop the node using it first, or give this one another --data-dir (${fs.realpathSync(dir)}/svc.lock)`);
    a.release();
    a.release(); // twice is once
    expect(fromAnotherProcess(dir)).toMatch(/is locked by another process/);
    b.release();
    expect(fromAnotherProcess(dir)).toBe('taken');
  });
});
