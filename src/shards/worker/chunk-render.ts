/**
 * Render a whole chunk for the read cache (read-cache.ts): every frame checked, then the chunk's
 * record values (`raw`) or its batches (`binary`) copied back to back into an entry of their own.
 *
 * Only a plain chunk is rendered: data frames of the stream read, uncompressed batches that are
 * neither transactional nor control batches, records gap-free from the chunk's first seq to its
 * last. Anything else (a Kafka transaction's batches, whose visibility changes as transactions
 * end; compressed batches; a quarantined frame) returns null and the read walks the chunk as
 * before. So does a chunk with any damage: the walk then reports it as a read error.
 */
import { ATTR_COMPRESSION_MASK } from '../../util/record-batch';
import { compactAllValues } from '../render/raw-copy';
import { FRAME_HEADER, FrameType, verifiedEnd } from './frame';
import { type CachedBatches, type CachedValues } from './read-cache';
import { type Chunk } from './stream-state';

/** RecordBatch v2 field positions (Kafka). */
const BASE_OFFSET_LOW48 = 2;
const ATTRIBUTES = 21;
const LAST_OFFSET_DELTA = 23;
const RECORDS_COUNT = 57;
/** Attributes that keep a batch out of the cache: compression, transactional (bit 4), control (bit 5). */
const NOT_PLAIN = ATTR_COMPRESSION_MASK | 0x10 | 0x20;

/** Records and batches of the chunk in `buf` when it is plain and undamaged, else null. Reads only. */
function plain(buf: Buffer, streamId: number, c: Chunk): { records: number; batches: number } | null {
  if (buf.length !== c.len) return null;
  let expected = c.baseSeq;
  let good = 0;
  let batches = 0;
  for (let off = 0; off < buf.length; batches++) {
    if (off >= good && (good = verifiedEnd(buf, off)) === off) return null;
    if (buf[off + 8] !== FrameType.Data || buf.readUInt32BE(off + 9) !== streamId) return null;
    const b = off + FRAME_HEADER;
    if ((buf.readInt16BE(b + ATTRIBUTES) & NOT_PLAIN) !== 0) return null;
    const delta = buf.readInt32BE(b + LAST_OFFSET_DELTA);
    if (buf.readUIntBE(b + BASE_OFFSET_LOW48, 6) !== expected || buf.readInt32BE(b + RECORDS_COUNT) !== delta + 1) return null;
    expected += delta + 1;
    off += 8 + buf.readUInt32BE(off);
  }
  if (expected !== c.lastSeq + 1 || expected === c.baseSeq) return null;
  return { records: expected - c.baseSeq, batches };
}

/** The first `n` bytes of `buf` in a buffer of their own (not a slice of the read buffer or of Node's shared pool). */
function own(buf: Buffer, n: number): Buffer {
  const out = Buffer.allocUnsafeSlow(n);
  buf.copy(out, 0, 0, n);
  return out;
}

/**
 * The chunk `c` of stream `streamId`, read into `buf`, as a `raw` cache entry; null when it is
 * not a plain chunk. Moves bytes inside `buf` only once it is known to be plain and undamaged,
 * except when a batch turns out to have an offset gap: then `buf` is spoiled and the caller
 * reads again (`spoiled`).
 */
export function renderValues(buf: Buffer, streamId: number, c: Chunk): CachedValues | 'spoiled' | null {
  const p = plain(buf, streamId, c);
  if (p === null) return null;
  const ends = new Uint32Array(p.records);
  let at = 0;
  let w = 0;
  for (let off = 0; off < buf.length; ) {
    // Read before the move: values land over the headers of the frames they came from.
    const size = 8 + buf.readUInt32BE(off);
    const b = off + FRAME_HEADER;
    const records = buf.readInt32BE(b + RECORDS_COUNT);
    w = compactAllValues(buf, b, w, ends, at);
    if (w < 0) return 'spoiled';
    at += records;
    off += size;
  }
  return { kind: 'raw', len: c.len, baseSeq: c.baseSeq, values: own(buf, w), ends };
}

/** The chunk `c` as a `binary` cache entry (its batches as stored, back to back); null when it is not plain. Spoils `buf`. */
export function renderBatches(buf: Buffer, streamId: number, c: Chunk): CachedBatches | null {
  const p = plain(buf, streamId, c);
  if (p === null) return null;
  const starts = new Uint32Array(p.batches + 1);
  const firsts = new Uint32Array(p.batches + 1);
  let w = 0;
  let i = 0;
  for (let off = 0; off < buf.length; i++) {
    const size = 8 + buf.readUInt32BE(off);
    const b = off + FRAME_HEADER;
    starts[i] = w;
    firsts[i] = buf.readUIntBE(b + BASE_OFFSET_LOW48, 6) - c.baseSeq;
    buf.copyWithin(w, b, off + size);
    w += off + size - b;
    off += size;
  }
  starts[i] = w;
  firsts[i] = p.records;
  return { kind: 'binary', len: c.len, baseSeq: c.baseSeq, batches: own(buf, w), starts, firsts };
}
