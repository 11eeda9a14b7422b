/**
 * Wire tokens (spec "Wire token and bootstrap"): BASE64URL(id) "." BASE64URL(32 random bytes),
 * no padding. Only a SHA-256 of the secret is stored; a presented secret is compared with it in
 * constant time.
 */
import * as crypto from 'node:crypto';

const SECRET_BYTES = 32;
const B64URL = /^[A-Za-z0-9_-]+$/;

export interface WireToken {
  id: string;
  secret: Buffer;
}

export function parseWireToken(s: string): WireToken | null {
  const dot = s.indexOf('.');
  if (dot <= 0 || dot !== s.lastIndexOf('.')) return null;
  const idPart = s.slice(0, dot);
  const secretPart = s.slice(dot + 1);
  if (!B64URL.test(idPart) || !B64URL.test(secretPart)) return null;
  const id = Buffer.from(idPart, 'base64url').toString('utf8');
  const secret = Buffer.from(secretPart, 'base64url');
  // Round trips only: a different encoding of the same bytes is not the token that was issued.
  if (secret.length !== SECRET_BYTES || secret.toString('base64url') !== secretPart || Buffer.from(id, 'utf8').toString('base64url') !== idPart) return null;
  return { id, secret };
}

export function newWireToken(id: string): { wire: string; secretHash: string } {
  const secret = crypto.randomBytes(SECRET_BYTES);
  return { wire: `${Buffer.from(id, 'utf8').toString('base64url')}.${secret.toString('base64url')}`, secretHash: hashSecret(secret) };
}

/** One-shot `crypto.hash` where the runtime has it (a third cheaper per request than a Hash object). */
const oneShot = (crypto as { hash?: (algorithm: string, data: Buffer, encoding: 'buffer') => Buffer }).hash;

function sha256(secret: Buffer): Buffer {
  return oneShot !== undefined ? oneShot('sha256', secret, 'buffer') : crypto.createHash('sha256').update(secret).digest();
}

export function hashSecret(secret: Buffer): string {
  return sha256(secret).toString('hex');
}

export function secretMatches(secret: Buffer, storedHash: string): boolean {
  const a = sha256(secret);
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}
