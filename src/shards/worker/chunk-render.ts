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

/** Where an entry's memory comes from: the read cache's slabs (ReadCache.alloc; null: not kept), or a buffer of its own. */
export type EntryAlloc = (n: number) => Buffer | null;

/** A buffer of its own for an entry (no cache: tests, tools). */
const OWN: EntryAlloc = (n) => Buffer.allocUnsafeSlow(n);

/**
 * One block for a whole entry: `words` u32 slots, then `n` bytes copied from the front of `buf`
 * (not a slice of the read buffer or of Node's shared pool), from `alloc` (the read cache's slabs:
 * read-cache.ts); null when it gives none.
 */
function own(buf: Buffer, n: number, words: number, alloc: EntryAlloc): { block: Buffer; bytes: Buffer } | null {
  const block = alloc(4 * words + n);
  if (block === null) return null;
  buf.copy(block, 4 * words, 0, n);
  return { block, bytes: block.subarray(4 * words) };
}

/** `count` u32 slots of `block` from slot `first`, a view (`block` starts 4-byte aligned: ReadCache.alloc, allocUnsafeSlow). */
const words = (block: Buffer, first: number, count: number): Uint32Array => new Uint32Array(block.buffer, block.byteOffset + 4 * first, count);

/** Where a chunk's record ends are gathered before its entry is allocated (grown as needed, kept). */
let scratchEnds = new Uint32Array(1024);

/**
 * The chunk `c` of stream `streamId`, read into `buf`, as a `raw` cache entry; null when it is
 * not a plain chunk. Moves bytes inside `buf` only once it is known to be plain and undamaged,
 * except when a batch turns out to have an offset gap, or `alloc` gives no memory for the entry
 * (the chunk is not kept): then `buf` is spoiled and the caller reads again (`spoiled`).
 */
export function renderValues(buf: Buffer, streamId: number, c: Chunk, alloc: EntryAlloc = OWN): CachedValues | 'spoiled' | null {
  const p = plain(buf, streamId, c);
  if (p === null) return null;
  if (scratchEnds.length < p.records) scratchEnds = new Uint32Array(Math.max(p.records, 2 * scratchEnds.length));
  const scratch = scratchEnds;
  let at = 0;
  let w = 0;
  for (let off = 0; off < buf.length; ) {
    // Read before the move: values land over the headers of the frames they came from.
    const size = 8 + buf.readUInt32BE(off);
    const b = off + FRAME_HEADER;
    const records = buf.readInt32BE(b + RECORDS_COUNT);
    w = compactAllValues(buf, b, w, scratch, at);
    if (w < 0) return 'spoiled';
    at += records;
    off += size;
  }
  const owned = own(buf, w, p.records, alloc);
  if (owned === null) return 'spoiled';
  const { block, bytes } = owned;
  const ends = words(block, 0, p.records);
  ends.set(scratch.subarray(0, p.records));
  return { kind: 'raw', len: c.len, baseSeq: c.baseSeq, values: bytes, ends };
}

/**
 * The chunk `c` as a `binary` cache entry (its batches as stored, back to back); null when it is
 * not plain, or `alloc` gives no memory for it. Reads `buf` only: each batch is copied once, from
 * its frame to the entry.
 */
export function renderBatches(buf: Buffer, streamId: number, c: Chunk, alloc: EntryAlloc = OWN): CachedBatches | null {
  const p = plain(buf, streamId, c);
  if (p === null) return null;
  const n = p.batches + 1;
  // Where each batch lands and its first seq: the offsets are few (one per batch), in plain arrays.
  const starts: number[] = new Array<number>(n);
  const firsts: number[] = new Array<number>(n);
  let w = 0;
  let i = 0;
  for (let off = 0; off < buf.length; i++) {
    const size = 8 + buf.readUInt32BE(off);
    starts[i] = w;
    firsts[i] = buf.readUIntBE(off + FRAME_HEADER + BASE_OFFSET_LOW48, 6) - c.baseSeq;
    w += size - FRAME_HEADER;
    off += size;
  }
  starts[i] = w;
  firsts[i] = p.records;
  const block = alloc(4 * 2 * n + w);
  if (block === null) return null;
  const bytes = block.subarray(4 * 2 * n);
  for (let off = 0, k = 0; off < buf.length; k++) {
    const size = 8 + buf.readUInt32BE(off);
    buf.copy(bytes, starts[k]!, off + FRAME_HEADER, off + size);
    off += size;
  }
  const startsOut = words(block, 0, n);
  const firstsOut = words(block, n, n);
  startsOut.set(starts);
  firstsOut.set(firsts);
  return { kind: 'binary', len: c.len, baseSeq: c.baseSeq, batches: bytes, starts: startsOut, firsts: firstsOut };
}
