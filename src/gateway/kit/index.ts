/**
 * The listener kit: what the HTTP listeners (Svc, Durable Streams, admin) and the Kafka Fetch path
 * share, so that no listener reaches into another's folder — request parsing (names, query,
 * integers, times, producer headers), the reply shape and the error → status table, live waiting
 * (the registry of tail watches, the long-poll waiter) and CORS.
 */
export { type Reply, recycling } from './reply';
export { formatTime, parseBool, parseDurability, parseQuery, parseRfc3339, parseStreamName, parseTime, parseUint } from './params';
export { MAX_PRODUCER_EPOCH, MAX_PRODUCER_ID_CHARS, MAX_PRODUCER_SEQ, type ProducerHeaderNames, type UintParser, parseProducerHeaders } from './producer-headers';
export { type HttpError, internalReply, statusOf, toHttpError } from './http-errors';
export {
  DELIVERY_SLICE,
  FANOUT_LAG_BOUNDS,
  type LiveOptions,
  type LiveReader,
  type LiveShards,
  LiveWaiters,
  SSE_KEEP_ALIVE_MS,
  SSE_PAGE_BYTES,
  StreamWatch,
  WATCH_LINGER_MS,
  type Waiter,
} from './live-waiters';
export { LongPoll, type Outcome, waitAtTail } from './wait-at-tail';
export { type CheckedRecord, checkRecords } from './record-check';
export { CORS_MAX_AGE_S, type CorsOrigins, CorsPolicy, type CorsProtocol, parseCorsOrigins, withCors } from './cors';
