/**
 * The canonical URI and query of SigV4 as S3 computes them. The rule that verified every
 * real client signature (SDK v3, awscli, s3cmd; keys with spaces, `+`, `~`, `'()!*`, `=&;`,
 * `%`, UTF-8, `./..`): decode each raw path segment, re-encode it leaving only
 * `A–Z a–z 0–9 - . _ ~` bare, keep `/`; no dot-segment normalisation, no double encoding.
 */

const UNRESERVED = /[A-Za-z0-9\-._~]/;

const ALL_UNRESERVED = /^[A-Za-z0-9\-._~]*$/;
const ALL_UNRESERVED_OR_SLASH = /^[A-Za-z0-9\-._~/]*$/;
/** What encodeURIComponent leaves bare but SigV4 encodes. */
const SUB_DELIMS = /[!'()*]/g;

/** Percent-encodes every byte except the unreserved set (and `/` when `keepSlash`). */
export function uriEncode(s: string, keepSlash: boolean): string {
  if ((keepSlash ? ALL_UNRESERVED_OR_SLASH : ALL_UNRESERVED).test(s)) return s;
  try {
    const e = encodeURIComponent(s).replace(SUB_DELIMS, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
    return keepSlash ? e.replace(/%2F/g, '/') : e;
  } catch {
    // A lone surrogate: encode its UTF-8 replacement byte by byte, as the slow path does.
    return uriEncodeSlow(s, keepSlash);
  }
}

function uriEncodeSlow(s: string, keepSlash: boolean): string {
  let out = '';
  for (const ch of s) {
    if (UNRESERVED.test(ch) || (keepSlash && ch === '/')) out += ch;
    else for (const b of Buffer.from(ch, 'utf8')) out += '%' + (b < 16 ? '0' : '') + b.toString(16).toUpperCase();
  }
  return out;
}

/** Percent-decoding only (`+` stays `+`); a malformed escape is kept as written. */
export function uriDecode(s: string): string {
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s.replace(/(%[0-9A-Fa-f]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
  }
}

/** The canonical URI of a raw request path (as sent, before any decoding). */
export function canonicalUri(rawPath: string): string {
  // Only unreserved characters and `/`: nothing to decode or encode (the usual object path).
  if (ALL_UNRESERVED_OR_SLASH.test(rawPath)) return rawPath;
  return rawPath
    .split('/')
    .map((seg) => uriEncode(uriDecode(seg), false))
    .join('/');
}

/** Decoded query pairs in order of appearance (`a&b=` gives ['a',''], ['b','']). */
export function parseQuery(rawQuery: string): [string, string][] {
  if (rawQuery === '') return [];
  const out: [string, string][] = [];
  for (const part of rawQuery.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    out.push(eq < 0 ? [uriDecode(part), ''] : [uriDecode(part.slice(0, eq)), uriDecode(part.slice(eq + 1))]);
  }
  return out;
}

/** The canonical query string: encoded pairs sorted by name then value, `X-Amz-Signature` left out. */
export function canonicalQuery(pairs: readonly (readonly [string, string])[], omitSignature: boolean): string {
  const enc: [string, string][] = [];
  for (const [k, v] of pairs) if (!(omitSignature && k === 'X-Amz-Signature')) enc.push([uriEncode(k, false), uriEncode(v, false)]);
  enc.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  let out = '';
  for (let i = 0; i < enc.length; i++) out += (i === 0 ? '' : '&') + enc[i]![0] + '=' + enc[i]![1];
  return out;
}
