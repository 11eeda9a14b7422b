/**
 * Verifies SigV4-signed client requests: the Authorization header form and the presigned
 * query form, canonical request included. Limits from the spec: 15 minutes of clock skew,
 * presigned validity 1 s to 7 days. The result carries what aws-chunked bodies need to check
 * their chunk signatures (seed signature, signing key, scope).
 */
import { S3Error } from '../errors';
import { canonicalRequest, formatAmzDate, parseAmzDate, stringToSign } from './canonical';
import { canonicalQuery, canonicalQueryOfRaw, canonicalUri } from './encoding';
import { sameSignature } from './hmac-key';
import { type FullResult, RememberedResults } from './remembered';
import { ALGORITHM, type SigningKeyCache } from './signing-key';

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
  /**
   * The query string as sent (after `?`), when known, of which `query` must be the parse
   * (`parseQuery`): a cheaper key for remembered presigned results, and, when it is written
   * canonically, the canonical query itself.
   */
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
  signedHeaders: readonly string[];
  /** The SignedHeaders value as sent: `signedHeaders` joined with `;`. */
  signedText: string;
  signature: string;
  amzDate: string;
  /** Presigned validity (X-Amz-Expires) in ms; 0 for header signatures. */
  expiresMs: number;
}

/** Whether `s` is exactly eight ASCII digits (a credential date). */
function eightDigits(s: string): boolean {
  if (s.length !== 8) return false;
  for (let i = 0; i < 8; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** `<key>/<YYYYMMDD>/<region>/<service>/aws4_request`, read with indexOf (no array per request). */
function parseCredential(cred: string, malformed: (m: string) => S3Error): Pick<Parsed, 'accessKey' | 'date' | 'region' | 'service'> {
  const a = cred.indexOf('/');
  const b = a < 0 ? -1 : cred.indexOf('/', a + 1);
  const c = b < 0 ? -1 : cred.indexOf('/', b + 1);
  const d = c < 0 ? -1 : cred.indexOf('/', c + 1);
  const date = cred.slice(a + 1, b);
  if (d < 0 || cred.indexOf('/', d + 1) >= 0 || cred.slice(d + 1) !== 'aws4_request' || !eightDigits(date))
    throw malformed('the Credential should be scoped to a valid date, region and service: <key>/<YYYYMMDD>/<region>/s3/aws4_request');
  return { accessKey: cred.slice(0, a), date, region: cred.slice(b + 1, c), service: cred.slice(c + 1, d) };
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
  return { accessKey: c.accessKey, date: c.date, region: c.region, service: c.service, signedHeaders, signedText: signed, signature, amzDate: requestTime(headers, signedHeaders), expiresMs: 0 };
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

/** The presigned form's query parameters (the last of a repeated name counts, as S3 reads them). */
interface PresignedParams {
  algorithm: string | undefined;
  credential: string | undefined;
  amzDate: string | undefined;
  expires: string | undefined;
  signedHeaders: string | undefined;
  signature: string | undefined;
  contentSha256: string | undefined;
}

/**
 * One pass over the pairs for the parameters the presigned form reads (no map built per request).
 * Names are told apart by their seventh character first, then compared once, in full (so no
 * prefix check is needed first): `parseQuery` hands these names out as constants, compared by
 * identity; another spelling is compared character by character and does not match.
 */
function presignedParams(query: readonly (readonly [string, string])[]): PresignedParams {
  const p: PresignedParams = { algorithm: undefined, credential: undefined, amzDate: undefined, expires: undefined, signedHeaders: undefined, signature: undefined, contentSha256: undefined };
  for (let i = 0; i < query.length; i++) {
    const k = query[i]![0];
    const v = query[i]![1];
    if (k.length < 10) continue;
    switch (k.charCodeAt(6)) {
      case 65 /* A */:
        if (k === 'X-Amz-Algorithm') p.algorithm = v;
        break;
      case 67 /* C */:
        if (k === 'X-Amz-Credential') p.credential = v;
        else if (k === 'X-Amz-Content-Sha256') p.contentSha256 = v;
        break;
      case 68 /* D */:
        if (k === 'X-Amz-Date') p.amzDate = v;
        break;
      case 69 /* E */:
        if (k === 'X-Amz-Expires') p.expires = v;
        break;
      case 83 /* S */:
        if (k === 'X-Amz-Signature') p.signature = v;
        else if (k === 'X-Amz-SignedHeaders') p.signedHeaders = v;
        break;
    }
  }
  return p;
}

const queryError = (m: string) => new S3Error('AuthorizationQueryParametersError', m);
const credentialError = (m: string) => queryError(`Error parsing the X-Amz-Credential parameter; ${m}`);

/** Whether `s` is an optional `-` and one or more ASCII digits (what X-Amz-Expires may be). */
function isInteger(s: string): boolean {
  const from = s.charCodeAt(0) === 45 /* - */ ? 1 : 0;
  if (s.length <= from) return false;
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** The last X-Amz-SignedHeaders value split, kept: one client's URLs all sign the same headers. */
let lastSigned = '';
let lastSignedNames: readonly string[] = Object.freeze(['']); // ''.split(';')
function signedNames(signed: string): readonly string[] {
  if (signed !== lastSigned) {
    lastSignedNames = Object.freeze(signed.split(';'));
    lastSigned = signed;
  }
  return lastSignedNames;
}

/** Parsed presigned parameters and the request time (ms), parsed once. */
function parsePresigned(q: PresignedParams, now: number): Parsed & { time: number } {
  if (q.algorithm !== ALGORITHM) throw queryError(`X-Amz-Algorithm only supports "${ALGORITHM}"`);
  const cred = q.credential;
  const amzDate = q.amzDate;
  const expires = q.expires;
  const signed = q.signedHeaders;
  const signature = q.signature;
  if (cred === undefined || amzDate === undefined || expires === undefined || signed === undefined || signature === undefined)
    throw queryError('Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.');
  // Out-of-range expiry is refused with 403, as S3 does for these (ceph/s3-tests checks it).
  if (!isInteger(expires)) throw queryError('X-Amz-Expires should be a number');
  const seconds = Number(expires);
  if (seconds <= 0) throw new S3Error('AccessDenied', 'X-Amz-Expires must be non-negative');
  if (seconds > MAX_PRESIGNED_SECONDS) throw new S3Error('AccessDenied', 'X-Amz-Expires must be less than a week (in seconds) that is 604800');
  const t = parseAmzDate(amzDate);
  if (Number.isNaN(t)) throw queryError('X-Amz-Date must be in the ISO8601 Long Format "yyyyMMdd\'T\'HHmmss\'Z\'"');
  if (t - now > MAX_SKEW_MS) throw new S3Error('AccessDenied', 'Request is not valid yet');
  if (now > t + seconds * 1000) throw new S3Error('AccessDenied', 'Request has expired', { 'X-Amz-Expires': expires, Expires: new Date(t + seconds * 1000).toISOString(), ServerTime: new Date(now).toISOString() });
  const c = parseCredential(cred, credentialError);
  return { accessKey: c.accessKey, date: c.date, region: c.region, service: c.service, signedHeaders: signedNames(signed), signedText: signed, signature, amzDate, expiresMs: seconds * 1000, time: t };
}

export class SigV4Verifier {
  readonly #lookup: SecretLookup;
  readonly #keys: SigningKeyCache;
  readonly #region: string;
  /** Verified presigned requests, reused for the same request within its window (remembered.ts). */
  readonly #remembered = new RememberedResults();

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

  /**
   * The decoded pairs of `rawQuery` when a presigned request with exactly this raw query is
   * remembered, else undefined: a caller that parses each request's query (the server) skips the
   * parse for a repeated presigned URL, and keeps no map of its own.
   */
  knownQuery(rawQuery: string): readonly (readonly [string, string])[] | undefined {
    return this.#remembered.knownQuery(rawQuery);
  }

  /** Throws an S3Error when the signature is missing, malformed, stale or wrong. */
  verify(req: SignedRequest, now = Date.now()): Verified {
    // Header signatures carry x-amz-date to the second, so they rarely repeat: never remembered.
    if (req.headers.has('authorization') || req.query.length === 0) return this.#verify(req, now).verified;
    const known = this.#remembered.lookup(req, now);
    if (known !== undefined) return known;
    const v = this.#verify(req, now);
    this.#remembered.record(req, v);
    return v.verified;
  }

  /** The verified result, the request time (ms), the presigned validity (ms) and the signed header names. */
  #verify(req: SignedRequest, now: number): FullResult {
    const auth = req.headers.get('authorization');
    // The query's authentication parameters only for the presigned form, the one that reads them.
    let q: PresignedParams | undefined;
    if (auth === undefined) {
      q = presignedParams(req.query);
      if (q.signature === undefined) throw new S3Error('AccessDenied', 'Access Denied');
    }
    const presigned = q !== undefined;
    const p = q !== undefined ? parsePresigned(q, now) : parseAuthorization(auth!, req.headers);

    const t = q !== undefined ? (p as Parsed & { time: number }).time : parseAmzDate(p.amzDate);
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
    if (q !== undefined) payloadHash = q.contentSha256 ?? req.headers.get('x-amz-content-sha256') ?? 'UNSIGNED-PAYLOAD';
    else {
      const h = req.headers.get('x-amz-content-sha256');
      if (h === undefined) throw new S3Error('InvalidRequest', 'Missing required header for this request: x-amz-content-sha256');
      payloadHash = h;
    }
    const scope = `${p.date}/${p.region}/${p.service}/aws4_request`;
    // The raw query is what `req.query` was parsed from: when it is written canonically already,
    // it is its own canonical form (sorted), with no pair decoded and encoded again.
    const query = (req.rawQuery !== undefined ? canonicalQueryOfRaw(req.rawQuery, true) : undefined) ?? canonicalQuery(req.query, true);
    const canonical = canonicalRequest(req.method, canonicalUri(req.rawPath), query, req.headers, p.signedHeaders, payloadHash, p.signedText);
    const sts = stringToSign(p.amzDate, scope, canonical);
    const key = this.#keys.hmacKey(p.accessKey, secret, p.date, p.region, p.service);
    const signingKey = key.key;
    // Lower-case hex, as every SDK sends it (an upper-case signature never matched before either).
    if (!sameSignature(p.signature, key.hex(sts)))
      throw new S3Error('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.', {
        AWSAccessKeyId: p.accessKey,
        StringToSign: sts,
        CanonicalRequest: canonical,
      });
    return {
      verified: { accessKey: p.accessKey, payloadHash, signature: p.signature, signingKey, amzDate: p.amzDate, scope, presigned },
      time: t,
      expiresMs: p.expiresMs,
      signedHeaders: p.signedHeaders,
      skewMs: MAX_SKEW_MS,
    };
  }
}
