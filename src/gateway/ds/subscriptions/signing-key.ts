/**
 * The node's webhook signing key: Ed25519, published as a JWK set at `__ds/jwks.json`.
 * A webhook carries `Webhook-Signature: t=<unix seconds>,kid=<kid>,ed25519=<base64url>`, the
 * signature over the bytes `${t}.${rawBody}`, so a receiver can check both origin and age.
 * The key id is `ds_` + the RFC 7638 thumbprint of the public key.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, type JsonWebKey, type KeyObject } from 'node:crypto';

/** A public key as published in the JWK set. */
export interface PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  use: 'sig';
  alg: 'EdDSA';
}

export class SigningKey {
  readonly kid: string;
  readonly publicJwk: PublicJwk;
  readonly #privateKey: KeyObject;

  private constructor(privateKey: KeyObject) {
    this.#privateKey = privateKey;
    const pub = createPublicKey(privateKey).export({ format: 'jwk' });
    if (pub.kty !== 'OKP' || pub.crv !== 'Ed25519' || typeof pub.x !== 'string') throw new Error('not an Ed25519 key');
    // RFC 7638: the required members, in lexicographic order, no whitespace.
    const thumbprint = createHash('sha256').update(JSON.stringify({ crv: pub.crv, kty: pub.kty, x: pub.x })).digest('base64url');
    this.kid = `ds_${thumbprint}`;
    this.publicJwk = { kty: 'OKP', crv: 'Ed25519', x: pub.x, kid: this.kid, use: 'sig', alg: 'EdDSA' };
  }

  static generate(): SigningKey {
    return new SigningKey(generateKeyPairSync('ed25519').privateKey);
  }

  /** From the private JWK `toJwk()` returned. */
  static fromJwk(jwk: JsonWebKey): SigningKey {
    return new SigningKey(createPrivateKey({ key: jwk, format: 'jwk' }));
  }

  /** The private key as a JWK (with `d`), for the state file. */
  toJwk(): JsonWebKey {
    return this.#privateKey.export({ format: 'jwk' });
  }

  /** The JWK set served at `__ds/jwks.json`. */
  jwks(): { keys: PublicJwk[] } {
    return { keys: [{ ...this.publicJwk }] };
  }

  /** The `Webhook-Signature` header value for `rawBody`, signed at `unixSeconds`. */
  signatureHeader(rawBody: string, unixSeconds: number): string {
    const signature = sign(null, Buffer.from(`${unixSeconds}.${rawBody}`), this.#privateKey).toString('base64url');
    return `t=${unixSeconds},kid=${this.kid},ed25519=${signature}`;
  }
}
