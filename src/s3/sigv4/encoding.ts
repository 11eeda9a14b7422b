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

/** Unreserved ASCII characters (`A–Z a–z 0–9 - . _ ~`) by char code. */
const UNRESERVED_CODE = new Uint8Array(128);
for (let c = 0; c < 128; c++) UNRESERVED_CODE[c] = UNRESERVED.test(String.fromCharCode(c)) ? 1 : 0;

/** The value of an upper-case hex digit's char code, else -1 (lower case is not canonical). */
function upperHex(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/**
 * Orders canonical `name=value` pairs by name, then value (SigV4 sorts the encoded names, then
 * the encoded values): comparing whole pairs with `=` below every other character does that,
 * since neither an encoded name nor an encoded value contains `=`.
 */
function comparePairs(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return (x === 61 ? -1 : x) - (y === 61 ? -1 : y);
  }
  return a.length - b.length;
}

/**
 * The canonical query straight from the query as sent, when every pair in it is already written
 * the canonical way (unreserved characters bare, every other byte as `%XX` in upper-case hex, one
 * `=` per pair); undefined otherwise (then `canonicalQuery(parseQuery(raw))` decides). Only ASCII
 * escapes are taken as they are: each decodes to one character that `uriEncode` writes back the
 * same, so the result is exactly `canonicalQuery(parseQuery(raw), omitSignature)` without
 * decoding and re-encoding every pair (presigned URLs arrive this way from every SDK).
 */
export function canonicalQueryOfRaw(raw: string, omitSignature: boolean): string | undefined {
  const pairs: string[] = [];
  let start = 0;
  let eq = -1;
  let sorted = true;
  for (let i = 0; i <= raw.length; i++) {
    const c = i < raw.length ? raw.charCodeAt(i) : 38;
    if (c === 38 /* & */) {
      if (i > start) {
        const nameEnd = eq < 0 ? i : eq;
        // X-Amz-Signature is unreserved throughout, so its only canonical spelling is itself.
        if (!(omitSignature && nameEnd - start === 15 && raw.startsWith('X-Amz-Signature', start))) {
          const pair = eq < 0 ? raw.slice(start, i) + '=' : raw.slice(start, i);
          if (pairs.length > 0 && sorted && comparePairs(pairs[pairs.length - 1]!, pair) > 0) sorted = false;
          pairs.push(pair);
        }
      }
      start = i + 1;
      eq = -1;
    } else if (c === 61 /* = */) {
      if (eq >= 0) return undefined; // a second `=` belongs to the value and is written %3D
      eq = i;
    } else if (c === 37 /* % */) {
      const hi = upperHex(raw.charCodeAt(i + 1));
      const lo = upperHex(raw.charCodeAt(i + 2));
      if (hi < 0 || hi > 7 || lo < 0 || UNRESERVED_CODE[hi * 16 + lo] === 1) return undefined;
      i += 2;
    } else if (c >= 128 || UNRESERVED_CODE[c] === 0) return undefined;
  }
  if (!sorted) pairs.sort(comparePairs);
  return pairs.join('&');
}
