/**
 * The protocol listener's one table from error code to HTTP status and JSON body
 * (`{error, message?, next_seq?}`, spec "Error body"). Every 409 says `conflict`, as the spec asks.
 * A refusal the storage layer names (src/outcomes.ts) adds the headers of `outcomeHeaders`.
 */
import { type ErrorCode, SvcError } from '../../errors';
import { type Outcome } from '../../outcomes';
import { type HeaderList } from '../http/engine';

const STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  invalid_stream_name: 400,
  invalid_parameter: 400,
  invalid_json: 400,
  invalid_batch: 400,
  empty_batch: 400,
  unsupported_compression: 400,
  corrupt_batch: 400,
  invalid_schema: 400,
  schema_validation_failed: 400,
  record_invalid: 422,
  seq_out_of_range: 400,
  unsupported_media_type: 415,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  producer_fenced: 403,
  conflict: 409,
  stream_closed: 409,
  seq_mismatch: 412,
  record_too_large: 413,
  batch_too_large: 413,
  request_too_large: 413,
  shutting_down: 503,
  storage_unavailable: 503,
  data_corrupt: 500,
  internal: 500,
};

export function statusOf(code: ErrorCode): number {
  return STATUS[code];
}

export interface HttpError {
  status: number;
  headers: HeaderList;
  body: string;
}

export function toHttpError(err: unknown): HttpError {
  const e = err instanceof SvcError ? err : new SvcError('internal', 'internal error');
  const status = STATUS[e.code];
  const body: { error: string; message: string; next_seq?: number } = {
    error: status === 409 ? 'conflict' : e.outcome?.kind === 'moved' ? 'moved' : e.code,
    message: e.message,
  };
  const headers: Array<[string, string]> = [['content-type', 'application/json']];
  const next = e.details?.['next_seq'];
  if (typeof next === 'number') {
    body.next_seq = next;
    headers.push(['svc-next-seq', String(next)]);
  }
  if (e.code === 'stream_closed') headers.push(['svc-closed', 'true']);
  if (e.outcome !== undefined) headers.push(...outcomeHeaders(e.outcome));
  // Every 503 (storage_unavailable, shutting_down) is retriable: a client waits a second and tries again.
  if (status === 503 && !headers.some(([k]) => k === 'Retry-After')) headers.push(['Retry-After', '1']);
  // The listener's own errors name their headers (`header:allow` on a 405).
  for (const [k, v] of Object.entries(e.details ?? {})) {
    if (k.startsWith('header:')) headers.push([k.slice(7), String(v)]);
  }
  return { status, headers, body: JSON.stringify(body) };
}

/**
 * The Svc headers of each outcome (docs/protocol.md, "Idempotent producers"): the producer's
 * expected and received sequence on a refused sequence (and on a sealed stream, where both are
 * the one sent), the current epoch on fencing. Total: a new outcome kind does not compile here
 * until it is given its headers.
 */
function outcomeHeaders(o: Outcome): Array<[string, string]> {
  switch (o.kind) {
    case 'stale_epoch':
      return [['Producer-Epoch', String(o.currentEpoch)]];
    case 'invalid_epoch_seq':
    case 'unknown_producer':
    case 'sequence_gap':
      return [['svc-expected-seq', String(o.expectedSeq)], ['svc-received-seq', String(o.receivedSeq)]];
    case 'closed':
      return o.producerSeq === null ? [] : [['svc-expected-seq', String(o.producerSeq)], ['svc-received-seq', String(o.producerSeq)]];
    // Only a Kafka producer's batch is refused as an old duplicate; an HTTP producer's is acknowledged.
    case 'duplicate':
      return [];
    // Retryable: the stream is served by another node (a redirect to it comes with the cluster's routing).
    case 'moved':
      return [['Retry-After', '1']];
    // It may still be written: retry the same append (with its producer headers, so it is not stored twice).
    case 'maybe_written':
      return [['Retry-After', '1']];
    default:
      return unreachable(o);
  }
}

function unreachable(o: never): never {
  throw new Error(`outcome ${(o as Outcome).kind} has no Svc headers`);
}

/** The 500 for a request that failed inside the node: the spec's error body, and the id to find it in the log. */
export function internalReply(requestId: string): HttpError {
  return {
    status: 500,
    headers: [['content-type', 'application/json'], ['svc-request-id', requestId]],
    body: JSON.stringify({ error: 'internal', message: `internal error (request id ${requestId}); the node's log has the cause` }),
  };
}
