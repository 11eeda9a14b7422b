/**
 * What CORS lets a page on another origin do on the Svc listener (docs/protocol.md "Browsers
 * (CORS)"): every method of the protocol, the request headers it reads, and every `Svc-*` header
 * it answers with, so that `fetch()` can append and read and `EventSource` can tail.
 */
import { type CorsProtocol } from '../kit';

export const SVC_CORS: CorsProtocol = {
  methods: ['GET', 'HEAD', 'PUT', 'POST', 'PATCH', 'DELETE', 'OPTIONS'],
  requestHeaders: [
    'authorization',
    'content-type',
    'if-none-match',
    'last-event-id',
    'svc-key',
    'svc-ttl',
    'svc-expires-at',
    'svc-closed',
    'svc-trim-seq',
    'svc-match-seq',
    'svc-producer-id',
    'svc-producer-epoch',
    'svc-producer-seq',
    'svc-schema',
    'svc-schema-validate',
    'svc-kafka-topic',
    'svc-durability',
  ],
  exposedHeaders: [
    'etag',
    'location',
    'allow',
    'www-authenticate',
    'svc-next-seq',
    'svc-start-seq',
    'svc-timestamp',
    'svc-closed',
    'svc-up-to-date',
    'svc-cursor',
    'svc-producer-duplicate',
    'svc-expected-seq',
    'svc-received-seq',
    'svc-ttl',
    'svc-expires-at',
    'svc-schema',
    'svc-kafka-topic',
    'svc-durability',
    'svc-request-id',
  ],
};
