/**
 * The chunk index of one shard: where each stream's records are in the segment log.
 *
 *   stream state (memory)        s.recent: the newest chunks, not yet (or not finally) in the store;
 *                                always holds the last chunk, which appends merge into
 *   page cache (memory, bounded) one page of stored chunks per recently read stream, LRU,
 *                                at most `maxCachedChunks` chunks in all
 *   RocksDB                      every other chunk: K entries by (stream, base seq), R entries by
 *                                (segment, stream) for the reaper (catalog-codec.ts)
 *
 * A stream's chunks, in seq order, are its stored chunks below `s.recent[0].baseSeq` followed by
 * `s.recent`. A stored chunk below that point never changes again (only the head chunk is cut by
 * TTL expiry, which goes through `replaceHead`), so a cached page is never stale; pages are only
 * dropped when chunks are. Memory therefore depends on the number of streams and on the cache
 * bound, not on how much data the shard holds.
 */
import {
  CHUNK_PREFIX,
  INDEX_VERSION,
  INDEX_VERSION_KEY,
  PER_CHUNK_R_VERSION,
  chunkKey,
  CHUNK_FIELDS,
  decodeChunk,
  decodeChunkInto,
  delChunk,
  packedChunk,
  putChunk,
  SEGMENT_CHUNK_PREFIX,
  segmentPrefix,
  segmentStreamKey,
  streamChunksEnd,
  streamChunksStart,
} from './catalog-codec';
import { type KvOp, type KvStore, prefixEnd } from './kv-store';
import { type Chunk, type StreamState, findChunk } from './stream-state';

/** Chunks read from the store at a time (one page). */
const PAGE_CHUNKS = 256;
/** Deletes written to the store at a time when a trim or delete drops many chunks. */
const DELETE_PAGE_OPS = 4096;
/** Default bound of the page cache, in chunks per shard (a cached chunk is 48 bytes of a packed page). */
export const DEFAULT_INDEX_CACHE_CHUNKS = 16_384;

/**
 * A run of consecutive stored chunks of one stream, all below the stream's recent chunks, packed
 * in one Float64Array (CHUNK_FIELDS numbers a chunk, catalog-codec.ts). Why not an array of Chunk objects: a cached page
 * lives for seconds, so its objects (and the boxed doubles of `maxTs`) reached the shard worker's
 * old generation, and random catch-up reads replace pages hundreds of times a second — under a
 * mixed load (perf/memory-soak.js) page loads were the largest source of what the worker's heap
 * promoted, and V8 sizes the old generation's limit at a multiple of what it holds. A packed page
 * is one off-heap buffer; the Chunk objects a cursor hands out die young.
 */
class Page {
  readonly #data: Float64Array;
  readonly length: number;

  constructor(data: Float64Array, length: number) {
    this.#data = data;
    this.length = length;
  }

  static of(rows: ReadonlyArray<readonly [Buffer, Buffer]>): Page {
    const data = new Float64Array(rows.length * CHUNK_FIELDS);
    for (let i = 0; i < rows.length; i++) decodeChunkInto(rows[i]![0], rows[i]![1], data, i * CHUNK_FIELDS);
    return new Page(data, rows.length);
  }

  baseSeq(i: number): number {
    return this.#data[i * CHUNK_FIELDS]!;
  }

  lastSeq(i: number): number {
    return this.#data[i * CHUNK_FIELDS + 1]!;
  }

  chunk(i: number): Chunk {
    return packedChunk(this.#data, i * CHUNK_FIELDS);
  }

  /** Index of the first chunk whose lastSeq ≥ seq (findChunk's search, on the packed page). */
  find(seq: number): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.lastSeq(mid) < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

const EMPTY_PAGE = new Page(new Float64Array(0), 0);

/** Walks a stream's chunks in seq order; `next()` returns null at the end. */
export interface ChunkCursor {
  next(): Chunk | null;
}

export class ChunkIndex {
  readonly #store: KvStore;
  readonly #maxCached: number;
  /** stream id → its cached page; Map order is LRU order (oldest first). */
  readonly #pages = new Map<number, Page>();
  #cached = 0;
  /** The store is at index version 2: its chunks' own R entries go with them (catalog-codec.ts). */
  #perChunkR = false;

  constructor(store: KvStore, maxCachedChunks = DEFAULT_INDEX_CACHE_CHUNKS) {
    this.#store = store;
    this.#maxCached = Math.max(0, maxCachedChunks);
    this.#upgrade();
  }

  /** Chunks held in the page cache now (never more than the bound). */
  get cachedChunks(): number {
    return this.#cached;
  }

  /** The stream's last stored chunk, or null: what `s.recent` starts from after a restart. */
  loadTail(streamId: number): Chunk | null {
    const row = this.#store.range(streamChunksStart(streamId), streamChunksEnd(streamId), 1, true)[0];
    return row === undefined ? null : decodeChunk(row[0], row[1]).chunk;
  }

  /**
   * A cursor from the chunk holding `seq` (or the first chunk after it) to the stream's last chunk.
   * `cache`: keep the pages it reads for the next read (a reader); off for one-off walks.
   */
  cursor(s: StreamState, seq: number, cache = true): ChunkCursor {
    const recent = s.recent;
    const recentStart = recent.length > 0 ? recent[0]!.baseSeq : Infinity;
    let page = EMPTY_PAGE;
    let i = 0;
    let inRecent = seq >= recentStart;
    if (inRecent) {
      i = findChunk(recent, seq);
    } else {
      page = this.#pageAt(s.id, seq, recentStart, cache);
      i = page.find(seq);
    }
    return {
      next: (): Chunk | null => {
        if (inRecent) return i < recent.length ? recent[i++]! : null;
        if (i < page.length) return page.chunk(i++);
        // Past the page: the next stored page, up to the recent chunks.
        page = page.length === 0 ? EMPTY_PAGE : this.#loadPage(s.id, chunkKey(s.id, page.baseSeq(page.length - 1) + 1), recentStart);
        i = 0;
        if (page.length > 0) {
          if (cache) this.#cache(s.id, page);
          return page.chunk(i++);
        }
        inRecent = true;
        return i < recent.length ? recent[i++]! : null;
      },
    };
  }

  /** The stream's first chunk, or null: one entry read at most (TTL expiry looks at it every sweep). */
  first(s: StreamState): Chunk | null {
    const recentStart = s.recent.length > 0 ? s.recent[0]!.baseSeq : Infinity;
    const end = recentStart === Infinity ? streamChunksEnd(s.id) : chunkKey(s.id, recentStart);
    const row = this.#store.range(streamChunksStart(s.id), end, 1)[0];
    return row === undefined ? (s.recent[0] ?? null) : decodeChunk(row[0], row[1]).chunk;
  }

  /**
   * Drop the stream's chunks from its first one on while `drop(chunk)` holds; their entries are
   * deleted at once (in pages), so a trim of a long stream never holds its whole index. Returns
   * the first chunk kept, or null when none is left. Dropped recent chunks leave `s.recent`.
   */
  dropWhile(s: StreamState, drop: (c: Chunk) => boolean): Chunk | null {
    this.#uncache(s.id);
    const ops: KvOp[] = [];
    const cur = this.cursor(s, 0, false);
    let kept: Chunk | null = null;
    const segments: number[] = [];
    for (let c = cur.next(); c !== null; c = cur.next()) {
      if (!drop(c)) {
        kept = c;
        break;
      }
      delChunk(ops, s.id, c, this.#perChunkR);
      if (segments[segments.length - 1] !== c.segId) segments.push(c.segId);
      if (ops.length >= DELETE_PAGE_OPS) this.#store.write(ops.splice(0), false);
    }
    // The stream's R entry of each segment it left: a stream's chunks lie in segments in seq order,
    // so only the first kept chunk can share a segment with dropped ones.
    for (const segId of segments) {
      if (kept !== null && kept.segId === segId) continue;
      ops.push({ type: 'del', key: segmentStreamKey(segId, s.id) });
      if (s.indexedSegId === segId) s.indexedSegId = -1;
    }
    this.#store.write(ops, false);
    const r = kept === null ? -1 : s.recent.indexOf(kept);
    // A kept stored chunk comes before every recent one: then no recent chunk was dropped.
    if (kept === null) s.recent = [];
    else if (r > 0) s.recent = s.recent.slice(r);
    this.#uncache(s.id);
    return kept;
  }

  /**
   * The head chunk was cut at the front (TTL expiry inside a chunk): its entries move to the new
   * base seq. A stored head is rewritten at once; a recent one (changed in place by the caller) is
   * written with the next checkpoint.
   */
  replaceHead(s: StreamState, before: Chunk, after: Chunk): void {
    const ops: KvOp[] = [];
    delChunk(ops, s.id, before, this.#perChunkR);
    // Same segment: the stream's R entry there stays (written again when stored here, to be sure).
    if (!s.recent.includes(after)) putChunk(ops, s.id, after);
    this.#store.write(ops, false);
    this.#uncache(s.id);
  }

  /**
   * Every segment some stored chunk names, in order: one seek per segment over the R entries, so a
   * start checks the index against the files on disk without loading the index.
   */
  referencedSegments(): number[] {
    const out: number[] = [];
    const end = prefixEnd(SEGMENT_CHUNK_PREFIX);
    for (let from: Buffer = SEGMENT_CHUNK_PREFIX; ; ) {
      const [first] = this.#store.range(from, end, 1);
      if (first === undefined) return out;
      const segId = first[0].readUInt32BE(1);
      out.push(segId);
      from = prefixEnd(segmentPrefix(segId));
    }
  }

  /** Whether any chunk entry names segment `segId` (checkpoint first: the store must be current). */
  segmentInUse(segId: number): boolean {
    const p = segmentPrefix(segId);
    return this.#store.range(p, prefixEnd(p), 1).length > 0;
  }

  /** Forget a stream's cached page (its chunks are gone or changed). */
  #uncache(streamId: number): void {
    const p = this.#pages.get(streamId);
    if (p === undefined) return;
    this.#pages.delete(streamId);
    this.#cached -= p.length;
  }

  /** Stored chunks from the one holding `seq`: the cached page when it holds `seq`, else a page read. */
  #pageAt(streamId: number, seq: number, recentStart: number, cache: boolean): Page {
    const cached = this.#pages.get(streamId);
    if (cached !== undefined && cached.length > 0 && cached.baseSeq(0) <= seq && seq <= cached.lastSeq(cached.length - 1)) {
      // Touch: move to the young end of the LRU order.
      this.#pages.delete(streamId);
      this.#pages.set(streamId, cached);
      return cached;
    }
    // The chunk holding seq is the last one starting at or below it.
    const start = Math.min(seq, recentStart);
    const atOrBelow = this.#store.range(streamChunksStart(streamId), chunkKey(streamId, start + 1), 1, true)[0];
    const from = atOrBelow === undefined ? streamChunksStart(streamId) : atOrBelow[0];
    const page = this.#loadPage(streamId, from, recentStart);
    if (cache && page.length > 0) this.#cache(streamId, page);
    return page;
  }

  /** Up to a page of stored chunks from key `from`, stopping below `recentStart`. */
  #loadPage(streamId: number, from: Buffer, recentStart: number): Page {
    const end = recentStart === Infinity ? streamChunksEnd(streamId) : chunkKey(streamId, recentStart);
    return Page.of(this.#store.range(from, end, PAGE_CHUNKS));
  }

  #cache(streamId: number, page: Page): void {
    this.#uncache(streamId);
    if (page.length > this.#maxCached) return;
    for (const [id, p] of this.#pages) {
      if (this.#cached + page.length <= this.#maxCached) break;
      this.#pages.delete(id);
      this.#cached -= p.length;
    }
    this.#pages.set(streamId, page);
    this.#cached += page.length;
  }

  /**
   * Stores written before the R entries get them once, a page at a time (one per stream and
   * segment). A store at version 2 keeps its per-chunk R entries, and deletes them with their chunks.
   */
  #upgrade(): void {
    const v = this.#store.range(INDEX_VERSION_KEY, prefixEnd(INDEX_VERSION_KEY), 1)[0];
    const version = v !== undefined && v[1].length > 0 ? v[1][0]! : 0;
    this.#perChunkR = version === PER_CHUNK_R_VERSION;
    if (version >= PER_CHUNK_R_VERSION) return;
    let from = CHUNK_PREFIX;
    const end = prefixEnd(CHUNK_PREFIX);
    // K entries come in (stream, seq) order, and a stream's chunks in segment order: one R entry per run.
    let last = '';
    for (;;) {
      const rows = this.#store.range(from, end, DELETE_PAGE_OPS);
      if (rows.length === 0) break;
      const ops: KvOp[] = [];
      for (const [k, val] of rows) {
        const { streamId, chunk } = decodeChunk(k, val);
        const run = `${streamId}/${chunk.segId}`;
        putChunk(ops, streamId, chunk, run === last);
        last = run;
      }
      this.#store.write(ops, false);
      from = Buffer.concat([rows[rows.length - 1]![0], Buffer.from([0])]);
    }
    this.#store.write([{ type: 'put', key: INDEX_VERSION_KEY, value: Buffer.from([INDEX_VERSION]) }], true);
  }
}
