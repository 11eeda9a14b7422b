/**
 * Kafka and auth (docs/kafka.md, "Kafka and auth"). With `--auth required` a connection
 * authenticates with SASL/PLAIN, the access token as password, before anything but ApiVersions,
 * SaslHandshake and SaslAuthenticate; then every request is checked against the token's scope
 * on the `svc` audience, like a request of the Svc HTTP listener:
 *
 *   Produce ─ append │ Fetch ─ read │ ListOffsets, Metadata ─ head │ CreateTopics (and Metadata
 *   auto-create) ─ create │ DeleteTopics ─ delete │ InitProducerId ─ append (no stream) │
 *   JoinGroup, SyncGroup, Heartbeat, LeaveGroup ─ read (no stream) │ OffsetCommit, OffsetFetch ─
 *   read (no stream, and each partition's stream) │ DescribeConfigs of a group ─ read (no stream) │
 *   AlterConfigs, IncrementalAlterConfigs of a group ─ create (no stream; a dead-letter topic's stream)
 *
 * all in the `stream` group, matched against the partition's stream name (`/orders`, `/orders/1`).
 */
import { type Access, type AuthFailure, type Authenticator, type Op, type Principal, type Scope, denial } from '../actors';

/**
 * Checks a SASL/PLAIN password (an access token) against the token records, as the HTTP listeners
 * check a bearer token: its scope, or why it is refused (`unknown` for a revoked token, `expired`).
 */
export interface KafkaAuthenticator {
  /** The answer, after a sync of the metadata view where other nodes write tokens too (a cluster). */
  check(token: string): Promise<Scope | string>;
  /** The same answer at once when the view needs no sync first; null when it does (then `check`). */
  checkNow(token: string): Scope | string | null;
}

/** The Kafka listener's view of a node's (or a gateway thread's) token check. */
export function kafkaAuthenticator(tokens: Authenticator): KafkaAuthenticator {
  const scopeOf = (who: Principal | AuthFailure): Scope | string => (typeof who === 'string' ? who : who.scope);
  return {
    check: async (token) => scopeOf(await tokens.authenticate(`Bearer ${token}`)),
    checkNow: (token) => {
      const who = tokens.authenticateNow(`Bearer ${token}`);
      return who === null ? null : scopeOf(who);
    },
  };
}

/** APIs a connection may send before it authenticated (ApiVersions, SaslHandshake, SaslAuthenticate). */
export const PRE_AUTH_APIS: ReadonlySet<number> = new Set([18, 17, 36]);

const READ_OPS = new Set<Op>(['read', 'head', 'list']);

/** What one connection may do: everything with auth off; its token's scope once it authenticated. */
export interface ConnectionAccess {
  /** Auth is required on this listener. */
  readonly required: boolean;
  /** The authenticated scope (null: not authenticated yet). */
  scope: Scope | null;
  /** The token the connection authenticated with (null: none yet, or auth off): checked again before each request (recheckToken). */
  token: string | null;
  /** The mechanism chosen by SaslHandshake (null: no handshake yet). */
  mechanism: string | null;
  /**
   * SaslHandshake v0 was answered: the next frame is the raw SASL token (size-prefixed PLAIN
   * bytes, no request header), not a request (KIP-152 describes this pre-SaslAuthenticate mode).
   */
  rawTokenNext: boolean;
}

const ACCESS = new WeakMap<object, ConnectionAccess>();

/** The auth state of a connection (created on its first request). */
export function accessOf(conn: object, required: boolean): ConnectionAccess {
  let a = ACCESS.get(conn);
  if (a === undefined) {
    a = { required, scope: null, token: null, mechanism: null, rawTokenNext: false };
    ACCESS.set(conn, a);
  }
  return a;
}

/** Null when allowed, otherwise why not; `stream` undefined for requests that touch none. */
export function kafkaDenial(access: ConnectionAccess | undefined, op: Op, stream?: string): string | null {
  if (access === undefined || !access.required) return null;
  if (access.scope === null) return 'the connection has not authenticated';
  // A connection outlives its token's expiry only until its next request.
  if (access.scope.expiresAtMs != null && access.scope.expiresAtMs <= Date.now()) return 'the token has expired';
  const a: Access = { audience: 'svc', op, group: 'stream', write: !READ_OPS.has(op) };
  if (stream !== undefined) a.stream = stream;
  return denial(access.scope, a);
}

/**
 * The connection's token checked again before a request after SASL: a token revoked or expired
 * since is refused from the connection's next request on, on every thread and node, as a bearer
 * token is on the HTTP listeners (the same records; in a cluster after the same sync). Null: the
 * request goes on, under the scope the records hold now; otherwise why the connection is closed
 * (a Kafka broker closes a connection whose SASL session ended, KIP-368; the client's next
 * SaslAuthenticate then gets SASL_AUTHENTICATION_FAILED).
 */
export function recheckToken(auth: KafkaAuthenticator | null, access: ConnectionAccess): string | null | Promise<string | null> {
  const token = access.token;
  if (auth === null || token === null || access.scope === null) return null;
  const now = auth.checkNow(token);
  if (now !== null) return settle(access, now);
  return auth.check(token).then((s) => settle(access, s));
}

function settle(access: ConnectionAccess, s: Scope | string): string | null {
  if (typeof s !== 'string') {
    access.scope = s;
    return null;
  }
  access.scope = null;
  access.token = null;
  return `the token the connection authenticated with is no longer accepted (${s === 'unknown' ? 'revoked' : s})`;
}

/** SASL/PLAIN message (RFC 4616): authzid NUL authcid NUL passwd. */
export function parsePlain(bytes: Buffer): { authzid: string; username: string; password: string } | null {
  const first = bytes.indexOf(0);
  if (first < 0) return null;
  const second = bytes.indexOf(0, first + 1);
  if (second < 0) return null;
  return { authzid: bytes.subarray(0, first).toString('utf8'), username: bytes.subarray(first + 1, second).toString('utf8'), password: bytes.subarray(second + 1).toString('utf8') };
}

/**
 * Whether a connection may take part in consumer groups: the scope holds the `read` op on the
 * stream group's read side (consumers are readers; a group is not a stream, so no name is
 * matched). Each committed or fetched offset is checked against its partition's stream too.
 */
export function groupAllowed(ctx: { authenticate: KafkaAuthenticator | null }, conn: object): boolean {
  return allowed(ctx, conn, 'read');
}

/** Whether a request of `conn` may do `op` on `stream` (always with auth off). */
export function allowed(ctx: { authenticate: KafkaAuthenticator | null }, conn: object, op: Op, stream?: string): boolean {
  if (ctx.authenticate === null) return true;
  return kafkaDenial(accessOf(conn, true), op, stream) === null;
}
