/**
 * One process per data directory: `<dataDir>/svc.lock`, held with an exclusive flock for as
 * long as the directory is open (util/file-lock.ts). `svc serve`, `svc check` and `svc repair`
 * take it before they read or write anything else in the directory: a second process must not
 * replay and delete a running node's sync journal, cut what it takes for a torn tail, or rename
 * its RocksDB logs on the way to a refusal. The kernel drops the lock however the holder ends
 * (SIGKILL, power cut), so a crash never leaves a stale lock behind.
 *
 * The holder writes its pid, command and start time into the file, only to name itself in a
 * second process's refusal; the flock, not the content, is the lock.
 *
 * Within one process the lock is shared (a count per directory): the node's start and its
 * ShardClient take it both, and a flock is per open file description, so a second descriptor
 * of the same file would refuse its own process.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tryLockExclusive } from '../util/file-lock';

export const LOCK_FILE = 'svc.lock';

/** A held lock: release() once the directory is closed (the last release of the process lets go of it). */
export interface DataDirLock {
  readonly file: string;
  release(): void;
}

const held = new Map<string, { fd: number; count: number }>();

/**
 * Take the data directory's lock (creating the directory and the lock file if missing), or
 * throw naming the process that holds it. `command` says who holds it, for that message.
 */
export function lockDataDir(dataDir: string, command: string): DataDirLock {
  fs.mkdirSync(dataDir, { recursive: true });
  const key = fs.realpathSync(dataDir);
  const file = path.join(key, LOCK_FILE);
  let entry = held.get(key);
  if (entry === undefined) {
    const fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o644);
    let taken: boolean;
    try {
      taken = tryLockExclusive(fd);
    } catch (err) {
      fs.closeSync(fd);
      throw new Error(`${file}: cannot lock the data directory (${(err as Error).message})`, { cause: err });
    }
    if (!taken) {
      const holder = describeHolder(fd);
      fs.closeSync(fd);
      throw new Error(`data directory ${dataDir} is locked by another process${holder}: stop the node using it first, or give this one another --data-dir (${file})`);
    }
    // Only the holder writes: who it is, for the refusal above.
    const note = Buffer.from(JSON.stringify({ pid: process.pid, command, since: new Date().toISOString() }) + '\n');
    fs.ftruncateSync(fd, 0);
    fs.writeSync(fd, note, 0, note.length, 0);
    entry = { fd, count: 0 };
    held.set(key, entry);
  }
  entry.count++;
  const taken = entry;
  let released = false;
  return {
    file,
    release(): void {
      if (released) return;
      released = true;
      if (--taken.count > 0) return;
      held.delete(key);
      fs.closeSync(taken.fd); // closing the last descriptor drops the flock
    },
  };
}

/** ` (pid 123, svc serve since …)` from what the holder wrote, or '' when it says nothing readable. */
function describeHolder(fd: number): string {
  try {
    const buf = Buffer.alloc(512);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    const j = JSON.parse(buf.subarray(0, n).toString('utf8')) as { pid?: unknown; command?: unknown; since?: unknown };
    if (typeof j.pid !== 'number') return '';
    return ` (pid ${j.pid}${typeof j.command === 'string' ? `, svc ${j.command}` : ''}${typeof j.since === 'string' ? ` since ${j.since}` : ''})`;
  } catch {
    return '';
  }
}
