/**
 * SvcError → a Durable Streams response: the status the protocol uses, its own headers, and a
 * plain-text body (the protocol defines no error body). Producer fencing keeps its
 * `Producer-Epoch` header, so it stays distinguishable from an auth 403.
 */
import { SvcError } from '../../errors';
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
    case 'conflict':
      if (d['gone'] === true) status = 409;
      if (typeof d['expected_seq'] === 'number') {
        // A producer sequence gap; a new epoch that does not start at 0 is a bad request instead.
        if (d['new_epoch'] === true) status = 400;
        headers.push([H.producerExpectedSeq, String(d['expected_seq'])], [H.producerReceivedSeq, String(d['received_seq'])]);
      }
      break;
    case 'stream_closed':
      status = 409;
      headers.push([H.closed, 'true']);
      if (typeof d['next_seq'] === 'number') headers.push([H.nextOffset, formatOffset(d['next_seq'])]);
      break;
    case 'producer_fenced':
      headers.push([H.producerEpoch, String(d['header:Producer-Epoch'])]);
      break;
    case 'seq_out_of_range':
    case 'seq_mismatch':
      status = 400;
      break;
    default:
      break;
  }
  return { status, headers, body: e.message };
}

/** The 500 for a request that failed inside the node, with the id that finds it in the log. */
export function dsInternalReply(requestId: string): Reply {
  return {
    status: 500,
    headers: [...COMMON_HEADERS, ['content-type', 'text/plain; charset=utf-8'], ['svc-request-id', requestId]],
    body: `internal error (request id ${requestId}); the node's log has the cause`,
  };
}
