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
 * trims and deletes are never asked for again and leave with the least recently used.
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

import { type ReadCacheStats } from '../types';

/**
 * Memory an entry takes beyond its bytes: its key, map slot and objects on the V8 heap (about
 * 500 B), the ArrayBuffer's backing store and malloc's block header, and the views on it. Measured
 * (100,000 entries in a worker thread, RSS growth minus the bytes held): about 780 B per entry.
 * Counted, so the budget bounds what the cache costs and not only its bytes: with chunks of a
 * few KiB (appends interleaved over many streams), a figure of 160 B let the cache take about
 * 1.4× its budget.
 */
export const ENTRY_OVERHEAD = 800;

/** An entry as held: the chunk, the stream it belongs to, its size. */
interface Held {
  chunk: CachedChunk;
  stream: string;
  size: number;
}

/**
 * Least recently used entries are evicted. One stream holds at most half the budget: a read of a
 * stream larger than the cache (a replay from the start) would otherwise render every chunk and
 * evict it again before the next pass needs it, costing more than walking the frames; capped,
 * its first chunks stay and are served, and the rest is walked as without a cache.
 */
export class ReadCache {
  readonly #budget: number;
  /** Least recently used first (a Map keeps insertion order; a hit moves its entry to the end). */
  readonly #entries = new Map<string, Held>();
  /** Bytes held per stream (`shardId/streamId`). */
  readonly #streams = new Map<string, number>();
  #bytes = 0;
  #hits = 0;
  #fills = 0;

  /** `budgetBytes` 0 turns the cache off: nothing is kept. */
  constructor(budgetBytes: number) {
    this.#budget = budgetBytes;
  }

  get enabled(): boolean {
    return this.#budget > 0;
  }

  get stats(): ReadCacheStats {
    return { hits: this.#hits, fills: this.#fills, bytes: this.#bytes };
  }

  /** The chunk at `segId`/`pos` of shard `shardId` as rendered for `kind` at length `len`, if held. */
  get<K extends CachedChunk['kind']>(shardId: number, segId: number, pos: number, len: number, kind: K): Extract<CachedChunk, { kind: K }> | undefined {
    const key = keyOf(shardId, segId, pos, kind);
    const h = this.#entries.get(key);
    if (h === undefined || h.chunk.len !== len || h.chunk.kind !== kind) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, h);
    this.#hits++;
    return h.chunk as Extract<CachedChunk, { kind: K }>;
  }

  /**
   * Whether a chunk of `len` bytes of stream `streamId` would be kept (asked before rendering it:
   * a render the cache would refuse is work for nothing). A chunk over a quarter of the budget is
   * not kept, nor one that would take its stream past half of it.
   */
  admits(shardId: number, streamId: number, len: number): boolean {
    // The chunk's length on disk stands for its rendered bytes (never more); the overhead is added as put counts it.
    const size = len + ENTRY_OVERHEAD;
    return size <= this.#budget / 4 && (this.#streams.get(`${shardId}/${streamId}`) ?? 0) + size <= this.#budget / 2;
  }

  /** Keep a rendered chunk of stream `streamId`, evicting the least recently used beyond the budget. */
  put(shardId: number, streamId: number, segId: number, pos: number, e: CachedChunk): void {
    const size = sizeOf(e);
    const stream = `${shardId}/${streamId}`;
    if (size > this.#budget / 4) return;
    const key = keyOf(shardId, segId, pos, e.kind);
    const old = this.#entries.get(key);
    if (old !== undefined) this.#drop(key, old);
    this.#entries.set(key, { chunk: e, stream, size });
    this.#bytes += size;
    this.#streams.set(stream, (this.#streams.get(stream) ?? 0) + size);
    this.#fills++;
    for (const [k, h] of this.#entries) {
      if (this.#bytes <= this.#budget) break;
      this.#drop(k, h);
    }
  }

  #drop(key: string, h: Held): void {
    this.#entries.delete(key);
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
