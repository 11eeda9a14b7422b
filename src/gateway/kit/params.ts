/**
 * Parsing and validating what a request carries: stream names, integer parameters,
 * booleans and times. Every rejection is a SvcError naming the parameter.
 */
import { SvcError } from '../../errors';

/** Non-negative integer (spec "Limits": every integer parameter has a minimum of 0). */
export function parseUint(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d{1,16}$/.test(raw) || Number(raw) > Number.MAX_SAFE_INTEGER) {
    throw new SvcError('invalid_parameter', `${name} must be an integer >= 0`);
  }
  return Number(raw);
}

/** `true` or `false`, case-insensitive. */
export function parseBool(name: string, raw: string | undefined): boolean | undefined {
  if (raw === undefined) return undefined;
  const v = raw.trim().toLowerCase();
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new SvcError('invalid_parameter', `${name} must be true or false`);
}

/** A durability class (`Svc-Durability`, PATCH `durability`): `sync` or `async`, case-insensitive. */
export function parseDurability(name: string, raw: string | undefined): 'sync' | 'async' | undefined {
  if (raw === undefined) return undefined;
  const v = raw.trim().toLowerCase();
  if (v === 'sync' || v === 'async') return v;
  throw new SvcError('invalid_parameter', `${name} must be sync or async`);
}

/** RFC 3339 date-time or unix milliseconds → unix milliseconds. */
export function parseTime(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const v = raw.trim();
  if (/^\d{1,16}$/.test(v)) return Number(v);
  return parseRfc3339(name, v, `${name} must be an RFC 3339 date-time or unix milliseconds`);
}

/**
 * An RFC 3339 date-time (§5.6: `2026-03-07T12:00:00Z`, `…+01:00`, fractions allowed) → unix
 * milliseconds; nothing else (no bare numbers, no `March 7, 2030`). The one parser of timestamps
 * for every listener (the Durable Streams listener's `Stream-Expires-At` too).
 */
export function parseRfc3339(name: string, raw: string, why = `${name} must be an RFC 3339 date-time`): number {
  const v = raw.trim();
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$/.exec(v);
  const bad = (): SvcError => new SvcError('invalid_parameter', why);
  if (m === null) throw bad();
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  // Date.parse rolls impossible fields over (Feb 30 → Mar 1, 24:00 → next day): check them first.
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) throw bad();
  if (m[10] !== undefined && (Number(m[10]) > 23 || Number(m[11]) > 59)) throw bad();
  const ms = Date.parse(v.replace(' ', 'T'));
  if (Number.isNaN(ms)) throw bad();
  return ms;
}

export function formatTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** Query parameters; a parameter given twice is ambiguous and refused. */
export function parseQuery(query: string): Map<string, string> {
  const out = new Map<string, string>();
  if (query === '') return out;
  for (const [k, v] of new URLSearchParams(query)) {
    if (out.has(k)) throw new SvcError('invalid_parameter', `query parameter ${k} is given more than once`);
    out.set(k, v);
  }
  return out;
}

/**
 * The stream name is the whole decoded path (spec "What the service does"). Refused:
 * empty segments, `.` and `..` segments (proxies rewrite them), control characters, names
 * over the byte limit, and names whose first segment starts with `_` (reserved for
 * `/_schemas` and `/_streams`).
 */
export function parseStreamName(rawPath: string, maxBytes: number): string {
  return plainStreamName(rawPath, maxBytes) ?? decodedStreamName(rawPath, maxBytes);
}

/**
 * The name when `rawPath` is a valid name in plain visible ASCII with nothing to decode (nearly
 * every request's): checked in one pass over its char codes, without decoding, a regex, a split
 * or a byte count (a fifth of the W1 handler's own time went to the general path). Null when it is
 * anything else (a `%`, another character, or not valid): then `decodedStreamName` decides.
 */
function plainStreamName(rawPath: string, maxBytes: number): string | null {
  const n = rawPath.length;
  if (n < 2 || n > maxBytes || rawPath.charCodeAt(0) !== SLASH) return null;
  // Where the current segment starts; a segment ends at a `/` or at the end.
  let start = 1;
  for (let i = 1; i <= n; i++) {
    const c = i < n ? rawPath.charCodeAt(i) : SLASH;
    if (c === SLASH) {
      const len = i - start;
      if (len === 0 || (len <= 2 && rawPath.charCodeAt(start) === DOT && (len === 1 || rawPath.charCodeAt(start + 1) === DOT))) return null;
      start = i + 1;
    } else if (c < 0x20 || c > 0x7e || c === PERCENT) {
      return null;
    }
  }
  return rawPath.charCodeAt(1) === UNDERSCORE ? null : rawPath;
}

const SLASH = 0x2f;
const DOT = 0x2e;
const PERCENT = 0x25;
const UNDERSCORE = 0x5f;

/** parseStreamName's general path: percent-decoded, every rule checked and named in its error. */
function decodedStreamName(rawPath: string, maxBytes: number): string {
  let name: string;
  try {
    name = decodeURIComponent(rawPath);
  } catch {
    throw new SvcError('invalid_stream_name', 'the path is not valid percent-encoded UTF-8');
  }
  if (Buffer.byteLength(name) > maxBytes) throw new SvcError('invalid_stream_name', `stream names are limited to ${maxBytes} bytes`);
  if (name.length < 2 || !name.startsWith('/')) throw new SvcError('invalid_stream_name', 'a stream name is a path such as /orders');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) throw new SvcError('invalid_stream_name', 'stream names cannot contain control characters');
  const segments = name.slice(1).split('/');
  for (const s of segments) {
    if (s === '' || s === '.' || s === '..') throw new SvcError('invalid_stream_name', 'stream names cannot have empty, "." or ".." segments');
  }
  if (segments[0]!.startsWith('_')) throw new SvcError('invalid_stream_name', 'names whose first segment starts with "_" are reserved');
  return name;
}
