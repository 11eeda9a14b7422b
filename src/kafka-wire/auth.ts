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
import { type Access, type Op, type Scope, denial } from '../actors';

/** Checks a SASL/PLAIN password (an access token): the token's scope, or why it is refused. */
export type KafkaAuthenticator = (token: string) => Promise<Scope | string>;

/** APIs a connection may send before it authenticated (ApiVersions, SaslHandshake, SaslAuthenticate). */
export const PRE_AUTH_APIS: ReadonlySet<number> = new Set([18, 17, 36]);

const READ_OPS = new Set<Op>(['read', 'head', 'list']);

/** What one connection may do: everything with auth off; its token's scope once it authenticated. */
export interface ConnectionAccess {
  /** Auth is required on this listener. */
  readonly required: boolean;
  /** The authenticated scope (null: not authenticated yet). */
  scope: Scope | null;
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
    a = { required, scope: null, mechanism: null, rawTokenNext: false };
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
