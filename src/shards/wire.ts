/**
 * The bytes that cross between the gateway thread and a shard worker (the typed layer on top is
 * protocol.ts).
 *
 * Requests and replies are written, as the calls are made, into ONE buffer per worker and
 * direction, and that buffer is transferred once per event-loop turn: measured here, a
 * postMessage per request costs ~6 µs of CPU, a packed batch ~0.7 µs. A message is
 *
 *   u32 usedBytes | entry*        entry = u32 id | u8 code | u16 shard | u32 bodyLen | body
 *
 * `code` is the operation of a request (protocol.ts) or the Status of a reply; `body` is the
 * operation's own encoding (appends and their replies are packed fields, the rare operations a
 * small JSON object beside raw bytes). Numbers are little-endian; seqs and timestamps are f64
 * (exact up to 2^53). Strings are u32 byte length + UTF-8; nullable bytes are i32 length (-1 for
 * null) + bytes.
 */
// By brand, not instanceof: a buffer posted from another thread may come from another realm's constructor (a test's vm context).
import { isSharedArrayBuffer } from 'node:util/types';
import { copyBytes } from '../util/copy-bytes';

export const enum Status {
  Ok = 0,
  /** The body is an ErrorData JSON object. */
  Error = 1,
  /** Not a reply: id 0, the body is a TailEvent[] of watched streams (see Shard.watch). */
  Tail = 2,
  /**
   * Not a reply: id 0, the body is a buffer the gateway thread gave up with an append
   * (`ownBuffer`: a Kafka request frame), moved back once the shard is done with it, for reuse.
   */
  Returned = 3,
}

/**
 * Not a request (gateway → worker, id 0): the body is the u32 slab id of a shared read page the
 * gateway is done with, handed back to the worker that rendered it for its page pool
 * (worker/page-pool.ts). Far from the operation codes (protocol.ts), which a worker would
 * otherwise take it for.
 */
export const RETURNED_PAGE = 0xff;

/** A message starts with this many bytes (its used length). */
const MESSAGE_HEAD = 4;
const ENTRY_HEAD = 11;
/** First buffer of a turn; grows by doubling. */
const INITIAL_BYTES = 16 * 1024; // 16 KiB: a turn's worth of small appends
/** Messages up to this size are copied out of the writer's buffer, larger ones handed over whole. */
const COPY_MAX = 64 * 1024; // 64 KiB
/** Data at least this large travels as its own transferred ArrayBuffer instead of being copied. */
export const TRANSFER_MIN = 64 * 1024; // 64 KiB: a pooled Buffer (allocUnsafe) is under half the pool (8 KiB on Node 20, 64 KiB on Node 22+), so never this large; the pool must never be transferred
/** In a data length: the data is `extras[index]` at (offset, length) that follow. */
const MOVED = 0xffffffff;
/**
 * In a data length: the data is `shared[index]` at (offset, length), a read page in a pooled
 * SharedArrayBuffer of the worker (worker/page-pool.ts), whose slab id follows.
 */
const SHARED = 0xfffffffe;
/**
 * In a data length: a page of parts lent by the worker's read cache (ReadResult.parts): the count
 * of parts, the page's id, then per part `shared[index]` at (offset, length).
 */
const PARTS = 0xfffffffd;
/** In a page of parts, instead of a shared buffer's index: a part's bytes inline (u32 length, bytes). */
const INLINE_PART = 0xffffffff;
const EMPTY = Buffer.alloc(0);

/** One direction's message under construction; `take()` hands it over for transfer. */
export class Writer {
  buf: Buffer = EMPTY;
  pos = 0;
  readonly #transferLarge: boolean;
  /** Buffers moved (transferred) with this message instead of copied into it. */
  #extras: ArrayBuffer[] = [];
  /** Shared memory posted with this message (neither copied nor transferred): pooled read pages. */
  #shared: SharedArrayBuffer[] = [];
  readonly #share: ((sab: SharedArrayBuffer) => number | null) | null;
  readonly #lend: ((parts: readonly Buffer[]) => number | null) | null;

  /**
   * `transferLarge`: large data is moved, not copied (only the shard worker owns its read pages
   * outright). `share`: large data in a SharedArrayBuffer goes as shared memory when this returns
   * its slab id (the worker's page pool, which then counts it as out until handed back). `lend`:
   * a page of parts goes as shared memory when this returns its id (the worker's read cache,
   * which keeps the slabs they are views of until handed back).
   */
  constructor(transferLarge: boolean, share: ((sab: SharedArrayBuffer) => number | null) | null = null, lend: ((parts: readonly Buffer[]) => number | null) | null = null) {
    this.#transferLarge = transferLarge;
    this.#share = share;
    this.#lend = lend;
  }

  get empty(): boolean {
    return this.pos === 0;
  }

  /** Start an entry; returns where its body length goes (pass it to `endEntry`), or to `rollback` to drop it. */
  beginEntry(id: number, code: number, shard: number): number {
    if (this.pos === 0) {
      this.ensure(INITIAL_BYTES);
      this.pos = MESSAGE_HEAD;
    }
    this.ensure(ENTRY_HEAD);
    const b = this.buf;
    const p = this.pos;
    b.writeUInt32LE(id, p);
    b[p + 4] = code;
    b.writeUInt16LE(shard, p + 5);
    this.pos = p + ENTRY_HEAD;
    return p + 7;
  }

  endEntry(mark: number): void {
    this.buf.writeUInt32LE(this.pos - mark - 4, mark);
  }

  /** Drop a half-written entry (its encoding threw). */
  rollback(mark: number): void {
    this.pos = mark - 7;
    if (this.pos === MESSAGE_HEAD) this.pos = 0;
  }

  /**
   * The message and the buffers moved with it; the writer starts afresh. `extras` are always to
   * be transferred (post `{packed, extras}` when there are any), `message` only when
   * `transferMessage`: a small message is a copy, posted without a transfer list (cheaper than
   * transferring and allocating a new buffer each turn, measured), and the writer keeps its buffer.
   */
  take(): { message: ArrayBuffer; transferMessage: boolean; extras: ArrayBuffer[]; shared: SharedArrayBuffer[] } {
    this.buf.writeUInt32LE(this.pos, 0);
    const whole = this.buf.buffer;
    // Always so (allocUnsafeSlow), but the type says ArrayBufferLike.
    if (!(whole instanceof ArrayBuffer)) throw new Error('wire: a message buffer must be an ArrayBuffer');
    const extras = this.#extras;
    this.#extras = [];
    const shared = this.#shared;
    if (shared.length > 0) this.#shared = [];
    const small = this.pos <= COPY_MAX;
    const message = small ? whole.slice(0, this.pos) : whole;
    if (!small) this.buf = EMPTY;
    this.pos = 0;
    return { message, transferMessage: !small, extras, shared };
  }

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = Math.max(INITIAL_BYTES, this.buf.length * 2);
    while (size < this.pos + n) size *= 2;
    // Its own ArrayBuffer, never the shared Buffer pool: transferring that would detach it.
    const next = Buffer.allocUnsafeSlow(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }

  u16(v: number): void {
    this.ensure(2);
    this.pos = this.buf.writeUInt16LE(v, this.pos);
  }

  u32(v: number): void {
    this.ensure(4);
    this.pos = this.buf.writeUInt32LE(v, this.pos);
  }

  i32(v: number): void {
    this.ensure(4);
    this.pos = this.buf.writeInt32LE(v, this.pos);
  }

  f64(v: number): void {
    this.ensure(8);
    this.pos = this.buf.writeDoubleLE(v, this.pos);
  }

  str(s: string): void {
    // At most 3 UTF-8 bytes per UTF-16 unit: one pass, no byteLength first.
    this.ensure(4 + s.length * 3);
    const n = this.buf.write(s, this.pos + 4, 'utf8');
    this.buf.writeUInt32LE(n, this.pos);
    this.pos += 4 + n;
  }

  /** Nullable bytes, copied. */
  bytes(b: Uint8Array | null): void {
    if (b === null) return this.i32(-1);
    this.ensure(4 + b.length);
    this.pos = this.buf.writeInt32LE(b.length, this.pos);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /**
   * Bytes that may be large: moved with the message rather than copied when the writer may move
   * them (see `transferLarge`), or when `move` says their owner gives up their ArrayBuffer (a
   * Kafka request frame's buffer, which holds this one batch). A moved buffer is detached on
   * this thread once the turn's message is posted. Returns whether the bytes were moved.
   */
  blob(d: Buffer, move = false): boolean {
    const ab = d.buffer;
    if (this.#share !== null && d.length >= TRANSFER_MIN && isSharedArrayBuffer(ab)) {
      const id = this.#share(ab);
      if (id !== null) {
        this.ensure(20);
        const p = this.pos;
        this.buf.writeUInt32LE(SHARED, p);
        this.buf.writeUInt32LE(this.#sharedIndex(ab), p + 4);
        this.buf.writeUInt32LE(d.byteOffset, p + 8);
        this.buf.writeUInt32LE(d.length, p + 12);
        this.buf.writeUInt32LE(id, p + 16);
        this.pos = p + 20;
        return true;
      }
    }
    if ((this.#transferLarge || move) && d.length >= TRANSFER_MIN && ab instanceof ArrayBuffer && ab.byteLength < 2 ** 32 && !this.#extras.includes(ab)) {
      this.ensure(16);
      const p = this.pos;
      this.buf.writeUInt32LE(MOVED, p);
      this.buf.writeUInt32LE(this.#extras.length, p + 4);
      this.buf.writeUInt32LE(d.byteOffset, p + 8);
      this.buf.writeUInt32LE(d.length, p + 12);
      this.pos = p + 16;
      this.#extras.push(ab);
      return true;
    }
    this.ensure(4 + d.length);
    this.pos = this.buf.writeUInt32LE(d.length, this.pos);
    // A small page of the worker's pool is in shared memory: copied out with memcpy (copy-bytes.ts).
    copyBytes(d, this.buf, this.pos);
    this.pos += d.length;
    return false;
  }


  /**
   * A page of parts, views of shared memory (ReadResult.parts): lent as they are when `lend` takes
   * them (a part in memory of its own goes inline), else copied back to back as one blob. Read with
   * `Reader.page`.
   */
  parts(parts: readonly Buffer[]): void {
    const id = this.#lend?.(parts) ?? null;
    if (id === null) {
      let n = 0;
      for (const p of parts) n += p.length;
      this.ensure(4 + n);
      this.pos = this.buf.writeUInt32LE(n, this.pos);
      for (const p of parts) this.pos += copyBytes(p, this.buf, this.pos);
      return;
    }
    this.ensure(12 + 12 * parts.length);
    let p = this.pos;
    this.buf.writeUInt32LE(PARTS, p);
    this.buf.writeUInt32LE(parts.length, p + 4);
    this.buf.writeUInt32LE(id, p + 8);
    p += 12;
    for (const part of parts) {
      const sab = part.buffer;
      if (!isSharedArrayBuffer(sab)) {
        // Not in the lent slabs (a batch a range cut, re-encoded): its bytes inline.
        this.pos = p;
        this.ensure(8 + part.length + 12 * parts.length);
        this.buf.writeUInt32LE(INLINE_PART, this.pos);
        this.buf.writeUInt32LE(part.length, this.pos + 4);
        p = this.pos + 8;
        p += copyBytes(part, this.buf, p);
        continue;
      }
      this.buf.writeUInt32LE(this.#sharedIndex(sab), p);
      this.buf.writeUInt32LE(part.byteOffset, p + 4);
      this.buf.writeUInt32LE(part.length, p + 8);
      p += 12;
    }
    this.pos = p;
  }

  /** Where `sab` is in the shared memory posted with this message (added once). */
  #sharedIndex(sab: SharedArrayBuffer): number {
    const index = this.#shared.indexOf(sab);
    return index >= 0 ? index : this.#shared.push(sab) - 1;
  }

  /** A JSON document (the rare operations' fields). */
  json(v: unknown): void {
    this.str(JSON.stringify(v ?? null));
  }
}

/** Reads one entry's body; fields are views into the message, which the receiving thread owns. */
export class Reader {
  buf: Buffer = EMPTY;
  pos = 0;
  extras: readonly ArrayBuffer[] = [];
  shared: readonly SharedArrayBuffer[] = [];
  /** Told of every shared read page read (its view, or its parts, and its id for handing it back). */
  onShared: ((page: Buffer | readonly Buffer[], slab: number) => void) | null = null;

  u8(): number {
    return this.buf[this.pos++]!;
  }

  u16(): number {
    const v = this.buf.readUInt16LE(this.pos);
    this.pos += 2;
    return v;
  }

  u32(): number {
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }

  i32(): number {
    const v = this.buf.readInt32LE(this.pos);
    this.pos += 4;
    return v;
  }

  f64(): number {
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }

  str(): string {
    const n = this.u32();
    const s = this.buf.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }

  bytes(): Buffer | null {
    const n = this.i32();
    if (n < 0) return null;
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }

  blob(): Buffer {
    const n = this.u32();
    if (n === MOVED) {
      const x = this.extras[this.u32()];
      if (x === undefined) throw new Error('wire: a transferred buffer is missing');
      const offset = this.u32();
      return Buffer.from(x, offset, this.u32());
    }
    if (n === SHARED) {
      const x = this.shared[this.u32()];
      if (x === undefined) throw new Error('wire: a shared buffer is missing');
      const offset = this.u32();
      const page = Buffer.from(x, offset, this.u32());
      this.onShared?.(page, this.u32());
      return page;
    }
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }


  /** A page written by `Writer.parts` or `Writer.blob`: its parts (told to `onShared` with the page's id), or its bytes. */
  page(): Buffer | Buffer[] {
    if (this.buf.readUInt32LE(this.pos) !== PARTS) return this.blob();
    const n = this.buf.readUInt32LE(this.pos + 4);
    const id = this.buf.readUInt32LE(this.pos + 8);
    this.pos += 12;
    const parts: Buffer[] = [];
    for (let i = 0; i < n; i++) {
      const index = this.u32();
      if (index === INLINE_PART) {
        const len = this.u32();
        parts.push(this.buf.subarray(this.pos, this.pos + len));
        this.pos += len;
        continue;
      }
      const x = this.shared[index];
      if (x === undefined) throw new Error('wire: a shared buffer is missing');
      const offset = this.u32();
      parts.push(Buffer.from(x, offset, this.u32()));
    }
    this.onShared?.(parts, id);
    return parts;
  }

  /**
   * A JSON document written by `Writer.json` on the other thread: typed as the operation's own
   * type, not validated (both ends are this build; protocol.ts pairs each writer with its reader).
   */
  json<T>(): T {
    return JSON.parse(this.str());
  }
}

/**
 * Walk a message: `onEntry` reads the body from `r` (positioned at it); the walk goes on after
 * the body whatever `onEntry` read, so one entry cannot misplace the next.
 */
export function readEntries(
  message: ArrayBuffer,
  extras: readonly ArrayBuffer[],
  onEntry: (id: number, code: number, shard: number, r: Reader) => void,
  shared: readonly SharedArrayBuffer[] = [],
  onShared: ((page: Buffer | readonly Buffer[], slab: number) => void) | null = null,
): void {
  const buf = Buffer.from(message);
  const end = buf.readUInt32LE(0);
  const r = new Reader();
  r.buf = buf;
  r.extras = extras;
  r.shared = shared;
  r.onShared = onShared;
  let p = MESSAGE_HEAD;
  while (p < end) {
    const id = buf.readUInt32LE(p);
    const code = buf[p + 4]!;
    const shard = buf.readUInt16LE(p + 5);
    const bodyEnd = p + ENTRY_HEAD + buf.readUInt32LE(p + 7);
    r.pos = p + ENTRY_HEAD;
    onEntry(id, code, shard, r);
    p = bodyEnd;
  }
}
