/**
 * A shard's append-only log: numbered segment files of frames (see frame.ts), written by
 * group commit. The shard hands over every frame collected while the previous write was in
 * flight; they are written with one write and one fdatasync per segment touched, so the
 * cost of durability is shared by everything that arrived together. Through the worker's
 * commit barrier the write is journaled (no fdatasync here: commit-barrier.ts makes it durable,
 * often with one sync shared by several shards' logs).
 *
 * A segment is sealed (never written again) when the next frame would take it past
 * `segmentBytes`; sealed segments are the "objects" that the reaper deletes once all
 * their data is dead.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface Location {
  segId: number;
  pos: number;
}

const SUFFIX = '.seg';

export function segmentFileName(segId: number): string {
  return String(segId).padStart(10, '0') + SUFFIX;
}

export class SegmentLog {
  readonly #dir: string;
  readonly #segmentBytes: number;
  readonly #fds = new Map<number, number>();
  #tailSeg: number;
  #tailPos: number;
  #segments: number[];
  /** Segments written in journaled mode since the last syncJournaled() (their bytes may be in the sync journal only). */
  readonly #unsynced = new Set<number>();
  /** Told of every run of buffers as it is laid out (catalog-marks.ts), before it is written. */
  onWrite: ((segId: number, pos: number, bufs: readonly Buffer[]) => void) | null = null;

  private constructor(dir: string, segmentBytes: number, segments: number[], tailSeg: number, tailPos: number) {
    this.#dir = dir;
    this.#segmentBytes = segmentBytes;
    this.#segments = segments;
    this.#tailSeg = tailSeg;
    this.#tailPos = tailPos;
  }

  /** Open the log directory; the tail is the end of the newest segment as found on disk. */
  static open(dir: string, segmentBytes: number): SegmentLog {
    try {
      return SegmentLog.#open(dir, segmentBytes);
    } catch (err) {
      throw new Error(`the segment log ${dir} cannot be opened (${(err as Error).message}); if the disk is full, free space on it and start again`, { cause: err });
    }
  }

  static #open(dir: string, segmentBytes: number): SegmentLog {
    fs.mkdirSync(dir, { recursive: true });
    const segments = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith(SUFFIX))
      .map((f) => Number(f.slice(0, -SUFFIX.length)))
      .filter((n) => Number.isInteger(n))
      .sort((a, b) => a - b);
    const last = segments[segments.length - 1];
    const tailSeg = last ?? 0;
    const tailPos = last === undefined ? 0 : fs.statSync(path.join(dir, segmentFileName(last))).size;
    return new SegmentLog(dir, segmentBytes, segments, tailSeg, tailPos);
  }

  get tail(): Location {
    return { segId: this.#tailSeg, pos: this.#tailPos };
  }

  /** Segment ids present, oldest first (the newest is the one being written). */
  get segments(): readonly number[] {
    return this.#segments;
  }

  /** Segments that will never be written again. */
  sealedSegments(): number[] {
    return this.#segments.filter((s) => s !== this.#tailSeg);
  }

  segmentSize(segId: number): number {
    if (segId === this.#tailSeg) return this.#tailPos;
    return fs.fstatSync(this.#fd(segId)).size;
  }

  /**
   * Lay the buffers out at the tail (a buffer never spans two segments), write them and
   * fdatasync. Resolves with each buffer's location once all of them are durable.
   * `sync: false` skips the fdatasyncs (objects mode: the log is a cache of what the object store
   * and the ledger hold durably, docs/cluster.md), resolving once the bytes are written.
   * `journaled: true` (commit-barrier.ts): no fdatasync; the caller makes the bytes durable, either
   * with sync() or by copying them into the worker's sync journal, which holds them until
   * syncJournaled(). A new file's directory entry is synced at once, so a segment the journal
   * refers to never vanishes (sync-journal.ts relies on it to tell a reaped segment).
   */
  async write(bufs: readonly Buffer[], options: { sync?: boolean; journaled?: boolean } = {}): Promise<{ locations: Location[]; end: Location }> {
    const journaled = options.journaled === true;
    const sync = options.sync !== false && !journaled;
    const locations: Location[] = [];
    const runs: Array<{ segId: number; pos: number; bufs: Buffer[]; created: boolean }> = [];
    let run: (typeof runs)[number] | undefined;
    for (const b of bufs) {
      if (this.#tailPos > 0 && this.#tailPos + b.length > this.#segmentBytes) {
        this.#tailSeg++;
        this.#tailPos = 0;
        this.#segments.push(this.#tailSeg);
        run = undefined;
      }
      if (this.#segments.length === 0) this.#segments.push(this.#tailSeg);
      if (run === undefined || run.segId !== this.#tailSeg) {
        run = { segId: this.#tailSeg, pos: this.#tailPos, bufs: [], created: this.#tailPos === 0 };
        runs.push(run);
      }
      locations.push({ segId: this.#tailSeg, pos: this.#tailPos });
      run.bufs.push(b);
      this.#tailPos += b.length;
    }
    const end = this.tail;
    if (this.onWrite !== null) for (const r of runs) this.onWrite(r.segId, r.pos, r.bufs);
    // Open (and create) every file now, before the first await: a second group in flight
    // (group-commit.ts) may already lay out frames in a segment this write starts.
    const fds = runs.map((r) => this.#fd(r.segId, r.created));
    if (journaled || !sync) {
      // Small groups are written on this thread: a write into the page cache costs less than the
      // thread-pool round trip it would take (each one wakes two threads), and the barrier's
      // fdatasync, the slow part, still runs off the thread (objects mode: there is none).
      if (journaled) for (const r of runs) this.#unsynced.add(r.segId);
      let bytes = 0;
      for (const b of bufs) bytes += b.length;
      if (bytes <= SYNC_WRITE_MAX_BYTES) {
        for (const [i, r] of runs.entries()) {
          writeAllSync(fds[i]!, r.bufs, r.pos);
          if (journaled && r.created) fsyncPath(this.#dir);
        }
        return { locations, end };
      }
    }
    for (const [i, r] of runs.entries()) {
      const fd = fds[i]!;
      await writeAll(fd, r.bufs, r.pos);
      if (journaled && r.created) fsyncPath(this.#dir);
      if (!sync) continue;
      await fdatasyncFd(fd);
      // A new file's directory entry must be durable too, or the whole segment can vanish.
      if (r.created) fsyncPath(this.#dir);
    }
    return { locations, end };
  }

  /** fdatasync every segment written in journaled mode since the last call (then the sync journal can be emptied). */
  async syncJournaled(): Promise<void> {
    const segs = [...this.#unsynced];
    this.#unsynced.clear();
    await this.sync(segs);
  }

  /** fdatasync the given segments (a journaled write made durable on its own, without the journal). */
  async sync(segIds: Iterable<number>): Promise<void> {
    for (const segId of segIds) if (this.#fds.has(segId)) await fdatasyncFd(this.#fd(segId));
  }

  /** As sync(), on this thread (a checkpoint that must not refer to unsynced bytes, group-commit.ts syncWritten). */
  syncNow(segIds: Iterable<number>): void {
    for (const segId of segIds) if (this.#fds.has(segId)) fs.fdatasyncSync(this.#fd(segId));
  }

  /** fsync the log's directory: new segment files written without sync (`sync: false`) keep their entries. */
  syncDirectory(): void {
    fsyncPath(this.#dir);
  }

  /** Read `len` bytes at a location (synchronous pread: the shard's reads are served from the page cache). */
  read(segId: number, pos: number, len: number): Buffer {
    return this.readInto(segId, pos, len, Buffer.allocUnsafe(len));
  }

  /**
   * As `read`, into the front of `buf` (at least `len` long): a reader that reuses one buffer for
   * every chunk allocates nothing per chunk. Returns the bytes read, a view of `buf`.
   */
  readInto(segId: number, pos: number, len: number, buf: Buffer): Buffer {
    let off = 0;
    const fd = this.#fd(segId);
    while (off < len) {
      const n = fs.readSync(fd, buf, off, len - off, pos + off);
      if (n === 0) break;
      off += n;
    }
    return off === buf.length ? buf : buf.subarray(0, off);
  }

  /** Cut the newest segment at `pos` (recovery: a torn tail). */
  truncateTail(segId: number, pos: number): void {
    fs.ftruncateSync(this.#fd(segId), pos);
    fs.fsyncSync(this.#fd(segId));
    if (segId === this.#tailSeg) this.#tailPos = pos;
  }

  /** Delete a sealed segment file. */
  deleteSegment(segId: number): void {
    if (segId === this.#tailSeg) throw new Error('the active segment cannot be deleted');
    const fd = this.#fds.get(segId);
    if (fd !== undefined) {
      fs.closeSync(fd);
      this.#fds.delete(segId);
    }
    fs.rmSync(path.join(this.#dir, segmentFileName(segId)), { force: true });
    this.#segments = this.#segments.filter((s) => s !== segId);
  }

  close(): void {
    for (const fd of this.#fds.values()) fs.closeSync(fd);
    this.#fds.clear();
  }

  /** The file holding a segment (for messages and the offline tools). */
  describe(segId: number): string {
    return path.join(this.#dir, segmentFileName(segId));
  }

  /**
   * A segment's descriptor. Only a write that starts a new segment creates its file: a segment
   * the index or the tail refers to that is missing on disk is an error, never silently
   * re-created empty (which would make old index entries point into new data).
   */
  #fd(segId: number, create = false): number {
    let fd = this.#fds.get(segId);
    if (fd === undefined) {
      const file = this.describe(segId);
      try {
        fd = fs.openSync(file, create ? fs.constants.O_RDWR | fs.constants.O_CREAT : 'r+');
      } catch (err) {
        throw new Error(`segment file ${file} cannot be opened: ${(err as Error).message}`, { cause: err });
      }
      this.#fds.set(segId, fd);
    }
    return fd;
  }
}

/**
 * Write the buffers back to back at `pos` with pwritev, not copied into one buffer first (a group of
 * large Kafka batches is megabytes: the copy cost as much CPU as the rest of the worker's work).
 * A short write goes on from where it stopped.
 */
function writeAll(fd: number, bufs: readonly Buffer[], pos: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const step = (parts: Buffer[], at: number): void => {
      if (parts.length === 0) return resolve();
      // pwritev takes at most IOV_MAX (1024 on Linux) buffers per call.
      const now = parts.length > IOV_MAX ? parts.slice(0, IOV_MAX) : parts;
      fs.writev(fd, now, at, (err, n) => {
        if (err) return reject(err);
        let left = n;
        let i = 0;
        while (i < parts.length && left >= parts[i]!.length) left -= parts[i++]!.length;
        if (i === parts.length) return resolve();
        const rest = parts.slice(i);
        if (left > 0) rest[0] = rest[0]!.subarray(left);
        step(rest, at + n);
      });
    };
    step(bufs.filter((b) => b.length > 0), pos);
  });
}

const IOV_MAX = 1024;
/** A journaled write of at most this many bytes is written synchronously (see write()). */
const SYNC_WRITE_MAX_BYTES = 64 * 1024; // 64 KiB

/** writeAll on this thread (pwritev), going on after a short write. */
function writeAllSync(fd: number, bufs: readonly Buffer[], pos: number): void {
  let parts = bufs.filter((b) => b.length > 0);
  let at = pos;
  while (parts.length > 0) {
    const now = parts.length > IOV_MAX ? parts.slice(0, IOV_MAX) : parts;
    let left = fs.writevSync(fd, now, at);
    at += left;
    let i = 0;
    while (i < parts.length && left >= parts[i]!.length) left -= parts[i++]!.length;
    parts = parts.slice(i);
    if (left > 0) parts[0] = parts[0]!.subarray(left);
  }
}

function fdatasyncFd(fd: number): Promise<void> {
  return new Promise<void>((resolve, reject) => fs.fdatasync(fd, (err) => (err ? reject(err) : resolve())));
}

/** fsync a directory (a new entry in it made durable) or a file, by path. */
export function fsyncPath(p: string): void {
  const fd = fs.openSync(p, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
