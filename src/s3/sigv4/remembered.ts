/**
 * Verified presigned requests, remembered so that a URL handed to many readers is verified in
 * full only on its first two uses. A signature covers the method, path, query and every signed
 * header, so a byte-identical request verifies identically: only the time window is checked
 * again. A result is reused only for the same raw query (compared whole), method, path,
 * payload-hash header and every signed header value, compared one by one, so no different
 * request can reuse it (docs/s3-cache.md, "Authentication").
 *
 * Looked up by a mark, the signature's first 28 bits as written in the raw query (found with one
 * `indexOf`, a small integer): a URL used once, the common case with a new signature per request,
 * costs neither hashing its ~300-character query nor an entry the garbage collector would copy.
 */
import { type SignedRequest, type Verified } from './verifier';

/** A verified presigned request with everything its signature covers, and its validity window. */
interface Remembered {
  rawQuery: string | undefined;
  method: string;
  rawPath: string;
  /** The decoded query pairs the request was verified with. */
  query: readonly (readonly [string, string])[];
  /** The `x-amz-content-sha256` header as sent (it can decide the payload hash). */
  contentSha256: string | undefined;
  /** The signed header names (from X-Amz-SignedHeaders, so fixed by the query) and their values as sent. */
  signedNames: readonly string[];
  signedValues: readonly (string | undefined)[];
  verified: Verified;
  notBefore: number;
  notAfter: number;
}

/** What a full verification hands over for remembering. */
export interface FullResult {
  verified: Verified;
  /** Request time and presigned validity, ms. */
  time: number;
  expiresMs: number;
  signedHeaders: readonly string[];
  /** Earliest acceptable time before the request time (the clock skew), ms. */
  skewMs: number;
}

const REMEMBER_MAX = 4096; // entries
const SEEN_SLOTS = 16384; // signature marks (a power of two), 64 KiB

const SIGNATURE = 'X-Amz-Signature=';
/** Searched for as one constant: `'&' + SIGNATURE` per call would build and flatten a new string each time. */
const AMP_SIGNATURE = '&' + SIGNATURE;

/** The value of a hex digit's char code (either case), else -1. */
function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const l = c | 0x20;
  return l >= 97 && l <= 102 ? l - 87 : -1;
}

/** The first 7 hex digits of the raw query's X-Amz-Signature value as a number, else -1. */
export function signatureMark(raw: string): number {
  let at = raw.startsWith(SIGNATURE) ? 0 : raw.indexOf(AMP_SIGNATURE);
  if (at < 0) return -1;
  if (at > 0) at += 1;
  let mark = 0;
  for (let i = at + SIGNATURE.length, end = i + 7; i < end; i++) {
    const d = hexDigit(raw.charCodeAt(i));
    if (d < 0) return -1;
    mark = mark * 16 + d;
  }
  return mark;
}

export class RememberedResults {
  /** Results of requests with a raw query, by signature mark. */
  readonly #byMark = new Map<number, Remembered>();
  /** The same for callers that pass no raw query: filed under the decoded pairs as JSON. */
  readonly #byPairs = new Map<string, Remembered>();
  /**
   * Marks of signatures verified once (mark + 1 in slot mark mod size; 0 is empty) and when (the
   * count of full verifications then): a request is remembered on its second full verification
   * if that comes within the last REMEMBER_MAX full verifications, so URLs used once leave no
   * entry behind, nor do URLs that come back only after the entries that could hold them have
   * been replaced (a cycle through more URLs than are remembered would only churn entries). A
   * shared slot only forgets a mark or admits an entry early; an entry is still matched whole.
   */
  readonly #seen = new Int32Array(SEEN_SLOTS);
  readonly #seenAt = new Int32Array(SEEN_SLOTS);
  #verifications = 0;
  /** The last raw query marked and its mark: knownQuery and lookup see the same string in turn. */
  #lastRaw: string | undefined;
  #lastMark = -1;

  #mark(raw: string): number {
    if (raw !== this.#lastRaw) {
      this.#lastRaw = raw;
      this.#lastMark = signatureMark(raw);
    }
    return this.#lastMark;
  }

  /** The decoded pairs of `rawQuery` when a request with exactly this raw query is remembered, else undefined. */
  knownQuery(rawQuery: string): readonly (readonly [string, string])[] | undefined {
    const mark = this.#mark(rawQuery);
    if (mark < 0) return undefined;
    const r = this.#byMark.get(mark);
    return r !== undefined && r.rawQuery === rawQuery ? r.query : undefined;
  }

  /** The remembered result of `req` when it is the same request and `now` lies in its window. */
  lookup(req: SignedRequest, now: number): Verified | undefined {
    let r: Remembered | undefined;
    if (req.rawQuery !== undefined) {
      const mark = this.#mark(req.rawQuery);
      if (mark < 0) return undefined;
      r = this.#byMark.get(mark);
      if (r === undefined || r.rawQuery !== req.rawQuery) return undefined;
    } else {
      // JSON keeps the decoded pairs apart: a value may contain any character.
      r = this.#byPairs.get(JSON.stringify(req.query));
      if (r === undefined) return undefined;
    }
    return now >= r.notBefore && now <= r.notAfter && sameRequest(r, req) ? r.verified : undefined;
  }

  /** After a full verification of `req`: marks it, or remembers it when it was marked before. */
  record(req: SignedRequest, v: FullResult): void {
    let mark: number;
    if (req.rawQuery !== undefined) {
      mark = this.#mark(req.rawQuery);
      if (mark < 0) return;
    } else mark = parseInt(v.verified.signature.slice(0, 7), 16) || 0;
    const now = (this.#verifications = (this.#verifications + 1) | 0);
    const slot = mark & (SEEN_SLOTS - 1);
    const recent = this.#seen[slot] === mark + 1 && ((now - this.#seenAt[slot]!) | 0) <= REMEMBER_MAX;
    this.#seen[slot] = mark + 1;
    this.#seenAt[slot] = now;
    if (!recent) return;
    const entry: Remembered = {
      rawQuery: req.rawQuery,
      method: req.method,
      rawPath: req.rawPath,
      query: req.query,
      contentSha256: req.headers.get('x-amz-content-sha256'),
      signedNames: v.signedHeaders,
      signedValues: v.signedHeaders.map((h) => req.headers.get(h)),
      verified: v.verified,
      notBefore: v.time - v.skewMs,
      notAfter: v.time + v.expiresMs,
    };
    if (req.rawQuery !== undefined) {
      if (this.#byMark.size >= REMEMBER_MAX) this.#byMark.clear();
      this.#byMark.set(mark, entry);
    } else {
      if (this.#byPairs.size >= REMEMBER_MAX) this.#byPairs.clear();
      this.#byPairs.set(JSON.stringify(req.query), entry);
    }
  }
}

/**
 * Whether `req` is, in everything its signature covers, the request `r` was verified for (the
 * caller has matched the query already): method, path as sent, the payload-hash header and every
 * signed header's value.
 */
function sameRequest(r: Remembered, req: SignedRequest): boolean {
  if (r.method !== req.method || r.rawPath !== req.rawPath || r.contentSha256 !== req.headers.get('x-amz-content-sha256')) return false;
  const names = r.signedNames;
  for (let i = 0; i < names.length; i++) if (req.headers.get(names[i]!) !== r.signedValues[i]) return false;
  return true;
}
