/**
 * PUT (create), POST (append, close), HEAD and DELETE on a Durable Streams stream
 * (PROTOCOL.md "Create", "Append", "Close", "Metadata", "Delete"). Forks are in ds-fork.ts.
 */
import { SvcError } from '../../errors';
import { type ProducerParams, type StreamInfo, mediaType } from '../../shards';
import { type HttpRequest } from '../http/engine';
import { parseRfc3339 } from '../svc/params';
import { type Reply } from '../svc/write-handlers';
import { type DsContext } from './context';
import { H, isTrue } from './ds-headers';
import { createFork } from './ds-fork';
import { toRecords } from './messages';
import { formatOffset } from './offsets';

const UINT_RE = /^(0|[1-9]\d*)$/;
const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

/** What a create asks for, compared with an existing stream for idempotent re-creation. */
export interface CreateRequest {
  contentType: string;
  idleTtlSeconds: number | null;
  expiresAtMs: number | null;
  closed: boolean;
}

export function parseCreate(req: HttpRequest, defaultContentType = DEFAULT_CONTENT_TYPE): CreateRequest {
  const ct = req.headers['content-type'];
  const ttl = req.headers[H.ttl];
  const exp = req.headers[H.expiresAt];
  if (ttl !== undefined && !UINT_RE.test(ttl)) throw new SvcError('invalid_parameter', 'Stream-TTL is a whole number of seconds');
  if (ttl !== undefined && exp !== undefined) throw new SvcError('invalid_parameter', 'Stream-TTL and Stream-Expires-At cannot both be given');
  // The Svc listener's RFC 3339 parser: Date.parse would take `1`, `March 7, 2030` and roll Feb 30 into March.
  const expiresAtMs = exp === undefined ? null : parseRfc3339(H.expiresAt, exp, 'Stream-Expires-At is not an RFC 3339 timestamp');
  return {
    contentType: ct === undefined || ct.trim() === '' ? defaultContentType : ct,
    idleTtlSeconds: ttl === undefined ? null : Number(ttl),
    expiresAtMs,
    closed: isTrue(req.headers[H.closed]),
  };
}

/** Same content type (media type, any case, parameters ignored), lifetime and closed state. */
export function sameStream(info: StreamInfo, c: CreateRequest): boolean {
  return mediaType(info.contentType) === mediaType(c.contentType) && info.idleTtlSeconds === c.idleTtlSeconds && info.expiresAtMs === c.expiresAtMs && info.closed === c.closed;
}

/** A host (name or address, optional port) as RFC 3986 allows it; anything else is not echoed. */
const HOST_RE = /^[A-Za-z0-9.\-_~]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/** The client's Host header for an absolute Location, when it is a well-formed host; else `localhost`. */
function locationHost(host: string | undefined): string {
  return host !== undefined && HOST_RE.test(host) ? host : 'localhost';
}

export function createdReply(req: HttpRequest, info: StreamInfo, created: boolean): Reply {
  const headers: Array<[string, string]> = [
    ['content-type', info.contentType],
    [H.nextOffset, formatOffset(info.nextSeq)],
  ];
  if (info.closed) headers.push([H.closed, 'true']);
  if (created) headers.push(['location', `http://${locationHost(req.headers['host'])}${req.path}`]);
  return { status: created ? 201 : 200, headers };
}

export async function createDsStream(ctx: DsContext, name: string, req: HttpRequest): Promise<Reply> {
  if (req.headers[H.forkedFrom] !== undefined) return createFork(ctx, name, req);
  if (req.headers[H.forkOffset] !== undefined || req.headers[H.forkSubOffset] !== undefined) {
    throw new SvcError('invalid_parameter', 'Stream-Fork-Offset and Stream-Fork-Sub-Offset need Stream-Forked-From');
  }
  const c = parseCreate(req);
  const records = toRecords(req.body, c.contentType, true, ctx);
  const r = await ctx.shards.create({ name, contentType: c.contentType, ttlSeconds: null, expiresAtMs: c.expiresAtMs, idleTtlSeconds: c.idleTtlSeconds, closed: c.closed, records });
  if (!r.created && (!sameStream(r.info, c) || r.info.fork !== null)) throw new SvcError('conflict', `stream ${name} exists with other settings`);
  if (r.created) ctx.subscriptions?.onStreamChanged(name.slice(1), formatOffset(r.info.nextSeq));
  return createdReply(req, r.info, r.created);
}

function parseProducer(req: HttpRequest): ProducerParams | null {
  const id = req.headers[H.producerId];
  const epoch = req.headers[H.producerEpoch];
  const seq = req.headers[H.producerSeq];
  if (id === undefined && epoch === undefined && seq === undefined) return null;
  if (id === undefined || epoch === undefined || seq === undefined) throw new SvcError('invalid_parameter', 'Producer-Id, Producer-Epoch and Producer-Seq go together');
  if (id === '' || id.length > 256) throw new SvcError('invalid_parameter', 'Producer-Id is 1 to 256 characters');
  if (!UINT_RE.test(epoch) || Number(epoch) > 32767) throw new SvcError('invalid_parameter', 'Producer-Epoch is an integer from 0 to 32767');
  if (!UINT_RE.test(seq) || Number(seq) > 2147483647) throw new SvcError('invalid_parameter', 'Producer-Seq is an integer from 0 to 2147483647');
  return { id, epoch: Number(epoch), seq: Number(seq) };
}

export async function appendDs(ctx: DsContext, name: string, req: HttpRequest): Promise<Reply> {
  const close = isTrue(req.headers[H.closed]);
  const ct = req.headers['content-type'];
  const producer = parseProducer(req);
  if (req.body.length === 0 && !close) throw new SvcError('bad_request', 'an append needs a body (or Stream-Closed: true to close the stream)');
  if (req.body.length > 0 && (ct === undefined || ct.trim() === '')) throw new SvcError('bad_request', 'an append with a body needs a Content-Type');
  const records = req.body.length > 0 ? toRecords(req.body, ct!, false, ctx) : [];
  const r = await ctx.shards.append({
    name,
    origin: 'ds',
    payload: { kind: 'records', records },
    contentType: req.body.length > 0 ? ct! : null,
    close,
    producer,
    writerSeq: req.headers[H.seq] ?? null,
  });
  const headers: Array<[string, string]> = [];
  if (r.duplicate === true) {
    // A retry of an accepted append: nothing written; the producer's highest accepted sequence.
    headers.push([H.producerEpoch, String(producer!.epoch)], [H.producerSeq, String(r.producerLastSeq ?? producer!.seq)]);
    if (r.nextSeq >= 0) headers.push([H.nextOffset, formatOffset(r.nextSeq)]);
    if (r.closed) headers.push([H.closed, 'true']);
    return { status: 204, headers };
  }
  headers.push([H.nextOffset, formatOffset(r.nextSeq)]);
  if (r.closed || close) headers.push([H.closed, 'true']);
  ctx.subscriptions?.onStreamChanged(name.slice(1), formatOffset(r.nextSeq));
  if (producer !== null) {
    headers.push([H.producerEpoch, String(producer.epoch)], [H.producerSeq, String(producer.seq)]);
    // A producer's close without a body acknowledges like any close: 204.
    return { status: records.length > 0 ? 200 : 204, headers };
  }
  return { status: 204, headers };
}

export async function headDs(ctx: DsContext, name: string): Promise<Reply> {
  const info = await ctx.shards.head(name);
  const headers: Array<[string, string]> = [
    ['content-type', info.contentType],
    [H.nextOffset, formatOffset(info.nextSeq)],
    ['cache-control', 'no-store'],
  ];
  if (info.idleTtlSeconds !== null) headers.push([H.ttl, String(info.idleTtlSeconds)]);
  if (info.expiresAtMs !== null) headers.push([H.expiresAt, new Date(info.expiresAtMs).toISOString()]);
  if (info.closed) headers.push([H.closed, 'true']);
  return { status: 200, headers };
}

export async function deleteDs(ctx: DsContext, name: string): Promise<Reply> {
  await ctx.shards.delete(name);
  ctx.subscriptions?.onStreamDeleted(name.slice(1));
  return { status: 204, headers: [] };
}
