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
import { ATTR_COMPRESSION_MASK, RecordBatchError } from '../../util/record-batch';

const BASE_OFFSET_LOW48 = 2;
const ATTRIBUTES = 21;
const RECORDS_COUNT = 57;
const RECORDS = 61;

export interface CompactResult {
  /** Records taken. */
  n: number;
  /** Value bytes now at writePos. */
  bytes: number;
  /** Offset after the last record taken (or `fromOffset` when none). */
  next: number;
  /** Stopped early: the next value did not fit in `room`, `maxRecords` or `endOffset` was reached. */
  full: boolean;
}

/**
 * Move the values of the records of the batch at `buf[batchPos]` with offsets in
 * [fromOffset, endOffset) to `buf[writePos…]`, at most `maxRecords` of them and `room` bytes;
 * with `takeFirst`, the first record taken is taken whatever its size (a read's first record,
 * so that a record larger than the budget cannot stall its reader).
 */
export function compactValues(
  buf: Buffer,
  batchPos: number,
  fromOffset: number,
  endOffset: number,
  maxRecords: number,
  room: number,
  writePos: number,
  takeFirst = false,
): CompactResult {
  if ((buf.readInt16BE(batchPos + ATTRIBUTES) & ATTR_COMPRESSION_MASK) !== 0) {
    throw new RecordBatchError('unsupported_compression', 'compressed batches cannot be read in raw format yet');
  }
  const base = buf.readUIntBE(batchPos + BASE_OFFSET_LOW48, 6);
  const count = buf.readInt32BE(batchPos + RECORDS_COUNT);
  const cur = { p: batchPos + RECORDS };
  let n = 0;
  let bytes = 0;
  let next = fromOffset;
  for (let i = 0; i < count; i++) {
    const recordEnd = zigzag(varint(buf, cur)) + cur.p;
    cur.p++; // attributes
    while (buf[cur.p++]! & 0x80); // timestampDelta: skipped
    const offset = base + zigzag(varint(buf, cur));
    if (offset < fromOffset) {
      cur.p = recordEnd;
      continue;
    }
    if (offset >= endOffset || n >= maxRecords) return { n, bytes, next, full: true };
    const keyLen = zigzag(varint(buf, cur));
    if (keyLen > 0) cur.p += keyLen;
    const valueLen = zigzag(varint(buf, cur));
    // An empty value fits while the budget is not spent (as in every other format).
    if (bytes + Math.max(valueLen, 0) > room && !(takeFirst && n === 0)) return { n, bytes, next, full: true };
    if (valueLen > 0) {
      buf.copyWithin(writePos + bytes, cur.p, cur.p + valueLen);
      bytes += valueLen;
    }
    n++;
    next = offset + 1;
    cur.p = recordEnd;
  }
  return { n, bytes, next, full: false };
}

/** Unsigned varint; one-byte values (most lengths and deltas) take the fast path. */
function varint(buf: Buffer, cur: { p: number }): number {
  let b = buf[cur.p++]!;
  if (b < 0x80) return b;
  let v = b & 0x7f;
  let mul = 0x80;
  do {
    b = buf[cur.p++]!;
    v += (b & 0x7f) * mul;
    mul *= 0x80;
  } while (b & 0x80);
  return v;
}

function zigzag(v: number): number {
  // v < 2^53 here: lengths and offset deltas are int32 on the wire.
  return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
}

/**
 * Move the values of every record of the uncompressed batch at `buf[batchPos]` to
 * `buf[writePos…]` (as `compactValues`), writing where each one ends into `ends[at…]`. Returns
 * the write position after the last value, or -1 when a record's offset delta is not its index
 * (a batch with gaps, which the read cache does not hold); values already moved stay moved.
 */
export function compactAllValues(buf: Buffer, batchPos: number, writePos: number, ends: Uint32Array, at: number): number {
  const count = buf.readInt32BE(batchPos + RECORDS_COUNT);
  const cur = { p: batchPos + RECORDS };
  let w = writePos;
  for (let i = 0; i < count; i++) {
    const recordEnd = zigzag(varint(buf, cur)) + cur.p;
    cur.p++; // attributes
    while (buf[cur.p++]! & 0x80); // timestampDelta: skipped
    if (zigzag(varint(buf, cur)) !== i) return -1;
    const keyLen = zigzag(varint(buf, cur));
    if (keyLen > 0) cur.p += keyLen;
    const valueLen = zigzag(varint(buf, cur));
    if (valueLen > 0) {
      buf.copyWithin(w, cur.p, cur.p + valueLen);
      w += valueLen;
    }
    ends[at + i] = w;
    cur.p = recordEnd;
  }
  return w;
}
