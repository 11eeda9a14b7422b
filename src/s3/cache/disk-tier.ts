/**
 * The disk tier: one file per object under <dir>/objects/<2 hex>/<sha256 of bucket\0key>,
 * laid out as
 *   "SVCC1\n" | u32 BE header length | JSON header {bucket, key, meta, checkedAt} | body
 * Files are written under <dir>/tmp and renamed into place, so a crash never leaves a torn
 * object visible. On start the index is rebuilt from the file headers (oldest file first
 * in LRU order), which is how a restart keeps the disk tier. Capacity is in body+header
 * bytes; the least recently used files are deleted first.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { type ObjectMeta } from './entry';

const MAGIC = Buffer.from('SVCC1\n');
const TRAILER = 4 + MAGIC.length;

export interface DiskEntry {
  bucket: string;
  key: string;
  meta: ObjectMeta;
  checkedAt: number;
  file: string;
  /** Offset of the body in the file. */
  bodyOffset: number;
  fileBytes: number;
}

export function fileName(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

export class DiskTier {
  readonly #dir: string;
  readonly #capacity: number;
  readonly #entries = new Map<string, DiskEntry>();
  readonly #onEvict: () => void;
  #bytes = 0;
  #tmpSeq = 0;

  constructor(dir: string, capacity: number, onEvict: () => void = () => {}) {
    this.#dir = dir;
    this.#capacity = capacity;
    this.#onEvict = onEvict;
  }

  get enabled(): boolean {
    return this.#capacity > 0;
  }

  /** Creates the directories, clears leftover temporary files and indexes the stored objects. */
  async open(): Promise<number> {
    if (!this.enabled) return 0;
    await fsp.rm(path.join(this.#dir, 'tmp'), { recursive: true, force: true });
    await fsp.mkdir(path.join(this.#dir, 'tmp'), { recursive: true });
    await fsp.mkdir(path.join(this.#dir, 'objects'), { recursive: true });
    const found: { entry: DiskEntry; mtime: number; id: string }[] = [];
    for (const sub of await fsp.readdir(path.join(this.#dir, 'objects'))) {
      const subDir = path.join(this.#dir, 'objects', sub);
      for (const name of await fsp.readdir(subDir).catch(() => [] as string[])) {
        const file = path.join(subDir, name);
        const e = await readHeader(file).catch(() => undefined);
        if (e === undefined) {
          await fsp.rm(file, { force: true });
          continue;
        }
        found.push(e);
      }
    }
    found.sort((a, b) => a.mtime - b.mtime);
    for (const f of found) this.#add(f.id, f.entry);
    this.#evict();
    return this.#entries.size;
  }

  get(id: string): DiskEntry | undefined {
    const e = this.#entries.get(id);
    if (e !== undefined) {
      this.#entries.delete(id);
      this.#entries.set(id, e);
    }
    return e;
  }

  /** A temporary file that becomes the object with `commit`. */
  async create(): Promise<DiskWriter> {
    const tmp = path.join(this.#dir, 'tmp', `${process.pid}-${++this.#tmpSeq}`);
    return new DiskWriter(tmp, await fsp.open(tmp, 'w'));
  }

  async commit(id: string, bucket: string, key: string, meta: ObjectMeta, checkedAt: number, w: DiskWriter): Promise<void> {
    const header = Buffer.from(JSON.stringify({ bucket, key, meta, checkedAt }));
    const tail = Buffer.alloc(TRAILER);
    tail.writeUInt32BE(header.length, 0);
    MAGIC.copy(tail, 4);
    const name = fileName(id);
    const dir = path.join(this.#dir, 'objects', name.slice(0, 2));
    const file = path.join(dir, name);
    try {
      await w.finish(Buffer.concat([header, tail]));
      await fsp.mkdir(dir, { recursive: true });
      await fsp.rename(w.tmp, file);
    } catch (err) {
      // The handle is closed by finish whatever happened; the temporary file must not stay.
      await fsp.rm(w.tmp, { force: true });
      throw err;
    }
    this.#remove(id);
    this.#add(id, { bucket, key, meta, checkedAt, file, bodyOffset: 0, fileBytes: meta.size + header.length + TRAILER });
    this.#evict();
  }

  /** Records a revalidation (in memory only: after a restart the entry is simply revalidated again). */
  touch(id: string, checkedAt: number): void {
    const e = this.#entries.get(id);
    if (e !== undefined) e.checkedAt = checkedAt;
  }

  delete(id: string): void {
    const e = this.#remove(id);
    // Readers that already opened the file keep reading it; Linux frees it after they close.
    if (e !== undefined) fs.rm(e.file, { force: true }, () => {});
  }

  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  #add(id: string, e: DiskEntry): void {
    this.#entries.set(id, e);
    this.#bytes += e.fileBytes;
  }

  #remove(id: string): DiskEntry | undefined {
    const e = this.#entries.get(id);
    if (e === undefined) return undefined;
    this.#entries.delete(id);
    this.#bytes -= e.fileBytes;
    return e;
  }

  #evict(): void {
    for (const id of this.#entries.keys()) {
      if (this.#bytes <= this.#capacity) break;
      this.delete(id);
      this.#onEvict();
    }
  }
}

async function readHeader(file: string): Promise<{ entry: DiskEntry; mtime: number; id: string } | undefined> {
  const fh = await fsp.open(file, 'r');
  try {
    const st = await fh.stat();
    if (st.size < TRAILER) return undefined;
    const tail = Buffer.alloc(TRAILER);
    await fh.read(tail, 0, TRAILER, st.size - TRAILER);
    if (!tail.subarray(4).equals(MAGIC)) return undefined;
    const len = tail.readUInt32BE(0);
    if (len > st.size - TRAILER) return undefined;
    const header = Buffer.alloc(len);
    await fh.read(header, 0, len, st.size - TRAILER - len);
    const h = JSON.parse(header.toString()) as { bucket: string; key: string; meta: ObjectMeta; checkedAt: number };
    if (st.size !== h.meta.size + len + TRAILER) return undefined;
    const id = h.bucket + '\0' + h.key;
    return { id, mtime: st.mtimeMs, entry: { ...h, file, bodyOffset: 0, fileBytes: st.size } };
  } finally {
    await fh.close();
  }
}

/** Body bytes go to a temporary file as they arrive; `finish` appends the trailer. */
export class DiskWriter {
  readonly tmp: string;
  readonly #fh: fsp.FileHandle;
  #chain: Promise<unknown> = Promise.resolve();
  #pos = 0;
  #failed: Error | undefined;
  #closing: Promise<void> | undefined;

  constructor(tmp: string, fh: fsp.FileHandle) {
    this.tmp = tmp;
    this.#fh = fh;
  }

  write(b: Buffer): void {
    const at = this.#pos;
    this.#pos += b.length;
    this.#chain = this.#chain.then(() => this.#fh.write(b, 0, b.length, at)).catch((err: Error) => (this.#failed = err));
  }

  /** Appends the trailer and closes the file; the handle is closed on every way out, also when a write failed. */
  async finish(trailer: Buffer): Promise<void> {
    try {
      await this.#chain;
      if (this.#failed) throw this.#failed;
      await this.#fh.write(trailer, 0, trailer.length, this.#pos);
    } finally {
      await this.#close();
    }
  }

  async abort(): Promise<void> {
    await this.#chain;
    await this.#close().catch(() => {});
    await fsp.rm(this.tmp, { force: true });
  }

  /** Closes the handle once, whichever of finish and abort comes first or second. */
  #close(): Promise<void> {
    this.#closing ??= this.#fh.close();
    return this.#closing;
  }
}
