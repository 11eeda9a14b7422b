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

/**
 * The query parameter names S3 reads on every presigned or SDK request, kept as the one string
 * of each spelling (a constant): a name parsed from a query as one of these is handed out as the
 * constant rather than as a slice of the query. Comparing a slice with a constant, or looking it
 * up in a set, hashes or compares it character by character in the runtime on every request
 * (about 0.5 µs of a new presigned URL: the verifier reads seven names, `classify` looks up
 * each); a constant is compared by identity and its hash is kept.
 */
const KNOWN_NAMES: readonly (readonly string[] | undefined)[] = (() => {
  const names = [
    'x-id',
    'X-Amz-Date',
    'X-Amz-Expires',
    'X-Amz-Algorithm',
    'X-Amz-Signature',
    'X-Amz-Credential',
    'x-amz-user-agent',
    'X-Amz-SignedHeaders',
    'x-amz-checksum-mode',
    'X-Amz-Security-Token',
    'X-Amz-Content-Sha256',
  ];
  const byLength: string[][] = [];
  for (const n of names) (byLength[n.length] ??= []).push(n);
  return byLength;
})();

/** `raw[start, end)` as a known name's constant when it is one (written as is, no escapes), else undefined. */
function knownName(raw: string, start: number, end: number): string | undefined {
  const candidates = KNOWN_NAMES[end - start];
  if (candidates === undefined) return undefined;
  for (let i = 0; i < candidates.length; i++) if (sameAt(raw, start, candidates[i]!)) return candidates[i];
  return undefined;
}

/** Whether `raw` holds `name` at `start`, compared char by char (inline code, no builtin call per candidate). */
function sameAt(raw: string, start: number, name: string): boolean {
  for (let i = 0; i < name.length; i++) if (raw.charCodeAt(start + i) !== name.charCodeAt(i)) return false;
  return true;
}

/**
 * Decoded query pairs in order of appearance (`a&b=` gives ['a',''], ['b','']). One pass with
 * indexOf, no array of parts: it runs for every request with a query. Known names come back as
 * their constants (`knownName`), the same strings by value.
 */
export function parseQuery(rawQuery: string): [string, string][] {
  const out: [string, string][] = [];
  const n = rawQuery.length;
  // The next `=` at or after the current pair, found once: a query of many pairs without one
  // must not be searched to its end for every pair.
  let eq = -1;
  for (let start = 0; start < n; ) {
    let end = rawQuery.indexOf('&', start);
    if (end < 0) end = n;
    if (end > start) {
      if (eq < start) {
        eq = rawQuery.indexOf('=', start);
        if (eq < 0) eq = n;
      }
      if (eq >= end) out.push([knownName(rawQuery, start, end) ?? uriDecode(rawQuery.slice(start, end)), '']);
      else out.push([knownName(rawQuery, start, eq) ?? uriDecode(rawQuery.slice(start, eq)), uriDecode(rawQuery.slice(eq + 1, end))]);
    }
    start = end + 1;
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

/** Characters of a canonically written query: unreserved, `%` of an escape, `=` and `&`. */
const QUERY_CHARS = /^[A-Za-z0-9\-._~%=&]*$/;

/** The value of an upper-case hex digit's char code, else -1 (lower case is not canonical). */
function upperHex(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** Whether every `%` of `s` starts an escape of an ASCII byte that is not unreserved (how uriEncode writes one). */
function escapesCanonical(s: string): boolean {
  for (let i = s.indexOf('%'); i >= 0; i = s.indexOf('%', i + 3)) {
    const hi = upperHex(s.charCodeAt(i + 1));
    const lo = upperHex(s.charCodeAt(i + 2));
    if (hi < 0 || hi > 7 || lo < 0) return false;
    const c = hi * 16 + lo;
    // Unreserved: - . 0-9 A-Z _ a-z ~
    if (c === 45 || c === 46 || (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || c === 95 || (c >= 97 && c <= 122) || c === 126) return false;
  }
  return true;
}

/** `comparePairs` on two ranges of one string. */
function compareRanges(s: string, a: number, aEnd: number, b: number, bEnd: number): number {
  const n = Math.min(aEnd - a, bEnd - b);
  for (let i = 0; i < n; i++) {
    const x = s.charCodeAt(a + i);
    const y = s.charCodeAt(b + i);
    if (x !== y) return (x === 61 ? -1 : x) - (y === 61 ? -1 : y);
  }
  return aEnd - a - (bEnd - b);
}

const SIGNATURE_NAME = 'X-Amz-Signature';

/**
 * Whether `s[start, end)` is the pair of X-Amz-Signature (the name is unreserved throughout, so
 * that is its only canonical spelling). Compared char by char: no builtin call per pair.
 */
function isSignaturePair(s: string, start: number, end: number): boolean {
  const n = SIGNATURE_NAME.length;
  if (end - start < n || (end - start > n && s.charCodeAt(start + n) !== 61)) return false;
  for (let i = 0; i < n; i++) if (s.charCodeAt(start + i) !== SIGNATURE_NAME.charCodeAt(i)) return false;
  return true;
}

/**
 * The canonical query straight from the query as sent, when every pair in it is already written
 * the canonical way (unreserved characters bare, every other byte as `%XX` in upper-case hex, one
 * `=` per pair); undefined otherwise (then `canonicalQuery(parseQuery(raw))` decides). Only ASCII
 * escapes are taken as they are: each decodes to one character that `uriEncode` writes back the
 * same, so the result is exactly `canonicalQuery(parseQuery(raw), omitSignature)` without
 * decoding and re-encoding every pair. Presigned URLs arrive this way from every SDK, and in
 * order: then the canonical query is the raw query less its signature, two slices of it.
 */
export function canonicalQueryOfRaw(raw: string, omitSignature: boolean): string | undefined {
  if (!QUERY_CHARS.test(raw) || !escapesCanonical(raw)) return undefined;
  let sorted = true;
  // Every pair has its `=`, none is empty, at most one signature: the raw text is the answer.
  let plain = true;
  let prev = -1;
  let prevEnd = -1;
  let cut = -1;
  let cutEnd = -1;
  for (let start = 0; start < raw.length; ) {
    let end = raw.indexOf('&', start);
    if (end < 0) end = raw.length;
    if (end === start) plain = false;
    else if (omitSignature && isSignaturePair(raw, start, end)) {
      if (cut >= 0) plain = false;
      cut = start;
      cutEnd = end;
    } else {
      const eq = raw.indexOf('=', start);
      if (eq < 0 || eq > end) plain = false;
      else {
        // A second `=` belongs to the value, where it is written %3D.
        const eq2 = raw.indexOf('=', eq + 1);
        if (eq2 >= 0 && eq2 < end) return undefined;
      }
      if (prev >= 0 && compareRanges(raw, prev, prevEnd, start, end) > 0) sorted = false;
      prev = start;
      prevEnd = end;
    }
    start = end + 1;
  }
  if (raw.endsWith('&')) plain = false;
  if (sorted && plain) {
    if (cut < 0) return raw;
    // Drop the signature pair and the `&` before it (or after it, when it comes first).
    return cut === 0 ? raw.slice(cutEnd + 1) : raw.slice(0, cut - 1) + raw.slice(cutEnd);
  }
  const pairs: string[] = [];
  for (const part of raw.split('&')) {
    if (part === '' || (omitSignature && isSignaturePair(part, 0, part.length))) continue;
    pairs.push(part.includes('=') ? part : part + '=');
  }
  pairs.sort(comparePairs);
  return pairs.join('&');
}
