/**
 * SvcError → a Durable Streams response: the status the protocol uses, its own headers, and a
 * plain-text body (the protocol defines no error body). A refusal the storage layer names
 * (src/outcomes.ts) is mapped by `outcomeReply`. Producer fencing keeps its `Producer-Epoch`
 * header, so it stays distinguishable from an auth 403.
 */
import { SvcError } from '../../errors';
import { type Outcome } from '../../outcomes';
import { type Reply, statusOf } from '../kit';
import { COMMON_HEADERS, H } from './ds-headers';
import { formatOffset } from './offsets';

export function toDsError(err: unknown): Reply {
  const e = err instanceof SvcError ? err : new SvcError('internal', 'internal error');
  const d = e.details ?? {};
  const headers: Array<[string, string]> = [['content-type', 'text/plain; charset=utf-8']];
  let status = statusOf(e.code);
  switch (e.code) {
    case 'not_found':
      if (d['gone'] === true) status = 410;
      break;
    case 'seq_out_of_range':
    case 'seq_mismatch':
      status = 400;
      break;
    default:
      break;
  }
  if (e.outcome !== undefined) status = outcomeReply(e.outcome, headers, d['next_seq']) ?? status;
  // Every 503 (storage_unavailable, shutting_down) is retriable: a client waits a second and tries again.
  if (status === 503 && !headers.some(([k]) => k === 'Retry-After')) headers.push(['Retry-After', '1']);
  return { status, headers, body: e.message };
}

/**
 * The DS status and headers of each outcome (PROTOCOL.md, idempotent producers and closed
 * streams); null keeps the code's status. Total: a new outcome kind does not compile here until it
 * is mapped.
 */
function outcomeReply(o: Outcome, headers: Array<[string, string]>, nextSeq: unknown): number | null {
  switch (o.kind) {
    case 'stale_epoch':
      headers.push([H.producerEpoch, String(o.currentEpoch)]);
      return null;
    // A new epoch that does not start at 0 is a bad request; a gap (or an unknown producer) a conflict.
    case 'invalid_epoch_seq':
      headers.push([H.producerExpectedSeq, String(o.expectedSeq)], [H.producerReceivedSeq, String(o.receivedSeq)]);
      return 400;
    case 'unknown_producer':
    case 'sequence_gap':
      headers.push([H.producerExpectedSeq, String(o.expectedSeq)], [H.producerReceivedSeq, String(o.receivedSeq)]);
      return 409;
    case 'closed':
      headers.push([H.closed, 'true']);
      if (typeof nextSeq === 'number') headers.push([H.nextOffset, formatOffset(nextSeq)]);
      return 409;
    // Only a Kafka producer's batch is refused as an old duplicate.
    case 'duplicate':
      return null;
    // Objects mode: the stream moved to another node; 503 and retry.
    case 'moved':
      headers.push(['Retry-After', '1']);
      return null;
    // It may still be written: retry the same append (with its Producer-* headers, so it is not stored twice).
    case 'maybe_written':
      headers.push(['Retry-After', '1']);
      return null;
    default:
      return unreachable(o);
  }
}

function unreachable(o: never): never {
  throw new Error(`outcome ${(o as Outcome).kind} has no Durable Streams reply`);
}

/** The 500 for a request that failed inside the node, with the id that finds it in the log. */
export function dsInternalReply(requestId: string): Reply {
  return {
    status: 500,
    headers: [...COMMON_HEADERS, ['content-type', 'text/plain; charset=utf-8'], ['svc-request-id', requestId]],
    body: `internal error (request id ${requestId}); the node's log has the cause`,
  };
}
