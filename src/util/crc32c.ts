/**
 * CRC-32C (Castagnoli), the checksum of Kafka RecordBatch v2.
 *
 * This is the only file that imports `@node-rs/crc32` (native, ~3 GB/s); everything else
 * goes through the functions here, so the implementation can be swapped in one place.
 *
 * Short inputs are checksummed in JS (slicing-by-8 tables): crossing into native code
 * costs about as much as checksumming ~150 bytes in JS, and the typical append batch
 * (one ~100-byte record) has ~110 CRC-covered bytes. Measured on 108 bytes: JS ~130 ns,
 * native ~200 ns plus ~90 ns for the `subarray` view that `crc32cRange` avoids.
 */
import { crc32c as nativeCrc32c } from '@node-rs/crc32';

/** Below this many bytes the JS tables beat the native call. */
const JS_MAX_BYTES = 160;
/** The same for a range, whose native call also needs a `subarray` view (~90 ns). */
const RANGE_JS_MAX_BYTES = 256;

/** Slicing-by-8 tables for the reflected polynomial 0x82F63B78: table k at k * 256. */
const T = new Int32Array(256 * 8);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  T[n] = c;
}
for (let n = 0; n < 256; n++) {
  let c = T[n] as number;
  for (let k = 1; k < 8; k++) {
    c = (T[c & 0xff] as number) ^ (c >>> 8);
    T[k * 256 + n] = c;
  }
}

function jsCrc32c(b: Uint8Array, start: number, end: number, initial: number): number {
  let c = ~initial;
  let i = start;
  for (; i + 8 <= end; i += 8) {
    const a = c ^ ((b[i] as number) | ((b[i + 1] as number) << 8) | ((b[i + 2] as number) << 16) | ((b[i + 3] as number) << 24));
    c =
      (T[1792 + (a & 0xff)] as number) ^
      (T[1536 + ((a >>> 8) & 0xff)] as number) ^
      (T[1280 + ((a >>> 16) & 0xff)] as number) ^
      (T[1024 + (a >>> 24)] as number) ^
      (T[768 + (b[i + 4] as number)] as number) ^
      (T[512 + (b[i + 5] as number)] as number) ^
      (T[256 + (b[i + 6] as number)] as number) ^
      (T[b[i + 7] as number] as number);
  }
  for (; i < end; i++) c = (T[(c ^ (b[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return ~c >>> 0;
}

/**
 * CRC-32C of `data`, as an unsigned 32-bit integer.
 * `initial` continues a running checksum: `crc32c(b, crc32c(a)) === crc32c(a ++ b)`.
 */
export function crc32c(data: Uint8Array, initial = 0): number {
  if (data.length < JS_MAX_BYTES) return jsCrc32c(data, 0, data.length, initial);
  return nativeCrc32c(data, initial) >>> 0;
}

/** CRC-32C of `data[start, end)` without making a view for short ranges. */
export function crc32cRange(data: Uint8Array, start: number, end: number, initial = 0): number {
  if (end - start < RANGE_JS_MAX_BYTES) return jsCrc32c(data, start, end, initial);
  return nativeCrc32c(data.subarray(start, end), initial) >>> 0;
}

/**
 * Shifting a CRC past zero bytes, for `crc32cCombine`: Z[k] holds, for k = 0..31, the operator
 * "append 2^k zero bytes" as four 256-entry byte tables (the operator is linear over GF(2), so a
 * 32-bit value maps to the XOR of its four bytes' entries). Built on first use, 128 KiB.
 */
let Z: Int32Array | null = null;

function zeroTables(): Int32Array {
  const z = new Int32Array(32 * 1024);
  // Columns of the one-zero-byte operator: the register after one zero byte, for each input bit.
  let cols = new Int32Array(32);
  for (let i = 0; i < 32; i++) {
    const x = (1 << i) >>> 0;
    cols[i] = (T[x & 0xff] as number) ^ (x >>> 8);
  }
  for (let k = 0; k < 32; k++) {
    const base = k * 1024;
    for (let j = 0; j < 4; j++) {
      const t = base + j * 256;
      for (let b = 1; b < 256; b++) {
        const low = b & -b;
        z[t + b] = (z[t + (b ^ low)] as number) ^ (cols[j * 8 + (31 - Math.clz32(low))] as number);
      }
    }
    // Square: 2^(k+1) zero bytes are 2^k zero bytes twice.
    const next = new Int32Array(32);
    for (let i = 0; i < 32; i++) next[i] = applyTable(z, base, cols[i] as number);
    cols = next;
  }
  return z;
}

function applyTable(z: Int32Array, base: number, x: number): number {
  return (z[base + (x & 0xff)] as number) ^ (z[base + 256 + ((x >>> 8) & 0xff)] as number) ^ (z[base + 512 + ((x >>> 16) & 0xff)] as number) ^ (z[base + 768 + (x >>> 24)] as number);
}

/** The operator "append `n` zero bytes" as one 4 x 256 table, for lengths met in long runs. */
const shiftTables = new Map<number, Int32Array>();
const SHIFT_TABLES_MAX = 64;
/**
 * A table costs tens of µs to build: only for a length met this many times in a row (records of
 * one size), and at most one build per `SHIFT_TABLE_EVERY` records shifted, so no mix of lengths
 * can make the builds cost more than a few ns a record.
 */
const SHIFT_TABLE_RUN = 16;
const SHIFT_TABLE_EVERY = 4096;
let runLen = -1;
let run = 0;
let sinceBuild = SHIFT_TABLE_EVERY;

function shiftTable(n: number): Int32Array | null {
  const t = shiftTables.get(n);
  if (t !== undefined) return t;
  if (n !== runLen) {
    runLen = n;
    run = 0;
  }
  if (++run < SHIFT_TABLE_RUN || sinceBuild < SHIFT_TABLE_EVERY) return null;
  sinceBuild = 0;
  const z = Z ?? (Z = zeroTables());
  const cols = new Int32Array(32);
  for (let i = 0; i < 32; i++) cols[i] = shift(z, (1 << i) >>> 0, n);
  const out = new Int32Array(1024);
  for (let j = 0; j < 4; j++) {
    for (let b = 1; b < 256; b++) {
      const low = b & -b;
      out[j * 256 + b] = (out[j * 256 + (b ^ low)] as number) ^ (cols[j * 8 + (31 - Math.clz32(low))] as number);
    }
  }
  if (shiftTables.size >= SHIFT_TABLES_MAX) shiftTables.clear();
  shiftTables.set(n, out);
  return out;
}

function shift(z: Int32Array, x: number, n: number): number {
  for (let k = 0; n !== 0; k++, n = Math.floor(n / 2)) {
    if (n % 2 === 1) x = applyTable(z, k * 1024, x);
  }
  return x;
}

/**
 * CRC-32C of `a ++ b` from `crcA`, `crcB` and the length of `b` (zlib's crc32_combine): the CRC
 * is linear, so `crc(a ++ b) = shift(crc(a), |b| zero bytes) ^ crc(b)`. About 4 table reads per
 * set bit of `lenB`, whatever the lengths.
 */
export function crc32cCombine(crcA: number, crcB: number, lenB: number): number {
  const z = Z ?? (Z = zeroTables());
  let x = crcA | 0;
  for (let k = 0, n = lenB; n !== 0; k++, n = Math.floor(n / 2)) {
    if (n % 2 === 1) x = applyTable(z, k * 1024, x);
  }
  return (x ^ crcB) >>> 0;
}

/**
 * The CRC-32C that `buf[start, end)` has if every record in it is intact, where the range is a
 * sequence of records each made of an 8-byte prefix (u32 BE length of what follows it, u32 BE
 * CRC-32C of what follows it) and that many bytes: the prefixes are checksummed as they are and
 * each record's stored CRC stands for its bytes (`crc32cCombine`). Compare it with
 * `crc32c(buf[start, end))` to check every record in one native pass. Returns -1 when a length
 * does not fit the range (the caller checks the records one by one).
 */
export function crc32cClaimed(buf: Uint8Array, start: number, end: number): number {
  const z = Z ?? (Z = zeroTables());
  let x = -1; // the raw register: CRC 0 of nothing, pre-inverted
  let tLen = -1;
  let t: Int32Array | null = null;
  for (let off = start; off < end; ) {
    if (off + 8 > end) return -1;
    const len = (((buf[off] as number) << 24) | ((buf[off + 1] as number) << 16) | ((buf[off + 2] as number) << 8) | (buf[off + 3] as number)) >>> 0;
    if (off + 8 + len > end) return -1;
    // The 8 prefix bytes, one slicing-by-8 step.
    const a = x ^ ((buf[off] as number) | ((buf[off + 1] as number) << 8) | ((buf[off + 2] as number) << 16) | ((buf[off + 3] as number) << 24));
    x =
      (T[1792 + (a & 0xff)] as number) ^
      (T[1536 + ((a >>> 8) & 0xff)] as number) ^
      (T[1280 + ((a >>> 16) & 0xff)] as number) ^
      (T[1024 + (a >>> 24)] as number) ^
      (T[768 + (buf[off + 4] as number)] as number) ^
      (T[512 + (buf[off + 5] as number)] as number) ^
      (T[256 + (buf[off + 6] as number)] as number) ^
      (T[buf[off + 7] as number] as number);
    // Then the record's bytes, as its CRC says: crc(p ++ r) = shift(crc(p), |r|) ^ crc(r).
    const stored = ((buf[off + 4] as number) << 24) | ((buf[off + 5] as number) << 16) | ((buf[off + 6] as number) << 8) | (buf[off + 7] as number);
    if (len !== tLen || t === null) {
      t = shiftTable(len);
      tLen = len;
    }
    x = ~x;
    x = t !== null ? (t[x & 0xff] as number) ^ (t[256 + ((x >>> 8) & 0xff)] as number) ^ (t[512 + ((x >>> 16) & 0xff)] as number) ^ (t[768 + (x >>> 24)] as number) : shift(z, x, len);
    x = ~(x ^ stored);
    off += 8 + len;
    sinceBuild++;
  }
  return ~x >>> 0;
}
