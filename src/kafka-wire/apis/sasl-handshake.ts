/**
 * SaslHandshake (key 17), v0–1: the client names its mechanism; PLAIN is the only one (the access
 * token is the password). An unknown mechanism answers UNSUPPORTED_SASL_MECHANISM (33) with the
 * list. v1 is followed by SaslAuthenticate requests. After v0 (kafka-python 2.0.x) the client
 * sends the PLAIN message as one raw size-prefixed frame with no request header; dispatch.ts
 * takes that frame as the token and answers an empty one (4 zero bytes) on success, or closes
 * the connection on failure, as a Kafka broker does.
 */
import {
  type SaslHandshakeRequest,
  type SaslHandshakeResponse,
  SASL_HANDSHAKE,
  decodeSaslHandshakeRequest,
  encodeSaslHandshakeResponse,
} from '../messages/sasl-handshake';
import { type ApiHandler } from '../handler';
import { KafkaError } from '../error-codes';
import { accessOf } from '../auth';

export const SASL_MECHANISMS = ['PLAIN'];

export const SASL_HANDSHAKE_HANDLER: ApiHandler<SaslHandshakeRequest, SaslHandshakeResponse> = {
  api: SASL_HANDSHAKE,
  decode: decodeSaslHandshakeRequest,
  encode: encodeSaslHandshakeResponse,
  async handle(ctx, req, version, conn) {
    const access = accessOf(conn, ctx.authenticate !== null);
    if (!SASL_MECHANISMS.includes(req.mechanism)) {
      ctx.log.info({ conn: conn.id, mechanism: req.mechanism }, 'kafka SASL handshake with an unsupported mechanism');
      return { errorCode: KafkaError.UNSUPPORTED_SASL_MECHANISM, mechanisms: SASL_MECHANISMS };
    }
    access.mechanism = req.mechanism;
    access.rawTokenNext = version === 0;
    return { errorCode: 0, mechanisms: SASL_MECHANISMS };
  },
};
