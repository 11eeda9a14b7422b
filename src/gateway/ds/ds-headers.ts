/**
 * Header names of the Durable Streams protocol and the headers every response carries:
 * browser security headers and CORS (PROTOCOL.md "Browser security", "CORS"), on errors, SSE and
 * long-poll answers too.
 */
import { SvcError } from '../../errors';
import { type HeaderList } from '../http/engine';

export const H = {
  nextOffset: 'stream-next-offset',
  upToDate: 'stream-up-to-date',
  cursor: 'stream-cursor',
  closed: 'stream-closed',
  ttl: 'stream-ttl',
  expiresAt: 'stream-expires-at',
  seq: 'stream-seq',
  sseEncoding: 'stream-sse-data-encoding',
  forkedFrom: 'stream-forked-from',
  forkOffset: 'stream-fork-offset',
  forkSubOffset: 'stream-fork-sub-offset',
  producerId: 'producer-id',
  producerEpoch: 'producer-epoch',
  producerSeq: 'producer-seq',
  producerExpectedSeq: 'producer-expected-seq',
  producerReceivedSeq: 'producer-received-seq',
} as const;

const REQUEST_HEADERS = [
  'content-type',
  'authorization',
  'if-none-match',
  H.ttl,
  H.expiresAt,
  H.closed,
  H.seq,
  H.forkedFrom,
  H.forkOffset,
  H.forkSubOffset,
  H.producerId,
  H.producerEpoch,
  H.producerSeq,
].join(', ');

const EXPOSED_HEADERS = [
  'etag',
  'location',
  'content-type',
  'cache-control',
  H.nextOffset,
  H.upToDate,
  H.cursor,
  H.closed,
  H.ttl,
  H.expiresAt,
  H.sseEncoding,
  H.producerEpoch,
  H.producerSeq,
  H.producerExpectedSeq,
  H.producerReceivedSeq,
].join(', ');

/** On every response. */
export const COMMON_HEADERS: HeaderList = [
  ['access-control-allow-origin', '*'],
  ['access-control-expose-headers', EXPOSED_HEADERS],
  ['x-content-type-options', 'nosniff'],
  ['cross-origin-resource-policy', 'cross-origin'],
];

/** The answer to a CORS preflight. */
export const PREFLIGHT_HEADERS: HeaderList = [
  ...COMMON_HEADERS,
  ['access-control-allow-methods', 'GET, HEAD, POST, PUT, DELETE, OPTIONS'],
  ['access-control-allow-headers', REQUEST_HEADERS],
  ['access-control-max-age', '86400'],
];

/** An integer >= 0 in its plain form (no sign, no leading zeros), as the protocol's headers carry them. */
export function parseDsUint(name: string, raw: string): number {
  if (!/^(0|[1-9]\d*)$/.test(raw)) throw new SvcError('invalid_parameter', `${name} must be an integer >= 0 without leading zeros`);
  return Number(raw);
}

/** `Stream-Closed: true` — any case; anything else is absent (PROTOCOL.md). */
export function isTrue(v: string | undefined): boolean {
  return v !== undefined && v.trim().toLowerCase() === 'true';
}
