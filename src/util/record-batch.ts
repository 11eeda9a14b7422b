/**
 * Kafka RecordBatch v2 codec — the storage format of every stream (design/kafka.md,
 * "Record batch v2"). Layout, big-endian:
 *
 *   0 baseOffset int64 | 8 batchLength int32 (bytes after this field) | 12 partitionLeaderEpoch int32
 *   16 magic int8 = 2 | 17 crc uint32 (CRC-32C of bytes 21..end) | 21 attributes int16
 *   23 lastOffsetDelta int32 | 27 baseTimestamp int64 | 35 maxTimestamp int64 | 43 producerId int64
 *   51 producerEpoch int16 | 53 baseSequence int32 | 57 recordsCount int32 | 61 records…
 *
 * Record: length varint, attributes int8, timestampDelta varlong, offsetDelta varint,
 * keyLength varint (-1 = null), key, valueLength varint (-1 = null), value, headersCount
 * varint, headers (keyLength varint, key, valueLength varint (-1 = null), value).
 *
 * The CRC does not cover baseOffset, batchLength or partitionLeaderEpoch, so offsets are
 * assigned by rewriting the first 8 bytes (`setBaseOffset`) without re-checksumming.
 * Offsets and timestamps are `number`s (exact below 2^53); producerId stays a `bigint`.
 */
import { crc32cRange } from './crc32c';
import {
  type Cursor,
  VarintError,
  readVarint,
  readVarlong,
  sizeOfVarint,
  sizeOfVarlong,
  writeVarint,
  writeVarlong,
} from './varint';

// Constants are module-local and exported by the list below: tsc's CommonJS output
// turns uses of an `export const` into `exports.X` loads, which the hot paths avoid.
const MAGIC = 2;
const BATCH_HEADER_SIZE = 61;
/** baseOffset + batchLength: the bytes that `batchLength` does not count. */
const LOG_OVERHEAD = 12;

// Byte offsets of the header fields within a batch.
const BASE_OFFSET_POS = 0;
const BATCH_LENGTH_POS = 8;
const PARTITION_LEADER_EPOCH_POS = 12;
const MAGIC_POS = 16;
const CRC_POS = 17;
/** The CRC covers the batch from here (attributes) to its end. */
const ATTRIBUTES_POS = 21;
const LAST_OFFSET_DELTA_POS = 23;
const BASE_TIMESTAMP_POS = 27;
const MAX_TIMESTAMP_POS = 35;
const PRODUCER_ID_POS = 43;
const PRODUCER_EPOCH_POS = 51;
const BASE_SEQUENCE_POS = 53;
const RECORDS_COUNT_POS = 57;
const RECORDS_POS = 61;

// Attribute bits.
/** Bits 0–2: compression codec (values in `Compression`). */
const ATTR_COMPRESSION_MASK = 0x07;
/** Bit 3: timestamps are LogAppendTime (every record's timestamp is maxTimestamp). */
const ATTR_TIMESTAMP_TYPE = 0x08;
/** Bit 4: the batch belongs to a transaction. */
const ATTR_TRANSACTIONAL = 0x10;
/** Bit 5: a control batch (transaction markers), not user data. */
const ATTR_CONTROL = 0x20;

/** Compression codec ids (attribute bits 0–2). */
const Compression = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const;

export {
  MAGIC, BATCH_HEADER_SIZE, LOG_OVERHEAD, BASE_OFFSET_POS, BATCH_LENGTH_POS,
  PARTITION_LEADER_EPOCH_POS, MAGIC_POS, CRC_POS, ATTRIBUTES_POS, LAST_OFFSET_DELTA_POS,
  BASE_TIMESTAMP_POS, MAX_TIMESTAMP_POS, PRODUCER_ID_POS, PRODUCER_EPOCH_POS, BASE_SEQUENCE_POS,
  RECORDS_COUNT_POS, RECORDS_POS, ATTR_COMPRESSION_MASK, ATTR_TIMESTAMP_TYPE, ATTR_TRANSACTIONAL,
  ATTR_CONTROL, Compression
};

/** Smallest batchLength: the header after the batchLength field, with no records. */
const MIN_BATCH_LENGTH = BATCH_HEADER_SIZE - LOG_OVERHEAD;
const TWO_32 = 0x1_0000_0000;

export type RecordBatchErrorCode = 'corrupt_batch' | 'unsupported_compression';

export class RecordBatchError extends Error {
  override readonly name = 'RecordBatchError';
  readonly code: RecordBatchErrorCode;
  constructor(code: RecordBatchErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** One record to encode. Its offset is its index in the batch. */
export interface RecordInput {
  key: Uint8Array | null;
  value: Uint8Array | null;
  /** Kafka header keys are UTF-8 strings; values may be null. */
  headers: ReadonlyArray<readonly [key: Uint8Array, value: Uint8Array | null]> | null;
  /** Record timestamp − baseTimestamp, same unit as the timestamps (integer; default 0). */
  timestampDelta?: number;
}

export interface EncodeBatchOptions {
  baseOffset: number;
  /** Timestamp of the batch; record timestamps are this plus their `timestampDelta`. */
  baseTimestamp: number;
  /** At least one record. */
  records: readonly RecordInput[];
  /** Default -1n (not an idempotent producer). */
  producerId?: bigint;
  /** Default -1. */
  producerEpoch?: number;
  /** Default -1. */
  baseSequence?: number;
  /** Default 0. Compression bits must be 0: the records are written uncompressed. */
  attributes?: number;
  /** Not covered by the CRC; default -1 (unknown, as producers send it). */
  partitionLeaderEpoch?: number;
}

export interface BatchHeader {
  baseOffset: number;
  batchLength: number;
  partitionLeaderEpoch: number;
  magic: number;
  crc: number;
  attributes: number;
  lastOffsetDelta: number;
  baseTimestamp: number;
  maxTimestamp: number;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  recordsCount: number;
}

/** A decoded record. key, value and header slices are views into the batch buffer. */
export interface DecodedRecord {
  offset: number;
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: Array<[Buffer, Buffer | null]>;
}

/**
 * Plain byte stores: on the encode hot path these beat `Buffer#writeInt32BE`, whose
 * argument checks cost more than the write. `v` is any int32 or uint32 value.
 */
function write32(buf: Buffer, pos: number, v: number): void {
  buf[pos] = v >>> 24;
  buf[pos + 1] = v >>> 16;
  buf[pos + 2] = v >>> 8;
  buf[pos + 3] = v;
}

function write16(buf: Buffer, pos: number, v: number): void {
  buf[pos] = v >>> 8;
  buf[pos + 1] = v;
}

function writeInt64(buf: Buffer, v: number, pos: number): void {
  const hi = Math.floor(v / TWO_32);
  write32(buf, pos, hi);
  write32(buf, pos + 4, v - hi * TWO_32);
}

function readInt64(buf: Buffer, pos: number): number {
  return buf.readInt32BE(pos) * TWO_32 + buf.readUInt32BE(pos + 4);
}

function sizeOfBytes(b: Uint8Array | null): number {
  return b === null ? 1 : sizeOfVarint(b.length) + b.length;
}

function writeBytes(buf: Buffer, pos: number, b: Uint8Array | null): number {
  if (b === null) {
    buf[pos] = 1; // zig-zag(-1)
    return pos + 1;
  }
  pos = writeVarint(buf, pos, b.length);
  buf.set(b, pos);
  return pos + b.length;
}

/** Record body sizes from the sizing pass, reused by the writing pass (grown on demand). */
let bodySizes = new Int32Array(64);

/**
 * Encode an uncompressed batch into one exact-size allocation, CRC filled in.
 * The result may be a view into Node's shared allocation pool (small buffers): copy it
 * (or use `Buffer.from`) before transferring its `ArrayBuffer` to another thread.
 */
export function encodeRecordBatch(o: EncodeBatchOptions): Buffer {
  const records = o.records;
  const n = records.length;
  const attributes = o.attributes ?? 0;
  if (n === 0) throw new RangeError('encodeRecordBatch: a batch needs at least one record');
  if ((attributes & ATTR_COMPRESSION_MASK) !== 0) {
    throw new RangeError('encodeRecordBatch: writes uncompressed batches only');
  }
  if (!Number.isSafeInteger(o.baseOffset) || !Number.isSafeInteger(o.baseTimestamp)) {
    throw new RangeError('encodeRecordBatch: baseOffset and baseTimestamp must be safe integers');
  }
  if (bodySizes.length < n) bodySizes = new Int32Array(Math.max(n, bodySizes.length * 2));

  let size = BATCH_HEADER_SIZE;
  let maxDelta = -Infinity;
  for (let i = 0; i < n; i++) {
    const r = records[i] as RecordInput;
    const delta = r.timestampDelta ?? 0;
    if (delta > maxDelta) maxDelta = delta;
    let body = 1 + sizeOfVarlong(delta) + sizeOfVarint(i) + sizeOfBytes(r.key) + sizeOfBytes(r.value);
    const headers = r.headers;
    if (headers === null) {
      body += 1;
    } else {
      body += sizeOfVarint(headers.length);
      for (let h = 0; h < headers.length; h++) {
        const header = headers[h] as readonly [Uint8Array, Uint8Array | null];
        body += sizeOfBytes(header[0]) + sizeOfBytes(header[1]);
      }
    }
    bodySizes[i] = body;
    size += sizeOfVarint(body) + body;
  }

  if (size - LOG_OVERHEAD > 0x7fff_ffff) throw new RangeError('encodeRecordBatch: batchLength exceeds int32');
  const buf = Buffer.allocUnsafe(size);
  writeInt64(buf, o.baseOffset, BASE_OFFSET_POS);
  write32(buf, BATCH_LENGTH_POS, size - LOG_OVERHEAD);
  write32(buf, PARTITION_LEADER_EPOCH_POS, o.partitionLeaderEpoch ?? -1);
  buf[MAGIC_POS] = MAGIC;
  write16(buf, ATTRIBUTES_POS, attributes);
  write32(buf, LAST_OFFSET_DELTA_POS, n - 1);
  writeInt64(buf, o.baseTimestamp, BASE_TIMESTAMP_POS);
  writeInt64(buf, o.baseTimestamp + maxDelta, MAX_TIMESTAMP_POS);
  const producerId = o.producerId;
  if (producerId === undefined || producerId === -1n) {
    write32(buf, PRODUCER_ID_POS, -1);
    write32(buf, PRODUCER_ID_POS + 4, -1);
  } else {
    buf.writeBigInt64BE(producerId, PRODUCER_ID_POS);
  }
  write16(buf, PRODUCER_EPOCH_POS, o.producerEpoch ?? -1);
  write32(buf, BASE_SEQUENCE_POS, o.baseSequence ?? -1);
  write32(buf, RECORDS_COUNT_POS, n);

  let pos = RECORDS_POS;
  for (let i = 0; i < n; i++) {
    const r = records[i] as RecordInput;
    pos = writeVarint(buf, pos, bodySizes[i] as number);
    buf[pos++] = 0; // record attributes: unused in v2
    pos = writeVarlong(buf, pos, r.timestampDelta ?? 0);
    pos = writeVarint(buf, pos, i);
    pos = writeBytes(buf, pos, r.key);
    pos = writeBytes(buf, pos, r.value);
    const headers = r.headers;
    if (headers === null) {
      buf[pos++] = 0;
    } else {
      pos = writeVarint(buf, pos, headers.length);
      for (let h = 0; h < headers.length; h++) {
        const header = headers[h] as readonly [Uint8Array, Uint8Array | null];
        pos = writeBytes(buf, pos, header[0]);
        pos = writeBytes(buf, pos, header[1]);
      }
    }
  }
  write32(buf, CRC_POS, crc32cRange(buf, ATTRIBUTES_POS, size));
  return buf;
}

function corrupt(message: string): RecordBatchError {
  return new RecordBatchError('corrupt_batch', message);
}

/** Parse the 61-byte header at `pos`. Throws `corrupt_batch` when fewer bytes remain. */
export function readBatchHeader(buf: Buffer, pos = 0): BatchHeader {
  if (pos < 0 || buf.length - pos < BATCH_HEADER_SIZE) {
    throw corrupt(`batch at byte ${pos}: truncated header`);
  }
  return {
    baseOffset: readInt64(buf, pos + BASE_OFFSET_POS),
    batchLength: buf.readInt32BE(pos + BATCH_LENGTH_POS),
    partitionLeaderEpoch: buf.readInt32BE(pos + PARTITION_LEADER_EPOCH_POS),
    magic: buf.readInt8(pos + MAGIC_POS),
    crc: buf.readUInt32BE(pos + CRC_POS),
    attributes: buf.readInt16BE(pos + ATTRIBUTES_POS),
    lastOffsetDelta: buf.readInt32BE(pos + LAST_OFFSET_DELTA_POS),
    baseTimestamp: readInt64(buf, pos + BASE_TIMESTAMP_POS),
    maxTimestamp: readInt64(buf, pos + MAX_TIMESTAMP_POS),
    producerId: buf.readBigInt64BE(pos + PRODUCER_ID_POS),
    producerEpoch: buf.readInt16BE(pos + PRODUCER_EPOCH_POS),
    baseSequence: buf.readInt32BE(pos + BASE_SEQUENCE_POS),
    recordsCount: buf.readInt32BE(pos + RECORDS_COUNT_POS),
  };
}

/**
 * The offsets [first, end) of the batch at `pos`, from its header without the rest of it: the
 * group commit's per-frame look (objects mode) allocates nothing for them (readBatchHeader makes
 * an object and a BigInt per call).
 */
export function batchOffsets(buf: Buffer, pos = 0): { first: number; end: number } {
  if (pos < 0 || buf.length - pos < BATCH_HEADER_SIZE) throw corrupt(`batch at byte ${pos}: truncated header`);
  const first = readInt64(buf, pos + BASE_OFFSET_POS);
  return { first, end: first + buf.readInt32BE(pos + LAST_OFFSET_DELTA_POS) + 1 };
}

/** Total bytes of the batch at `pos` (batchLength + 12). */
export function batchSize(buf: Buffer, pos = 0): number {
  return buf.readInt32BE(pos + BATCH_LENGTH_POS) + LOG_OVERHEAD;
}

/** Assign offsets: rewrite baseOffset in place. The CRC stays valid (it starts at byte 21). */
export function setBaseOffset(batch: Buffer, baseOffset: number, pos = 0): void {
  writeInt64(batch, baseOffset, pos + BASE_OFFSET_POS);
}

/** Check magic and batchLength of the batch at `pos`; return its end, or what is wrong. */
function frameEnd(buf: Buffer, pos: number): number | string {
  if (buf.length - pos < BATCH_HEADER_SIZE) return 'truncated header';
  const magic = buf[pos + MAGIC_POS];
  if (magic !== MAGIC) return `magic ${String(magic)}, expected ${MAGIC}`;
  const length = buf.readInt32BE(pos + BATCH_LENGTH_POS);
  if (length < MIN_BATCH_LENGTH) return `batchLength ${length} is too small`;
  if (length > buf.length - pos - LOG_OVERHEAD) {
    return `batchLength ${length} runs past the end of the data`;
  }
  return pos + LOG_OVERHEAD + length;
}

/** True when the batch at `pos` is complete and its CRC-32C matches. */
export function verifyBatchCrc(batch: Buffer, pos = 0): boolean {
  if (pos < 0 || batch.length - pos < BATCH_HEADER_SIZE) return false;
  const length = batch.readInt32BE(pos + BATCH_LENGTH_POS);
  if (length < MIN_BATCH_LENGTH || length > batch.length - pos - LOG_OVERHEAD) return false;
  const end = pos + LOG_OVERHEAD + length;
  return crc32cRange(batch, pos + ATTRIBUTES_POS, end) === batch.readUInt32BE(pos + CRC_POS);
}

/** Read a length-prefixed byte field (-1 = null) as a view, bounded by `c.end`. */
function readBytes(buf: Buffer, c: Cursor): Buffer | null {
  const length = readVarint(buf, c);
  if (length === -1) return null;
  const start = c.pos;
  if (length < -1 || length > c.end - start) {
    throw corrupt(`field length ${length} at byte ${start} runs past the end of its record`);
  }
  c.pos = start + length;
  return buf.subarray(start, start + length);
}

/**
 * Decode the records of the uncompressed batch at `pos`, skipping (without allocating)
 * those whose offset is below `fromOffset`. Does not check the CRC (`verifyBatchCrc`).
 * Control batches decode like any other: callers filter on `ATTR_CONTROL`.
 * Throws `RecordBatchError`: `unsupported_compression` or `corrupt_batch`.
 */
export function decodeRecords(batch: Buffer, pos = 0, fromOffset = -Infinity): DecodedRecord[] {
  const end = frameEnd(batch, pos);
  if (typeof end === 'string') throw corrupt(`batch at byte ${pos}: ${end}`);
  const attributes = batch.readInt16BE(pos + ATTRIBUTES_POS);
  const codec = attributes & ATTR_COMPRESSION_MASK;
  if (codec !== 0) {
    throw new RecordBatchError('unsupported_compression', `batch at byte ${pos}: compression codec ${codec} is not supported`);
  }
  const baseOffset = readInt64(batch, pos + BASE_OFFSET_POS);
  const count = batch.readInt32BE(pos + RECORDS_COUNT_POS);
  if (count < 0) throw corrupt(`batch at byte ${pos}: negative recordsCount ${count}`);
  const out: DecodedRecord[] = [];
  if (baseOffset + batch.readInt32BE(pos + LAST_OFFSET_DELTA_POS) < fromOffset) return out;
  const baseTimestamp = readInt64(batch, pos + BASE_TIMESTAMP_POS);
  const logAppendTime = (attributes & ATTR_TIMESTAMP_TYPE) !== 0;
  const maxTimestamp = logAppendTime ? readInt64(batch, pos + MAX_TIMESTAMP_POS) : 0;
  const c: Cursor = { pos: pos + RECORDS_POS, end };
  try {
    for (let i = 0; i < count; i++) {
      c.end = end;
      const length = readVarint(batch, c);
      const recordEnd = c.pos + length;
      if (length < 0 || recordEnd > end) {
        throw corrupt(`record ${i} of batch at byte ${pos}: length ${length} runs past the end of the batch`);
      }
      c.end = recordEnd;
      c.pos++; // record attributes: unused in v2
      const timestampDelta = readVarlong(batch, c);
      const offset = baseOffset + readVarint(batch, c);
      if (offset < fromOffset) {
        c.pos = recordEnd;
        continue;
      }
      const key = readBytes(batch, c);
      const value = readBytes(batch, c);
      const headerCount = readVarint(batch, c);
      if (headerCount < 0) throw corrupt(`record ${i} of batch at byte ${pos}: negative header count`);
      const headers: Array<[Buffer, Buffer | null]> = [];
      for (let h = 0; h < headerCount; h++) {
        const headerKey = readBytes(batch, c);
        if (headerKey === null) throw corrupt(`record ${i} of batch at byte ${pos}: null header key`);
        headers.push([headerKey, readBytes(batch, c)]);
      }
      if (c.pos !== recordEnd) throw corrupt(`record ${i} of batch at byte ${pos}: length does not match its fields`);
      out.push({ offset, timestamp: logAppendTime ? maxTimestamp : baseTimestamp + timestampDelta, key, value, headers });
    }
  } catch (e) {
    if (e instanceof VarintError) throw corrupt(`batch at byte ${pos}: ${e.message}`);
    throw e;
  }
  if (c.pos !== end) throw corrupt(`batch at byte ${pos}: ${count} records do not fill batchLength`);
  return out;
}

/** What `splitBatches` found besides the batches: the largest record value of its uncompressed batches, in bytes. */
export interface BatchStats {
  largestValue: number;
}

/**
 * Where the last `varintAt` or `varlongEnd` stopped: a second result without an object per call.
 * Always stored as an int32 (`| 0`): a context variable holding a non-small integer makes V8 box
 * every store and look up typed-array bytes by a number it turns into a string (measured: 22% of
 * the walk in Builtins_NumberToString before).
 */
let after = 0;

/**
 * The zig-zag varint at `p` (none of its bytes at or past `limit`), its end left in `after`;
 * as `readVarint` (at most 5 bytes, bits beyond 32 dropped), which reports what is wrong with
 * one that runs past `limit` or is too long. Throws VarintError.
 */
function varintAt(buf: Buffer, p: number, limit: number): number {
  let u = 0;
  let q = p;
  for (let shift = 0; shift <= 28 && q < limit; shift += 7) {
    const b = buf[q++]!;
    u |= (b & 0x7f) << shift;
    if (b < 0x80) {
      after = q | 0;
      return (u >>> 1) ^ -(u & 1);
    }
  }
  const c: Cursor = { pos: p, end: limit };
  const v = readVarint(buf, c);
  after = c.pos | 0;
  return v;
}

/** Skip the zig-zag varlong at `p` (`readVarlong`'s checks), leaving its end in `after`. */
function varlongEnd(buf: Buffer, p: number, limit: number): void {
  if (p < limit && buf[p]! < 0x80) {
    after = (p + 1) | 0;
    return;
  }
  const c: Cursor = { pos: p, end: limit };
  readVarlong(buf, c);
  after = c.pos | 0;
}

/**
 * Walk the records of an uncompressed batch without allocating: every field lies inside
 * its record, record i has offsetDelta i, and the records exactly fill the batch. This is the
 * broker's pass over every produced record (ten thousand in a megabyte of 100-byte records), so
 * it reads positions as plain numbers rather than through a Cursor.
 */
function checkRecords(buf: Buffer, pos: number, end: number, count: number, stats?: BatchStats): string | null {
  let p = pos + RECORDS_POS;
  let largest = 0;
  try {
    for (let i = 0; i < count; i++) {
      const length = varintAt(buf, p, end);
      p = after;
      const recordEnd = p + length;
      if (length < 0 || recordEnd > end) return `record ${i}: length ${length} runs past the end of the batch`;
      p++; // attributes: unused in v2
      varlongEnd(buf, p, recordEnd);
      if (varintAt(buf, after, recordEnd) !== i) return `record ${i}: offsetDelta is not ${i}`;
      const keyLength = varintAt(buf, after, recordEnd);
      p = after;
      if (keyLength < -1 || keyLength > recordEnd - p) return `field length ${keyLength} at byte ${p} runs past the end of its record`;
      if (keyLength > 0) p += keyLength;
      // The value's length is kept for the caller's record-size limit.
      const valueLength = varintAt(buf, p, recordEnd);
      p = after;
      if (valueLength < -1 || valueLength > recordEnd - p) return `record ${i}: value length ${valueLength} runs past the end of its record`;
      if (valueLength > 0) p += valueLength;
      if (valueLength > largest) largest = valueLength;
      const headerCount = varintAt(buf, p, recordEnd);
      p = after;
      if (headerCount < 0) return `record ${i}: negative header count`;
      for (let h = 0; h < headerCount; h++) {
        for (let part = 0; part < 2; part++) {
          const n = varintAt(buf, p, recordEnd);
          p = after;
          if (n < -1 || n > recordEnd - p) return `field length ${n} at byte ${p} runs past the end of its record`;
          if (n === -1 && part === 0) return `record ${i}: null header key`;
          if (n > 0) p += n;
        }
      }
      if (p !== recordEnd) return `record ${i}: length does not match its fields`;
    }
  } catch (e) {
    if (e instanceof VarintError) return e.message;
    throw e;
  } finally {
    if (stats !== undefined && largest > stats.largestValue) stats.largestValue = largest;
  }
  return p === end ? null : `${count} records do not fill batchLength`;
}

/**
 * Split a concatenation of complete v2 batches (the `application/vnd.svc.batch` body)
 * into views, validating each: magic, batchLength, CRC, and for uncompressed batches
 * recordsCount = lastOffsetDelta + 1 and the record framing. baseOffset is not checked
 * (the server assigns offsets). An empty buffer yields `[]`.
 */
export function splitBatches(buf: Buffer, stats?: BatchStats): Buffer[] | RecordBatchError {
  const out: Buffer[] = [];
  let pos = 0;
  for (let index = 0; pos < buf.length; index++) {
    const fail = (problem: string): RecordBatchError => corrupt(`batch ${index} (byte ${pos}): ${problem}`);
    const end = frameEnd(buf, pos);
    if (typeof end === 'string') return fail(end);
    if (!verifyBatchCrc(buf, pos)) return fail('CRC-32C mismatch');
    const count = buf.readInt32BE(pos + RECORDS_COUNT_POS);
    const lastOffsetDelta = buf.readInt32BE(pos + LAST_OFFSET_DELTA_POS);
    if (count < 1 || lastOffsetDelta < 0) return fail('no records');
    if ((buf.readInt16BE(pos + ATTRIBUTES_POS) & ATTR_COMPRESSION_MASK) === 0) {
      if (count !== lastOffsetDelta + 1) return fail(`recordsCount ${count} does not match lastOffsetDelta ${lastOffsetDelta}`);
      const problem = checkRecords(buf, pos, end, count, stats);
      if (problem !== null) return fail(problem);
    }
    out.push(buf.subarray(pos, end));
    pos = end;
  }
  return out;
}

