/**
 * `GET /{stream}?live=long-poll` (docs/protocol.md, "Live reads").
 *
 * - Records at `seq`, or a sealed stream read to its end: answered at once, as a catch-up read.
 * - Otherwise the request waits on the stream's watch (kit/live-waiters.ts) until the tail passes
 *   `seq`, then answers with the new records (one read shared with every poller at that seq);
 *   a seal answers `200` with `Svc-Closed: true`, a delete `404`.
 * - No records within the timeout (`--long-poll-timeout`), or the node stopping: `204` with
 *   `Svc-Next-Seq` (where to poll next) and `Svc-Up-To-Date: true`.
 */
import { SvcError } from '../../errors';
import { type ReadFormat, type ReadParams, type ReadResult } from '../../shards';
import { type HttpResponse } from '../http/engine';
import { type SvcContext } from './context';
import { type Reply, waitAtTail } from '../kit';
import { pageHeaders } from './read-page';

export interface LongPollParams {
  name: string;
  /** Start position, or -1 for the tail (`seq=now`). */
  seq: number;
  count: number;
  bytes: number;
  format: ReadFormat;
  /** From a cursor: the stream it belongs to. */
  expectStreamId: number | null;
}

/**
 * Not `async`: a poller waiting at the tail holds its wait's promise and one reaction, not a
 * suspended async function of its own as well (its generator, registers and await closures stay
 * alive for as long as each idle poller waits).
 */
export function longPoll(ctx: SvcContext, res: HttpResponse, p: LongPollParams): Promise<Reply | null> {
  const live = ctx.live;
  const known = live.tailOf(p.name);
  if (known !== null && !known.deleted && !known.closed && (p.seq === -1 || p.seq === known.nextSeq) && (p.expectStreamId ?? known.streamId) === known.streamId) {
    // A poller back at the known tail (the usual re-poll): nothing to read, wait at once.
    return waitThere(ctx, res, p, { seq: known.nextSeq, streamId: known.streamId });
  }
  return live.read(readAt(p, p.seq)).then((first) => {
    if (p.expectStreamId !== null && p.expectStreamId !== first.streamId) {
      throw new SvcError('conflict', 'the cursor belongs to an earlier stream of this name (it was deleted and created again)');
    }
    if (first.count > 0 || first.closed) return answer(first, p.format);
    // Nothing at seq yet: wait at the tail (for `seq=now`, the tail as this read saw it).
    return waitThere(ctx, res, p, { seq: first.nextSeq, streamId: first.streamId });
  });
}

function readAt(p: LongPollParams, seq: number): ReadParams {
  return { name: p.name, seq, count: p.count, bytes: p.bytes, format: p.format };
}

/** Wait at `at` (the tail as last seen) until records come, the poll times out or the node stops. */
function waitThere(ctx: SvcContext, res: HttpResponse, p: LongPollParams, at: { seq: number; streamId: number }): Promise<Reply | null> {
  const live = ctx.live;
  if (live.closed) return Promise.resolve(noRecords(at.seq, true));
  const waited = waitAtTail(live, p.name, at.seq, at.streamId, res, async (watch) => {
    // Throws not_found when the stream was deleted.
    const page = await live.page(watch, readAt(p, at.seq));
    if (page.streamId !== at.streamId) throw new SvcError('not_found', `stream ${p.name} was deleted`);
    if (page.count > 0 || page.closed) return answer(page, p.format);
    // Only records no reader is shown (Kafka transaction markers, aborted transactions) came:
    // nothing to answer, but the position moved; the poller polls again from there.
    if (page.nextSeq > at.seq) return noRecords(page.nextSeq, false);
    // The tail moved without bringing records at seq (a trim): wait on.
    return null;
  });
  return waited.then((r) => {
    if (r === 'aborted') return null;
    if (r === 'timeout' || r === 'shutdown') return noRecords(at.seq, r === 'shutdown');
    return r;
  });
}

/** Records (or the end of a sealed stream): a page like a catch-up read's, never cached. */
function answer(r: ReadResult, format: string): Reply {
  return { status: 200, headers: [...pageHeaders(r, format), ['cache-control', 'no-store']], body: r.body };
}

/** Time-out or shutdown: nothing new; poll again from `seq`. */
function noRecords(seq: number, shuttingDown: boolean): Reply {
  const headers: Array<[string, string]> = [
    ['svc-next-seq', String(seq)],
    ['svc-up-to-date', 'true'],
    ['cache-control', 'no-store'],
  ];
  if (shuttingDown) headers.push(['connection', 'close']);
  return { status: 204, headers };
}
