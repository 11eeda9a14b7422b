/**
 * Bucket and key of a client request, path style or virtual-hosted style, and the host and
 * path of the same object at the origin (whose style is configured separately, so a
 * path-style client can front a virtual-hosted origin and the reverse).
 */
import { uriDecode, uriEncode } from './sigv4';

export interface Target {
  /** null for service-level requests (ListBuckets). */
  bucket: string | null;
  /** null for bucket-level requests. */
  key: string | null;
}

export interface Addressing {
  style: 'path' | 'virtual_hosted';
  domain: string;
}

/** Hostname of a Host header value, lower case, port dropped. */
export function hostName(host: string): string {
  const h = host.toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const c = h.lastIndexOf(':');
  return c < 0 ? h : h.slice(0, c);
}

export function parseTarget(host: string | undefined, rawPath: string, a: Addressing): Target {
  if (a.style === 'virtual_hosted' && host !== undefined) {
    const name = hostName(host);
    const suffix = '.' + a.domain.toLowerCase();
    if (name.endsWith(suffix) && name.length > suffix.length) {
      const key = uriDecode(rawPath.slice(1));
      return { bucket: name.slice(0, -suffix.length), key: key === '' ? null : key };
    }
  }
  const rest = rawPath.slice(1);
  if (rest === '') return { bucket: null, key: null };
  const slash = rest.indexOf('/');
  if (slash < 0) return { bucket: uriDecode(rest), key: null };
  const key = uriDecode(rest.slice(slash + 1));
  return { bucket: uriDecode(rest.slice(0, slash)), key: key === '' ? null : key };
}

export interface OriginLocation {
  host: string;
  path: string;
}

/** Where `target` lives at the origin. Paths are canonically encoded, exactly what gets signed. */
export function originLocation(endpoint: URL, virtualHosted: boolean, t: Target): OriginLocation {
  const base = endpoint.pathname.replace(/\/+$/, '');
  const key = t.key === null ? '' : uriEncode(t.key, true);
  if (t.bucket === null) return { host: endpoint.host, path: base + '/' };
  if (virtualHosted) return { host: `${t.bucket}.${endpoint.host}`, path: `${base}/${key}` };
  return { host: endpoint.host, path: `${base}/${uriEncode(t.bucket, false)}${t.key === null ? '' : '/' + key}` };
}
