/**
 * Verifies SigV4-signed client requests: the Authorization header form and the presigned
 * query form, canonical request included. Limits from the spec: 15 minutes of clock skew,
 * presigned validity 1 s to 7 days. The result carries what aws-chunked bodies need to check
 * their chunk signatures (seed signature, signing key, scope).
 */
import { timingSafeEqual } from 'node:crypto';
import { S3Error } from '../errors';
import { canonicalRequest, formatAmzDate, parseAmzDate, stringToSign } from './canonical';
import { canonicalQuery, canonicalUri } from './encoding';
import { ALGORITHM, hmac, type SigningKeyCache } from './signing-key';

export const MAX_SKEW_MS = 15 * 60 * 1000; // 15 min
export const MAX_PRESIGNED_SECONDS = 7 * 24 * 3600; // 7 days

/** What a request looks like to the verifier. */
export interface SignedRequest {
  method: string;
  /** The path as sent, still percent-encoded. */
  rawPath: string;
  /** Decoded query pairs in order. */
  query: readonly (readonly [string, string])[];
  /** From `headerValues(req.rawHeaders)`. */
  headers: ReadonlyMap<string, string>;
  /** The query string as sent (after `?`), when known: a cheaper key for remembered presigned results. */
  rawQuery?: string;
}

export interface Verified {
  accessKey: string;
  /** `x-amz-content-sha256` (or UNSIGNED-PAYLOAD for presigned requests). */
  payloadHash: string;
  signature: string;
  signingKey: Buffer;
  amzDate: string;
  /** `<date>/<region>/s3/aws4_request`. */
  scope: string;
  presigned: boolean;
}

export type SecretLookup = (accessKey: string) => string | undefined;

interface Parsed {
  accessKey: string;
  date: string;
  region: string;
  service: string;
  signedHeaders: string[];
  signature: string;
  amzDate: string;
  /** Presigned validity (X-Amz-Expires) in ms; 0 for header signatures. */
  expiresMs: number;
}

function parseCredential(cred: string, malformed: (m: string) => S3Error): Pick<Parsed, 'accessKey' | 'date' | 'region' | 'service'> {
  const parts = cred.split('/');
  if (parts.length !== 5 || parts[4] !== 'aws4_request' || !/^\d{8}$/.test(parts[1]!))
    throw malformed('the Credential should be scoped to a valid date, region and service: <key>/<YYYYMMDD>/<region>/s3/aws4_request');
  return { accessKey: parts[0]!, date: parts[1]!, region: parts[2]!, service: parts[3]! };
}

function parseAuthorization(auth: string, headers: ReadonlyMap<string, string>): Parsed {
  const malformed = (m: string) => new S3Error('AuthorizationHeaderMalformed', `The authorization header is malformed; ${m}`);
  if (!auth.startsWith(ALGORITHM + ' ')) {
    if (auth.startsWith('AWS ')) throw new S3Error('InvalidRequest', 'Signature version 2 is not supported; sign requests with AWS4-HMAC-SHA256');
    throw malformed(`the algorithm must be ${ALGORITHM}`);
  }
  let cred: string | undefined;
  let signed: string | undefined;
  let signature: string | undefined;
  for (const part of auth.slice(ALGORITHM.length + 1).split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (name === 'Credential') cred = value;
    else if (name === 'SignedHeaders') signed = value;
    else if (name === 'Signature') signature = value;
  }
  if (cred === undefined || signed === undefined || signature === undefined) throw malformed('Credential, SignedHeaders and Signature are required');
  const signedHeaders = signed.split(';');
  const c = parseCredential(cred, malformed);
  return { accessKey: c.accessKey, date: c.date, region: c.region, service: c.service, signedHeaders, signature, amzDate: requestTime(headers, signedHeaders), expiresMs: 0 };
}

/**
 * The request time of a header-signed request: `x-amz-date`, else a signed HTTP `Date` header
 * (SigV4 allows either; botocore signs with `Date` when a caller sets one), as `YYYYMMDDTHHMMSSZ`.
 */
function requestTime(headers: ReadonlyMap<string, string>, signedHeaders: readonly string[]): string {
  const amzDate = headers.get('x-amz-date');
  if (amzDate !== undefined) return amzDate;
  const date = headers.get('date');
  const t = date === undefined || !signedHeaders.includes('date') ? NaN : Date.parse(date);
  if (Number.isNaN(t)) throw new S3Error('AccessDenied', 'AWS authentication requires a valid Date or x-amz-date header');
  return formatAmzDate(t);
}

function parsePresigned(q: ReadonlyMap<string, string>, now: number): Parsed {
  const bad = (m: string) => new S3Error('AuthorizationQueryParametersError', m);
  if (q.get('X-Amz-Algorithm') !== ALGORITHM) throw bad(`X-Amz-Algorithm only supports "${ALGORITHM}"`);
  const cred = q.get('X-Amz-Credential');
  const amzDate = q.get('X-Amz-Date');
  const expires = q.get('X-Amz-Expires');
  const signed = q.get('X-Amz-SignedHeaders');
  const signature = q.get('X-Amz-Signature');
  if (cred === undefined || amzDate === undefined || expires === undefined || signed === undefined || signature === undefined)
    throw bad('Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.');
  // Out-of-range expiry is refused with 403, as S3 does for these (ceph/s3-tests checks it).
  if (!/^-?\d+$/.test(expires)) throw bad('X-Amz-Expires should be a number');
  const seconds = Number(expires);
  if (seconds <= 0) throw new S3Error('AccessDenied', 'X-Amz-Expires must be non-negative');
  if (seconds > MAX_PRESIGNED_SECONDS) throw new S3Error('AccessDenied', 'X-Amz-Expires must be less than a week (in seconds) that is 604800');
  const t = parseAmzDate(amzDate);
  if (Number.isNaN(t)) throw bad('X-Amz-Date must be in the ISO8601 Long Format "yyyyMMdd\'T\'HHmmss\'Z\'"');
  if (t - now > MAX_SKEW_MS) throw new S3Error('AccessDenied', 'Request is not valid yet');
  if (now > t + seconds * 1000) throw new S3Error('AccessDenied', 'Request has expired', { 'X-Amz-Expires': expires, Expires: new Date(t + seconds * 1000).toISOString(), ServerTime: new Date(now).toISOString() });
  const c = parseCredential(cred, (m) => bad(`Error parsing the X-Amz-Credential parameter; ${m}`));
  return { accessKey: c.accessKey, date: c.date, region: c.region, service: c.service, signedHeaders: signed.split(';'), signature, amzDate, expiresMs: seconds * 1000 };
}

/** Verified results of exact requests seen before, with the window in which they stay valid. */
interface Remembered {
  verified: Verified;
  notBefore: number;
  notAfter: number;
}

const REMEMBER_MAX = 4096; // entries

export class SigV4Verifier {
  readonly #lookup: SecretLookup;
  readonly #keys: SigningKeyCache;
  readonly #region: string;
  /**
   * A signature covers the method, path, query and every signed header, so a byte-identical
   * request verifies identically: only the time window has to be checked again. Presigned
   * URLs handed to many readers skip the canonical request and the two SHA-256 passes this way.
   */
  readonly #remembered = new Map<string, Remembered>();

  /** `region` empty accepts any region in the credential scope. */
  constructor(lookup: SecretLookup, keys: SigningKeyCache, region = '') {
    this.#lookup = lookup;
    this.#keys = keys;
    this.#region = region;
  }

  /** Whether the request carries any SigV4 authentication at all. */
  static isSigned(req: SignedRequest): boolean {
    return req.headers.has('authorization') || req.query.some(([k]) => k === 'X-Amz-Signature' || k === 'X-Amz-Credential');
  }

  /** Throws an S3Error when the signature is missing, malformed, stale or wrong. */
  verify(req: SignedRequest, now = Date.now()): Verified {
    const key = rememberKey(req);
    if (key === undefined) return this.#verify(req, now).verified;
    const r = this.#remembered.get(key);
    if (r !== undefined && now >= r.notBefore && now <= r.notAfter) return r.verified;
    const v = this.#verify(req, now);
    if (this.#remembered.size >= REMEMBER_MAX) this.#remembered.clear();
    this.#remembered.set(key, { verified: v.verified, notBefore: v.time - MAX_SKEW_MS, notAfter: v.time + v.expiresMs });
    return v.verified;
  }

  /** The verified result, the request time (ms) and the presigned validity (ms). */
  #verify(req: SignedRequest, now: number): { verified: Verified; time: number; expiresMs: number } {
    const auth = req.headers.get('authorization');
    // The query as a map only for the presigned form, the one that reads it.
    let queryMap: Map<string, string> | undefined;
    if (auth === undefined) {
      queryMap = new Map();
      for (const [k, v] of req.query) queryMap.set(k, v);
      if (!queryMap.has('X-Amz-Signature')) throw new S3Error('AccessDenied', 'Access Denied');
    }
    const presigned = queryMap !== undefined;
    const p = queryMap !== undefined ? parsePresigned(queryMap, now) : parseAuthorization(auth!, req.headers);

    const t = parseAmzDate(p.amzDate);
    if (Number.isNaN(t)) throw new S3Error('AccessDenied', 'AWS authentication requires a valid Date or x-amz-date header');
    if (!presigned && Math.abs(now - t) > MAX_SKEW_MS)
      throw new S3Error('RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.', {
        RequestTime: p.amzDate,
        ServerTime: new Date(now).toISOString(),
        MaxAllowedSkewMilliseconds: String(MAX_SKEW_MS),
      });
    if (p.amzDate.slice(0, 8) !== p.date) throw new S3Error('AuthorizationHeaderMalformed', `The authorization header is malformed; the credential date ${p.date} does not match the request date ${p.amzDate.slice(0, 8)}`);
    if (p.service !== 's3') throw new S3Error('AuthorizationHeaderMalformed', `The authorization header is malformed; incorrect service "${p.service}". This endpoint belongs to "s3".`);
    if (this.#region !== '' && p.region !== this.#region)
      throw new S3Error('AuthorizationHeaderMalformed', `The authorization header is malformed; the region '${p.region}' is wrong; expecting '${this.#region}'`, { Region: this.#region });
    if (!p.signedHeaders.includes('host')) throw new S3Error('AccessDenied', 'The host header must be signed');
    const secret = this.#lookup(p.accessKey);
    if (secret === undefined) throw new S3Error('InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.', { AWSAccessKeyId: p.accessKey });

    let payloadHash: string;
    // SDK v3 presigned URLs carry X-Amz-Content-Sha256=UNSIGNED-PAYLOAD in the query.
    if (queryMap !== undefined) payloadHash = queryMap.get('X-Amz-Content-Sha256') ?? req.headers.get('x-amz-content-sha256') ?? 'UNSIGNED-PAYLOAD';
    else {
      const h = req.headers.get('x-amz-content-sha256');
      if (h === undefined) throw new S3Error('InvalidRequest', 'Missing required header for this request: x-amz-content-sha256');
      payloadHash = h;
    }
    const scope = `${p.date}/${p.region}/${p.service}/aws4_request`;
    const canonical = canonicalRequest(req.method, canonicalUri(req.rawPath), canonicalQuery(req.query, true), req.headers, p.signedHeaders, payloadHash);
    const sts = stringToSign(p.amzDate, scope, canonical);
    const signingKey = this.#keys.get(p.accessKey, secret, p.date, p.region, p.service);
    const expected = hmac(signingKey, sts);
    const given = /^[0-9a-f]{64}$/.test(p.signature) ? Buffer.from(p.signature, 'hex') : Buffer.alloc(0);
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw new S3Error('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.', {
        AWSAccessKeyId: p.accessKey,
        StringToSign: sts,
        CanonicalRequest: canonical,
      });
    return { verified: { accessKey: p.accessKey, payloadHash, signature: p.signature, signingKey, amzDate: p.amzDate, scope, presigned }, time: t, expiresMs: p.expiresMs };
  }
}

/**
 * Everything a presigned request's signature covers, as one string; undefined for other
 * requests (header signatures carry x-amz-date to the second, so they rarely repeat).
 */
function rememberKey(req: SignedRequest): string | undefined {
  const auth = req.headers.get('authorization');
  if (auth !== undefined) return undefined;
  let signedList: string | undefined;
  for (const [k, v] of req.query) if (k === 'X-Amz-SignedHeaders') signedList = v;
  if (signedList === undefined) return undefined;
  const signed = signedList.split(';').map((h) => req.headers.get(h) ?? null);
  if (req.rawQuery !== undefined && signed.every((v) => v !== null)) {
    // The request target as sent and the signed header values, newline-separated: neither a
    // request target nor a header value can contain a newline (Node's parser refuses them),
    // so no different request can produce the same key.
    return `${req.method} ${req.rawPath}?${req.rawQuery}\n${req.headers.get('x-amz-content-sha256') ?? ''}\n${signed.join('\n')}`;
  }
  // JSON keeps the parts apart: decoded query values may contain any character, and a
  // separator they could contain would let a different request collide with a verified one.
  return JSON.stringify([req.method, req.rawPath, req.headers.get('x-amz-content-sha256') ?? null, req.query, signedList, signed]);
}
