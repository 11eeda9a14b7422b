/**
 * Which webhook URLs a subscription may name. The node POSTs to them, so a URL must not turn
 * it into a proxy onto private networks (SSRF):
 *
 * - `https:` to a public host name or public IP address;
 * - `http:` only to the loopback host (localhost, 127.0.0.0/8, ::1), for development and the
 *   conformance suite's local receiver, and only while `allowLoopbackHttp` is on;
 * - never credentials in the URL, a private, link-local, loopback or unspecified address over
 *   https, or any other scheme.
 *
 * Host names are not resolved here: a public name that resolves to a private address is the
 * operator's network policy to stop.
 */
import { isIP } from 'node:net';

export type UrlVerdict = { ok: true; url: string } | { ok: false; reason: string };

export function checkWebhookUrl(raw: string, allowLoopbackHttp: boolean): UrlVerdict {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'webhook.url is not a valid absolute URL' };
  }
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'webhook.url must not carry credentials' };
  const host = url.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (url.protocol === 'http:') {
    if (allowLoopbackHttp && isLoopback(host)) return { ok: true, url: url.toString() };
    return { ok: false, reason: 'http webhook URLs are accepted only for loopback hosts; use https' };
  }
  if (url.protocol !== 'https:') return { ok: false, reason: 'webhook.url must use https' };
  if (host === 'localhost' || host.endsWith('.localhost')) return { ok: false, reason: 'a localhost webhook must use http' };
  const family = isIP(host);
  if (family === 4 && isNonPublicV4(host)) return { ok: false, reason: 'webhook.url must not target a private, link-local or loopback address' };
  if (family === 6 && isNonPublicV6(host)) return { ok: false, reason: 'webhook.url must not target a private, link-local or loopback address' };
  return { ok: true, url: url.toString() };
}

function isLoopback(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

function isNonPublicV4(host: string): boolean {
  const [a = 0, b = 0] = host.split('.').map(Number);
  return (
    a === 0 || // "this network"
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // carrier-grade NAT
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    a >= 224 // multicast and reserved
  );
}

function isNonPublicV6(host: string): boolean {
  if (host === '::' || host === '::1') return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(host);
  if (mapped) return isNonPublicV4(mapped[1]!);
  if (host.startsWith('::ffff:')) return true; // mapped address in hex form: refuse rather than decode
  const first = parseInt(host.split(':')[0] || '0', 16);
  return (
    (first & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (first & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (first & 0xff00) === 0xff00 // multicast
  );
}
