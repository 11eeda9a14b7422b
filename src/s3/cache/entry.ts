/** What the cache keeps about an object: the origin's metadata and, for stored objects, where its bytes are. */
import { type IncomingHttpHeaders } from 'node:http';

export interface ObjectMeta {
  /** The origin's ETag, quoted, exactly as the origin sent it. */
  etag: string;
  /** HTTP date. */
  lastModified: string;
  size: number;
  /** Content-Type, Cache-Control, Content-Disposition, Content-Encoding, Content-Language, Expires and x-amz-* metadata, lower-case names. */
  headers: Record<string, string>;
}

/** Response headers of the origin that describe the object (and are therefore replayed from cache). */
export function objectHeaders(h: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(h)) {
    if (value === undefined) continue;
    if (KEEP.has(name) || (name.startsWith('x-amz-') && !DROP_AMZ.has(name) && !name.startsWith('x-amz-checksum-')))
      out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

const KEEP = new Set(['content-type', 'cache-control', 'content-disposition', 'content-encoding', 'content-language', 'expires']);
/** Per-response or per-request headers, never part of the object. */
const DROP_AMZ = new Set(['x-amz-request-id', 'x-amz-id-2', 'x-amz-delete-marker', 'x-amz-mp-parts-count']);

/** Metadata from an origin 200 response to a full GET or a HEAD, or undefined if it lacks what a cache entry needs. */
export function metaFromResponse(h: IncomingHttpHeaders): ObjectMeta | undefined {
  const etag = h.etag;
  const len = h['content-length'];
  if (etag === undefined || len === undefined || !/^\d+$/.test(len)) return undefined;
  return { etag, lastModified: h['last-modified'] ?? new Date().toUTCString(), size: Number(len), headers: objectHeaders(h) };
}

export function cacheKey(bucket: string, key: string): string {
  return bucket + '\0' + key;
}
