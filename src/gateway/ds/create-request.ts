/**
 * What a PUT asks for (content type, lifetime, closed), how it compares with a stream that exists
 * (idempotent re-creation), and the create reply: shared by plain creates (ds-write.ts) and forks
 * (ds-fork.ts), so neither imports the other's module back.
 */
import { SvcError } from '../../errors';
import { type StreamInfo, mediaType } from '../../shards';
import { type HttpRequest } from '../http/engine';
import { type Reply, parseDurability, parseRfc3339 } from '../kit';
import { H, isTrue } from './ds-headers';
import { formatOffset } from './offsets';

const UINT_RE = /^(0|[1-9]\d*)$/;
const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

/** What a create asks for, compared with an existing stream for idempotent re-creation. */
export interface CreateRequest {
  contentType: string;
  idleTtlSeconds: number | null;
  expiresAtMs: number | null;
  closed: boolean;
  /** Svc-Durability (the Svc listener's header; docs/durable-streams.md): the stream's class, or null for the node's default. */
  durability: 'sync' | 'async' | null;
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
    durability: parseDurability('Svc-Durability', req.headers['svc-durability']) ?? null,
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
