/**
 * Conditional GET/HEAD with S3's precedence (RFC 9110 section 13.2.2):
 *   If-Match false → 412; with no If-Match, If-Unmodified-Since false → 412;
 *   If-None-Match matching → 304; with no If-None-Match, If-Modified-Since not newer → 304.
 * So If-Match true wins over a false If-Unmodified-Since (200), and a non-matching
 * If-None-Match wins over a false If-Modified-Since (200), as S3 documents.
 */
import { type ObjectMeta } from './cache/entry';

export type Verdict = 200 | 304 | 412;

function stripQuotes(s: string): string {
  const t = s.trim().replace(/^W\//, '');
  return t.startsWith('"') && t.endsWith('"') && t.length >= 2 ? t.slice(1, -1) : t;
}

function etagMatches(header: string, etag: string): boolean {
  const want = stripQuotes(etag);
  return header.split(',').some((t) => t.trim() === '*' || stripQuotes(t) === want);
}

/** Seconds since the epoch of an HTTP date, or undefined when unparsable (the condition is then ignored). */
function seconds(d: string | undefined): number | undefined {
  if (d === undefined) return undefined;
  const t = Date.parse(d);
  return Number.isNaN(t) ? undefined : Math.floor(t / 1000);
}

export function evaluateConditionals(h: ReadonlyMap<string, string>, meta: ObjectMeta): Verdict {
  if (h.size === 0 || !hasConditionals(h)) return 200;
  const lm = seconds(meta.lastModified) ?? 0;
  const ifMatch = h.get('if-match');
  if (ifMatch !== undefined) {
    if (!etagMatches(ifMatch, meta.etag)) return 412;
  } else {
    const ius = seconds(h.get('if-unmodified-since'));
    if (ius !== undefined && lm > ius) return 412;
  }
  const ifNoneMatch = h.get('if-none-match');
  if (ifNoneMatch !== undefined) {
    if (etagMatches(ifNoneMatch, meta.etag)) return 304;
  } else {
    const ims = seconds(h.get('if-modified-since'));
    if (ims !== undefined && lm <= ims) return 304;
  }
  return 200;
}

export function hasConditionals(h: ReadonlyMap<string, string>): boolean {
  return h.has('if-match') || h.has('if-none-match') || h.has('if-modified-since') || h.has('if-unmodified-since');
}
