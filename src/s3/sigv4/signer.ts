/**
 * Signs requests toward the origin with the endpoint's own credentials. Bodies stream
 * through unhashed, so the payload is always `UNSIGNED-PAYLOAD` (the spec's choice).
 */
import { canonicalRequest, formatAmzDate, stringToSign } from './canonical';
import { canonicalQuery, canonicalUri } from './encoding';
import { ALGORITHM, hmac, type SigningKeyCache } from './signing-key';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string | undefined;
}

export interface OutgoingRequest {
  method: string;
  /** Host header value (host[:port]). */
  host: string;
  /** Path as it goes on the wire (already encoded). */
  path: string;
  query: readonly (readonly [string, string])[];
  /** Lower-case names; the signer adds its own headers here. */
  headers: Record<string, string>;
}

/** Headers that proxies and agents leave alone, so they can be signed safely. */
function signable(name: string): boolean {
  return name === 'host' || name.startsWith('x-amz-') || name === 'content-type' || name === 'content-md5' || name === 'range' || name.startsWith('if-');
}

/** Adds x-amz-date, x-amz-content-sha256, x-amz-security-token and Authorization to `req.headers`. */
export function signOutgoing(req: OutgoingRequest, creds: Credentials, region: string, keys: SigningKeyCache, now = Date.now(), payloadHash = 'UNSIGNED-PAYLOAD'): void {
  const amzDate = formatAmzDate(now);
  const date = amzDate.slice(0, 8);
  const h = req.headers;
  h['x-amz-date'] = amzDate;
  h['x-amz-content-sha256'] = payloadHash;
  if (creds.sessionToken) h['x-amz-security-token'] = creds.sessionToken;
  else delete h['x-amz-security-token'];
  const all = new Map<string, string>();
  for (const [k, v] of Object.entries(h)) all.set(k, v.trim().replace(/ {2,}/g, ' '));
  all.set('host', req.host);
  const signed = [...all.keys()].filter(signable).sort();
  const scope = `${date}/${region}/s3/aws4_request`;
  const canonical = canonicalRequest(req.method, canonicalUri(req.path), canonicalQuery(req.query, false), all, signed, payloadHash);
  const signature = hmac(keys.get(creds.accessKeyId, creds.secretAccessKey, date, region, 's3'), stringToSign(amzDate, scope, canonical)).toString('hex');
  h['authorization'] = `${ALGORITHM} Credential=${creds.accessKeyId}/${scope}, SignedHeaders=${signed.join(';')}, Signature=${signature}`;
}

/** Presigns a URL (used by tests and tools; the endpoint itself never presigns). */
export function presignUrl(
  method: string,
  url: URL,
  creds: Credentials,
  region: string,
  keys: SigningKeyCache,
  expiresSeconds: number,
  now = Date.now(),
): string {
  const amzDate = formatAmzDate(now);
  const date = amzDate.slice(0, 8);
  const scope = `${date}/${region}/s3/aws4_request`;
  const pairs: [string, string][] = [...url.searchParams.entries()];
  pairs.push(['X-Amz-Algorithm', ALGORITHM], ['X-Amz-Credential', `${creds.accessKeyId}/${scope}`], ['X-Amz-Date', amzDate], ['X-Amz-Expires', String(expiresSeconds)], ['X-Amz-SignedHeaders', 'host']);
  if (creds.sessionToken) pairs.push(['X-Amz-Security-Token', creds.sessionToken]);
  const headers = new Map([['host', url.host]]);
  const canonical = canonicalRequest(method, canonicalUri(url.pathname), canonicalQuery(pairs, false), headers, ['host'], 'UNSIGNED-PAYLOAD');
  const signature = hmac(keys.get(creds.accessKeyId, creds.secretAccessKey, date, region, 's3'), stringToSign(amzDate, scope, canonical)).toString('hex');
  return `${url.protocol}//${url.host}${url.pathname}?${canonicalQuery(pairs, false)}&X-Amz-Signature=${signature}`;
}
