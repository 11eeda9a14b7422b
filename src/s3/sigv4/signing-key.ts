/**
 * SigV4 signing keys. Deriving one costs four HMACs, a signature with a cached key one (two
 * SHA-256 passes, hmac-key.ts), so keys are cached per access key, day, region and service.
 */
import * as crypto from 'node:crypto';
import { createHash, createHmac } from 'node:crypto';
import { HmacKey } from './hmac-key';

export const ALGORITHM = 'AWS4-HMAC-SHA256';
export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** `crypto.hash` (Node >= 20.12): one-shot, without a Hash object; about 1 µs less per canonical request here. */
const oneShot = (crypto as { hash?: (algorithm: string, data: string | Buffer, encoding: 'hex') => string }).hash;

export function sha256Hex(data: string | Buffer): string {
  return oneShot !== undefined ? oneShot('sha256', data, 'hex') : createHash('sha256').update(data).digest('hex');
}

export function hmac(key: Buffer | string, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

export function deriveSigningKey(secret: string, date: string, region: string, service: string): Buffer {
  return hmac(hmac(hmac(hmac('AWS4' + secret, date), region), service), 'aws4_request');
}

/**
 * A bounded cache of derived keys; a day's keys for a handful of clients fit easily. Each is kept
 * as an HmacKey (its padded blocks ready), so a signature under a cached key is two SHA-256
 * passes and no HMAC object.
 */
export class SigningKeyCache {
  readonly #keys = new Map<string, HmacKey>();
  readonly #max: number;
  /** The last key handed out: nearly every request of a day uses the same one, so no id string is built for it. */
  #last: { accessKey: string; secret: string; date: string; region: string; service: string; key: HmacKey } | undefined;

  constructor(max = 1024) {
    this.#max = max;
  }

  get(accessKey: string, secret: string, date: string, region: string, service: string): Buffer {
    return this.hmacKey(accessKey, secret, date, region, service).key;
  }

  /** The signing key of (access key, secret, date, region, service), ready to sign with. */
  hmacKey(accessKey: string, secret: string, date: string, region: string, service: string): HmacKey {
    const l = this.#last;
    if (l !== undefined && l.date === date && l.accessKey === accessKey && l.region === region && l.service === service && l.secret === secret) return l.key;
    // The secret is part of the cache key so a rotated secret never reuses a stale key.
    const id = `${accessKey}\n${date}\n${region}\n${service}\n${secret}`;
    let key = this.#keys.get(id);
    if (key === undefined) {
      if (this.#keys.size >= this.#max) this.#keys.clear();
      key = new HmacKey(deriveSigningKey(secret, date, region, service));
      this.#keys.set(id, key);
    }
    this.#last = { accessKey, secret, date, region, service, key };
    return key;
  }

  get size(): number {
    return this.#keys.size;
  }
}
