/** Writing responses: S3 XML errors and header hygiene shared by the read and forward paths. */
import { type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { type Ctx } from './context';
import { S3Error, errorXml } from './errors';

/** Hop-by-hop headers (RFC 9110 section 7.6.1) never cross the proxy. */
export const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** Origin response headers to pass to the client. */
export function passHeaders(h: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

export function resourceOf(ctx: Pick<Ctx, 'target'>): string {
  const t = ctx.target;
  return t.bucket === null ? '/' : t.key === null ? `/${t.bucket}` : `/${t.bucket}/${t.key}`;
}

export function sendError(ctx: Pick<Ctx, 'body' | 'res' | 'target' | 'requestId' | 'method'>, err: unknown): void {
  const e = err instanceof S3Error ? err : new S3Error('InternalError', 'We encountered an internal error. Please try again.');
  const { res } = ctx;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = ctx.method === 'HEAD' ? '' : errorXml(e.code, e.message, resourceOf(ctx), ctx.requestId, e.extra);
  const headers: Array<[string, string]> = [];
  for (const k in e.headers) headers.push([k, e.headers[k]!]);
  headers.push(['content-type', 'application/xml'], ['content-length', String(Buffer.byteLength(body))], ['x-amz-request-id', ctx.requestId]);
  // A request body the client is still sending is not wanted: close after the answer
  // rather than read (possibly gigabytes) to keep the connection.
  res.send(e.status, headers, body, ctx.body !== null && !ctx.body.complete);
}