/**
 * GET on a Durable Streams stream (PROTOCOL.md "Read"): catch-up, long-poll; SSE is in ds-sse.ts.
 *
 * - Catch-up: 200 with the messages from `offset` (the whole rest of the stream up to the page
 *   budget), `Stream-Next-Offset`, an ETag, `Stream-Up-To-Date` only when the page reaches the
 *   tail and `Stream-Closed` only when the stream is closed and read to its end. At the tail: an
 *   empty body (`[]` for JSON). `offset=now`: the tail, never cached.
 * - Long-poll: as catch-up when there is something to answer; otherwise wait for the tail to move
 *   (the same LiveWaiters as the Svc listener's long-polls), then answer, or 204 on the timeout.
 */
import { SvcError } from '../../errors';
import { mediaType } from '../../shards';
import { type HttpRequest, type HttpResponse } from '../http/engine';
import { type Reply, parseQuery, recycling, waitAtTail } from '../kit';
import { type DsContext } from './context';
import { nextCursor } from './cursor';
import { H } from './ds-headers';
import { readDsSse } from './ds-sse';
import { type DsFormat, type DsPage, readPage } from './fork-reads';
import { formatOffset, parseOffset } from './offsets';

export interface ReadRequest {
  /** -1: the tail (`offset=now`). */
  seq: number;
  offsetNow: boolean;
  live: 'long-poll' | 'sse' | null;
  cursor: string | undefined;
}

export function parseReadRequest(req: HttpRequest): ReadRequest {
  const q = parseQuery(req.query);
  const offset = q.get('offset');
  if (offset === '') throw new SvcError('invalid_parameter', 'offset is empty');
  const live = q.get('live');
  if (live !== undefined && live !== 'long-poll' && live !== 'sse') throw new SvcError('invalid_parameter', `live must be long-poll or sse, not ${live}`);
  if (live !== undefined && offset === undefined) throw new SvcError('invalid_parameter', `live=${live} needs an offset`);
  return { seq: parseOffset(offset), offsetNow: offset === 'now', live: live ?? null, cursor: q.get('cursor') };
}

/** Read format by stream name (bounded: cleared when full, it only saves a hop). */
const FORMATS = new Map<string, { format: DsFormat; sliding: boolean }>();
const FORMATS_MAX = 100_000;

/** `sliding`: the stream has a sliding TTL (or that is not known), so every read must reach the shard to renew it. */
function remember(name: string, contentType: string, sliding: boolean): DsFormat {
  if (FORMATS.size >= FORMATS_MAX) FORMATS.clear();
  const format = formatOf(contentType);
  FORMATS.set(name, { format, sliding });
  return format;
}

async function lookUp(ctx: DsContext, name: string): Promise<DsFormat> {
  const info = await ctx.shards.head(name);
  return remember(name, info.contentType, info.idleTtlSeconds !== null);
}

export function formatOf(contentType: string): DsFormat {
  return mediaType(contentType) === 'application/json' ? 'json-array' : 'raw';
}

export async function readDsStream(ctx: DsContext, name: string, req: HttpRequest, res: HttpResponse): Promise<Reply | null> {
  const rr = parseReadRequest(req);
  // The format depends on the stream's content type, which never changes while the stream lives:
  // remembered per name, so a read is one hop; a stale guess (the name was recreated) is read again.
  // SSE is long-lived: one HEAD more is nothing, and its format is then certain.
  if (rr.live === 'sse') return readDsSse(ctx, name, await lookUp(ctx, name), rr, req, res);
  const known = FORMATS.get(name);
  let format = known?.format ?? (await lookUp(ctx, name));
  if (rr.live === 'long-poll' && known !== undefined && !known.sliding) {
    // A poller back at the known tail (the usual re-poll) waits at once, without a read.
    const tail = ctx.live.tailOf(name);
    if (tail !== null && !tail.deleted && !tail.closed && rr.seq === tail.nextSeq) return waitAndAnswer(ctx, name, format, tail, rr, res);
  }
  // A catch-up page is sent as it is: a large raw one may come as parts (views of the worker's read cache).
  const parts = rr.live === null;
  let first = await readPage(ctx.shards, name, rr.seq, format, ctx.readBytes, undefined, parts);
  if (formatOf(first.contentType) !== format) {
    ctx.shards.recycle(first.parts ?? first.body);
    format = remember(name, first.contentType, true);
    first = await readPage(ctx.shards, name, rr.seq, format, ctx.readBytes, undefined, parts);
  }
  // `first` was read for this request alone (live waits below share theirs): its page's buffer
  // goes back to the shard worker once sent (docs/storage.md, "Read page buffers").
  if (rr.live === null) return recycling(catchUp(first, rr, req), ctx.shards, first.parts ?? first.body);
  if (first.count > 0) return recycling(liveAnswer(first, rr), ctx.shards, first.body);
  if (first.closed) return closedAtTail(first);
  return waitAndAnswer(ctx, name, format, first, rr, res);
}

function catchUp(p: DsPage, rr: ReadRequest, req: HttpRequest): Reply {
  const headers = pageHeaders(p);
  if (rr.offsetNow) {
    headers.push(['cache-control', 'no-store']);
    return { status: 200, headers, body: p.parts ?? p.body };
  }
  // The answer depends on where the read started and what it reached; it changes when the stream closes.
  const etag = `"${p.streamId.toString(36)}.${rr.seq.toString(36)}.${p.nextSeq.toString(36)}${p.closed ? '.c' : ''}"`;
  headers.push(['etag', etag], ['cache-control', p.upToDate ? 'no-cache' : 'public, max-age=60, stale-while-revalidate=300']);
  if (req.headers['if-none-match'] === etag) return { status: 304, headers };
  return { status: 200, headers, body: p.parts ?? p.body };
}

function liveAnswer(p: DsPage, rr: ReadRequest): Reply {
  const headers = pageHeaders(p);
  if (!p.closed) headers.push([H.cursor, nextCursor(rr.cursor)]);
  headers.push(['cache-control', 'no-cache']);
  return { status: 200, headers, body: p.body };
}

/** A long-poll at the end of a closed stream: nothing will ever come; answered at once. */
function closedAtTail(p: DsPage): Reply {
  return {
    status: 204,
    headers: [
      [H.nextOffset, formatOffset(p.nextSeq)],
      [H.upToDate, 'true'],
      [H.closed, 'true'],
      ['cache-control', 'no-cache'],
    ],
  };
}

export function pageHeaders(p: DsPage): Array<[string, string]> {
  const headers: Array<[string, string]> = [
    ['content-type', p.contentType],
    [H.nextOffset, formatOffset(p.nextSeq)],
  ];
  if (p.upToDate) headers.push([H.upToDate, 'true']);
  if (p.closed) headers.push([H.closed, 'true']);
  return headers;
}

async function waitAndAnswer(ctx: DsContext, name: string, format: DsFormat, first: { nextSeq: number; streamId: number }, rr: ReadRequest, res: HttpResponse): Promise<Reply | null> {
  const live = ctx.live;
  const at = first.nextSeq;
  const timedOut = (): Reply => ({
    status: 204,
    headers: [
      [H.nextOffset, formatOffset(at)],
      [H.upToDate, 'true'],
      [H.cursor, nextCursor(rr.cursor)],
      ['cache-control', 'no-cache'],
    ],
  });
  if (live.closed) return timedOut();
  const r = await waitAtTail(live, name, at, first.streamId, res, async (watch) => {
    const p = await readPage(ctx.shards, name, at, format, ctx.readBytes, (q) => live.page(watch, q));
    if (p.streamId !== first.streamId) throw new SvcError('not_found', `stream ${name} was deleted`);
    if (p.count > 0) return liveAnswer(p, rr);
    if (p.closed) return closedAtTail(p);
    // Only records no reader is shown (Kafka transaction markers, aborted transactions) came: answer
    // 204 at the new offset, as at the timeout, so the poller moves past them.
    return p.nextSeq > at ? { ...timedOut(), headers: timedOut().headers.map(([k, v]): [string, string] => (k === H.nextOffset ? [k, formatOffset(p.nextSeq)] : [k, v])) } : null;
  });
  if (r === 'aborted') return null;
  return r === 'timeout' || r === 'shutdown' ? timedOut() : r;
}
