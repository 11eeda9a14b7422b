/**
 * Client authentication. `anonymous` accepts everything (the origin's credentials decide what
 * is reachable); `static` requires a valid SigV4 signature, header or presigned, by the
 * configured key pair.
 */
import { type CacheConfig } from './config';
import { S3Error } from './errors';
import { SigningKeyCache, SigV4Verifier, type SignedRequest, type Verified } from './sigv4';

export interface Authenticator {
  /** The verified signature (static mode) or undefined (anonymous); throws an S3Error when it is missing or wrong. */
  verify(req: SignedRequest, now?: number): Verified | undefined;
  /** The parsed pairs of a raw query that a remembered verified request carried, else undefined (parse it). */
  knownQuery(rawQuery: string): readonly (readonly [string, string])[] | undefined;
}

export function authenticator(a: CacheConfig['auth']): Authenticator {
  if (a.mode === 'anonymous') return { verify: () => undefined, knownQuery: () => undefined };
  const verifier = new SigV4Verifier((k) => (k === a.access_key_id ? a.secret_access_key : undefined), new SigningKeyCache(), a.region);
  return {
    verify: (req, now) => {
      const v = verifier.verify(req, now);
      if (v === undefined) throw new S3Error('AccessDenied', 'Access Denied');
      return v;
    },
    knownQuery: (rawQuery) => verifier.knownQuery(rawQuery),
  };
}
