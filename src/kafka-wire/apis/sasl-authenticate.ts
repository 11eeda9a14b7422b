/**
 * SaslAuthenticate (key 36), v0–2: one PLAIN message (authzid NUL username NUL password), the
 * access token as password; the username is free (logged). Before a SaslHandshake it answers
 * ILLEGAL_SASL_STATE (34); a refused token SASL_AUTHENTICATION_FAILED (58), after which the
 * client closes. SessionLifetimeMs is 0: a positive value makes kafkajs and @platformatic/kafka
 * re-authenticate on a timer (design/kafka.md). With auth off any credentials are accepted.
 */
import {
  type SaslAuthenticateRequest,
  type SaslAuthenticateResponse,
  SASL_AUTHENTICATE,
  decodeSaslAuthenticateRequest,
  encodeSaslAuthenticateResponse,
} from '../messages/sasl-authenticate';
import { ROOT_SCOPE } from '../../actors';
import { type ApiHandler } from '../handler';
import { KafkaError } from '../error-codes';
import { accessOf, parsePlain } from '../auth';
import { type KafkaContext, type ConnectionInfo } from '../context';

const EMPTY = Buffer.alloc(0);

function failed(errorCode: number, errorMessage: string): SaslAuthenticateResponse {
  return { errorCode, errorMessage, authBytes: EMPTY, sessionLifetimeMs: 0n };
}

export const SASL_AUTHENTICATE_HANDLER: ApiHandler<SaslAuthenticateRequest, SaslAuthenticateResponse> = {
  api: SASL_AUTHENTICATE,
  decode: decodeSaslAuthenticateRequest,
  encode: encodeSaslAuthenticateResponse,
  async handle(ctx, req, _version, conn) {
    const access = accessOf(conn, ctx.authenticate !== null);
    if (access.mechanism === null) return failed(KafkaError.ILLEGAL_SASL_STATE, 'SaslAuthenticate before SaslHandshake');
    const why = await authenticatePlain(ctx, conn, req.authBytes);
    if (why !== null) return failed(KafkaError.SASL_AUTHENTICATION_FAILED, why);
    return { errorCode: 0, errorMessage: null, authBytes: EMPTY, sessionLifetimeMs: 0n };
  },
};

/**
 * Checks one PLAIN message and, when it is accepted, authenticates the connection. Null on
 * success, otherwise why not. Shared by SaslAuthenticate and SaslHandshake v0's raw token frame.
 */
export async function authenticatePlain(ctx: KafkaContext, conn: ConnectionInfo, bytes: Buffer): Promise<string | null> {
  const access = accessOf(conn, ctx.authenticate !== null);
  const plain = parsePlain(bytes);
  if (plain === null) return 'a PLAIN message is authzid NUL username NUL password';
  if (ctx.authenticate === null) {
    access.scope = ROOT_SCOPE;
    return null;
  }
  const scope = await ctx.authenticate.check(plain.password);
  if (typeof scope === 'string') {
    ctx.log.info({ conn: conn.id, remote: conn.remote, username: plain.username, why: scope }, 'kafka SASL authentication failed');
    return `authentication failed: ${scope}`;
  }
  if (scope.autoPrefixStreams === true) return 'tenant tokens (autoPrefixStreams) are not accepted on the Kafka listener';
  access.scope = scope;
  access.token = plain.password;
  ctx.log.debug({ conn: conn.id, username: plain.username }, 'kafka SASL authenticated');
  return null;
}
