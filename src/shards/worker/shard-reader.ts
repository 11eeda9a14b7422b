/**
 * Catch-up reads: find the chunk holding the start seq, pread chunks in order, walk their
 * frames and cut the result at the count and byte budgets. At least one record is always
 * returned when one exists, so a record larger than the byte budget cannot stall a reader.
 *
 * Reads see only durable data: chunks are indexed after their fdatasync.
 *
 * Every frame read from disk is checked before any of it leaves the node: its CRC-32C (a block
 * of frames per native pass, just before the walk reaches them: `verifiedEnd`) and that it
 * belongs to the stream read (a chunk index entry pointing at another stream's bytes is damage as
 * much as a flipped bit). A frame that fails is a `data_corrupt` error naming the stream and the
 * seqs of the chunk holding it, never a body of wrong bytes (docs/storage.md).
 */
import { SvcError } from '../../errors';
import { i16be, i32be, u32be, u48be } from '../../util/be-read';
import { ATTR_COMPRESSION_MASK, type DecodedRecord, decodeRecords, readBatchHeader } from '../../util/record-batch';
import { renderBinary, sliceBatch } from '../render/binary-records';
import { inflateBatch, isCompressed } from '../render/inflate-batch';
import { renderJson } from '../render/json-records';
import { type CompactResult, compactValues } from '../render/raw-copy';
import { renderRaw } from '../render/raw-records';
import { renderSse } from '../render/sse-records';
import { type ReadFormat, type ReadVisibility } from '../types';
import { FRAME_HEADER, FrameType, frameProblem, parseFrame, verifiedEnd } from './frame';
import { type SegmentLog } from './segment-log';
import { type ChunkIndex } from './chunk-index';
import { JSON_ARRAY, type PageFraming, RAW, RawPage, chunkScratch, planPage } from './raw-page';
import { type Chunk, type StreamState } from './stream-state';
import { type ReadCache, takeBatches, takeCached } from './read-cache';
import { renderBatches, renderValues } from './chunk-render';
import { FRESH_PAGES, pagePool } from './page-pool';
import { type PageBuffers } from '../render/json-records';
import { copyBytes } from '../../util/copy-bytes';

/** Batches back to back in one buffer from `buffers`. */
function joinPages(batches: readonly Buffer[], buffers: PageBuffers): Buffer {
  let total = 0;
  for (const b of batches) total += b.length;
  const out = buffers.take(total);
  let at = 0;
  for (const b of batches) at += copyBytes(b, out, at);
  return out.subarray(0, total);
}

/** The error for a damaged frame met by a read: what a client sees as 500 `data_corrupt`. */
export function corruptChunk(log: SegmentLog, s: StreamState, c: Chunk, off: number, why: string): SvcError {
  const at = c.pos + off;
  return new SvcError('data_corrupt', `stream ${s.meta.name}: records ${c.baseSeq}..${c.lastSeq} cannot be served: the frame at byte ${at} of segment ${c.segId} is damaged (${why}); the node's operator can find and quarantine it with \`svc check\` / \`svc repair\``, {
    stream: s.meta.name,
    from_seq: c.baseSeq,
    to_seq: c.lastSeq,
    segment: c.segId,
    position: at,
    file: log.describe(c.segId),
  });
}

function damage(buf: Buffer, c: Chunk, off: number): string {
  return buf.length < c.len ? 'cut short: the file is shorter than the index says' : (frameProblem(buf, off) ?? 'unreadable');
}

export interface Gathered {
  /** The page; empty when `parts` holds it. */
  body: Buffer;
  /** A `raw` or `binary` page as views of the read cache's slabs, in order (a read with `parts`), to be lent with the reply (ReadCache.lend); a binary page's batches cut by its range are buffers of their own. */
  parts?: Buffer[];
  count: number;
  nextSeq: number;
}

/**
 * A page of parts smaller than this is copied into one buffer after all: the copy is cheap
 * there, and the HTTP engines send a body that small in one write anyway.
 */
export const PARTS_MIN = 256 * 1024; // 256 KiB
/**
 * Parts average at least this many bytes, or the page is copied after all. A part is at most one
 * chunk's values (each entry's value offsets follow its values in the slab), and each is a write
 * of its own to the socket: a page of a stream of small chunks (appends interleaved over many
 * streams) would be thousands of small writes, where one copy and one write cost less.
 */
export const PART_AVG_MIN = 32 * 1024; // 32 KiB

/**
 * Committed data only (ReadVisibility): where the read ends (the last stable offset, or the
 * tail) and whether a batch belongs to an aborted transaction. A transactional batch holds one
 * producer's records of one transaction, so it is kept or skipped whole.
 */
interface Committed {
  end: number;
  aborted(attributes: number, producerId: bigint, baseOffset: number): boolean;
}

function committedView(s: StreamState, v: ReadVisibility | undefined): Committed {
  const end = v?.stableSeq == null ? s.nextSeq : Math.min(v.stableSeq, s.nextSeq);
  if (v === undefined || v.aborted.length === 0) return { end, aborted: () => false };
  const ranges = v.aborted.map((a) => ({ pid: BigInt(a.producerId), first: a.first, last: a.last }));
  return {
    end,
    aborted: (attributes, pid, base) => (attributes & TRANSACTIONAL_BATCH) !== 0 && ranges.some((r) => r.pid === pid && base >= r.first && base <= r.last),
  };
}

/** A worker's read cache and the shard reading through it. */
export interface ShardCache {
  cache: ReadCache;
  shardId: number;
}

/**
 * A page of stream `s` from `from` in `format`. `pooled`: the body comes back to this worker once
 * sent (ReadParams.pooled), so it may be rendered into the page pool's shared memory (page-pool.ts).
 * `parts`: a large `raw` or `binary` page held whole by the read cache may come as views of it (ReadParams.parts).
 */
export function gather(log: SegmentLog, index: ChunkIndex, s: StreamState, from: number, maxCount: number, maxBytes: number, format: ReadFormat, visibility?: ReadVisibility, cache?: ShardCache, pooled = false, parts = false): Gathered {
  try {
    return gatherPage(log, index, s, from, maxCount, maxBytes, format, visibility, cache, pooled, parts);
  } finally {
    // Every view of the read cache this read took is copied into its page now, or lent with its page
    // of parts (ReadCache.lend, when the reply is written): its slabs may otherwise be reused (read-cache.ts).
    cache?.cache.endRead();
  }
}

function gatherPage(log: SegmentLog, index: ChunkIndex, s: StreamState, from: number, maxCount: number, maxBytes: number, format: ReadFormat, visibility: ReadVisibility | undefined, cache: ShardCache | undefined, pooled: boolean, parts: boolean): Gathered {
  const view = committedView(s, visibility);
  const cached = cache?.cache.enabled === true ? cache : undefined;
  const buffers = pooled ? pagePool() : FRESH_PAGES;
  if (format === 'raw' || format === 'json-array') return gatherValues(log, index, s, from, maxCount, maxBytes, view, format === 'raw' ? RAW : JSON_ARRAY, format === 'raw' ? cached : undefined, buffers, parts && format === 'raw');
  const batchCache = format === 'binary' ? cached : undefined;
  /** A batch is a view of a cache entry: the body must be a copy of its own (it is handed to another thread), or go as parts. */
  let shared = false;
  /**
   * A page of parts (ReadParams.parts): every chunk so far was held by the read cache, so the
   * batches are views of its slabs (and the few a range cuts, re-encoded: sent inline).
   */
  let asParts = parts && batchCache !== undefined;
  const records: DecodedRecord[] = [];
  const batches: Buffer[] = [];
  let count = 0;
  let bytes = 0;
  let next = from;
  const end = view.end;
  const full = (): boolean => count >= maxCount || (count > 0 && bytes >= maxBytes);

  const chunks = index.cursor(s, from);
  // The cursor is asked for a chunk only when one is needed: past its page it reads the store.
  for (let c: Chunk | null; next < end && !full() && (c = chunks.next()) !== null; ) {
    let read: Buffer | undefined;
    if (batchCache !== undefined) {
      const { cache: rc, shardId } = batchCache;
      let e = rc.get(shardId, c.segId, c.pos, c.len, 'binary');
      if (e === undefined && next <= c.baseSeq && rc.admits(shardId, s.id, c.len)) {
        read = log.read(c.segId, c.pos, c.len);
        const r = renderBatches(read, s.id, c, rc.alloc);
        if (r !== null) {
          rc.put(shardId, s.id, c.segId, c.pos, r);
          e = r;
        }
      }
      if (e !== undefined) {
        const t = takeBatches(e, next, end, maxCount - count, maxBytes - bytes, count === 0, sliceBatch);
        if (t.n > 0) {
          batches.push(...t.parts);
          shared = true;
          count += t.n;
          bytes += t.bytes;
          next = t.next;
        }
        if (t.full) return done();
        continue;
      }
    }
    asParts = false;
    const buf = read ?? log.read(c.segId, c.pos, c.len);
    // Frames before `good` were checked (CRC-32C, whole): `verifiedEnd` checks them a block at a time as the walk reaches them.
    let good = 0;
    for (let off = 0; off < buf.length && !full(); ) {
      if (off >= good) good = verifiedEnd(buf, off);
      const f = off < good ? parseFrame(buf, off, false) : null;
      if (f === null) throw corruptChunk(log, s, c, off, damage(buf, c, off));
      if (f.streamId !== s.id && f.type !== FrameType.Pad) throw corruptChunk(log, s, c, off, `belongs to stream id ${f.streamId}, not ${s.id}`);
      off += f.size;
      if (f.type !== FrameType.Data) continue;
      const h = readBatchHeader(f.payload, 0);
      const last = h.baseOffset + h.lastOffsetDelta;
      if (last < next) continue;
      if (h.baseOffset >= end) break;

      // A Kafka transaction marker (control batch) is not a record: only Kafka and binary reads carry it.
      if ((h.attributes & CONTROL_BATCH) !== 0 && format !== 'kafka' && format !== 'binary') {
        next = Math.min(last + 1, end);
        continue;
      }
      // An aborted transaction's records are never served (the `kafka` format carries no visibility).
      if (view.aborted(h.attributes, h.producerId, h.baseOffset)) {
        next = Math.min(last + 1, end);
        continue;
      }
      if (format === 'kafka') {
        // Whole batches as stored: a Kafka consumer skips the records below its fetch offset itself.
        if (count > 0 && bytes + f.payload.length > maxBytes) return done();
        batches.push(f.payload);
        const stop = Math.min(last + 1, end);
        count += stop - next;
        bytes += f.payload.length;
        next = stop;
        continue;
      }
      // Every format but `kafka` sees uncompressed batches (a Kafka Produce stores them as compressed).
      const payload = isCompressed(f.payload) ? inflateBatch(f.payload) : f.payload;
      if (format === 'binary') {
        // Whole batches pass through untouched; only a batch cut by the range is re-encoded.
        const room = maxCount - count;
        const stop = Math.min(last + 1, next + room, end);
        const b = sliceBatch(payload, next, stop);
        const n = stop - next;
        if (count > 0 && bytes + b.length > maxBytes) return done();
        batches.push(b);
        count += n;
        bytes += b.length;
        next = stop;
        continue;
      }
      for (const r of decodeRecords(payload, 0, next)) {
        if (r.offset >= end || full()) break;
        const size = r.value === null ? 0 : r.value.length;
        if (count > 0 && bytes + size > maxBytes) return done();
        records.push(r);
        count++;
        bytes += size;
        next = r.offset + 1;
      }
    }
  }
  return done();

  function done(): Gathered {
    next = pastGap(index, s, count, next, end);
    if (asParts && bytes >= PARTS_MIN) {
      const joined: Buffer[] = [];
      for (const b of batches) addPart(joined, b);
      if (joined.length * PART_AVG_MIN <= bytes) return { body: EMPTY_PAGE, parts: joined, count, nextSeq: next };
    }
    // A page whose body comes back goes into the worker's pooled slabs (page-pool.ts); a binary
    // page of one batch read from disk is that batch as read, no copy. Kafka fetches and SSE
    // events are not handed back by their listeners: buffers of their own, as before.
    const body =
      format === 'binary'
        ? shared || batches.length !== 1
          ? joinPages(batches, buffers)
          : batches[0]!
        : format === 'kafka'
          ? renderBinary(batches)
          : format === 'raw'
            ? renderRaw(records)
            : format === 'sse'
              ? renderSse(records)
              : renderJson(records, buffers);
    return { body, count, nextSeq: next };
  }
}

/**
 * An empty page below the end: when no chunk holds a seq at or after `next`, the seqs up to the
 * end hold no records (lost with a segment and kept by \`svc repair\`'s seq floor, or quarantined):
 * the reader is moved past them, as past a gap between chunks, instead of being told to read the
 * same position again (docs/storage.md, "A seq once acknowledged is never handed out again").
 * Asked only for empty pages, so a full page costs no extra lookup.
 */
function pastGap(index: ChunkIndex, s: StreamState, count: number, next: number, end: number): number {
  if (count > 0 || next >= end) return next;
  return index.cursor(s, next).next() === null ? end : next;
}

/** RecordBatch v2 field positions (Kafka): the low 48 bits of baseOffset, and lastOffsetDelta. */
const BATCH_BASE_OFFSET_LOW48 = 2;
const BATCH_LAST_OFFSET_DELTA = 23;
const BATCH_ATTRIBUTES = 21;
/** Attributes bit 5: a control batch (Kafka transaction marker, written by the Kafka listener's transaction coordinator). */
const CONTROL_BATCH = 0x20;
/** Attributes bit 4: a transactional batch. */
const TRANSACTIONAL_BATCH = 0x10;
const BATCH_PRODUCER_ID = 43;

/**
 * The raw and json-array formats (record values as stored, joined by nothing or by commas in
 * brackets) move values to the front of each chunk as it is read into the worker's scratch, then
 * copy that front into the page, sized once from the chunk index (raw-page.ts). No record is
 * decoded into an object: a Durable Streams JSON stream is read the way a raw one is.
 */
function gatherValues(log: SegmentLog, index: ChunkIndex, s: StreamState, from: number, maxCount: number, maxBytes: number, view: Committed, framing: PageFraming, cache: ShardCache | undefined, buffers: PageBuffers, asParts: boolean): Gathered {
  const end = view.end;
  const cursor = index.cursor(s, from);
  const plan = planPage(cursor, from, end, maxCount, maxBytes, framing);
  // A page of parts (ReadParams.parts): while every chunk is held by the read cache, its values are
  // views of the cache's slabs, kept (not copied) and lent with the reply; the first chunk that is
  // not held turns them into a page as any other read builds it, and the walk goes on there.
  let parts: Buffer[] | null = asParts && cache !== undefined ? [] : null;
  let page: RawPage | null = parts === null ? new RawPage(plan.capacity, buffers) : null;
  const pageNow = (): RawPage => {
    if (page !== null) return page;
    page = new RawPage(plan.capacity, buffers);
    for (const p of parts!) page.append(p, p.length);
    parts = null;
    return page;
  };
  const r: CompactResult = { n: 0, bytes: 0, written: 0, next: 0, full: false };
  let count = 0;
  let bytes = 0;
  let next = from;
  let planned = 0;
  chunks: for (let c: Chunk | null; next < end && count < maxCount && (c = planned < plan.chunks.length ? plan.chunks[planned++]! : cursor.next()) !== null; ) {
    let buf: Buffer | undefined;
    if (cache !== undefined) {
      // The read cache (raw only): a chunk reached from its first record is rendered whole once
      // (chunk-render.ts, which copies what it keeps out of the scratch); a held one is a slice.
      const keep = parts !== null;
      let e = cache.cache.get(cache.shardId, c.segId, c.pos, c.len, 'raw', keep);
      if (e === undefined && next <= c.baseSeq && cache.cache.admits(cache.shardId, s.id, c.len)) {
        buf = log.readInto(c.segId, c.pos, c.len, chunkScratch(c.len));
        const rendered = renderValues(buf, s.id, c, cache.cache.alloc);
        if (rendered === 'spoiled') buf = undefined;
        else if (rendered !== null) {
          cache.cache.put(cache.shardId, s.id, c.segId, c.pos, rendered, keep);
          e = rendered;
        }
      }
      if (e !== undefined) {
        const t = takeCached(e, next, end, maxCount - count, maxBytes - bytes, count === 0);
        if (t.n > 0) {
          if (parts !== null) addPart(parts, t.part);
          else page!.append(t.part, t.part.length);
          count += t.n;
          bytes += t.bytes;
          next = t.next;
        }
        if (t.full) break;
        continue;
      }
    }
    const into = pageNow();
    buf ??= log.readInto(c.segId, c.pos, c.len, chunkScratch(c.len));
    let good = 0;
    /** Values compacted to the front of `buf` and not yet in the page. */
    let written = 0;
    for (let off = 0; off < buf.length; ) {
      // The hot loop of a catch-up read: frame and batch fields are read in place, without
      // building frame or header objects (a stream of single-record appends is a frame per record).
      // Checked a block ahead of the compaction, which only moves bytes of frames already walked.
      if (off >= good && (good = verifiedEnd(buf, off)) === off) throw corruptChunk(log, s, c, off, damage(buf, c, off));
      const len = u32be(buf, off);
      const type = buf[off + 8];
      if (u32be(buf, off + 9) !== s.id && type !== FrameType.Pad) throw corruptChunk(log, s, c, off, `belongs to stream id ${u32be(buf, off + 9)}, not ${s.id}`);
      const batchPos = off + FRAME_HEADER;
      off += 8 + len;
      if (type !== FrameType.Data) continue;
      const base = u48be(buf, batchPos + BATCH_BASE_OFFSET_LOW48);
      if (base + i32be(buf, batchPos + BATCH_LAST_OFFSET_DELTA) < next) continue;
      if (base >= end) break;
      const attributes = i16be(buf, batchPos + BATCH_ATTRIBUTES);
      // The producer id (a BigInt) is read only for a transactional batch: most batches are not.
      if ((attributes & CONTROL_BATCH) !== 0 || ((attributes & TRANSACTIONAL_BATCH) !== 0 && view.aborted(attributes, buf.readBigInt64BE(batchPos + BATCH_PRODUCER_ID), base))) {
        next = Math.max(next, Math.min(base + i32be(buf, batchPos + BATCH_LAST_OFFSET_DELTA) + 1, end));
        continue;
      }
      // Past the first record the byte budget applies; the first one is taken whatever its size.
      const room = maxBytes - bytes;
      const takeFirst = count === 0;
      if ((attributes & ATTR_COMPRESSION_MASK) !== 0) {
        // A compressed batch (Kafka Produce): its values come from a decompressed copy.
        into.append(buf, written);
        written = 0;
        const inflated = inflateBatch(buf, batchPos);
        compactValues(inflated, 0, next, end, maxCount - count, room, 0, r, framing.sep, takeFirst);
        into.append(inflated, r.written);
      } else {
        compactValues(buf, batchPos, next, end, maxCount - count, room, written, r, framing.sep, takeFirst);
        written += r.written;
      }
      count += r.n;
      bytes += r.bytes;
      if (r.n > 0) next = r.next;
      if (r.full) {
        into.append(buf, written);
        break chunks;
      }
    }
    into.append(buf, written);
  }
  const nextSeq = pastGap(index, s, count, next, end);
  if (parts !== null && bytes >= PARTS_MIN && parts.length * PART_AVG_MIN <= bytes) return { body: EMPTY_PAGE, parts, count, nextSeq };
  return { body: pageNow().take(framing), count, nextSeq };
}

const EMPTY_PAGE = Buffer.alloc(0);

/** Append view `v` to `parts`, joined with the last one when it follows it in the same slab. */
function addPart(parts: Buffer[], v: Buffer): void {
  const last = parts[parts.length - 1];
  if (last !== undefined && last.buffer === v.buffer && last.byteOffset + last.length === v.byteOffset) parts[parts.length - 1] = Buffer.from(v.buffer, last.byteOffset, last.length + v.length);
  else parts.push(v);
}

/** One checked RecordBatch of a remote range (remote-chunks.ts RemoteBatch): the bytes and their seqs. */
export interface SeqBatch {
  readonly batch: Buffer;
  readonly baseSeq: number;
  readonly lastSeq: number;
}

/**
 * A page of an adopted stream's records read from the object store (docs/objects.md, "How a read
 * finds its object and byte range"): `batches` are checked RecordBatches in seq order (what the
 * object cache holds), rendered in `format` as `gather` renders a chunk's, with the same budgets,
 * transaction visibility and first-record rule. Separate from `gather` so the local path is
 * unchanged; raw and json-array pages come from the page pool when `pooled` (as `gather`'s), the
 * other formats' bodies are buffers of their own.
 */
export function gatherBatches(batches: readonly SeqBatch[], s: StreamState, from: number, maxCount: number, maxBytes: number, format: ReadFormat, visibility?: ReadVisibility, pooled = false): Gathered {
  const view = committedView(s, visibility);
  if (format === 'raw' || format === 'json-array') return gatherBatchValues(batches, from, maxCount, maxBytes, view, format === 'raw' ? RAW : JSON_ARRAY, pooled ? pagePool() : FRESH_PAGES);
  const end = view.end;
  const records: DecodedRecord[] = [];
  const parts: Buffer[] = [];
  let count = 0;
  let bytes = 0;
  let next = from;
  const full = (): boolean => count >= maxCount || (count > 0 && bytes >= maxBytes);
  walk: for (const b of batches) {
    if (next >= end || full()) break;
    const h = readBatchHeader(b.batch, 0);
    const last = h.baseOffset + h.lastOffsetDelta;
    if (last < next) continue;
    if (h.baseOffset >= end) break;
    if ((h.attributes & CONTROL_BATCH) !== 0 && format !== 'kafka' && format !== 'binary') {
      next = Math.min(last + 1, end);
      continue;
    }
    if (view.aborted(h.attributes, h.producerId, h.baseOffset)) {
      next = Math.min(last + 1, end);
      continue;
    }
    if (format === 'kafka') {
      if (count > 0 && bytes + b.batch.length > maxBytes) break;
      parts.push(b.batch);
      const stop = Math.min(last + 1, end);
      count += stop - next;
      bytes += b.batch.length;
      next = stop;
      continue;
    }
    const payload = isCompressed(b.batch) ? inflateBatch(b.batch) : b.batch;
    if (format === 'binary') {
      const stop = Math.min(last + 1, next + (maxCount - count), end);
      const cut = sliceBatch(payload, next, stop);
      if (count > 0 && bytes + cut.length > maxBytes) break;
      parts.push(cut);
      count += stop - next;
      bytes += cut.length;
      next = stop;
      continue;
    }
    for (const r of decodeRecords(payload, 0, next)) {
      if (r.offset >= end || full()) break;
      const size = r.value === null ? 0 : r.value.length;
      if (count > 0 && bytes + size > maxBytes) break walk;
      records.push(r);
      count++;
      bytes += size;
      next = r.offset + 1;
    }
  }
  const body = format === 'binary' ? joinPages(parts, FRESH_PAGES) : format === 'kafka' ? renderBinary(parts) : format === 'sse' ? renderSse(records) : renderJson(records, FRESH_PAGES);
  return { body, count, nextSeq: next };
}

/**
 * `gatherBatches` in the raw and json-array formats, as `gatherValues` renders a local chunk: each
 * batch's values are moved to the front of a copy of it in the worker's scratch (the cached batch
 * itself is never written) and copied into a page sized once, no record decoded into an object.
 * Decoding each record made a moved stream's catch-up cost several times the local one's CPU per MB
 * (perf/moved-catchup.js).
 */
function gatherBatchValues(batches: readonly SeqBatch[], from: number, maxCount: number, maxBytes: number, view: Committed, framing: PageFraming, buffers: PageBuffers): Gathered {
  const end = view.end;
  let capacity = 0;
  for (const b of batches) {
    capacity += b.batch.length;
    if (capacity >= maxBytes) break;
  }
  const page = new RawPage(capacity, buffers);
  const r: CompactResult = { n: 0, bytes: 0, written: 0, next: 0, full: false };
  let count = 0;
  let bytes = 0;
  let next = from;
  for (const b of batches) {
    if (next >= end || count >= maxCount) break;
    const batch = b.batch;
    if (b.lastSeq < next) continue;
    if (b.baseSeq >= end) break;
    const attributes = i16be(batch, BATCH_ATTRIBUTES);
    if ((attributes & CONTROL_BATCH) !== 0 || ((attributes & TRANSACTIONAL_BATCH) !== 0 && view.aborted(attributes, batch.readBigInt64BE(BATCH_PRODUCER_ID), b.baseSeq))) {
      next = Math.max(next, Math.min(b.lastSeq + 1, end));
      continue;
    }
    const room = maxBytes - bytes;
    const takeFirst = count === 0;
    let values: Buffer;
    if ((attributes & ATTR_COMPRESSION_MASK) !== 0) values = inflateBatch(batch, 0);
    else {
      values = chunkScratch(batch.length);
      copyBytes(batch, values, 0, 0, batch.length);
    }
    compactValues(values, 0, next, end, maxCount - count, room, 0, r, framing.sep, takeFirst);
    page.append(values, r.written);
    count += r.n;
    bytes += r.bytes;
    if (r.n > 0) next = r.next;
    if (r.full) break;
  }
  return { body: page.take(framing), count, nextSeq: next };
}
