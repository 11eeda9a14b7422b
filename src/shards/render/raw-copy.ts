/**
 * The `raw` read format without allocating per record: walks an uncompressed RecordBatch v2
 * and moves each record value to the front of the buffer the chunk was read into
 * (`copyWithin`, which never allocates). Decoding records into objects first spent more time in
 * allocation and GC than in copying, and Buffer#copy allocates a view per call.
 *
 * Values only ever move left: a value is written at `writePos + bytes`, which is never past
 * where the value itself starts, so bytes still to be read are never overwritten.
 *
 * Record layout (Kafka): length varint, attributes int8, timestampDelta varlong,
 * offsetDelta varint, keyLength varint, key, valueLength varint, value, headers.
 * All varints are zig-zag; the batch was validated when it was written.
 */
import { i16be, i32be, u48be } from '../../util/be-read';
import { ATTR_COMPRESSION_MASK, RecordBatchError } from '../../util/record-batch';

const BASE_OFFSET_LOW48 = 2;
const ATTRIBUTES = 21;
const RECORDS_COUNT = 57;
const RECORDS = 61;

export interface CompactResult {
  /** Records taken. */
  n: number;
  /** Value bytes taken (what the byte budget counts). */
  bytes: number;
  /** Bytes now at writePos: the values, and a separator before each when one is asked for. */
  written: number;
  /** Offset after the last record taken (or `fromOffset` when none). */
  next: number;
  /** Stopped early: the next value did not fit in `room`, `maxRecords` or `endOffset` was reached. */
  full: boolean;
}

/**
 * Move the values of the records of the batch at `buf[batchPos]` with offsets in
 * [fromOffset, endOffset) to `buf[writePos…]`, at most `maxRecords` of them and `room` bytes of
 * values. `sep` (a byte, or -1 for none) is written before each value that has bytes: the
 * `json-array` format joins values with commas (null and empty values, which are not JSON, are
 * left out, as in `raw`). `takeFirst`: the page is still empty, so the first record is taken
 * whatever its size (a record larger than the budget must not stall a reader); the rest of the
 * batch is held to `room`. A record's header is at least 7 bytes, so the one byte a
 * separator takes never lets the writes overtake the reads.
 * The outcome is written into `into` and returned: a raw read calls this once per stored batch,
 * and a stream of single-record appends is a batch per record, so the hot loop reuses one result.
 */
export function compactValues(
  buf: Buffer,
  batchPos: number,
  fromOffset: number,
  endOffset: number,
  maxRecords: number,
  room: number,
  writePos: number,
  into: CompactResult = { n: 0, bytes: 0, written: 0, next: 0, full: false },
  sep = -1,
  takeFirst = false,
): CompactResult {
  if ((i16be(buf, batchPos + ATTRIBUTES) & ATTR_COMPRESSION_MASK) !== 0) {
    throw new RecordBatchError('unsupported_compression', 'compressed batches cannot be read in raw format yet');
  }
  const base = u48be(buf, batchPos + BASE_OFFSET_LOW48);
  const count = i32be(buf, batchPos + RECORDS_COUNT);
  at = batchPos + RECORDS;
  let n = 0;
  let bytes = 0;
  let w = writePos;
  let next = fromOffset;
  let full = false;
  for (let i = 0; i < count; i++) {
    const recordEnd = zigzag(varint(buf)) + at;
    at++; // attributes
    while (buf[at++]! & 0x80); // timestampDelta: skipped
    const offset = base + zigzag(varint(buf));
    if (offset < fromOffset) {
      at = recordEnd;
      continue;
    }
    if (offset >= endOffset || n >= maxRecords) {
      full = true;
      break;
    }
    const keyLen = zigzag(varint(buf));
    if (keyLen > 0) at += keyLen;
    const valueLen = zigzag(varint(buf));
    // An empty page takes its first record whatever its size (`takeFirst`); an empty value fits
    // while the budget is not spent (as in every other format).
    if (bytes + Math.max(valueLen, 0) > room && !(n === 0 && takeFirst)) {
      full = true;
      break;
    }
    if (valueLen > 0) {
      if (sep >= 0) buf[w++] = sep;
      buf.copyWithin(w, at, at + valueLen);
      w += valueLen;
      bytes += valueLen;
    }
    n++;
    next = offset + 1;
    at = recordEnd;
  }
  into.n = n;
  into.bytes = bytes;
  into.written = w - writePos;
  into.next = next;
  into.full = full;
  return into;
}

/**
 * Move the values of every record of the uncompressed batch at `buf[batchPos]` to
 * `buf[writePos…]` (as `compactValues`, no separator), writing where each one ends into
 * `ends[at…]`. Returns the write position after the last value, or -1 when a record's offset
 * delta is not its index (a batch with gaps, which the read cache does not hold); values already
 * moved stay moved.
 */
export function compactAllValues(buf: Buffer, batchPos: number, writePos: number, ends: Uint32Array, first: number): number {
  const count = i32be(buf, batchPos + RECORDS_COUNT);
  at = batchPos + RECORDS;
  let w = writePos;
  for (let i = 0; i < count; i++) {
    const recordEnd = zigzag(varint(buf)) + at;
    at++; // attributes
    while (buf[at++]! & 0x80); // timestampDelta: skipped
    if (zigzag(varint(buf)) !== i) return -1;
    const keyLen = zigzag(varint(buf));
    if (keyLen > 0) at += keyLen;
    const valueLen = zigzag(varint(buf));
    if (valueLen > 0) {
      buf.copyWithin(w, at, at + valueLen);
      w += valueLen;
    }
    ends[first + i] = w;
    at = recordEnd;
  }
  return w;
}

/** The read position of `varint` (module state: the walk is synchronous and allocates no cursor). */
let at = 0;

/** Unsigned varint at `at`; one-byte values (most lengths and deltas) take the fast path. */
function varint(buf: Buffer): number {
  let b = buf[at++]!;
  if (b < 0x80) return b;
  let v = b & 0x7f;
  let mul = 0x80;
  do {
    b = buf[at++]!;
    v += (b & 0x7f) * mul;
    mul *= 0x80;
  } while (b & 0x80);
  return v;
}

function zigzag(v: number): number {
  // v < 2^53 here: lengths and offset deltas are int32 on the wire.
  return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
}
