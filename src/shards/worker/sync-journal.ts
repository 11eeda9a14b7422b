/**
 * A worker's sync journal: when one commit barrier (commit-barrier.ts) holds groups of several
 * shards, their frames go to each shard's segment log without fdatasync and, as copies, to this
 * one file with one write and one fdatasync. The barrier is acknowledged after that one
 * fdatasync, so N shards touched cost one sync instead of N (docs/storage.md, "Sync journal").
 *
 *   record = u32 length | u32 crc32c (of bytes 8 .. end) | u16 shard | u32 segment | u32 position | bytes
 *
 * A record is the bytes one group laid out at one position of one shard's segment. On start
 * (replayJournal), before any shard opens its log, every valid record is written back at its
 * place and the segment files are synced; the first record that is short or fails its CRC ends
 * the journal (a torn tail: that barrier was never acknowledged, and barriers are appended one
 * after the other, so nothing valid follows). Then the journal is emptied.
 *
 * The journal only stands in for the tail segment's fdatasync: a segment log in journaled mode
 * syncs a segment when it seals it and the directory when it creates one (segment-log.ts), so a
 * record for a segment that no longer exists while a newer one does is of a segment the reaper
 * deleted, and is skipped. When the journal passes ROTATE_BYTES every shard log's tail is synced
 * and the journal emptied.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { crc32c } from '../../util/crc32c';
import { fsyncPath, segmentFileName } from './segment-log';

/** One record's place: the shard, and where in its log the bytes were laid out. */
export interface JournalRecord {
  shard: number;
  segId: number;
  pos: number;
  bufs: readonly Buffer[];
}

const HEADER = 18;
/** The journal is emptied (after syncing the shards' tails) once it holds this much. */
export const ROTATE_BYTES = 64 * 1024 * 1024; // 64 MiB

export class SyncJournal {
  readonly #file: string;
  readonly #fd: number;
  #size = 0;

  private constructor(file: string, fd: number) {
    this.#file = file;
    this.#fd = fd;
  }

  /** Open (create) an empty journal: replayJournal must have run on the file before. */
  static open(file: string): SyncJournal {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT);
    fs.ftruncateSync(fd, 0);
    fs.fdatasyncSync(fd);
    fsyncPath(path.dirname(file));
    return new SyncJournal(file, fd);
  }

  get size(): number {
    return this.#size;
  }

  /** Append the records with one write and one fdatasync; resolves once they are durable. */
  async append(records: readonly JournalRecord[]): Promise<void> {
    const parts: Buffer[] = [];
    let bytes = 0;
    for (const r of records) {
      const head = Buffer.allocUnsafe(HEADER);
      let len = 0;
      for (const b of r.bufs) len += b.length;
      head.writeUInt32BE(HEADER + len, 0);
      head.writeUInt16BE(r.shard, 8);
      head.writeUInt32BE(r.segId, 10);
      head.writeUInt32BE(r.pos, 14);
      let crc = crc32c(head.subarray(8));
      for (const b of r.bufs) crc = crc32c(b, crc);
      head.writeUInt32BE(crc >>> 0, 4);
      parts.push(head, ...r.bufs);
      bytes += HEADER + len;
    }
    const at = this.#size;
    this.#size += bytes;
    await writeAllAt(this.#fd, parts, at);
    await new Promise<void>((resolve, reject) => fs.fdatasync(this.#fd, (err) => (err ? reject(err) : resolve())));
  }

  /** Empty the journal (the shards' tails are synced: nothing in it is needed any more). */
  reset(): void {
    fs.ftruncateSync(this.#fd, 0);
    fs.fdatasyncSync(this.#fd);
    this.#size = 0;
  }

  /** Cut the journal back to `size` (a barrier that failed: its records must not be replayed). */
  cutBack(size: number): void {
    try {
      fs.ftruncateSync(this.#fd, size);
      fs.fdatasyncSync(this.#fd);
    } catch {
      // The disk refused even that: the shard logs' own recovery still cuts torn tails.
    }
    this.#size = size;
  }

  close(): void {
    fs.closeSync(this.#fd);
  }

  describe(): string {
    return this.#file;
  }
}

/**
 * Write every valid record of a journal back into its shard's segment files (under
 * `<dataDir>/shards/<shard>/log/`), sync them, then delete the journal. Returns the records
 * written back. A missing journal is nothing to do.
 */
export function replayJournal(file: string, dataDir: string): number {
  let data: Buffer;
  try {
    data = fs.readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  const fds = new Map<string, number>();
  const dirs = new Set<string>();
  const reaped = new Set<string>();
  let records = 0;
  try {
    for (const { shard, segId, pos, bytes } of journalRecords(data)) {
      const logDir = path.join(dataDir, 'shards', String(shard), 'log');
      const seg = path.join(logDir, segmentFileName(segId));
      let fd = fds.get(seg);
      if (fd === undefined) {
        if (reaped.has(seg)) continue;
        if (!fs.existsSync(seg) && newerSegmentExists(logDir, segId)) {
          reaped.add(seg); // deleted by the reaper after it was sealed (and synced when sealed)
          continue;
        }
        fs.mkdirSync(logDir, { recursive: true });
        fd = fs.openSync(seg, fs.constants.O_RDWR | fs.constants.O_CREAT);
        fds.set(seg, fd);
        dirs.add(logDir);
      }
      fs.writeSync(fd, bytes, 0, bytes.length, pos);
      records++;
    }
    for (const fd of fds.values()) fs.fdatasyncSync(fd);
    for (const d of dirs) fsyncPath(d);
  } finally {
    for (const fd of fds.values()) fs.closeSync(fd);
  }
  fs.rmSync(file, { force: true });
  fsyncPath(path.dirname(file));
  return records;
}

/** The valid records of a journal's bytes, in order: the first short or CRC-failing record ends it. */
function* journalRecords(data: Buffer): Generator<{ shard: number; segId: number; pos: number; bytes: Buffer }> {
  for (let at = 0; at + HEADER <= data.length; ) {
    const len = data.readUInt32BE(at);
    if (len < HEADER || at + len > data.length) return;
    if ((crc32c(data.subarray(at + 8, at + len)) >>> 0) !== data.readUInt32BE(at + 4)) return;
    yield { shard: data.readUInt16BE(at + 8), segId: data.readUInt32BE(at + 10), pos: data.readUInt32BE(at + 14), bytes: data.subarray(at + HEADER, at + len) };
    at += len;
  }
}

/**
 * The records of a data directory's journals whose bytes are not in their segment files (read
 * only: `svc check`). A stopped node's journal keeps the groups acknowledged through it until it
 * is emptied at 64 MiB, clean stop or not: after a clean stop or a crash their bytes are in the
 * segment files too (written before the journal's fdatasync), and only a power cut that lost the
 * segments' unsynced tails leaves records the next start must write back. A record of a segment
 * the reaper deleted is not pending.
 */
export function pendingJournalRecords(dataDir: string): number {
  let names: string[];
  try {
    names = fs.readdirSync(journalDir(dataDir));
  } catch {
    return 0;
  }
  const fds = new Map<string, number | null>();
  let records = 0;
  try {
    for (const n of names) {
      if (!n.endsWith('.journal')) continue;
      for (const { shard, segId, pos, bytes } of journalRecords(fs.readFileSync(path.join(journalDir(dataDir), n)))) {
        const logDir = path.join(dataDir, 'shards', String(shard), 'log');
        const seg = path.join(logDir, segmentFileName(segId));
        let fd = fds.get(seg);
        if (fd === undefined) {
          fd = fs.existsSync(seg) ? fs.openSync(seg, 'r') : null;
          fds.set(seg, fd);
        }
        if (fd === null) {
          if (!newerSegmentExists(logDir, segId)) records++; // lost, and replay would re-create it
          continue;
        }
        const there = Buffer.alloc(bytes.length);
        const n = fs.readSync(fd, there, 0, there.length, pos);
        if (n < bytes.length || !there.equals(bytes)) records++;
      }
    }
  } finally {
    for (const fd of fds.values()) if (fd !== null) fs.closeSync(fd);
  }
  return records;
}

/** Replay every journal of a data directory (a node's start: the worker count may have changed since they were written). */
export function replayJournals(dataDir: string): number {
  const dir = journalDir(dataDir);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return 0;
  }
  let records = 0;
  for (const n of names) if (n.endsWith('.journal')) records += replayJournal(path.join(dir, n), dataDir);
  return records;
}

export function journalDir(dataDir: string): string {
  return path.join(dataDir, 'journal');
}

/** The journal of worker `w`. */
export function journalFile(dataDir: string, w: number): string {
  return path.join(journalDir(dataDir), `worker-${w}.journal`);
}

function newerSegmentExists(logDir: string, segId: number): boolean {
  try {
    return fs.readdirSync(logDir).some((f) => f.endsWith('.seg') && Number(f.slice(0, -4)) > segId);
  } catch {
    return false;
  }
}

/** pwritev of all parts at `pos`, going on after a short write. */
function writeAllAt(fd: number, parts: Buffer[], pos: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const step = (rest: Buffer[], at: number): void => {
      if (rest.length === 0) return resolve();
      const now = rest.length > 1024 ? rest.slice(0, 1024) : rest;
      fs.writev(fd, now, at, (err, n) => {
        if (err) return reject(err);
        let left = n;
        let i = 0;
        while (i < rest.length && left >= rest[i]!.length) left -= rest[i++]!.length;
        const next = rest.slice(i);
        if (left > 0) next[0] = next[0]!.subarray(left);
        step(next, at + n);
      });
    };
    step(parts.filter((b) => b.length > 0), pos);
  });
}
