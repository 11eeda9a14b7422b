/**
 * Directories a file store keeps open for the directory syncs of its puts (file-store.ts): the
 * most recently used ones, at most OPEN_DIRS_MAX. Compacted objects go to a directory per stream
 * (`c/<streamId>/`), so keeping every directory ever written open held a descriptor per stream
 * compacted on the node — thousands of streams, thousands of descriptors, towards EMFILE. A
 * directory in use by a put is never closed under it: its sync may still be queued on the thread
 * pool, and a descriptor number closed and reused meanwhile would sync some other file.
 */
import * as fs from 'node:fs';

interface OpenDir {
  fd: number;
  /** Puts using the descriptor now: it is closed only at 0. */
  users: number;
  /** Forgotten (forget()) while in use: closed when the last user is done. */
  forgotten?: boolean;
}

/** Directories kept open by default: a store's group objects use one per shard worker; compaction one per stream at a time. */
export const OPEN_DIRS_MAX = 64;

export class OpenDirs {
  /** In least recently used order: a use moves its directory to the end. */
  readonly #open = new Map<string, OpenDir>();

  /**
   * Run `work` with the directory's descriptor, opened first if need be (after `create`, which
   * makes the directory when it is missing), held open until `work` settles.
   */
  async use<T>(dir: string, create: () => Promise<void>, work: (fd: number) => Promise<T>): Promise<T> {
    let d = this.#open.get(dir);
    if (d === undefined) {
      await create();
      // Another put may have opened it while this one waited.
      d = this.#open.get(dir) ?? { fd: fs.openSync(dir, 'r'), users: 0 };
    }
    this.#open.delete(dir);
    this.#open.set(dir, d);
    d.users++;
    try {
      return await work(d.fd);
    } finally {
      d.users--;
      if (d.forgotten === true && d.users === 0) fs.closeSync(d.fd);
      this.#trim();
    }
  }

  /**
   * The directory was removed (a listing took it away as empty, file-store.ts): its descriptor
   * names a directory no new entry can go to. Dropped, so the next use makes and opens it again;
   * closed now, or by the last put still using it.
   */
  forget(dir: string): void {
    const d = this.#open.get(dir);
    if (d === undefined) return;
    this.#open.delete(dir);
    if (d.users === 0) fs.closeSync(d.fd);
    else d.forgotten = true;
  }

  /** Close every descriptor (the store is closed: no put is in flight). */
  closeAll(): void {
    const fds = [...this.#open.values()].map((d) => d.fd);
    this.#open.clear();
    for (const fd of fds) fs.closeSync(fd);
  }

  /** Close the least recently used idle descriptors beyond the bound. */
  #trim(): void {
    if (this.#open.size <= OPEN_DIRS_MAX) return;
    for (const [dir, d] of this.#open) {
      if (this.#open.size <= OPEN_DIRS_MAX) return;
      if (d.users > 0) continue;
      this.#open.delete(dir);
      fs.closeSync(d.fd);
    }
  }
}
