/**
 * Reads Kafka protocol primitives from a Buffer (kafka.apache.org/protocol "Protocol Primitive
 * Types"). Everything is big-endian; `int64` comes back as a bigint.
 *
 * Two varint families live here, and they are not interchangeable (design/kafka.md):
 * - unsigned varints (`uvarint`, `uvarlong`): the lengths of compact strings, bytes and arrays
 *   (stored as N+1, 0 meaning null) and the tag, size and count of tagged fields (KIP-482);
 * - zig-zag varints (`varint`, `varlong`): the signed values inside RecordBatch v2 records.
 *
 * Every read is bounds-checked against the reader's end and throws KafkaProtocolError when
 * the input is short or malformed. `bytes` and `records` values are zero-copy slices of the
 * input: they stay valid only as long as the caller keeps the input buffer unchanged.
 */
import { KafkaProtocolError } from './errors';
import { uuidFromBytes } from './uuid';

/** Longest unsigned varint (32 bits in 7-bit groups) and varlong (64 bits). */
const MAX_VARINT_BYTES = 5;
const MAX_VARLONG_BYTES = 10;
/** Strings are at most int16-long, compact ones included (Java's readString checks the same). */
const MAX_STRING_LENGTH = 0x7fff;

export class Reader {
  readonly #buf: Buffer;
  #pos: number;
  #end: number;

  /** Read `buf[offset..end)`. */
  constructor(buf: Buffer, offset = 0, end = buf.length) {
    if (offset < 0 || end > buf.length || offset > end) throw new RangeError('reader window outside the buffer');
    this.#buf = buf;
    this.#pos = offset;
    this.#end = end;
  }

  /** Position of the next byte to read, as an index into the underlying buffer. */
  get offset(): number {
    return this.#pos;
  }

  /** Bytes left before the reader's end. */
  get remaining(): number {
    return this.#end - this.#pos;
  }

  #take(n: number): number {
    const at = this.#pos;
    if (n > this.#end - at) throw new KafkaProtocolError(`truncated: needed ${n} bytes at offset ${at}, ${this.#end - at} left`);
    this.#pos = at + n;
    return at;
  }

  /** Skip `n` bytes. */
  skip(n: number): void {
    this.#take(n);
  }

  /** The next `n` bytes as a zero-copy slice. */
  raw(n: number): Buffer {
    const at = this.#take(n);
    return this.#buf.subarray(at, at + n);
  }

  bool(): boolean {
    return this.#buf[this.#take(1)] !== 0;
  }

  int8(): number {
    return this.#buf.readInt8(this.#take(1));
  }

  int16(): number {
    return this.#buf.readInt16BE(this.#take(2));
  }

  uint16(): number {
    return this.#buf.readUInt16BE(this.#take(2));
  }

  int32(): number {
    return this.#buf.readInt32BE(this.#take(4));
  }

  uint32(): number {
    return this.#buf.readUInt32BE(this.#take(4));
  }

  int64(): bigint {
    return this.#buf.readBigInt64BE(this.#take(8));
  }

  float64(): number {
    return this.#buf.readDoubleBE(this.#take(8));
  }

  /** A 16-byte UUID as its canonical lowercase string (see uuid.ts). */
  uuid(): string {
    return uuidFromBytes(this.#buf, this.#take(16));
  }

  /** Unsigned varint, 1–5 bytes, 0..2^32-1. */
  uvarint(): number {
    // Fast path: compact lengths and tag counts are almost always below 128.
    if (this.#pos < this.#end) {
      const first = this.#buf[this.#pos] as number;
      if (first < 0x80) {
        this.#pos++;
        return first;
      }
    }
    let value = 0;
    for (let i = 0; i < MAX_VARINT_BYTES; i++) {
      const b = this.#buf[this.#take(1)] as number;
      if (i === MAX_VARINT_BYTES - 1 && b > 0x0f) throw new KafkaProtocolError('unsigned varint does not fit in 32 bits');
      // Multiplication rather than `<<`: the fifth group would overflow a 32-bit shift.
      value += (b & 0x7f) * 2 ** (7 * i);
      if (b < 0x80) return value;
    }
    throw new KafkaProtocolError('unsigned varint does not fit in 32 bits');
  }

  /** Unsigned varlong, 1–10 bytes, 0..2^64-1. */
  uvarlong(): bigint {
    let value = 0n;
    for (let i = 0; i < MAX_VARLONG_BYTES; i++) {
      const b = this.#buf[this.#take(1)] as number;
      if (i === MAX_VARLONG_BYTES - 1 && b > 0x01) throw new KafkaProtocolError('unsigned varlong does not fit in 64 bits');
      value |= BigInt(b & 0x7f) << BigInt(7 * i);
      if (b < 0x80) return value;
    }
    throw new KafkaProtocolError('unsigned varlong does not fit in 64 bits');
  }

  /** Zig-zag varint: an int32 (RecordBatch v2 record fields). */
  varint(): number {
    const u = this.uvarint();
    // Undo the zig-zag: even → u/2, odd → -(u+1)/2; `>>> 1` keeps the top bit of a uint32.
    return (u >>> 1) ^ -(u & 1);
  }

  /** Zig-zag varlong: an int64 (RecordBatch v2 timestamp and offset deltas). */
  varlong(): bigint {
    const u = this.uvarlong();
    return BigInt.asIntN(64, (u >> 1n) ^ -(u & 1n));
  }

  #utf8(n: number): string {
    const at = this.#take(n);
    const buf = this.#buf;
    // Short ASCII strings (topic names, ids) are cheaper to build by hand than through
    // Buffer#toString's generic decoder; anything else takes the decoder.
    if (n <= 32) {
      let s = '';
      for (let i = at; i < at + n; i++) {
        const c = buf[i] as number;
        if (c >= 0x80) return buf.toString('utf8', at, at + n);
        s += String.fromCharCode(c);
      }
      return s;
    }
    return buf.toString('utf8', at, at + n);
  }

  /** STRING: int16 length, then UTF-8 bytes; a null (-1) is an error here. */
  string(): string {
    const s = this.nullableString();
    if (s === null) throw new KafkaProtocolError('non-nullable string was null');
    return s;
  }

  /** NULLABLE_STRING: int16 length, -1 for null. */
  nullableString(): string | null {
    const n = this.int16();
    if (n === -1) return null;
    if (n < 0) throw new KafkaProtocolError(`invalid string length ${n}`);
    return this.#utf8(n);
  }

  /** COMPACT_STRING: unsigned varint length + 1, then UTF-8 bytes. */
  compactString(): string {
    const s = this.compactNullableString();
    if (s === null) throw new KafkaProtocolError('non-nullable compact string was null');
    return s;
  }

  /** COMPACT_NULLABLE_STRING: unsigned varint length + 1, 0 for null. */
  compactNullableString(): string | null {
    const u = this.uvarint();
    if (u === 0) return null;
    if (u - 1 > MAX_STRING_LENGTH) throw new KafkaProtocolError(`invalid compact string length ${u - 1}`);
    return this.#utf8(u - 1);
  }

  /** BYTES: int32 length, then the bytes (a zero-copy slice); null is an error here. */
  bytes(): Buffer {
    const b = this.nullableBytes();
    if (b === null) throw new KafkaProtocolError('non-nullable bytes were null');
    return b;
  }

  /** NULLABLE_BYTES (and RECORDS in non-flexible versions): int32 length, -1 for null. */
  nullableBytes(): Buffer | null {
    const n = this.int32();
    if (n === -1) return null;
    if (n < 0) throw new KafkaProtocolError(`invalid bytes length ${n}`);
    return this.raw(n);
  }

  /** COMPACT_BYTES: unsigned varint length + 1. */
  compactBytes(): Buffer {
    const b = this.compactNullableBytes();
    if (b === null) throw new KafkaProtocolError('non-nullable compact bytes were null');
    return b;
  }

  /** COMPACT_NULLABLE_BYTES (and COMPACT_RECORDS): unsigned varint length + 1, 0 for null. */
  compactNullableBytes(): Buffer | null {
    const u = this.uvarint();
    if (u === 0) return null;
    return this.raw(u - 1);
  }

  /**
   * An element count must fit the bytes left, as Java's generated readers check, so a
   * hostile length cannot make us allocate a huge array before failing.
   */
  #count(n: number): number {
    if (n > this.#end - this.#pos) throw new KafkaProtocolError(`array of ${n} elements with ${this.#end - this.#pos} bytes left`);
    return n;
  }

  #items<T>(n: number, read: () => T): T[] {
    const out: T[] = new Array<T>(this.#count(n));
    for (let i = 0; i < n; i++) out[i] = read();
    return out;
  }

  /** ARRAY: int32 count, then the elements; null is an error here. */
  array<T>(read: () => T): T[] {
    const a = this.nullableArray(read);
    if (a === null) throw new KafkaProtocolError('non-nullable array was null');
    return a;
  }

  /** NULLABLE ARRAY: int32 count, -1 for null. */
  nullableArray<T>(read: () => T): T[] | null {
    const n = this.int32();
    if (n === -1) return null;
    if (n < 0) throw new KafkaProtocolError(`invalid array length ${n}`);
    return this.#items(n, read);
  }

  /** COMPACT_ARRAY: unsigned varint count + 1; null is an error here. */
  compactArray<T>(read: () => T): T[] {
    const a = this.compactNullableArray(read);
    if (a === null) throw new KafkaProtocolError('non-nullable compact array was null');
    return a;
  }

  /** COMPACT_NULLABLE_ARRAY: unsigned varint count + 1, 0 for null. */
  compactNullableArray<T>(read: () => T): T[] | null {
    const u = this.uvarint();
    if (u === 0) return null;
    return this.#items(u - 1, read);
  }

  /**
   * TAGGED_FIELDS (KIP-482): an unsigned varint count, then per field an unsigned varint tag,
   * an unsigned varint size and `size` bytes. `onField(tag)` reads a field it knows and
   * returns true; fields it returns false for are skipped, as the protocol requires of unknown
   * tags. While `onField` runs the reader ends at the field's end, and it must read the field
   * exactly.
   */
  taggedFields(onField?: (tag: number) => boolean): void {
    const count = this.uvarint();
    for (let i = 0; i < count; i++) {
      const tag = this.uvarint();
      const size = this.uvarint();
      const fieldEnd = this.#take(size) + size;
      if (onField === undefined) continue;
      const outerEnd = this.#end;
      this.#pos = fieldEnd - size;
      this.#end = fieldEnd;
      try {
        if (onField(tag) && this.#pos !== fieldEnd) {
          throw new KafkaProtocolError(`tagged field ${tag}: read ${this.#pos - (fieldEnd - size)} of its ${size} bytes`);
        }
      } finally {
        this.#end = outerEnd;
      }
      this.#pos = fieldEnd;
    }
  }
}
