/**
 * The `file:<dir>` object store: one file per object under a directory every node shares
 * (`<dir>/<key>`, the key's `/` as directories).
 *
 * Durability of a put, in order (the usual POSIX recipe; ext4/xfs keep it):
 *   1. write `<dir>/<key's dir>/.<name>.<random>.tmp` and fsync it      (the bytes are on disk)
 *   2. rename it to `<name>`                                            (atomic: readers see all or nothing)
 *   3. fsync the directory                                              (the name is on disk)
 * A fresh key (nothing reads it before the put resolves: compacted objects) is written in place
 * instead, its data and directory synced together: one sync round, not two in a row.
 * A create-only put (PutOptions.ifAbsent: group objects, which fence their writer) links the
 * synced temporary file to the key — link(2) fails when the name exists, so of two puts of one
 * key exactly one wins, and readers see all of the object or nothing — then syncs the directory.
 * On Linux the temporary file has no name at all (O_TMPFILE, linked with linkat(2)): no name is
 * made and removed per object, and a crash leaves no temporary file behind; elsewhere, or on a
 * file system without O_TMPFILE, it is a `.…tmp` file linked and then unlinked.
 * Its temporary file may be opened ahead (prepare(): the group commit knows its next keys).
 * The directories of these puts stay open for their syncs, the most recently used only (open-dirs.ts).
 * A blocking store (FileStoreOptions.blocking: the object maintenance thread's) does all of its
 * I/O on the calling thread, so compaction's and the reaper's reads, writes, syncs and deletes
 * never queue in the process's one thread pool ahead of the shard workers' commit syncs.
 * Directories a put creates are fsynced into their parents first. Temporary files start with `.`,
 * a segment no key may have, so listings skip them and they never collide with an object.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { getSystemErrorName } from 'node:util';
import { type FdLinker, fdLinker } from '../util/libc';
import { type ObjectOutcome, type ObjectStoreStats, recordObjectRequest } from './object-stats';
import { OpenDirs } from './open-dirs';
import {
  type ByteRange, type ListedObject, type ObjectOp, type ObjectStore, type PutOptions, ObjectNotFoundError, ObjectStoreError, bodyChunks, checkKey, checkPrefix, checkRange,
} from './object-store';

export interface FileStoreOptions {
  /**
   * Every call's I/O on the calling thread, none on the thread pool (default false). For a thread
   * that does nothing else: the pool's few threads are shared by the whole process, and the
   * reaper's bursts of deletes there (W1 kills some 600 group objects a second) would queue ahead
   * of the shard workers' commit syncs (perf/README.md, "Larger ledger batches").
   */
  blocking?: boolean;
  /**
   * Listings remove the empty directories they pass (default false): those under the top-level
   * prefixes (`c/<streamId>/`, `g/<node>/<nodeEpoch>/<worker>/`, …) left by deleted objects,
   * once nothing has changed in them for EMPTY_DIR_AGE_MS. S3 has no directories, so an object
   * store whose keys come and go leaves none; here one per stream ever compacted and per writer
   * ever started stayed for good, and every listing walked them (the reaper's orphan sweeps, whose
   * budget counts keys, not directories). For the store of the object maintenance thread, whose
   * reaper lists the store. A put into a directory removed meanwhile (by any node) makes it again.
   */
  pruneEmptyDirs?: boolean;
  /**
   * Create-only puts write unnamed temporary files (O_TMPFILE) where Linux and the file system
   * allow (default true); false: always a named `.…tmp` file, what other platforms do.
   */
  unnamedTmp?: boolean;
}

/**
 * An empty directory is removed by a listing only once this long has passed since its last change
 * (its mtime: the delete that emptied it, or its creation), so a directory a put has just made for
 * its first object is not taken from under it; a put that loses that race anyway makes it again.
 */
export const EMPTY_DIR_AGE_MS = 60_000; // 1 min

export class FileObjectStore implements ObjectStore {
  readonly describe: string;
  readonly #dir: string;
  readonly #stats: ObjectStoreStats | undefined;
  #rootChecked = false;
  /** Directories the fresh and create-only puts went to, the most recently used kept open for their fsyncs. */
  readonly #dirs = new OpenDirs();
  /** Create-only keys readied by prepare(): their temporary file, open. */
  readonly #prepared = new Map<string, TmpFile>();
  /** Names an unnamed temporary file, or null: create-only puts use named ones (not Linux, not asked for, no /proc). */
  readonly #linkFd: FdLinker | null;
  /** The file system refused O_TMPFILE: named temporary files from then on. */
  #tmpfileRefused = false;
  readonly createOnly = true;
  readonly #blocking: boolean;
  readonly #pruneEmptyDirs: boolean;

  constructor(dir: string, stats?: ObjectStoreStats, options: FileStoreOptions = {}) {
    this.#dir = dir;
    this.describe = `file:${dir}`;
    this.#stats = stats;
    this.#blocking = options.blocking ?? false;
    this.#pruneEmptyDirs = options.pruneEmptyDirs ?? false;
    this.#linkFd = options.unnamedTmp === false || O_TMPFILE === null || !fs.existsSync('/proc/self/fd') ? null : fdLinker();
  }

  async put(key: string, body: Buffer | readonly Buffer[], options?: PutOptions): Promise<void> {
    checkKey('put', key);
    const { chunks, bytes } = bodyChunks(body);
    await this.#timed('put', key, bytes, async () => {
      const file = this.#path(key);
      const dir = path.dirname(file);
      if (options?.ifAbsent === true) return this.#putIfAbsent(key, file, dir, chunks, bytes);
      if (options?.fresh === true) return this.#putInPlace(file, dir, chunks, bytes);
      return againIfDirGone(() => this.#putRenamed(file, dir, chunks, bytes));
    });
  }

  /** A put under a name readers may see: a temporary file written and synced, renamed to the key, the directory synced. */
  async #putRenamed(file: string, dir: string, chunks: readonly Buffer[], bytes: number): Promise<void> {
    await this.#ensureDir(dir);
    const tmp = tmpName(file);
    let renamed = false;
    try {
      if (this.#blocking) {
        const fd = fs.openSync(tmp, 'wx', 0o644);
        try {
          writeAllSync(fd, chunks, bytes);
          fs.fsyncSync(fd);
        } finally {
          fs.closeSync(fd);
        }
        fs.renameSync(tmp, file);
        renamed = true;
        fsyncDirSync(dir);
        return;
      }
      const fh = await fs.promises.open(tmp, 'wx', 0o644);
      try {
        await writeAll(fh, chunks, bytes);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await fs.promises.rename(tmp, file);
      renamed = true;
      await fsyncDir(dir);
    } finally {
      if (!renamed) await fs.promises.rm(tmp, { force: true }).catch(() => undefined);
    }
  }

  async get(key: string, range?: ByteRange): Promise<Buffer> {
    checkKey('get', key);
    checkRange(key, range);
    return this.#timed('get', key, 0, () => this.#read(key, range), bufferLength);
  }

  /**
   * A get's read (a method, not a closure made per get: V8 keeps a closure's optimized code only
   * while one of its closures lives, and compaction's gets, hundreds a second, had it compiled
   * again after every full collection).
   */
  async #read(key: string, range: ByteRange | undefined): Promise<Buffer> {
    const file = this.#path(key);
    // A small range (a group's part of a stream, for compaction or an import) is read on the
    // calling thread: from the page cache that costs less than four thread-pool round trips,
    // which would also queue behind the group commits' syncs on the same pool.
    if (this.#blocking || (range !== undefined && range.length <= SYNC_IO_MAX_BYTES)) {
      const fd = fs.openSync(file, 'r');
      try {
        const { offset, length } = this.#checkedRange(key, fs.fstatSync(fd), range);
        const out = Buffer.allocUnsafe(length);
        for (let filled = 0; filled < length; ) {
          const n = fs.readSync(fd, out, filled, length - filled, offset + filled);
          if (n === 0) throw this.#endedEarly(key, offset, filled, length);
          filled += n;
        }
        return out;
      } finally {
        fs.closeSync(fd);
      }
    }
    const fh = await fs.promises.open(file, 'r');
    try {
      const { offset, length } = this.#checkedRange(key, await fh.stat(), range);
      const out = Buffer.allocUnsafe(length);
      for (let filled = 0; filled < length; ) {
        const { bytesRead } = await fh.read(out, filled, length - filled, offset + filled);
        if (bytesRead === 0) throw this.#endedEarly(key, offset, filled, length);
        filled += bytesRead;
      }
      return out;
    } finally {
      await fh.close();
    }
  }

  /** The range a get reads: all of the object without one; refused when the object is no file or the range passes its end. */
  #checkedRange(key: string, st: fs.Stats, range: ByteRange | undefined): { offset: number; length: number } {
    if (!st.isFile()) throw new ObjectNotFoundError('get', key, this.describe); // a directory of other keys
    const offset = range?.offset ?? 0;
    const length = range?.length ?? st.size;
    if (offset + length > st.size) {
      throw new ObjectStoreError('get', key, 'InvalidRange', `range ${offset}+${length} of ${JSON.stringify(key)} is past its end (${st.size} bytes)`);
    }
    return { offset, length };
  }

  #endedEarly(key: string, offset: number, filled: number, length: number): ObjectStoreError {
    return new ObjectStoreError('get', key, 'InvalidRange', `object ${JSON.stringify(key)} ended at ${offset + filled} while reading ${offset}+${length}`);
  }

  async delete(key: string): Promise<void> {
    checkKey('delete', key);
    await this.#timed('delete', key, 0, async () => {
      try {
        if (this.#blocking) fs.unlinkSync(this.#path(key));
        else await fs.promises.unlink(this.#path(key));
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        // Absent is fine; so is a directory of other keys under this name (no object has it).
        if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') return;
        throw err;
      }
      // Not synced: only objects nothing refers to are deleted (the reaper's d/ records and
      // orphans, docs/cluster.md), and one whose name comes back after a crash is an orphan the
      // reaper deletes again. A directory fsync per delete would cost a journal commit each, on
      // the thread pool the group commits' syncs wait in.
    });
  }

  async *list(prefix: string, startAfter?: string): AsyncIterable<ListedObject> {
    checkPrefix(prefix);
    const started = process.hrtime.bigint();
    // ok unless it throws: a caller that stops early (break) ended a good listing.
    let outcome: ObjectOutcome = 'ok';
    try {
      await this.#rootExists('list', prefix);
      // Start at the deepest directory the prefix names whole; entries below are filtered by the rest.
      const slash = prefix.lastIndexOf('/');
      yield* this.#walk(slash < 0 ? '' : prefix.slice(0, slash + 1), prefix, startAfter === undefined ? null : Buffer.from(startAfter, 'utf8'));
    } catch (err) {
      outcome = 'error';
      throw toStoreError('list', prefix, err, this.describe);
    } finally {
      if (this.#stats !== undefined) recordObjectRequest(this.#stats, 'list', outcome, secondsSince(started));
    }
  }

  async close(): Promise<void> {
    const prepared = [...this.#prepared];
    this.#prepared.clear();
    for (const [, p] of prepared) {
      fs.closeSync(p.fd);
      if (p.tmp !== null) await fs.promises.unlink(p.tmp).catch(() => undefined);
    }
    this.#dirs.closeAll();
  }

  /**
   * Create-only keys that will be put soon (the group commit's next object keys): their
   * temporary files are opened now, off the write path. Failures here only cost the put its
   * shortcut.
   */
  prepare(keys: readonly string[]): void {
    for (const key of keys) {
      checkKey('put', key);
      if (this.#prepared.has(key)) continue;
      try {
        this.#prepared.set(key, this.#openTmp(this.#path(key)));
      } catch {
        // The directory does not exist yet (the first put makes it) or the disk refused: the put opens its own.
      }
    }
  }

  /**
   * A create-only put: the bytes written to a temporary file and synced, the file linked to the
   * key (EEXIST: the key exists, PreconditionFailed), the directory synced. The calls on the
   * calling thread are synchronous (a create, a write into the page cache, a link: microseconds);
   * the two syncs run on the thread pool, and the directory stays open for the next put.
   */
  #putIfAbsent(key: string, file: string, dir: string, chunks: readonly Buffer[], bytes: number): Promise<void> {
    return this.#inDir(dir, (dirFd) => this.#linkNew(key, file, dirFd, chunks, bytes));
  }

  /** #putIfAbsent's work in its directory, open as `dirFd`. */
  async #linkNew(key: string, file: string, dirFd: number, chunks: readonly Buffer[], bytes: number): Promise<void> {
    const ahead = this.#prepared.get(key);
    this.#prepared.delete(key);
    const t = ahead ?? this.#openTmp(file);
    try {
      writeAllSync(t.fd, chunks, bytes);
      await this.#sync(t.fd, 'data');
      const err = t.tmp === null ? linkError(this.#linkFd!(t.fd, dirFd, path.basename(file))) : linkNamed(t.tmp, file);
      if (err?.code === 'EEXIST') throw new ObjectStoreError('put', key, 'PreconditionFailed', `object store ${this.describe}: ${JSON.stringify(key)} exists (a create-only put)`);
      if (err !== null) throw err;
    } finally {
      fs.closeSync(t.fd);
      if (t.tmp !== null) {
        try {
          unlinkTmp(t.tmp);
        } catch {
          // The put's own outcome is the one to report; a temporary file left behind is skipped by listings.
        }
      }
    }
    await this.#sync(dirFd, 'all');
  }

  /**
   * A temporary file for a create-only put of `file`, open for writing: unnamed in its directory
   * where the platform and file system allow (O_TMPFILE), else a `.…tmp` name beside it. Throws
   * ENOENT when the directory does not exist.
   */
  #openTmp(file: string): TmpFile {
    if (this.#linkFd !== null && !this.#tmpfileRefused) {
      try {
        return { tmp: null, fd: fs.openSync(path.dirname(file), O_TMPFILE! | fs.constants.O_WRONLY, 0o644) };
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        // A file system without O_TMPFILE (or a kernel before 3.11, which takes the flag for O_DIRECTORY): named files from now on.
        if (code !== 'EOPNOTSUPP' && code !== 'ENOTSUP' && code !== 'EISDIR' && code !== 'EINVAL') throw err;
        this.#tmpfileRefused = true;
      }
    }
    const tmp = tmpName(file);
    return { tmp, fd: fs.openSync(tmp, 'wx', 0o644) };
  }

  /**
   * A fresh key (PutOptions.fresh): written under its own name, then the file's data and the
   * directory entry synced at once. Both syncs follow the create and the write, so when both
   * resolve the name and the bytes are on disk; until then a reader could see part of the object,
   * which is why only keys nothing reads yet are written so.
   */
  #putInPlace(file: string, dir: string, chunks: readonly Buffer[], bytes: number): Promise<void> {
    return this.#inDir(dir, (dirFd) => this.#writeInPlace(file, dirFd, chunks, bytes));
  }

  /** #putInPlace's work in its directory, open as `dirFd`. */
  async #writeInPlace(file: string, dirFd: number, chunks: readonly Buffer[], bytes: number): Promise<void> {
    if (bytes > SYNC_IO_MAX_BYTES && !this.#blocking) {
      // A compacted object (megabytes): written on the thread pool, not on the calling thread,
      // which would do nothing else for as long as the copy takes.
      const fh = await fs.promises.open(file, 'w', 0o644);
      try {
        await writeAll(fh, chunks, bytes);
        await Promise.all([fh.datasync(), syncFd(dirFd, 'all')]);
      } finally {
        await fh.close();
      }
      return;
    }
    const fd = fs.openSync(file, 'w', 0o644);
    try {
      writeAllSync(fd, chunks, bytes);
      await Promise.all([this.#sync(fd, 'data'), this.#sync(dirFd, 'all')]);
    } finally {
      fs.closeSync(fd);
    }
  }

  /**
   * Run `work` with the directory open (created first if need be), kept open for later puts while
   * recently used. A directory removed since it was opened (a listing of this or another node took
   * it away as empty: FileStoreOptions.pruneEmptyDirs) fails the work's create with ENOENT before
   * anything was written under the key: made again and tried once more.
   */
  #inDir(dir: string, work: (dirFd: number) => Promise<void>): Promise<void> {
    return againIfDirGone(
      () => this.#dirs.use(dir, () => this.#ensureDir(dir), work),
      () => this.#dirs.forget(dir),
    );
  }

  /**
   * Keys under `rel` (a key prefix ending in `/`, or '') in UTF-8 byte order: a directory sorts
   * as its name plus `/`, so its whole subtree lands where its keys belong among its siblings
   * (`a-c` < `a/b` < `a0`), and the walk can yield as it goes instead of sorting everything.
   * Keys up to `after` (UTF-8) are left out, and so is every directory whose keys all are: a
   * resumed listing reads only the directories on its way to where it resumes.
   */
  async *#walk(rel: string, prefix: string, after: Buffer | null): AsyncGenerator<ListedObject> {
    let entries: fs.Dirent[];
    try {
      const dir = rel === '' ? this.#dir : this.#path(rel.slice(0, -1));
      entries = this.#blocking ? fs.readdirSync(dir, { withFileTypes: true }) : await fs.promises.readdir(dir, { withFileTypes: true });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || (code === 'ENOTDIR' && rel !== '')) return; // nothing under this prefix
      throw err;
    }
    if (entries.length === 0) {
      if (this.#pruneEmptyDirs) this.#pruneIfStale(rel);
      return;
    }
    const named = entries
      .filter((e) => !e.name.startsWith('.') && (e.isFile() || e.isDirectory()))
      .map((e) => ({ e, sortKey: Buffer.from(rel + e.name + (e.isDirectory() ? '/' : ''), 'utf8') }));
    named.sort((a, b) => Buffer.compare(a.sortKey, b.sortKey));
    for (const { e, sortKey } of named) {
      const key = rel + e.name;
      if (e.isDirectory()) {
        const sub = key + '/';
        if (after !== null && whollyBefore(sortKey, after)) continue;
        if (sub.startsWith(prefix) || prefix.startsWith(sub)) yield* this.#walk(sub, prefix, after);
      } else if (key.startsWith(prefix) && (after === null || Buffer.compare(sortKey, after) > 0)) {
        let size: number;
        try {
          size = (this.#blocking ? fs.statSync(this.#path(key)) : await fs.promises.stat(this.#path(key))).size;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // deleted meanwhile
          throw err;
        }
        yield { key, size };
      }
    }
  }

  #path(key: string): string {
    return path.join(this.#dir, ...key.split('/'));
  }

  /**
   * Remove the empty directory of key prefix `rel` (below a top-level prefix: `c/1/`, not `c/` or
   * the root) if nothing has changed in it for EMPTY_DIR_AGE_MS. Not synced: a directory that
   * comes back after a crash is empty, and the next listing removes it again. One that filled or
   * went meanwhile (ENOTEMPTY, ENOENT) is left as it is.
   */
  #pruneIfStale(rel: string): void {
    if (rel.split('/').length < 3) return;
    const dir = this.#path(rel.slice(0, -1));
    try {
      if (Date.now() - fs.statSync(dir).mtimeMs < EMPTY_DIR_AGE_MS) return;
      fs.rmdirSync(dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'ENOENT') throw err;
    }
  }

  /** mkdir -p, then fsync the parent of every directory it made (so the new names are durable too). */
  async #ensureDir(dir: string): Promise<void> {
    const first = this.#blocking ? fs.mkdirSync(dir, { recursive: true }) : await fs.promises.mkdir(dir, { recursive: true });
    if (first === undefined) return;
    const made: string[] = [];
    for (let d = dir; d.length >= first.length; d = path.dirname(d)) made.push(d);
    for (const d of made.reverse()) {
      if (this.#blocking) fsyncDirSync(path.dirname(d));
      else await fsyncDir(path.dirname(d));
    }
  }

  /** fdatasync (data) or fsync (all) of an open descriptor: on the thread pool, or here when blocking. */
  #sync(fd: number, what: 'data' | 'all'): Promise<void> {
    if (!this.#blocking) return syncFd(fd, what);
    if (what === 'data') fs.fdatasyncSync(fd);
    else fs.fsyncSync(fd);
    return Promise.resolve();
  }

  /**
   * The store's directory must exist: a put never creates it, so a shared file system that is
   * not mounted fails every request instead of filling the local disk under the mount point.
   * Checked once; later requests trust it.
   */
  async #rootExists(op: ObjectOp, key: string): Promise<void> {
    if (this.#rootChecked) return;
    let isDir = false;
    try {
      isDir = (this.#blocking ? fs.statSync(this.#dir) : await fs.promises.stat(this.#dir)).isDirectory();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && (err as NodeJS.ErrnoException).code !== 'ENOTDIR') throw err;
    }
    if (!isDir) {
      throw new ObjectStoreError(op, key, 'NoSuchStore', `object store ${this.describe}: the directory does not exist (create it, or mount the shared file system there)`);
    }
    this.#rootChecked = true;
  }

  async #timed<T>(op: ObjectOp, key: string, bytes: number, work: () => Promise<T>, bytesOf?: (v: T) => number): Promise<T> {
    const started = process.hrtime.bigint();
    let outcome: ObjectOutcome = 'error';
    try {
      await this.#rootExists(op, key);
      const v = await work();
      if (bytesOf !== undefined) bytes = bytesOf(v);
      outcome = 'ok';
      return v;
    } catch (err) {
      const e = toStoreError(op, key, err, this.describe);
      if (e instanceof ObjectNotFoundError) outcome = 'not_found';
      throw e;
    } finally {
      if (this.#stats !== undefined) recordObjectRequest(this.#stats, op, outcome, secondsSince(started), outcome === 'ok' ? bytes : 0);
    }
  }
}

const bufferLength = (b: Buffer): number => b.length;

/** writev until every byte is written (a write may be partial; libuv splits past IOV_MAX buffers). */
async function writeAll(fh: fs.promises.FileHandle, chunks: readonly Buffer[], bytes: number): Promise<void> {
  let written = (await fh.writev(chunks as Buffer[])).bytesWritten;
  while (written < bytes) {
    const rest = Buffer.concat(chunks as Buffer[]).subarray(written);
    const { bytesWritten } = await fh.write(rest, 0, rest.length, written);
    if (bytesWritten === 0) throw Object.assign(new Error(`wrote ${written} of ${bytes} bytes`), { code: 'EIO' });
    written += bytesWritten;
  }
}

/**
 * `put`, tried once more when it failed with ENOENT: its directory was removed as empty since it
 * was made or opened (FileStoreOptions.pruneEmptyDirs), before anything was written under the key;
 * the second try makes it again (`forget`: what still names the removed directory goes first).
 */
async function againIfDirGone(put: () => Promise<void>, forget?: () => void): Promise<void> {
  try {
    return await put();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    forget?.();
    return put();
  }
}

/** Puts and ranged gets of at most this many bytes write or read on the calling thread (page-cache copies). */
const SYNC_IO_MAX_BYTES = 64 * 1024; // 64 KiB

/**
 * Every key under the directory `sub` (a key prefix ending in `/`, UTF-8) sorts at or before
 * `after`: `sub` sorts before it and is not a prefix of it (so they differ within `sub`, where
 * `sub` is the lower).
 */
function whollyBefore(sub: Buffer, after: Buffer): boolean {
  return Buffer.compare(sub, after) < 0 && !(after.length >= sub.length && after.subarray(0, sub.length).equals(sub));
}

/** A create-only put's temporary file: its name (null: unnamed, O_TMPFILE) and its open descriptor. */
interface TmpFile {
  tmp: string | null;
  fd: number;
}

/** O_TMPFILE as Linux numbers it (with the O_DIRECTORY it implies), or null elsewhere: Node's fs.constants lack it. */
const O_TMPFILE = process.platform === 'linux' ? 0o20200000 : null;

/** An FdLinker's outcome (0, or the errno) as an error carrying its code, or null when linked. */
function linkError(errnum: number): NodeJS.ErrnoException | null {
  if (errnum === 0) return null;
  const code = getSystemErrorName(-errnum);
  return Object.assign(new Error(`linkat: ${code}`), { code, errno: -errnum });
}

/** link(2) of a named temporary file to the key's file: the error (EEXIST: the key exists), or null. */
function linkNamed(tmp: string, file: string): NodeJS.ErrnoException | null {
  try {
    fs.linkSync(tmp, file);
    return null;
  } catch (err) {
    return err as NodeJS.ErrnoException;
  }
}

/** Remove a temporary file: one system call (rmSync would stat it first); absent is fine. */
function unlinkTmp(tmp: string): void {
  try {
    fs.unlinkSync(tmp);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * Temporary names: 48 random bits drawn once per thread, then a counter. As unlikely to meet
 * another thread's or node's as a draw per name was, without a call into the random source per
 * object (2 µs each, a few percent of a shard worker's objects-mode cost). Opened with `wx`
 * besides: a name met anyway fails its put, never shares a file.
 */
const TMP_PREFIX = randomBytes(6).toString('hex');
let tmpCounter = 0;

/** A temporary file beside `file`: its name starts with `.`, which no key segment may, so listings skip it. */
function tmpName(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${TMP_PREFIX}${(tmpCounter++).toString(36)}.tmp`);
}

/** Write every chunk at the file's start (a page-cache write: synchronous is cheaper than a round trip to the thread pool). */
function writeAllSync(fd: number, chunks: readonly Buffer[], bytes: number): void {
  let written = 0;
  while (written < bytes) {
    const rest = written === 0 ? (chunks as Buffer[]) : [Buffer.concat(chunks as Buffer[]).subarray(written)];
    const n = fs.writevSync(fd, rest, written);
    if (n === 0) throw Object.assign(new Error(`wrote ${written} of ${bytes} bytes`), { code: 'EIO' });
    written += n;
  }
}

/** fdatasync (data) or fsync (all) of an open descriptor, on the thread pool. */
function syncFd(fd: number, what: 'data' | 'all'): Promise<void> {
  return new Promise((resolve, reject) => (what === 'data' ? fs.fdatasync : fs.fsync)(fd, (err) => (err ? reject(err) : resolve())));
}

function fsyncDirSync(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

async function fsyncDir(dir: string): Promise<void> {
  const fh = await fs.promises.open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

function secondsSince(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** A file system error as an ObjectStoreError carrying its code (ENOENT on get: ObjectNotFoundError). */
function toStoreError(op: ObjectOp, key: string, err: unknown, where: string): ObjectStoreError {
  if (err instanceof ObjectStoreError) return err;
  const e = err as NodeJS.ErrnoException;
  if (op === 'get' && (e.code === 'ENOENT' || e.code === 'ENOTDIR')) return new ObjectNotFoundError(op, key, where);
  // ENOTDIR/EISDIR: a key and a directory of other keys share a name ("a" and "a/b"), which a file store cannot hold.
  const why = e.code === 'ENOTDIR' || e.code === 'EISDIR' ? ' (in a file store a key cannot also be the directory of other keys)' : '';
  return new ObjectStoreError(op, key, e.code ?? 'Error', `object store ${where}: ${op} ${JSON.stringify(key)}: ${e.message}${why}`, undefined, { cause: err });
}
