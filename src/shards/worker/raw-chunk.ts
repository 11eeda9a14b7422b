/**
 * Render a whole chunk for the read cache (read-cache.ts): every frame checked, then every
 * record value moved to the front of the chunk's buffer and copied into an entry of its own.
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
import { type CachedChunk } from './read-cache';
import { type Chunk } from './stream-state';

/** RecordBatch v2 field positions (Kafka). */
const BASE_OFFSET_LOW48 = 2;
const ATTRIBUTES = 21;
const LAST_OFFSET_DELTA = 23;
const RECORDS_COUNT = 57;
/** Attributes that keep a batch out of the cache: compression, transactional (bit 4), control (bit 5). */
const NOT_PLAIN = ATTR_COMPRESSION_MASK | 0x10 | 0x20;

/**
 * The chunk `c` of stream `streamId`, read into `buf`, as a cache entry; null when it is not a
 * plain chunk. Moves bytes inside `buf` only once it is known to be plain and undamaged, except
 * when a batch turns out to have an offset gap: then `buf` is spoiled and the caller reads again
 * (`spoiled`).
 */
export function renderRawChunk(buf: Buffer, streamId: number, c: Chunk): CachedChunk | 'spoiled' | null {
  if (buf.length !== c.len) return null;
  let expected = c.baseSeq;
  let good = 0;
  for (let off = 0; off < buf.length; ) {
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

  const ends = new Uint32Array(expected - c.baseSeq);
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
  // A buffer of its own (not a slice of the read buffer or of Node's shared pool): the entry
  // holds exactly its bytes, and nothing else can be handed to another thread with it.
  const values = Buffer.allocUnsafeSlow(w);
  buf.copy(values, 0, 0, w);
  return { len: c.len, baseSeq: c.baseSeq, values, ends };
}
