/**
 * Webhook signatures and callback tokens on their own: what a receiver verifies with the
 * published JWKS, and what makes a token invalid.
 */
import { createHash, type JsonWebKey } from 'node:crypto';
import { SigningKey } from '../../../../src/gateway/ds/subscriptions/signing-key';
import { CallbackTokens } from '../../../../src/gateway/ds/subscriptions/callback-token';
import { verifySignature } from './fixtures';

describe('webhook signing key', () => {
  const key = SigningKey.generate();
  const now = Math.floor(Date.now() / 1000);

  test('a signature verifies with the JWKS, and not over another body, another key or a stale timestamp', () => {
    const body = '{"subscription_id":"s"}';
    const header = key.signatureHeader(body, now);
    expect(header).toMatch(new RegExp(`^t=${now},kid=${key.kid},ed25519=[A-Za-z0-9_-]+$`));
    expect(verifySignature(body, header, key.jwks())).toBe(true);
    expect(verifySignature(`${body} `, header, key.jwks())).toBe(false);
    expect(verifySignature(body, header, SigningKey.generate().jwks())).toBe(false);
    expect(verifySignature(body, key.signatureHeader(body, now - 600), key.jwks())).toBe(false);
  });

  test('the key id is ds_ and the RFC 7638 thumbprint of the public key', () => {
    const { x } = key.publicJwk;
    const thumbprint = createHash('sha256').update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest('base64url');
    expect(key.kid).toBe(`ds_${thumbprint}`);
    expect(key.jwks()).toEqual({ keys: [{ kty: 'OKP', crv: 'Ed25519', x, kid: key.kid, use: 'sig', alg: 'EdDSA' }] });
  });

  test('a key restored from its private JWK signs as the original', () => {
    const restored = SigningKey.fromJwk(key.toJwk() as JsonWebKey);
    expect(restored.kid).toBe(key.kid);
    expect(verifySignature('x', restored.signatureHeader('x', now), key.jwks())).toBe(true);
  });
});

describe('callback tokens', () => {
  const tokens = new CallbackTokens();
  const now = Date.now();

  test('a token names its subscription and generation', () => {
    expect(tokens.check(tokens.issue('s', 4, now), 's', now)).toEqual({ ok: true, generation: 4 });
  });

  test('a token is invalid for another subscription, under another key or altered, and expired after an hour', () => {
    const t = tokens.issue('s', 1, now);
    expect(tokens.check(t, 'other', now)).toEqual({ ok: false, code: 'TOKEN_INVALID' });
    expect(new CallbackTokens().check(t, 's', now)).toEqual({ ok: false, code: 'TOKEN_INVALID' });
    expect(tokens.check(`${t}.x`, 's', now)).toEqual({ ok: false, code: 'TOKEN_INVALID' });
    expect(tokens.check('garbage', 's', now)).toEqual({ ok: false, code: 'TOKEN_INVALID' });
    const forged = `${Buffer.from(JSON.stringify({ sub: 's', gen: 9, exp: 9e9 })).toString('base64url')}.${t.split('.')[1]}`;
    expect(tokens.check(forged, 's', now)).toEqual({ ok: false, code: 'TOKEN_INVALID' });
    expect(tokens.check(t, 's', now + 3601_000)).toEqual({ ok: false, code: 'TOKEN_EXPIRED' });
  });
});
