/**
 * Zig-zag varints as used inside Kafka RecordBatch v2 records (record length, offset
 * delta, key/value/header lengths: `varint` = zig-zag int32; timestamp delta: `varlong`
 * = zig-zag int64). Protocol compact lengths and tagged fields use *unsigned* varints;
 * those live with the protocol codecs — never mix the two (docs: design/kafka.md).
 *
 * Everything is `number` math: varlongs are limited to [-2^53, 2^53 − 1],
 * which covers any real timestamp delta. Bitwise operators only see 32 bits, so values
 * beyond int32 are split with `%` and `Math.floor(/)`, which are exact below 2^53.
 *
 * Writers take `(buf, pos, value)` and return the position after the written bytes;
 * callers size the buffer first with `sizeOfVarint` / `sizeOfVarlong`. Readers advance
 * a `Cursor` and never read at or past `cursor.end`.
 */

/** Read position (`pos`, advanced by the readers) and exclusive read limit (`end`). */
export interface Cursor {
  pos: number;
  end: number;
}

/** A varint that runs past the cursor end, is longer than allowed, or does not fit. */
export class VarintError extends RangeError {
  override readonly name = 'VarintError';
}

/** Zig-zag int32 → uint32 (as a non-negative number). */
function zigzag32(v: number): number {
  return ((v << 1) ^ (v >> 31)) >>> 0;
}

/** Bytes needed for the unsigned 32-bit value `u`. */
function sizeOfUnsigned32(u: number): number {
  return u < 0x80 ? 1 : u < 0x4000 ? 2 : u < 0x20_0000 ? 3 : u < 0x1000_0000 ? 4 : 5;
}

function writeUnsigned32(buf: Uint8Array, pos: number, u: number): number {
  while (u > 0x7f) {
    buf[pos++] = (u & 0x7f) | 0x80;
    u >>>= 7;
  }
  buf[pos++] = u;
  return pos;
}

/** Bytes `writeVarint(v)` takes; `v` must be an int32. */
export function sizeOfVarint(v: number): number {
  return sizeOfUnsigned32(zigzag32(v));
}

/** Write the int32 `v` as a zig-zag varint (1–5 bytes). Returns the new position. */
export function writeVarint(buf: Uint8Array, pos: number, v: number): number {
  return writeUnsigned32(buf, pos, zigzag32(v));
}

function isInt32(v: number): boolean {
  return v >= -0x8000_0000 && v <= 0x7fff_ffff;
}

/** Smallest varlong a number holds: -2^53 (its zig-zag value, 2^54 − 1, still splits exactly). */
const MIN_VARLONG = -(2 ** 53);

/**
 * Varlongs cover [-2^53, 2^53 − 1]. The zig-zag value `2m + sign` (`m = v` for v ≥ 0,
 * `-v - 1` for v < 0) may exceed 2^53, so it is never materialised: the first byte holds
 * six bits of `m` plus the sign bit, every further byte seven bits of `m`.
 */
function checkRange(v: number): void {
  if (!Number.isInteger(v) || v < MIN_VARLONG || v > Number.MAX_SAFE_INTEGER) {
    throw new RangeError(`varlong: ${v} is not an integer in [-2^53, 2^53 - 1]`);
  }
}

/** Bytes `writeVarlong(v)` takes (1–8). */
export function sizeOfVarlong(v: number): number {
  if (isInt32(v)) return sizeOfUnsigned32(zigzag32(v));
  checkRange(v);
  let m = Math.floor((v < 0 ? -v - 1 : v) / 64);
  let n = 1;
  while (m > 0) {
    n++;
    m = Math.floor(m / 128);
  }
  return n;
}

/** Write the integer `v` ∈ [-2^53, 2^53 − 1] as a zig-zag varlong. Returns the new position. */
export function writeVarlong(buf: Uint8Array, pos: number, v: number): number {
  if (isInt32(v)) return writeUnsigned32(buf, pos, zigzag32(v));
  checkRange(v);
  const sign = v < 0 ? 1 : 0;
  let m = v < 0 ? -v - 1 : v; // ≥ 2^30 here, so at least one more byte follows
  buf[pos++] = ((m % 64) << 1) | sign | 0x80;
  m = Math.floor(m / 64);
  while (m > 0x7f) {
    buf[pos++] = (m % 128) | 0x80;
    m = Math.floor(m / 128);
  }
  buf[pos++] = m;
  return pos;
}

/**
 * Read a zig-zag varint (int32). Like Kafka's `ByteUtils.readVarint`, at most 5 bytes are
 * accepted and bits beyond 32 are dropped.
 */
export function readVarint(buf: Uint8Array, c: Cursor): number {
  let pos = c.pos;
  const end = c.end;
  if (pos >= end) throw new VarintError(`varint runs past the end at byte ${pos}`);
  let b = buf[pos++] as number;
  if (b < 0x80) {
    c.pos = pos;
    return (b >>> 1) ^ -(b & 1);
  }
  let u = b & 0x7f;
  let shift = 7;
  do {
    if (pos >= end) throw new VarintError(`varint runs past the end at byte ${pos}`);
    if (shift > 28) throw new VarintError(`varint longer than 5 bytes at byte ${c.pos}`);
    b = buf[pos++] as number;
    u |= (b & 0x7f) << shift;
    shift += 7;
  } while (b & 0x80);
  c.pos = pos;
  return (u >>> 1) ^ -(u & 1);
}

/**
 * Read a zig-zag varlong (int64, at most 10 bytes, non-minimal encodings accepted). Values
 * outside [-2^53, 2^53 − 1] cannot be held exactly in a number and throw `VarintError`.
 */
export function readVarlong(buf: Uint8Array, c: Cursor): number {
  let pos = c.pos;
  const end = c.end;
  if (pos >= end) throw new VarintError(`varlong runs past the end at byte ${pos}`);
  let b = buf[pos++] as number;
  const sign = b & 1;
  let m = (b & 0x7f) >>> 1;
  let scale = 64;
  let n = 1;
  while (b & 0x80) {
    if (pos >= end) throw new VarintError(`varlong runs past the end at byte ${pos}`);
    if (n === 10) throw new VarintError(`varlong longer than 10 bytes at byte ${c.pos}`);
    b = buf[pos++] as number;
    m += (b & 0x7f) * scale;
    scale *= 128;
    n++;
  }
  if (m > Number.MAX_SAFE_INTEGER) {
    throw new VarintError(`varlong at byte ${c.pos} is outside [-2^53, 2^53 - 1]`);
  }
  c.pos = pos;
  return sign ? -m - 1 : m;
}

