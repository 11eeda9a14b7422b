/**
 * Header names of the Durable Streams protocol, the browser security headers every response
 * carries (PROTOCOL.md "Browser security"), on errors, SSE and long-poll answers too, and what CORS
 * lets a page do (PROTOCOL.md "CORS"; the origins are `--cors-origins`, applied by the kit's CORS layer).
 */
import { SvcError } from '../../errors';
import { type HeaderList } from '../http/engine';
import { type CorsProtocol } from '../kit';

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

const REQUEST_HEADERS: readonly string[] = [
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
  'svc-durability',
  H.producerId,
  H.producerEpoch,
  H.producerSeq,
];

const EXPOSED_HEADERS: readonly string[] = [
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
  'svc-request-id',
];

/** On every response (the CORS headers are added by the kit's CORS layer). */
export const COMMON_HEADERS: HeaderList = [
  ['x-content-type-options', 'nosniff'],
  ['cross-origin-resource-policy', 'cross-origin'],
];

export const DS_CORS: CorsProtocol = {
  methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS'],
  requestHeaders: REQUEST_HEADERS,
  exposedHeaders: EXPOSED_HEADERS,
  preflightExtra: COMMON_HEADERS,
  // As the reference server, answers to GET and HEAD carry them with or without Origin (a CDN may
  // cache those); appends and other writes only when a browser sent Origin (cors.ts).
  readsWithoutOrigin: true,
};

/** An integer >= 0 in its plain form (no sign, no leading zeros), as the protocol's headers carry them. */
export function parseDsUint(name: string, raw: string): number {
  if (!/^(0|[1-9]\d*)$/.test(raw)) throw new SvcError('invalid_parameter', `${name} must be an integer >= 0 without leading zeros`);
  return Number(raw);
}

/** `Stream-Closed: true` — any case; anything else is absent (PROTOCOL.md). */
export function isTrue(v: string | undefined): boolean {
  return v !== undefined && v.trim().toLowerCase() === 'true';
}
