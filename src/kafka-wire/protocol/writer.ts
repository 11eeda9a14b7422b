/**
 * Writes Kafka protocol primitives into a growing Buffer (kafka.apache.org/protocol "Protocol
 * Primitive Types"), the mirror of reader.ts: big-endian integers, `int64` from a bigint,
 * classic (int16/int32-length) and compact (unsigned varint length + 1) strings, bytes and
 * arrays, unsigned varints for compact lengths and tagged fields, zig-zag varints for records.
 *
 * Values out of their type's range throw RangeError: a bug in the caller, not bad input.
 */
import { uuidToBytes } from './uuid';

const MAX_STRING_LENGTH = 0x7fff;
const INT32_MAX = 0x7fff_ffff;
const UINT32_MAX = 0xffff_ffff;
const UINT64_MAX = (1n << 64n) - 1n;

/** Bytes an unsigned varint of `u` (0..2^32-1) takes. */
export function sizeOfUvarint(u: number): number {
  return u < 0x80 ? 1 : u < 0x4000 ? 2 : u < 0x20_0000 ? 3 : u < 0x1000_0000 ? 4 : 5;
}

function checkInt(v: number, min: number, max: number, what: string): void {
  if (!Number.isInteger(v) || v < min || v > max) throw new RangeError(`${what} out of range: ${v}`);
}

export class Writer {
  #buf: Buffer;
  #pos = 0;
  /** `raw` byte runs of at least this many bytes are referenced, not copied (`toBuffers`). */
  readonly #spliceMin: number;
  /** Referenced runs and the internal position they sit at, in order. */
  readonly #splices: Array<{ at: number; bytes: Uint8Array }> = [];
  #spliced = 0;

  /**
   * `initialSize` bytes are allocated up front; the buffer doubles when it runs out. With
   * `spliceMin`, byte runs at least that long (Fetch record batches) are kept by reference and
   * come out as separate buffers of `toBuffers()`, for a vectored socket write without a copy.
   */
  constructor(initialSize = 256, spliceMin = Infinity) {
    this.#buf = Buffer.allocUnsafe(Math.max(16, initialSize));
    this.#spliceMin = spliceMin;
  }

  /** Bytes written so far. */
  get length(): number {
    return this.#pos + this.#spliced;
  }

  /**
   * The bytes written so far, as a view of the internal buffer (no copy). Writing more
   * afterwards may overwrite or reallocate it, so take the view once the message is done.
   */
  toBuffer(): Buffer {
    if (this.#splices.length > 0) return Buffer.concat(this.toBuffers(), this.length);
    return this.#buf.subarray(0, this.#pos);
  }

  /** The bytes written so far as a list of buffers: views of the internal buffer and the referenced runs, in order. */
  toBuffers(): Buffer[] {
    const out: Buffer[] = [];
    let from = 0;
    for (const s of this.#splices) {
      if (s.at > from) out.push(this.#buf.subarray(from, s.at));
      out.push(Buffer.isBuffer(s.bytes) ? s.bytes : Buffer.from(s.bytes.buffer, s.bytes.byteOffset, s.bytes.byteLength));
      from = s.at;
    }
    if (this.#pos > from || out.length === 0) out.push(this.#buf.subarray(from, this.#pos));
    return out;
  }

  #ensure(n: number): void {
    if (this.#pos + n <= this.#buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.#pos + n));
    this.#buf.copy(next, 0, 0, this.#pos);
    this.#buf = next;
  }

  /** Copy `bytes` as they are (no length prefix); referenced instead when splicing applies. */
  raw(bytes: Uint8Array): void {
    if (bytes.length >= this.#spliceMin) {
      this.#splices.push({ at: this.#pos, bytes });
      this.#spliced += bytes.length;
      return;
    }
    this.#ensure(bytes.length);
    this.#buf.set(bytes, this.#pos);
    this.#pos += bytes.length;
  }

  bool(v: boolean): void {
    this.#ensure(1);
    this.#buf[this.#pos++] = v ? 1 : 0;
  }

  int8(v: number): void {
    checkInt(v, -0x80, 0x7f, 'int8');
    this.#ensure(1);
    this.#pos = this.#buf.writeInt8(v, this.#pos);
  }

  int16(v: number): void {
    checkInt(v, -0x8000, 0x7fff, 'int16');
    this.#ensure(2);
    this.#pos = this.#buf.writeInt16BE(v, this.#pos);
  }

  uint16(v: number): void {
    checkInt(v, 0, 0xffff, 'uint16');
    this.#ensure(2);
    this.#pos = this.#buf.writeUInt16BE(v, this.#pos);
  }

  int32(v: number): void {
    checkInt(v, -0x8000_0000, INT32_MAX, 'int32');
    this.#ensure(4);
    this.#pos = this.#buf.writeInt32BE(v, this.#pos);
  }

  uint32(v: number): void {
    checkInt(v, 0, UINT32_MAX, 'uint32');
    this.#ensure(4);
    this.#pos = this.#buf.writeUInt32BE(v, this.#pos);
  }

  int64(v: bigint): void {
    if (BigInt.asIntN(64, v) !== v) throw new RangeError(`int64 out of range: ${v}`);
    this.#ensure(8);
    this.#pos = this.#buf.writeBigInt64BE(v, this.#pos);
  }

  float64(v: number): void {
    this.#ensure(8);
    this.#pos = this.#buf.writeDoubleBE(v, this.#pos);
  }

  /** A UUID string (canonical form) as 16 bytes. */
  uuid(v: string): void {
    this.#ensure(16);
    uuidToBytes(v, this.#buf, this.#pos);
    this.#pos += 16;
  }

  /** Unsigned varint, 0..2^32-1. */
  uvarint(u: number): void {
    checkInt(u, 0, UINT32_MAX, 'unsigned varint');
    this.#ensure(5);
    // Division rather than `>>>`: correct for the whole uint32 range without sign games.
    while (u >= 0x80) {
      this.#buf[this.#pos++] = (u & 0x7f) | 0x80;
      u = Math.floor(u / 0x80);
    }
    this.#buf[this.#pos++] = u;
  }

  /** Unsigned varlong, 0..2^64-1. */
  uvarlong(u: bigint): void {
    if (u < 0n || u > UINT64_MAX) throw new RangeError(`unsigned varlong out of range: ${u}`);
    this.#ensure(10);
    while (u >= 0x80n) {
      this.#buf[this.#pos++] = Number(u & 0x7fn) | 0x80;
      u >>= 7n;
    }
    this.#buf[this.#pos++] = Number(u);
  }

  /** Zig-zag varint of an int32. */
  varint(v: number): void {
    checkInt(v, -0x8000_0000, INT32_MAX, 'varint');
    this.uvarint(((v << 1) ^ (v >> 31)) >>> 0);
  }

  /** Zig-zag varlong of an int64. */
  varlong(v: bigint): void {
    if (BigInt.asIntN(64, v) !== v) throw new RangeError(`varlong out of range: ${v}`);
    this.uvarlong(BigInt.asUintN(64, (v << 1n) ^ (v >> 63n)));
  }

  #utf8(s: string, n: number): void {
    this.#ensure(n);
    this.#pos += this.#buf.write(s, this.#pos, n, 'utf8');
  }

  #stringLength(s: string): number {
    const n = Buffer.byteLength(s, 'utf8');
    if (n > MAX_STRING_LENGTH) throw new RangeError(`string of ${n} bytes is longer than ${MAX_STRING_LENGTH}`);
    return n;
  }

  /** STRING: int16 length, UTF-8 bytes. */
  string(s: string): void {
    const n = this.#stringLength(s);
    this.int16(n);
    this.#utf8(s, n);
  }

  /** NULLABLE_STRING: -1 for null. */
  nullableString(s: string | null): void {
    if (s === null) this.int16(-1);
    else this.string(s);
  }

  /** COMPACT_STRING: unsigned varint length + 1, UTF-8 bytes. */
  compactString(s: string): void {
    const n = this.#stringLength(s);
    this.uvarint(n + 1);
    this.#utf8(s, n);
  }

  /** COMPACT_NULLABLE_STRING: 0 for null. */
  compactNullableString(s: string | null): void {
    if (s === null) this.uvarint(0);
    else this.compactString(s);
  }

  /** BYTES: int32 length, the bytes. */
  bytes(b: Uint8Array): void {
    this.int32(b.length);
    this.raw(b);
  }

  /** NULLABLE_BYTES (and RECORDS in non-flexible versions): -1 for null. */
  nullableBytes(b: Uint8Array | null): void {
    if (b === null) this.int32(-1);
    else this.bytes(b);
  }

  /** COMPACT_BYTES: unsigned varint length + 1. */
  compactBytes(b: Uint8Array): void {
    this.uvarint(b.length + 1);
    this.raw(b);
  }

  /** COMPACT_NULLABLE_BYTES (and COMPACT_RECORDS): 0 for null. */
  compactNullableBytes(b: Uint8Array | null): void {
    if (b === null) this.uvarint(0);
    else this.compactBytes(b);
  }

  /** ARRAY: int32 count, then `write(item)` for each. */
  array<T>(items: readonly T[], write: (item: T) => void): void {
    this.int32(items.length);
    for (const item of items) write(item);
  }

  /** NULLABLE ARRAY: -1 for null. */
  nullableArray<T>(items: readonly T[] | null, write: (item: T) => void): void {
    if (items === null) this.int32(-1);
    else this.array(items, write);
  }

  /** COMPACT_ARRAY: unsigned varint count + 1. */
  compactArray<T>(items: readonly T[], write: (item: T) => void): void {
    this.uvarint(items.length + 1);
    for (const item of items) write(item);
  }

  /** COMPACT_NULLABLE_ARRAY: 0 for null. */
  compactNullableArray<T>(items: readonly T[] | null, write: (item: T) => void): void {
    if (items === null) this.uvarint(0);
    else this.compactArray(items, write);
  }

  /**
   * Start one tagged field (KIP-482): writes its tag and a one-byte size placeholder and
   * returns the mark `endTagged` needs. Write the field's value, then call `endTagged`; the
   * caller writes the field count (an unsigned varint) before the first field, fields in
   * ascending tag order.
   */
  beginTagged(tag: number): number {
    this.uvarint(tag);
    this.#ensure(1);
    this.#buf[this.#pos++] = 0;
    return this.#pos;
  }

  /** Finish the tagged field started at `mark`: fill in its size, widening it if needed. */
  endTagged(mark: number): void {
    const last = this.#splices[this.#splices.length - 1];
    if (last !== undefined && last.at >= mark) throw new RangeError('a referenced byte run inside a tagged field is not supported');
    const size = this.#pos - mark;
    const extra = sizeOfUvarint(size) - 1;
    if (extra > 0) {
      // Rare (a tagged field of 128 bytes or more): move the value to make room for the size.
      this.#ensure(extra);
      this.#buf.copyWithin(mark + extra, mark, this.#pos);
      this.#pos += extra;
    }
    // The room is there now: write the size straight into it, without #ensure.
    let at = mark - 1;
    let u = size;
    while (u >= 0x80) {
      this.#buf[at++] = (u & 0x7f) | 0x80;
      u = Math.floor(u / 0x80);
    }
    this.#buf[at] = u;
  }

  /** Reserve four bytes for an int32 filled in later with `int32At` (frame sizes). */
  reserveInt32(): number {
    this.#ensure(4);
    const at = this.#pos;
    this.#pos += 4;
    return at;
  }

  /** Overwrite the int32 at `at` (a position from `reserveInt32`). */
  int32At(at: number, v: number): void {
    checkInt(v, -0x8000_0000, INT32_MAX, 'int32');
    if (at < 0 || at + 4 > this.#pos) throw new RangeError(`int32At(${at}) outside the written bytes`);
    this.#buf.writeInt32BE(v, at);
  }
}
