/**
 * The buffers of a `raw` catch-up read (shard-reader.ts, `gatherRaw`):
 *
 *   segment file ──pread──▶ chunk scratch (one per worker thread, reused) ──compact in place──▶
 *       values at the scratch's front ──one copy per chunk──▶ the page (allocated once, sized up front)
 *
 * A page used to be built from a fresh buffer per chunk read (1 MiB each), joined with
 * `Buffer.concat` at the end. Every such buffer was new off-heap memory: page faults on first
 * touch, and external memory that made V8 run a full mark-compact every few pages on the worker
 * and on the gateway thread. Reading every chunk into one reused scratch and copying its values
 * straight into a page allocated once keeps the same number of copies and none of that; it matters
 * most for streams built from single-record appends, whose frames are up to twice their values.
 *
 * The page is sized from the chunk index before any byte is read (`planPage`); a page that needs
 * more (a compressed batch inflates, the estimate of a first chunk fell short) grows, which is rare.
 */
import { type ChunkCursor } from './chunk-index';
import { type Chunk } from './stream-state';
import { type PageBuffers } from '../render/json-records';
import { FRESH_PAGES, pagePool } from './page-pool';
import { copyBytes } from '../../util/copy-bytes';

/** Largest scratch kept between reads; a chunk above it (a single frame over 1 MiB) gets a buffer of its own. */
const SCRATCH_KEEP = 2 * 1024 * 1024; // 2 MiB: above the 1 MiB chunk bound (shard-client.ts)
/**
 * A page whose values fill less than half its buffer, by at least this much, is copied to an
 * exact-size buffer: the whole buffer crosses to the gateway thread. A page the estimate sized well
 * (up to the frame overhead, ~10% for batched appends) is not copied.
 */
const SLACK_COPY = 64 * 1024; // 64 KiB

let scratch: Buffer = Buffer.alloc(0);

/** A buffer of at least `len` bytes to read a chunk into; valid until the next call. */
export function chunkScratch(len: number): Buffer {
  if (len > SCRATCH_KEEP) return Buffer.allocUnsafe(len);
  if (scratch.length < len) {
    let size = 64 * 1024;
    while (size < len) size *= 2;
    scratch = Buffer.allocUnsafeSlow(Math.min(size, SCRATCH_KEEP));
  }
  return scratch;
}

/** The chunks a page starts with, looked at before any is read, and the bytes to allocate for its values. */
export interface PagePlan {
  chunks: Chunk[];
  capacity: number;
}

/**
 * Take chunks from `cursor` until the values they can hold reach the byte budget, they cover
 * `maxCount` records or the stream (up to `end`) ends. A chunk's values are at most its bytes less
 * the fixed parts of its frames (`valueBound`), so a page whose chunks reach the budget needs
 * `maxBytes` (or its first chunk, whose first record is taken whatever its size), and a shorter
 * one the sum of those bounds; the first chunk is counted from the start seq in proportion to its
 * records (a live read of one new record must not allocate the whole chunk it sits in). An
 * estimate that falls short (a compressed batch inflates) only makes the page grow.
 */
export function planPage(cursor: ChunkCursor, from: number, end: number, maxCount: number, maxBytes: number, framing: PageFraming = RAW): PagePlan {
  const chunks: Chunk[] = [];
  let values = 0;
  let records = 0;
  for (let c: Chunk | null; values < maxBytes && (c = cursor.next()) !== null; ) {
    if (c.baseSeq >= end) break;
    chunks.push(c);
    values += valueBound(c, from);
    records += c.lastSeq + 1 - Math.max(from, c.baseSeq);
    if (c.lastSeq + 1 - from >= maxCount) break;
  }
  const framingBytes = framing.sep < 0 ? 0 : Math.min(records, maxCount) + 2;
  return { chunks, capacity: Math.min(values, Math.max(maxBytes, chunks[0]?.len ?? 0)) + framingBytes };
}

/** How a page joins its values: `raw` puts nothing between them, `json-array` is `[v1,v2,…]`. */
export interface PageFraming {
  /** The byte before every value (the first's becomes `open`), or -1. */
  sep: number;
  open: number;
  close: number;
}

export const RAW: PageFraming = { sep: -1, open: -1, close: -1 };
export const JSON_ARRAY: PageFraming = { sep: 0x2c, open: 0x5b, close: 0x5d }; // , [ ]

/**
 * The fixed bytes around values: a frame's header (13) and its RecordBatch header (61) at least
 * once per chunk, and per record at least 7 bytes of varints and attributes (length, attributes,
 * timestamp delta, offset delta, key length, value length, header count). A stream of
 * single-record appends pays them once per record, so its frames are up to twice its values.
 */
const CHUNK_FIXED = 13 + 61;
const RECORD_FIXED = 7;

/** At most the value bytes of the records of `c` from `from` on (proportional for a chunk the start seq cuts). */
function valueBound(c: Chunk, from: number): number {
  const all = c.lastSeq + 1 - c.baseSeq;
  const records = from <= c.baseSeq ? all : c.lastSeq + 1 - from;
  const bytes = records === all ? c.len : Math.ceil((c.len * records) / all);
  return Math.max(0, bytes - CHUNK_FIXED - RECORD_FIXED * records);
}

/**
 * The page under construction: values appended chunk by chunk, into a buffer of the worker's page
 * pool (page-pool.ts) when it is on.
 */
export class RawPage {
  #buf: Buffer;
  #len = 0;
  readonly #buffers: PageBuffers;

  /** `buffers`: where the page's buffer comes from (the worker's page pool, for a read whose body comes back). */
  constructor(capacity: number, buffers: PageBuffers = FRESH_PAGES) {
    this.#buffers = buffers;
    this.#buf = buffers.take(capacity);
  }

  get length(): number {
    return this.#len;
  }

  /** Append `src[0, n)`. */
  append(src: Buffer, n: number): void {
    if (n === 0) return;
    this.reserve(n);
    copyBytes(src, this.#buf, this.#len, 0, n);
    this.#len += n;
  }

  /** Make room for `n` more bytes (doubling: only a page that outgrows its plan copies). */
  reserve(n: number): void {
    if (this.#len + n <= this.#buf.length) return;
    const grown = this.#buffers.take(Math.max(this.#len + n, this.#buf.length * 2));
    copyBytes(this.#buf, grown, 0, 0, this.#len);
    // The outgrown buffer never left this thread and nothing else refers to it.
    this.#buffers.give(this.#buf);
    this.#buf = grown;
  }

  /**
   * The page's bytes; an exact-size copy when the planned buffer is much larger. With a framing,
   * the values were each appended after a separator: the first one becomes the opening bracket.
   */
  take(framing: PageFraming = RAW): Buffer {
    if (framing.sep >= 0) {
      if (this.#len === 0) return Buffer.from([framing.open, framing.close]);
      this.#buf[0] = framing.open;
      this.reserve(1);
      this.#buf[this.#len++] = framing.close;
    }
    const slack = this.#buf.length - this.#len;
    // A pooled slab is never copied: it goes as shared memory, whole, and comes back.
    if (slack >= SLACK_COPY && slack > this.#len && !pagePool().lent(this.#buf)) return Buffer.from(this.#buf.subarray(0, this.#len));
    return this.#buf.subarray(0, this.#len);
  }
}
