/**
 * The read cache of a shard worker: record values of whole chunks, already checked, kept in
 * memory for the `raw` read format (docs/storage.md, "Read cache").
 *
 * A catch-up read walks every frame it serves: the CRC-32C of each, then each record's varints,
 * then a move of its value. For small records that walk, not the disk or the socket, is the cost
 * (~200 ns a 100-byte record against ~20 ns to send its bytes). A chunk read from its first
 * record is rendered whole once — values back to back and where each one ends — and later reads
 * of any part of it (other readers of the same range, a reader's next pages) copy a slice.
 *
 * What is cached was checked when it was read from disk (frame CRCs, stream ids), like a
 * RocksDB block cache holds blocks checked when loaded: damage that reaches the disk later is
 * not served from here either, as the cached bytes are the ones that were verified; `svc check`
 * finds it, and the next read after the entry is evicted reports it.
 *
 * Entries never go stale: the bytes of a chunk in a segment never change while the node runs
 * (segments are append-only; `svc repair` runs on a stopped node), a chunk that grows (the
 * stream's newest one, extended in place by the next group) is a different length and is
 * rendered again, and segment ids are not reused within a run. Entries of segments deleted by
 * trims and deletes are never asked for again and leave with their slab.
 */

/** One chunk's records as the `raw` format serves them. */
export interface CachedValues {
  readonly kind: 'raw';
  /** The chunk's length in its segment when rendered. */
  readonly len: number;
  /** Seq of the first record; record `baseSeq + i` is the i-th (only gap-free chunks are cached). */
  readonly baseSeq: number;
  /** Record values, back to back, in seq order (a null value is empty). */
  readonly values: Buffer;
  /** `ends[i]`: where record `baseSeq + i`'s value ends in `values`. */
  readonly ends: Uint32Array;
}

/** One chunk's batches as the `binary` format serves them: as stored, back to back. */
export interface CachedBatches {
  readonly kind: 'binary';
  readonly len: number;
  readonly baseSeq: number;
  readonly batches: Buffer;
  /** Batch i is `batches[starts[i], starts[i + 1])` (one entry more than batches). */
  readonly starts: Uint32Array;
  /** Batch i holds seqs `baseSeq + firsts[i]` to `baseSeq + firsts[i + 1] - 1`. */
  readonly firsts: Uint32Array;
}

export type CachedChunk = CachedValues | CachedBatches;

import { isSharedArrayBuffer } from 'node:util/types';
import { type ReadCacheStats } from '../types';

/**
 * Memory an entry takes beyond its bytes: its key, map slot and objects on the V8 heap (the entry,
 * its chunk's object, the views on its slab: about 500 B). Counted, so the budget bounds what the
 * cache costs and not only its bytes: with chunks of a few hundred bytes (appends interleaved
 * over many streams) a figure of 160 B let the cache take about 1.4× its budget.
 */
export const ENTRY_OVERHEAD = 800;

/**
 * Largest slab: a chunk is at most about 1 MiB, so a slab holds a few of the largest. A cache has
 * at least four slabs (an entry is at most a quarter of the budget, so it fits one).
 */
const SLAB_MAX = 4 * 1024 * 1024; // 4 MiB

/** Ids of lent pages (`lend`) start here; the page pool's slab ids stay below it. */
export const LENT_BASE = 0x80000000;
const LENT_IDS = 0x7fffffff;
/** A lent page not handed back within this long has its slabs let go (`trim`). */
const LENT_MS = 60_000; // 1 min

/**
 * A piece of the cache's memory: entries are rendered into it back to back and leave it together,
 * oldest slab first, and the emptied slab takes new entries. Its memory is allocated once and
 * reused in place for the life of the cache.
 */
interface Slab {
  buf: Buffer;
  used: number;
  /**
   * What its entries are charged (their bytes and overheads): a slab whose charge reaches its size
   * takes no more, so that small entries, charged more than their bytes, still leave in slabs
   * before the budget is passed (the pages of a slab never written to are never resident).
   */
  charged: number;
  held: Held[];
  /** The read (ReadCache.endRead) that last took an entry of it: not emptied before that read ends. */
  pinned: number;
  /** Pages lent out of it (`lend`) not yet handed back: not emptied while any is out. */
  out: number;
  /** Let go while a page was out too long (`trim`): never rendered into again, never counted again. */
  dropped: boolean;
}

/** An entry as held: the chunk, its key, the stream it belongs to, its size, the slab its bytes are in. */
interface Held {
  chunk: CachedChunk;
  key: string;
  stream: string;
  size: number;
  slab: Slab;
}

/**
 * Entries live in slabs of the cache's own memory, evicted a slab at a time, oldest first (first
 * in, first out). One entry an allocation of its own, evicted least recently used first, cost
 * about three times its budget in resident memory under a steady turnover of entries (a 64 MiB
 * cache of 1 KiB chunks, each replaced within seconds: 190 MiB): every evicted entry's buffer
 * stayed allocated until V8 collected it (it counts them as external memory and collects only
 * every few tens of MiB), and the live ones left holes of every size in the worker's malloc heap
 * that it could not give back. Slabs are allocated once and reused, so what the cache takes is its
 * slabs and its entries' objects, whatever the turnover, and evictions leave the collector nothing.
 *
 * A view of an entry a read takes must not be overwritten while the read runs. A `raw` read copies
 * each entry's values into its page as it takes them; a `binary` page gathers views and copies
 * them at its end, so a slab a binary read took an entry from (get, put) is not emptied until
 * that read ends (`endRead`, gather's last step; reads run one at a time on a worker's thread),
 * and an entry that would need such a slab is not kept.
 *
 * A large `raw` or `binary` page whose every record is held here is not copied at all (`ReadParams.parts`):
 * the reply carries views of the slabs (shared memory, as the page pool's pages) and the gateway
 * thread writes them to the socket; the slabs they are in are lent (`lend`) and not emptied until
 * the page is handed back (`giveBack`, RETURNED_PAGE), or let go for good when it is not back
 * within a minute (`trim`: a new slab takes a let-go one's place, and its memory goes when both
 * threads have dropped it).
 *
 * One stream holds at most half the budget: a read of a stream larger than the cache (a replay
 * from the start) would otherwise render every chunk and evict it again before the next pass
 * needs it, costing more than walking the frames; capped, its first chunks stay and are served,
 * and the rest is walked as without a cache.
 */
export class ReadCache {
  readonly #budget: number;
  readonly #slabBytes: number;
  /** Slabs allocated at most: the budget's worth, and one. */
  readonly #maxSlabs: number;
  readonly #entries = new Map<string, Held>();
  /** Bytes held per stream (`shardId/streamId`). */
  readonly #streams = new Map<string, number>();
  /** Slabs holding entries, oldest first; the last one takes the next entries. */
  readonly #slabs: Slab[] = [];
  /** Emptied slabs, for the next entries. */
  readonly #spare: Slab[] = [];
  #allocated = 0;
  /** The read in progress (endRead() moves it on). */
  #read = 1;
  #bytes = 0;
  #hits = 0;
  #fills = 0;
  /** Each slab by its memory (`lend` finds a part's slab). */
  readonly #slabOf = new WeakMap<ArrayBufferLike, Slab>();
  /** Pages lent by id, oldest first: the slabs each holds and when it went. */
  readonly #lent = new Map<number, { slabs: Slab[]; at: number }>();
  #nextLent = 0;
  #lentTotal = 0;
  #returned = 0;

  /** `budgetBytes` 0 turns the cache off: nothing is kept. */
  constructor(budgetBytes: number) {
    this.#budget = budgetBytes;
    this.#slabBytes = Math.min(SLAB_MAX, Math.floor(budgetBytes / 4));
    this.#maxSlabs = budgetBytes > 0 ? Math.ceil(budgetBytes / this.#slabBytes) + 1 : 0;
  }

  get enabled(): boolean {
    return this.#budget > 0;
  }

  get stats(): ReadCacheStats {
    return { hits: this.#hits, fills: this.#fills, bytes: this.#bytes, lent: this.#lentTotal, returned: this.#returned };
  }

  /**
   * The slabs' memory (tests): `allocated`, and `written` into (the pages a slab's entries never
   * reached are not resident: small entries fill a slab's charge before its bytes).
   */
  get slabs(): { allocated: number; written: number } {
    let written = 0;
    for (const s of this.#slabs) written += s.used;
    return { allocated: this.#allocated * this.#slabBytes, written };
  }

  /** The chunk at `segId`/`pos` of shard `shardId` as rendered for `kind` at length `len`, if held. */
  get<K extends CachedChunk['kind']>(shardId: number, segId: number, pos: number, len: number, kind: K, keepViews = false): Extract<CachedChunk, { kind: K }> | undefined {
    const h = this.#entries.get(keyOf(shardId, segId, pos, kind));
    if (h === undefined || h.chunk.len !== len || h.chunk.kind !== kind) return undefined;
    // A binary page gathers views of its entries and copies them at its end, as does a raw one
    // that may become a page of parts (`keepViews`); any other raw one copies each at once.
    if (kind === 'binary' || keepViews) h.slab.pinned = this.#read;
    this.#hits++;
    return h.chunk as Extract<CachedChunk, { kind: K }>;
  }

  /**
   * Whether a chunk of `len` bytes of stream `streamId` would be kept (asked before rendering it:
   * a render the cache would refuse is work for nothing). A chunk over a quarter of the budget (or
   * a slab) is not kept, nor one that would take its stream past half of it.
   */
  admits(shardId: number, streamId: number, len: number): boolean {
    // The chunk's length on disk stands for its rendered bytes (never more); the overhead is added as put counts it.
    const size = len + ENTRY_OVERHEAD;
    return size <= this.#budget / 4 && len <= this.#slabBytes && (this.#streams.get(`${shardId}/${streamId}`) ?? 0) + size <= this.#budget / 2;
  }

  /**
   * Memory for an entry being rendered (chunk-render.ts): `n` bytes in the newest slab, or in the
   * next one (an emptied one, a new one while fewer than the budget's are allocated, or else the
   * oldest, emptied now); null when there is none to take (the oldest is in use by this read, or
   * `n` is over a slab): the chunk is then not kept. Valid until the entry is put.
   */
  readonly alloc = (n: number): Buffer | null => {
    if (n > this.#slabBytes || this.#budget === 0) return null;
    // Uint32Array views (an entry's offsets) need 4-byte alignment.
    const size = (n + 7) & ~7;
    let head = this.#slabs[this.#slabs.length - 1];
    if (head === undefined || head.used + size > this.#slabBytes || head.charged >= this.#slabBytes) {
      const next = this.#spare.pop() ?? this.#fresh() ?? this.#reuseOldest();
      if (next === null) return null;
      this.#slabs.push(next);
      head = next;
    }
    const b = head.buf.subarray(head.used, head.used + n);
    head.used += size;
    return b;
  };

  /**
   * Lend the slabs `parts` are views of to a page sent as they are (a raw page of parts, whose
   * read took them with `keepViews`, or a binary one): none of them is emptied until `giveBack(id)`
   * (parts in ordinary memory are not this cache's: the reply carries them inline). Returns the
   * page's id (at least LENT_BASE, so the worker tells it from a page pool slab's), or null when a
   * part is not in a slab of this cache (the page is then copied).
   */
  lend(parts: readonly Buffer[]): number | null {
    const slabs: Slab[] = [];
    for (const p of parts) {
      // A part in memory of its own (a batch a range cut, re-encoded) goes inline in the reply (Writer.parts).
      if (!isSharedArrayBuffer(p.buffer)) continue;
      const slab = this.#slabOf.get(p.buffer);
      if (slab === undefined || slab.dropped) return null;
      if (!slabs.includes(slab)) slabs.push(slab);
    }
    for (const slab of slabs) slab.out++;
    const id = LENT_BASE + (this.#nextLent++ % LENT_IDS);
    this.#lent.set(id, { slabs, at: Date.now() });
    this.#lentTotal++;
    return id;
  }

  /** The gateway thread is done with lent page `id`: its slabs may be emptied again. Unknown ids are ignored. */
  giveBack(id: number): void {
    const l = this.#lent.get(id);
    if (l === undefined) return;
    this.#lent.delete(id);
    this.#returned++;
    for (const slab of l.slabs) if (!slab.dropped) slab.out--;
  }

  /** Pages lent out and not handed back (tests). */
  get lentPages(): number {
    return this.#lent.size;
  }

  /**
   * Let go of the slabs of pages lent longer than `maxMs` ago (the worker's minute timer): a page
   * never handed back (a worker's reply whose gateway thread ended, a client of an engine that
   * cannot tell when it is done) would otherwise keep its slabs out of the cache for good. A let-go
   * slab is never rendered into again: its entries leave, a new slab may take its place, and its
   * memory goes once neither thread refers to it.
   */
  trim(maxMs = LENT_MS): void {
    const old = Date.now() - maxMs;
    for (const [id, l] of this.#lent) {
      if (l.at > old) break;
      this.#lent.delete(id);
      for (const slab of l.slabs) if (!slab.dropped) this.#dropSlab(slab);
    }
  }

  #dropSlab(slab: Slab): void {
    slab.dropped = true;
    const i = this.#slabs.indexOf(slab);
    if (i >= 0) this.#slabs.splice(i, 1);
    this.#empty(slab);
    this.#slabOf.delete(slab.buf.buffer);
    this.#allocated--;
  }

  /** The read in progress is done: the views it took are copied, its slabs may be emptied. */
  endRead(): void {
    this.#read++;
  }

  /**
   * Keep a rendered chunk of stream `streamId` (rendered into this cache's memory: `alloc`),
   * evicting the oldest slabs beyond the budget.
   */
  put(shardId: number, streamId: number, segId: number, pos: number, e: CachedChunk, keepViews = false): void {
    const size = sizeOf(e);
    const slab = this.#slabs[this.#slabs.length - 1];
    // Only an entry rendered into the newest slab (alloc, just before) is the cache's to keep.
    if (size > this.#budget / 4 || slab === undefined || (e.kind === 'raw' ? e.values : e.batches).buffer !== slab.buf.buffer) return;
    const stream = `${shardId}/${streamId}`;
    const key = keyOf(shardId, segId, pos, e.kind);
    const old = this.#entries.get(key);
    if (old !== undefined) this.#drop(old);
    const h: Held = { chunk: e, key, stream, size, slab };
    slab.held.push(h);
    slab.charged += size;
    if (e.kind === 'binary' || keepViews) slab.pinned = this.#read;
    this.#entries.set(key, h);
    this.#bytes += size;
    this.#streams.set(stream, (this.#streams.get(stream) ?? 0) + size);
    this.#fills++;
    // Over the budget (entries' overheads count: small chunks reach it before the slabs do).
    while (this.#bytes > this.#budget && this.#slabs.length > 1 && this.#free(this.#slabs[0]!)) this.#spare.push(this.#empty(this.#slabs.shift()!));
  }

  /** Whether `slab` may be emptied: no view of it is taken by the read in progress or lent out. */
  #free(slab: Slab): boolean {
    return slab.pinned !== this.#read && slab.out === 0;
  }

  /**
   * A new slab, while fewer than the budget's are allocated; else null. Shared memory (unlike the
   * page pool's, never transferred or handed over whole): a page of parts goes to the gateway
   * thread as views of it.
   */
  #fresh(): Slab | null {
    if (this.#allocated >= this.#maxSlabs) return null;
    this.#allocated++;
    const slab: Slab = { buf: Buffer.from(new SharedArrayBuffer(this.#slabBytes)), used: 0, charged: 0, held: [], pinned: 0, out: 0, dropped: false };
    this.#slabOf.set(slab.buf.buffer, slab);
    return slab;
  }

  /** The oldest slab, emptied, unless this read took an entry of it or a page of it is lent (or it is the only one). */
  #reuseOldest(): Slab | null {
    const oldest = this.#slabs[0];
    if (oldest === undefined || this.#slabs.length === 1 || !this.#free(oldest)) return null;
    this.#slabs.shift();
    return this.#empty(oldest);
  }

  #empty(slab: Slab): Slab {
    for (const h of slab.held) if (this.#entries.get(h.key) === h) this.#drop(h);
    slab.held = [];
    slab.used = 0;
    slab.charged = 0;
    return slab;
  }

  #drop(h: Held): void {
    this.#entries.delete(h.key);
    this.#bytes -= h.size;
    const left = (this.#streams.get(h.stream) ?? 0) - h.size;
    if (left > 0) this.#streams.set(h.stream, left);
    else this.#streams.delete(h.stream);
  }
}

function keyOf(shardId: number, segId: number, pos: number, kind: CachedChunk['kind']): string {
  return `${shardId}/${segId}/${pos}/${kind}`;
}

/** Bytes an entry costs: its arrays and bytes (one buffer, as chunk-render.ts allocates them) and the overhead. */
function sizeOf(e: CachedChunk): number {
  return e.kind === 'raw' ? e.values.length + e.ends.byteLength + ENTRY_OVERHEAD : e.batches.length + e.starts.byteLength + e.firsts.byteLength + ENTRY_OVERHEAD;
}

/** What a read takes from a cached chunk: records [next, next + n) and their values. */
export interface CachedTake {
  n: number;
  bytes: number;
  /** Seq after the last record taken (`from` when none). */
  next: number;
  /** The read stops inside this chunk (count, byte budget or `end` reached). */
  full: boolean;
  /** The values taken: a view of the cached buffer, to be copied before it leaves the worker. */
  part: Buffer;
}

/**
 * Records of `e` from seq `from` up to `end` (exclusive), at most `maxRecords`, whose values fit
 * in `room` bytes (an empty value fits while `room` is not negative); with `takeFirst` the first is taken
 * whatever its size (as in `compactValues`).
 */
export function takeCached(e: CachedValues, from: number, end: number, maxRecords: number, room: number, takeFirst = false): CachedTake {
  const count = e.ends.length;
  const first = Math.max(0, from - e.baseSeq);
  let stop = Math.min(count, end - e.baseSeq, first + maxRecords);
  if (stop <= first) return { n: 0, bytes: 0, next: from, full: true, part: e.values.subarray(0, 0) };
  const start = first === 0 ? 0 : e.ends[first - 1]!;
  if (e.ends[stop - 1]! - start > room) {
    // The largest stop whose values fit: ends only grow, so a binary search.
    let lo = first;
    let hi = stop - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (e.ends[mid - 1]! - start <= room) lo = mid;
      else hi = mid - 1;
    }
    stop = takeFirst ? Math.max(lo, first + 1) : lo;
  }
  const n = stop - first;
  const last = n === 0 ? start : e.ends[stop - 1]!;
  return { n, bytes: last - start, next: n === 0 ? from : e.baseSeq + stop, full: stop < count, part: e.values.subarray(start, last) };
}

/** What a read takes from cached batches: records [from, next), as whole batches where it can. */
export interface BatchesTake {
  n: number;
  bytes: number;
  next: number;
  full: boolean;
  /** Views of the cached batches (a run of whole batches is one view) and re-encoded cut batches. */
  parts: Buffer[];
}

/**
 * Records of `e` from seq `from` up to `end` (exclusive), at most `maxRecords`, as the walk
 * serves them in the `binary` format: whole batches as stored, a batch cut by the range
 * re-encoded (`slice`); a batch that would pass `room` bytes ends the take, except the first
 * with `takeFirst`.
 */
export function takeBatches(e: CachedBatches, from: number, end: number, maxRecords: number, room: number, takeFirst: boolean, slice: (batch: Buffer, from: number, to: number) => Buffer): BatchesTake {
  const nb = e.starts.length - 1;
  // The batch holding `from`: the last whose first seq is at most it.
  let lo = 0;
  let hi = nb - 1;
  const rel = from - e.baseSeq;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (e.firsts[mid]! <= rel) lo = mid;
    else hi = mid - 1;
  }
  const parts: Buffer[] = [];
  let n = 0;
  let bytes = 0;
  let next = Math.max(from, e.baseSeq);
  /** The run of whole batches not pushed yet: [runStart, runEnd) of `e.batches`. */
  let runStart = 0;
  let runEnd = 0;
  const flush = (): void => {
    if (runEnd > runStart) parts.push(e.batches.subarray(runStart, runEnd));
    runStart = runEnd = 0;
  };
  let full = false;
  for (let i = lo; i < nb; i++) {
    const first = e.baseSeq + e.firsts[i]!;
    const after = e.baseSeq + e.firsts[i + 1]!;
    if (first >= end || n >= maxRecords) {
      full = true;
      break;
    }
    const stop = Math.min(after, next + (maxRecords - n), end);
    const whole = next === first && stop === after;
    const size = whole ? e.starts[i + 1]! - e.starts[i]! : 0;
    const b = whole ? null : slice(e.batches.subarray(e.starts[i]!, e.starts[i + 1]!), next, stop);
    const len = b === null ? size : b.length;
    if (bytes + len > room && !(takeFirst && n === 0)) {
      full = true;
      break;
    }
    if (b === null) {
      if (runEnd !== e.starts[i]!) {
        flush();
        runStart = e.starts[i]!;
      }
      runEnd = e.starts[i + 1]!;
    } else {
      flush();
      parts.push(b);
    }
    n += stop - next;
    bytes += len;
    next = stop;
    if (stop < after) {
      full = true;
      break;
    }
  }
  flush();
  return { n, bytes, next, full, parts };
}
