/**
 * Reads that follow forks. A fork's own records start at its fork point; below it, its records
 * are its source's (and, recursively, its source's source's). Every stream of a chain numbers its
 * records in one seq space, so a position means the same thing on the fork and on its sources.
 *
 *   fork F (from S at 3):   S[0] S[1] S[2] │ F[3] F[4] …
 *   GET F at seq 1       →  read S [1,3) ──┴─▶ then F [3, …)
 */
import { type ReadParams, type ReadResult, type ShardClient } from '../../shards';

export type DsFormat = 'raw' | 'json-array';

/** A page of a stream as its readers see it, fork sources included. */
export type DsPage = Omit<ReadResult, 'fork'>;

/** Records per page: bounded by bytes in practice. */
const PAGE_COUNT = 100_000;

/**
 * A page of `name` from `seq`. `read` reads the stream itself: live readers pass a shared read
 * (LiveWaiters.page), so readers woken at one position cost one read; fork sources are read directly.
 * Without `read`, the page is the caller's alone and pooled: hand its body back with
 * `ShardClient.recycle` once sent (docs/storage.md, "Read page buffers").
 */
export async function readPage(
  shards: ShardClient,
  name: string,
  seq: number,
  format: DsFormat,
  bytes: number,
  read?: (p: ReadParams) => Promise<ReadResult>,
  parts = false,
): Promise<DsPage> {
  // `pooled` set in the literal, not `{ ...p, pooled: true }` (a hidden class per object: program/http/engine.ts, requestOf).
  const pooled = read === undefined;
  // `parts` (a catch-up read's, sent as it is): a large raw page may come as views of the worker's read cache (ReadResult.parts).
  const p: ReadParams = { name, seq, count: PAGE_COUNT, bytes, format, pooled, parts: pooled && parts && format === 'raw' };
  const r = await (read === undefined ? shards.read(p) : read(p));
  if (r.fork === null || seq < 0 || seq >= r.fork.seq) return r;
  // Below the fork point: the source's records first (r holds the fork's own, from its fork point).
  let src: Range;
  try {
    src = await readRange(shards, r.fork.source, seq, r.fork.seq, format, bytes);
  } catch (err) {
    shards.recycle(r.parts ?? r.body);
    throw err;
  }
  // The fork's own page is replaced by the source's, or copied into the joined one: nothing reads
  // it after this (recycle is a no-op unless it was pooled).
  const own = r.parts === undefined ? [r.body] : r.parts;
  const page: DsPage =
    src.next < r.fork.seq
      ? { ...r, body: src.body, count: src.count, nextSeq: src.next, upToDate: false, closed: false }
      : { ...r, body: join(format, [src.body, ...own]), count: src.count + r.count };
  delete page.parts;
  shards.recycle(r.parts ?? r.body);
  return page;
}

interface Range {
  body: Buffer;
  count: number;
  /** Where the next read continues. */
  next: number;
}

/** Records [from, end) of a fork source (which may be deleted but kept, or itself a fork). */
async function readRange(shards: ShardClient, name: string, from: number, end: number, format: DsFormat, bytes: number): Promise<Range> {
  const r = await shards.read({ name, seq: from, count: end - from, bytes, format, internal: true, touch: false });
  if (r.fork === null || from >= r.fork.seq) return { body: r.body, count: r.count, next: r.nextSeq };
  const src = await readRange(shards, r.fork.source, from, r.fork.seq, format, bytes);
  if (src.next < r.fork.seq || end <= r.fork.seq) return src;
  const own = await shards.read({ name, seq: r.fork.seq, count: end - r.fork.seq, bytes, format, internal: true, touch: false });
  return { body: join(format, [src.body, own.body]), count: src.count + own.count, next: own.nextSeq };
}

/** Concatenate pages; JSON pages are arrays, merged into one. */
export function join(format: DsFormat, parts: Buffer[]): Buffer {
  if (format === 'raw') return Buffer.concat(parts);
  const inner = parts.map((p) => p.subarray(1, p.length - 1)).filter((p) => p.length > 0);
  const out: Buffer[] = [Buffer.from('[')];
  inner.forEach((p, i) => {
    if (i > 0) out.push(Buffer.from(','));
    out.push(p);
  });
  out.push(Buffer.from(']'));
  return Buffer.concat(out);
}
