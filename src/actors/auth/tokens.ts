/**
 * Bearer tokens over the MetaStore (records `tokens/<id>`): bootstrap, authentication, issue,
 * list, revoke. Only a hash of each secret is stored; the wire token appears once, in the issue
 * response. Revocation deletes the record, so the very next request with it is unknown (401).
 */
import { isDeepStrictEqual } from 'node:util';
import { SvcError } from '../../errors';
import { MetaConflictError, type MetaStore } from '../meta/meta-store';
import { withinRequestDeadline } from '../meta/request-deadline';
import { ROOT_SCOPE, type Scope, scopeErrors } from './scope';
import { denial, expired, matches, widening } from './scope-rules';
import { VerifiedTokens } from './verified-tokens';
import { hashSecret, newWireToken, parseWireToken, secretMatches } from './wire-token';

/** The reserved id whose scope applies to requests without a credential. */
export const ANONYMOUS = 'anonymous';
const PREFIX = 'tokens/';
const ID_RE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** A token record as stored (the secret's hash only); what a gateway thread's TokenReplica holds. */
export interface StoredToken {
  id: string;
  scope: Scope;
  createdAtMs: number;
  issuedBy: string;
  secretHash: string;
}

export interface TokenRecord {
  id: string;
  scope: Scope;
  createdAtMs: number;
  issuedBy: string;
}

/** Who a request is: a token's id and scope. */
export interface Principal {
  id: string;
  scope: Scope;
}

/** Why a request has no principal (all answered 401). */
export type AuthFailure = 'absent' | 'malformed' | 'unknown' | 'expired';

/** A stored token with its record version (a new version: verified wire tokens are checked again). */
export interface VersionedToken {
  version: number;
  value: StoredToken;
}

/** What authenticates a request: the Tokens actor, or a gateway thread's replica of its records. */
export interface Authenticator {
  authenticate(authorization: string | undefined): Promise<Principal | AuthFailure>;
  authenticateNow(authorization: string | undefined): Principal | AuthFailure | null;
}

export class Tokens implements Authenticator {
  readonly #meta: MetaStore;
  readonly #now: () => number;
  readonly #check: (authorization: string | undefined) => Principal | AuthFailure;
  /** Told after every change this node makes (issue, revoke, bootstrap), before it is answered. */
  #changed: (() => Promise<void>) | null = null;

  constructor(meta: MetaStore, now: () => number = Date.now) {
    this.#meta = meta;
    this.#now = now;
    this.#check = tokenCheck((id) => this.#meta.get<StoredToken>(PREFIX + id), now);
  }

  /**
   * Every token record now, for a gateway thread's replica (`--gateway-threads`). With the local
   * metadata store the node's own changes are the only ones, and `onChange` reports each.
   */
  records(): VersionedToken[] {
    return this.#meta.list<StoredToken>(PREFIX).map((r) => ({ version: r.version, value: r.value }));
  }

  /**
   * `fn` runs after each change this node makes and before the change is answered: the admin API
   * answers an issue or a revoke only once every gateway thread has the new records, so the very
   * next request on any thread sees it.
   */
  onChange(fn: () => Promise<void>): void {
    this.#changed = fn;
  }

  /**
   * Seed the root token (idempotent across restarts and nodes). The same id with another secret
   * is refused: the caller fails startup with this error's message.
   */
  async bootstrap(wire: string): Promise<string> {
    const t = parseWireToken(wire.trim());
    if (t === null) throw new Error('the bootstrap token is not a wire token (BASE64URL(id).BASE64URL(32 random bytes), no padding)');
    if (t.id === ANONYMOUS) throw new Error(`the bootstrap token cannot use the reserved id ${ANONYMOUS}`);
    const existing = this.#meta.get<StoredToken>(PREFIX + t.id);
    if (existing !== null) {
      if (!secretMatches(t.secret, existing.value.secretHash)) {
        throw new Error(`a different token with id ${JSON.stringify(t.id)} already exists: the bootstrap token must be the one this cluster was first started with`);
      }
      // The root scope grows with the product (a new listener's audience and operations): a
      // bootstrap record written by an older version gets today's, so the root token stays root.
      if (existing.value.issuedBy === 'bootstrap' && !isDeepStrictEqual(existing.value.scope, ROOT_SCOPE)) {
        try {
          await this.#meta.put<StoredToken>(PREFIX + t.id, { ...existing.value, scope: ROOT_SCOPE }, { version: existing.version });
          await this.#changed?.();
        } catch (err) {
          // Another node upgraded it at the same moment: the same scope.
          if (!(err instanceof MetaConflictError)) throw err;
        }
      }
      return t.id;
    }
    const secretHash = hashSecret(t.secret);
    try {
      await this.#meta.put<StoredToken>(PREFIX + t.id, { id: t.id, scope: ROOT_SCOPE, createdAtMs: this.#now(), issuedBy: 'bootstrap', secretHash }, { absent: true });
    } catch (err) {
      // Another node bootstrapped the same id at the same moment: fine if it is the same token.
      if (!(err instanceof MetaConflictError)) throw err;
      return this.bootstrap(wire);
    }
    return t.id;
  }

  /** Any token at all (with auth required and none, nobody could ever get in). */
  any(): boolean {
    return this.#meta.list(PREFIX).length > 0;
  }

  /** The principal of a request's Authorization header (absent: the anonymous token, if it exists). */
  async authenticate(authorization: string | undefined): Promise<Principal | AuthFailure> {
    // Revocation is effective on the next request cluster-wide: the view must be current. Bounded
    // (request-deadline.ts): without etcd's quorum the request is answered 503 in time, not after 10 s.
    await withinRequestDeadline(this.#meta.sync(), 'the token check');
    return this.#check(authorization);
  }

  /**
   * The same answer as `authenticate`, at once, when the metadata view needs no sync first
   * (the local store); null when it does (then call `authenticate`). Keeps a request's handler
   * running in the turn the request arrived in, as it does without auth.
   */
  authenticateNow(authorization: string | undefined): Principal | AuthFailure | null {
    return this.#meta.viewIsCurrent() ? this.#check(authorization) : null;
  }

  /** Token records the caller's `tokens` matchers cover (never a secret). */
  list(caller: Principal): { count: number; tokens: TokenRecord[] } {
    const tokens = this.#meta
      .list<StoredToken>(PREFIX)
      .filter((r) => matches(caller.scope.tokens, r.value.id))
      .map((r) => publicRecord(r.value));
    return { count: tokens.length, tokens };
  }

  /** POST /admin/tokens: 400 bad id or scope, 403 wider than the caller's, 409 the id exists. */
  async issue(caller: Principal, body: unknown): Promise<{ id: string; token: string; scope: Scope; createdAtMs: number }> {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new SvcError('bad_request', 'the body must be {"id": string, "scope": {...}}');
    const b = body as Record<string, unknown>;
    const unknownKeys = Object.keys(b).filter((k) => k !== 'id' && k !== 'scope');
    if (unknownKeys.length > 0) throw new SvcError('bad_request', `unknown keys: ${unknownKeys.join(', ')}`);
    const id = b['id'];
    if (typeof id !== 'string' || !ID_RE.test(id)) throw new SvcError('bad_request', 'id must be 1-128 characters of A-Z a-z 0-9 . _ : - starting with a letter or digit');
    const problems = scopeErrors(b['scope']);
    if (problems.length > 0) throw new SvcError('bad_request', problems.join('; '));
    const scope = b['scope'] as Scope;
    if (id === ANONYMOUS && (scope.audiences ?? []).includes('admin')) throw new SvcError('bad_request', `the ${ANONYMOUS} token cannot hold the admin audience`);
    const why = denial(caller.scope, { audience: 'admin', op: 'issue_token', group: 'tokens', write: true, token: id });
    if (why !== null) throw new SvcError('forbidden', why);
    const wider = widening(scope, caller.scope);
    if (wider !== null) throw new SvcError('forbidden', `the scope is wider than the issuer's: ${wider}`);
    const { wire, secretHash } = newWireToken(id);
    const stored: StoredToken = { id, scope, createdAtMs: this.#now(), issuedBy: caller.id, secretHash };
    try {
      await this.#meta.put(PREFIX + id, stored, { absent: true });
    } catch (err) {
      if (err instanceof MetaConflictError) throw new SvcError('conflict', `a token with id ${id} exists`);
      throw err;
    }
    await this.#changed?.();
    // IssueTokenResponse (spec "Token records"): the wire token, here and never again.
    return { id, token: wire, scope, createdAtMs: stored.createdAtMs };
  }

  /** DELETE /admin/tokens/{id}: 404 unknown, 409 changed concurrently. */
  async revoke(caller: Principal, id: string): Promise<void> {
    const why = denial(caller.scope, { audience: 'admin', op: 'revoke_token', group: 'tokens', write: true, token: id });
    if (why !== null) throw new SvcError('forbidden', why);
    const rec = this.#meta.get<StoredToken>(PREFIX + id);
    if (rec === null) throw new SvcError('not_found', `no token ${id}`);
    try {
      await this.#meta.delete(PREFIX + id, { version: rec.version });
    } catch (err) {
      if (err instanceof MetaConflictError) throw new SvcError('conflict', `token ${id} changed concurrently`);
      throw err;
    }
    await this.#changed?.();
  }
}

/**
 * A gateway thread's copy of the token records (`--gateway-threads`): the main thread sends every
 * record after each change and waits for the thread's acknowledgement before the change is
 * answered. Checks requests exactly as Tokens does, against the copy.
 */
export class TokenReplica implements Authenticator {
  #records = new Map<string, VersionedToken>();
  readonly #check: (authorization: string | undefined) => Principal | AuthFailure;

  constructor(now: () => number = Date.now) {
    this.#check = tokenCheck((id) => this.#records.get(id) ?? null, now);
  }

  /** Every record as it is now (Tokens.records()). */
  set(records: VersionedToken[]): void {
    this.#records = new Map(records.map((r) => [r.value.id, r]));
  }

  authenticate(authorization: string | undefined): Promise<Principal | AuthFailure> {
    return Promise.resolve(this.#check(authorization));
  }

  authenticateNow(authorization: string | undefined): Principal | AuthFailure {
    return this.#check(authorization);
  }
}

/** The check of a request's Authorization header against token records, as `get` reads them. */
function tokenCheck(get: (id: string) => VersionedToken | null, now: () => number): (authorization: string | undefined) => Principal | AuthFailure {
  const verified = new VerifiedTokens();
  const versionOf = (id: string): number | null => get(id)?.version ?? null;
  return (authorization) => {
    if (authorization === undefined) {
      const anon = get(ANONYMOUS);
      if (anon === null) return 'absent';
      return expired(anon.value.scope, now()) ? 'expired' : { id: ANONYMOUS, scope: anon.value.scope };
    }
    const m = /^Bearer ([^\s]+)$/i.exec(authorization.trim());
    if (m === null) return 'malformed';
    const wire = m[1]!;
    // Seen and verified before against the record as it still is: no decoding, no hashing.
    const known = verified.lookup(wire, versionOf);
    if (known !== null) {
      const scope = get(known)!.value.scope;
      return expired(scope, now()) ? 'expired' : { id: known, scope };
    }
    const t = parseWireToken(wire);
    if (t === null) return 'malformed';
    const rec = get(t.id);
    if (rec === null || !secretMatches(t.secret, rec.value.secretHash)) return 'unknown';
    if (expired(rec.value.scope, now())) return 'expired';
    verified.remember(wire, t.id, rec.version);
    return { id: t.id, scope: rec.value.scope };
  };
}

function publicRecord(s: StoredToken): TokenRecord {
  return { id: s.id, scope: s.scope, createdAtMs: s.createdAtMs, issuedBy: s.issuedBy };
}

