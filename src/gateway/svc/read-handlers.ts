/** GET (catch-up and live reads), HEAD on /{stream}, and GET / (list). */
import { SvcError } from '../../errors';
import { type ReadFormat, type StreamInfo } from '../../shards';
import { type HttpRequest, type HttpResponse } from '../http/engine';
import { type SvcContext } from './context';
import { decodeCursor } from './cursor';
import { longPoll } from './long-poll';
import { type Reply, formatTime, parseQuery, parseUint, recycling } from '../kit';
import { pageHeaders } from './read-page';
import { readSse } from './sse';

const FORMATS: ReadonlySet<string> = new Set(['json', 'raw', 'binary']);
const READ_PARAMS: ReadonlySet<string> = new Set(['seq', 'count', 'bytes', 'format', 'cursor', 'live']);

/**
 * null: a live read wrote (or abandoned) the response itself. Not `async`: a long-poll or an SSE
 * read is handed on as its own promise, not wrapped in one more (a promise, its reactions and
 * their closures) that would stay alive as long as each idle live reader waits. Bad parameters
 * throw at once; `InFlight.answer` (gateway/in-flight.ts) turns that into the promise's rejection.
 */
export function readStream(ctx: SvcContext, name: string, req: HttpRequest, res: HttpResponse): Promise<Reply | null> {
  const q = parseQuery(req.query);
  for (const k of q.keys()) if (!READ_PARAMS.has(k)) throw new SvcError('invalid_parameter', `unknown query parameter ${k}`);
  const live = q.get('live');
  if (live !== undefined && live !== 'long-poll' && live !== 'sse') throw new SvcError('invalid_parameter', 'live must be long-poll or sse');
  if (live === 'sse') return readSse(ctx, name, req, res, q);
  const format = q.get('format') ?? 'json';
  if (!FORMATS.has(format)) throw new SvcError('invalid_parameter', 'format must be json, raw or binary');
  const count = parseUint('count', q.get('count')) ?? ctx.limits.readDefaultCount;
  const bytes = Math.min(parseUint('bytes', q.get('bytes')) ?? ctx.limits.readDefaultBytes, ctx.limits.readMaxBytes);
  const rawSeq = q.get('seq');
  const cursor = q.get('cursor');
  if (rawSeq !== undefined && cursor !== undefined) throw new SvcError('invalid_parameter', 'give seq or cursor, not both');
  let seq = rawSeq === 'now' ? -1 : (parseUint('seq', rawSeq) ?? 0);
  let expectStreamId: number | null = null;
  if (cursor !== undefined) {
    const c = decodeCursor(cursor);
    seq = c.seq;
    expectStreamId = c.streamId;
  }
  if (live === 'long-poll') return longPoll(ctx, res, { name, seq, count, bytes, format: format as ReadFormat, expectStreamId });
  return catchUp(ctx, name, req, { seq, count, bytes, format, expectStreamId });
}

async function catchUp(ctx: SvcContext, name: string, req: HttpRequest, p: { seq: number; count: number; bytes: number; format: string; expectStreamId: number | null }): Promise<Reply> {
  const { seq, count, bytes, format, expectStreamId } = p;
  // Pooled: this read is this request's alone, and its body goes back to the worker once sent (`recycling`).
  // Parts: a large raw or binary page the worker's read cache holds whole comes as views of it, not copied.
  const r = await ctx.shards.read({ name, seq, count, bytes, format: format as ReadFormat, pooled: true, parts: format !== 'json' });
  const page = r.parts ?? r.body;
  if (expectStreamId !== null && expectStreamId !== r.streamId) {
    ctx.shards.recycle(page);
    throw new SvcError('conflict', 'the cursor belongs to an earlier stream of this name (it was deleted and created again)');
  }
  const headers = pageHeaders(r, format);
  // A read from `now` names no fixed range, so it has no validator.
  if (seq >= 0) {
    const from = r.nextSeq - r.count;
    const etag = `"${r.streamId.toString(36)}-${from}-${r.nextSeq}-${format}${r.closed ? '-c' : ''}"`;
    headers.push(['etag', etag]);
    if (matches(req.headers['if-none-match'], etag)) return recycling({ status: 304, headers: headers.filter(([k]) => k !== 'content-type') }, ctx.shards, page);
  } else {
    headers.push(['cache-control', 'no-store']);
  }
  // This read is this request's alone: its page's buffer goes back to the worker once sent.
  return recycling({ status: 200, headers, body: page }, ctx.shards, page);
}

export async function headStream(ctx: SvcContext, name: string): Promise<Reply> {
  const s = await ctx.shards.head(name);
  const headers: Array<[string, string]> = [
    ['content-type', s.contentType],
    ['svc-next-seq', String(s.nextSeq)],
    ['svc-start-seq', String(s.startSeq)],
    ['svc-closed', String(s.closed)],
    ['cache-control', 'no-store'],
  ];
  if (s.ttlSeconds !== null) headers.push(['svc-ttl', String(s.ttlSeconds)]);
  if (s.expiresAtMs !== null) headers.push(['svc-expires-at', formatTime(s.expiresAtMs)]);
  // Spec "Stream metadata": Svc-Schema when one is bound, Svc-Kafka-Topic when set explicitly.
  if (s.schema !== null) headers.push(['svc-schema', s.schema]);
  if (s.kafkaTopic !== null) headers.push(['svc-kafka-topic', s.kafkaTopic]);
  if (!s.durabilityDefault) headers.push(['svc-durability', s.durability]);
  return { status: 200, headers };
}

export async function listStreams(ctx: SvcContext, req: HttpRequest): Promise<Reply> {
  const q = parseQuery(req.query);
  for (const k of q.keys()) if (k !== 'prefix' && k !== 'start_after' && k !== 'limit') throw new SvcError('invalid_parameter', `unknown query parameter ${k}`);
  const limit = Math.min(parseUint('limit', q.get('limit')) ?? ctx.limits.listMaxLimit, ctx.limits.listMaxLimit);
  const r = await ctx.shards.list({ prefix: q.get('prefix') ?? '/', startAfter: q.get('start_after') ?? '', limit });
  const body = JSON.stringify({ streams: r.streams.map(listEntry), has_more: r.hasMore });
  return { status: 200, headers: [['content-type', 'application/json']], body };
}

function listEntry(s: StreamInfo): object {
  return {
    name: s.name,
    content_type: s.contentType,
    start_seq: s.startSeq,
    next_seq: s.nextSeq,
    closed: s.closed,
    ttl: s.ttlSeconds,
    expires_at: s.expiresAtMs === null ? null : formatTime(s.expiresAtMs),
  };
}

function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(',').some((t) => {
    const v = t.trim();
    return v === '*' || v === etag || v === `W/${etag}`;
  });
}
