/**
 * Wire tokens already verified against their record, so the next request with the same token
 * skips the base64 decoding and the SHA-256 (most of what `--auth required` costs per request).
 *
 * An entry is trusted only while the record it was verified against is still the current one:
 * the caller passes the record's present version, and any write to the token (revocation deletes
 * it; a new token under the id is a new write) makes the versions differ, so the token goes
 * through the full check again. The presented secret is compared with the verified one in
 * constant time. Entries live in memory only, one per token id, and are dropped when they stop
 * matching; only successful verifications are kept.
 */
interface Entry {
  /** The token's id as stored (decoded). */
  id: string;
  /** The record version it was verified against. */
  version: number;
  /** The wire token's secret part (canonical BASE64URL). */
  secretPart: string;
}

export class VerifiedTokens {
  /** By the wire token's id part (BASE64URL of the id). */
  readonly #byIdPart = new Map<string, Entry>();

  /**
   * The token id when `wire` is a token verified against the record version that
   * `currentVersion(id)` gives now; otherwise null (and the stale entry is dropped).
   */
  lookup(wire: string, currentVersion: (id: string) => number | null): string | null {
    const dot = wire.indexOf('.');
    if (dot <= 0) return null;
    const idPart = wire.slice(0, dot);
    const e = this.#byIdPart.get(idPart);
    if (e === undefined) return null;
    if (currentVersion(e.id) !== e.version) {
      this.#byIdPart.delete(idPart);
      return null;
    }
    return sameInConstantTime(wire, dot + 1, e.secretPart) ? e.id : null;
  }

  /** Remember a token that just passed the full check against the record at `version`. */
  remember(wire: string, id: string, version: number): void {
    const dot = wire.indexOf('.');
    this.#byIdPart.set(wire.slice(0, dot), { id, version, secretPart: wire.slice(dot + 1) });
  }
}

/**
 * Whether `s` from `start` on equals `expected`, looking at every character of `expected` whatever
 * differs where (no early exit), so the time taken says nothing about how much of a guess was right.
 * Cheaper per request than copying both into buffers for crypto.timingSafeEqual.
 */
function sameInConstantTime(s: string, start: number, expected: string): boolean {
  let diff = (s.length - start) ^ expected.length;
  for (let i = 0; i < expected.length; i++) diff |= s.charCodeAt(start + i) ^ expected.charCodeAt(i);
  return diff === 0;
}
