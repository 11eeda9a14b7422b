/**
 * A share group's partitions as an operator sees them (the admin API's `/admin/groups`, the
 * dashboard, `svc groups`): per stream the share partition's start, the stream's end, the lag,
 * the records in flight and waiting to be delivered again, and the partition's running totals.
 * Read from the stored state (`ShareStates.peek`, no call queued on the partition) and one stream
 * head per partition, only when asked: nothing is kept for it and nothing is added to the path of
 * a lease or an acknowledgement.
 */
import { type ShardClient } from '../../shards';
import { type ShareTotals } from './share-partition';
import { type ShareStates } from './share-states';

export interface SharePartitionView {
  stream: string;
  /** The stream's Kafka topic when one is set on it (null: derived from the name). */
  kafkaTopic: string | null;
  /** The share partition's start: every record before it is acknowledged or archived. */
  startOffset: number;
  /** The stream's next seq (null when the stream cannot be read now: deleted, or its owner unreachable). */
  endOffset: number | null;
  /** Records from the start to the stream's end not yet acknowledged or archived (null without an end). */
  lag: number | null;
  /** Records locked to a consumer now (acquired, lock not ended). */
  inFlight: number;
  /** Records delivered before and waiting to be delivered again (released, or their lock ended). */
  redeliveryPending: number;
  totals: ShareTotals;
}

/** The partitions of one share group, by stream name, as stored now. */
export async function sharePartitionViews(states: ShareStates, shards: ShardClient, group: string, now: number): Promise<SharePartitionView[]> {
  const out: SharePartitionView[] = [];
  for (const stream of states.streams(group).sort()) {
    const p = states.peek(group, stream);
    if (p === null) continue;
    const head = await shards.head(stream).catch(() => null);
    const c = p.counts();
    const ended = p.locksEnded(now);
    const end = head === null ? null : Math.max(head.nextSeq, p.start);
    out.push({
      stream,
      kafkaTopic: head?.kafkaTopic ?? null,
      startOffset: p.start,
      endOffset: end,
      lag: end === null ? null : Math.max(0, end - p.start - c.acknowledged - c.archived),
      inFlight: c.acquired - ended,
      redeliveryPending: c.available + ended,
      totals: p.totals(),
    });
  }
  return out;
}
