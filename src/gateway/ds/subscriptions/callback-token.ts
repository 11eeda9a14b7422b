/**
 * Callback tokens: the bearer a consumer sends with `callback`, `ack` and `release`. A token
 * names its subscription and the wake generation it was issued for, and is HMAC-SHA256 signed
 * with the node's token key (kept in the state file, so tokens survive a restart):
 *
 *   base64url(JSON {sub, gen, exp}) "." base64url(HMAC(key, first part))
 *
 * A genuine token for an older generation is how a stale consumer is recognised and answered
 * FENCED (409) rather than TOKEN_INVALID (401).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** How long a token is accepted at all, in seconds; leases and generations do the real fencing. */
const TOKEN_LIFETIME_S = 3600;

export type TokenCheck = { ok: true; generation: number } | { ok: false; code: 'TOKEN_INVALID' | 'TOKEN_EXPIRED' };

export class CallbackTokens {
  readonly #key: Buffer;

  constructor(key: Buffer = randomBytes(32)) {
    this.#key = key;
  }

  get key(): Buffer {
    return this.#key;
  }

  issue(subscriptionId: string, generation: number, nowMs: number): string {
    const payload = Buffer.from(
      JSON.stringify({ sub: subscriptionId, gen: generation, exp: Math.floor(nowMs / 1000) + TOKEN_LIFETIME_S }),
    ).toString('base64url');
    return `${payload}.${this.#mac(payload)}`;
  }

  check(token: string, subscriptionId: string, nowMs: number): TokenCheck {
    const [payload, mac, extra] = token.split('.');
    if (payload === undefined || mac === undefined || extra !== undefined) return { ok: false, code: 'TOKEN_INVALID' };
    const expected = Buffer.from(this.#mac(payload));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, code: 'TOKEN_INVALID' };
    let claims: unknown;
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return { ok: false, code: 'TOKEN_INVALID' };
    }
    const c = claims as { sub?: unknown; gen?: unknown; exp?: unknown };
    if (c.sub !== subscriptionId || typeof c.gen !== 'number' || typeof c.exp !== 'number') return { ok: false, code: 'TOKEN_INVALID' };
    if (Math.floor(nowMs / 1000) > c.exp) return { ok: false, code: 'TOKEN_EXPIRED' };
    return { ok: true, generation: c.gen };
  }

  #mac(payload: string): string {
    return createHmac('sha256', this.#key).update(payload).digest('base64url');
  }
}
