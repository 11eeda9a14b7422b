/**
 * One request frame in, one response frame out (kafka.apache.org/protocol, "Common Request and
 * Response Structure"):
 *
 *   frame: apiKey int16 | apiVersion int16 | correlationId int32 | clientId | [tags (header v2)] | body
 *
 * - An API key this listener does not serve, or a version outside its advertised range, closes the
 *   connection (what a Kafka broker does: it cannot parse the request), with a log line. The one
 *   exception is ApiVersions (KIP-511): a version above the range is answered in v0 with
 *   UNSUPPORTED_VERSION and the full table, so the client can pick a version it shares.
 * - A body the codec cannot parse (KafkaProtocolError) closes the connection the same way.
 * - With `--auth required`, any request but ApiVersions, SaslHandshake and SaslAuthenticate on a
 *   connection that has not authenticated closes it the same way (what a Kafka broker's SASL
 *   listener does); scopes are checked per topic by each API (auth.ts).
 */
import { KAFKA_APIS, type KafkaApi, kafkaApi, requestHeaderVersion, responseHeaderVersion } from './messages';
import { decodeRequestHeader, encodeResponseHeader } from './messages/header';
import { encodeApiVersionsResponse } from './messages/api-versions';
import { KafkaProtocolError } from './protocol/errors';
import { Reader } from './protocol/reader';
import { Writer } from './protocol/writer';
import { type AnyApiHandler, Later } from './handler';
import { type KafkaContext } from './context';
import { type KafkaConnection, PendingResponse, type ResponseFrame } from './server';
import { KafkaError } from './error-codes';
import { API_VERSIONS_HANDLER } from './apis/api-versions';
import { CREATE_TOPICS_HANDLER } from './apis/create-topics';
import { DELETE_TOPICS_HANDLER } from './apis/delete-topics';
import { FETCH_HANDLER } from './apis/fetch';
import { LIST_OFFSETS_HANDLER } from './apis/list-offsets';
import { METADATA_HANDLER } from './apis/metadata';
import { PRODUCE_HANDLER } from './apis/produce';
import { GROUP_HANDLERS } from './apis/groups';
import { SHARE_HANDLERS } from './apis/share';
import { ADMIN_HANDLERS } from './apis/admin';
import { TXN_HANDLERS } from './apis/txn-apis';
import { TXN_ADMIN_HANDLERS } from './apis/txn-admin';
import { INIT_PRODUCER_ID_HANDLER } from './apis/init-producer-id';
import { SASL_AUTHENTICATE_HANDLER } from './apis/sasl-authenticate';
import { SASL_HANDSHAKE_HANDLER } from './apis/sasl-handshake';
import { type ConnectionAccess, PRE_AUTH_APIS, accessOf, recheckToken } from './auth';
import { authenticatePlain } from './apis/sasl-authenticate';
import { TRACED_APIS, tracedHandle } from './traced';

/** The served APIs by key; ApiVersions advertises exactly these. */
const HANDLERS = new Map<number, AnyApiHandler>(
  [
    API_VERSIONS_HANDLER, METADATA_HANDLER, CREATE_TOPICS_HANDLER, DELETE_TOPICS_HANDLER, PRODUCE_HANDLER, FETCH_HANDLER, LIST_OFFSETS_HANDLER,
    INIT_PRODUCER_ID_HANDLER, SASL_HANDSHAKE_HANDLER, SASL_AUTHENTICATE_HANDLER, ...GROUP_HANDLERS, ...SHARE_HANDLERS, ...ADMIN_HANDLERS, ...TXN_HANDLERS, ...TXN_ADMIN_HANDLERS,
  ].map((h) => [h.api.apiKey, h]),
);

/** What ApiVersions advertises: every API with a handler, in its generated range (design/kafka.md). */
export const SERVED_APIS: ReadonlyArray<{ apiKey: number; minVersion: number; maxVersion: number }> = KAFKA_APIS.filter((a) => HANDLERS.has(a.apiKey)).map(
  (a) => ({ apiKey: a.apiKey, minVersion: a.minVersion, maxVersion: a.maxVersion }),
);

const API_VERSIONS_KEY = 18;

/** Byte runs from this size on (Fetch record batches) go to the socket by reference, not copied into the response. */
const SPLICE_MIN = 64 * 1024; // 64 KiB

/** The answer to an accepted raw SASL token (SaslHandshake v0): an empty token, a frame of size 0. */
const RAW_TOKEN_OK = Buffer.alloc(4);

export async function dispatch(ctx: KafkaContext, frame: Buffer, conn: KafkaConnection): Promise<ResponseFrame | null | PendingResponse> {
  const access = accessOf(conn, ctx.authenticate !== null);
  if (access.rawTokenNext) {
    // After SaslHandshake v0 the next frame is the raw PLAIN token, not a request (sasl-handshake.ts).
    access.rawTokenNext = false;
    const why = await authenticatePlain(ctx, conn, frame);
    if (why !== null) throw new KafkaProtocolError(`SASL (handshake v0 raw token): ${why}`);
    return RAW_TOKEN_OK;
  }
  const checking = refuseStaleToken(ctx, access, frame);
  if (checking !== undefined) await checking;
  countRequest(ctx, frame);
  const decoded = decodeRequest(ctx, frame, conn);
  return decoded instanceof DecodedRequest ? runRequest(ctx, decoded, frame.length, conn) : decoded;
}

/**
 * Throws KafkaProtocolError (the connection closes) when the token the connection authenticated
 * with was revoked or expired since (auth.ts, recheckToken). ApiVersions and the SASL APIs pass (a
 * client may authenticate again on the same connection). No promise when the check needs no sync
 * (a single node, a gateway thread): the request goes on in the same turn.
 */
export function refuseStaleToken(ctx: Pick<KafkaContext, 'authenticate'>, access: ConnectionAccess, frame: Buffer): Promise<void> | undefined {
  if (access.token === null || frame.length < 2) return undefined;
  const apiKey = frame.readInt16BE(0);
  if (PRE_AUTH_APIS.has(apiKey)) return undefined;
  const refuse = (why: string | null): void => {
    if (why !== null) throw new KafkaProtocolError(`${kafkaApi(apiKey)?.name ?? `API key ${apiKey}`}: ${why}`);
  };
  const why = recheckToken(ctx.authenticate, access);
  if (why instanceof Promise) return why.then(refuse);
  refuse(why);
  return undefined;
}

/** Count a request frame in `ctx.requestCounts` by its API key (served APIs only). */
export function countRequest(ctx: Pick<KafkaContext, 'requestCounts'>, frame: Buffer): void {
  if (frame.length < 2) return;
  const apiKey = frame.readInt16BE(0);
  if (HANDLERS.has(apiKey)) ctx.requestCounts[apiKey] = (ctx.requestCounts[apiKey] ?? 0) + 1;
}

/** Counts kept by `countRequest`, by API name (only APIs asked for at least once), for the metrics. */
export function countsByApi(counts: readonly number[]): Array<{ api: string; count: number }> {
  const out: Array<{ api: string; count: number }> = [];
  counts.forEach((count, key) => {
    const api = kafkaApi(key);
    if (count > 0 && api !== undefined) out.push({ api: api.name, count });
  });
  return out;
}

/** A request frame read past its header: the handler that serves it and its decoded body. */
export class DecodedRequest {
  constructor(
    readonly handler: AnyApiHandler,
    readonly api: KafkaApi,
    readonly version: number,
    readonly correlationId: number,
    readonly req: unknown,
  ) {}
}

/**
 * Check a request frame (length, served API and version, the auth gate) and decode its header and
 * body: the request to run, or the answer already made (ApiVersions above its range). Throws
 * KafkaProtocolError for a frame that closes the connection.
 */
export function decodeRequest(ctx: Pick<KafkaContext, 'authenticate'>, frame: Buffer, conn: KafkaConnection): DecodedRequest | ResponseFrame {
  if (frame.length < 8) throw new KafkaProtocolError(`request of ${frame.length} bytes is shorter than a request header`);
  const apiKey = frame.readInt16BE(0);
  const version = frame.readInt16BE(2);
  const correlationId = frame.readInt32BE(4);
  const api = kafkaApi(apiKey);
  const handler = HANDLERS.get(apiKey);
  if (api === undefined || handler === undefined) throw new KafkaProtocolError(`API key ${apiKey} is not served`);
  // --auth required: before SASL succeeded only ApiVersions and the SASL APIs (design/kafka.md, SASL order).
  if (ctx.authenticate !== null && !PRE_AUTH_APIS.has(apiKey) && accessOf(conn, true).scope === null) {
    throw new KafkaProtocolError(`${api.name} before SASL authentication`);
  }
  if (apiKey === API_VERSIONS_KEY && version > api.maxVersion) {
    const w = new Writer();
    const size = w.reserveInt32();
    encodeResponseHeader(w, { correlationId }, 0);
    encodeApiVersionsResponse(w, { errorCode: KafkaError.UNSUPPORTED_VERSION, apiKeys: [...SERVED_APIS] }, 0);
    w.int32At(size, w.length - 4);
    return w.toBuffer();
  }
  if (version < api.minVersion || version > api.maxVersion) {
    throw new KafkaProtocolError(`${api.name} version ${version} is not served (${api.minVersion}-${api.maxVersion})`);
  }
  const r = new Reader(frame, 0);
  const header = decodeRequestHeader(r, requestHeaderVersion(api, version));
  if (conn.clientId === null && header.clientId != null) conn.clientId = header.clientId;
  return new DecodedRequest(handler, api, version, correlationId, handler.decode(r, version));
}

/** Run a decoded request: its response frame, null for none, or a PendingResponse. */
export async function runRequest(ctx: KafkaContext, d: DecodedRequest, frameBytes: number, conn: KafkaConnection): Promise<ResponseFrame | null | PendingResponse> {
  const { handler, api, version, correlationId, req } = d;
  // Traces on (docs/metrics.md, "Traces"): Produce and Fetch run inside a request span.
  const res: unknown =
    ctx.tracing === null || !TRACED_APIS.has(api.apiKey)
      ? await handler.handle(ctx, req, version, conn)
      : await tracedHandle(ctx.tracing, api.name, frameBytes, conn.clientId, async () => handler.handle(ctx, req, version, conn) as unknown);
  if (res === null) return null;
  if (res instanceof Later) return new PendingResponse(res.response.then((r: unknown) => encodeResponse(handler, api, version, correlationId, r)));
  return encodeResponse(handler, api, version, correlationId, res);
}

function encodeResponse(handler: AnyApiHandler, api: KafkaApi, version: number, correlationId: number, res: unknown): ResponseFrame {
  const w = new Writer(1024, SPLICE_MIN);
  const size = w.reserveInt32();
  encodeResponseHeader(w, { correlationId }, responseHeaderVersion(api, version));
  handler.encode(w, res, version);
  w.int32At(size, w.length - 4);
  const parts = w.toBuffers();
  return parts.length === 1 ? parts[0]! : parts;
}
