/** What ShareFetch and ShareAcknowledge share: finding a partition's stream and applying its acknowledgement batches. */
import { type ConnectionInfo, type KafkaContext } from '../context';
import { KafkaError, kafkaErrorOf } from '../error-codes';
import { allowed, groupAllowed } from '../auth';
import { leaderError, lookupPartition } from '../partitions';
import { type AckBatch, type ShareSession, parseAckBatches } from '../share';

/** A partition's stream, or the error it answers. */
export type Resolved = { stream: string; error: 0 } | { stream: null; error: number };

export async function resolvePartition(ctx: KafkaContext, conn: ConnectionInfo, topicId: string, partition: number): Promise<Resolved> {
  const found = await lookupPartition(ctx, undefined, topicId, partition);
  if (found.stream === null) return { stream: null, error: found.topic === undefined ? KafkaError.UNKNOWN_TOPIC_ID : KafkaError.UNKNOWN_TOPIC_OR_PARTITION };
  if (!allowed(ctx, conn, 'read', found.stream)) return { stream: null, error: KafkaError.TOPIC_AUTHORIZATION_FAILED };
  const notLeader = leaderError(ctx, found.stream);
  return notLeader !== 0 ? { stream: null, error: notLeader } : { stream: found.stream, error: 0 };
}

/** The leader a partition's answer names: this node, or unknown (-1) with an error. */
export const leaderOf = (ctx: KafkaContext, error: number): { leaderId: number; leaderEpoch: number } => ({ leaderId: error === 0 ? ctx.nodeId : -1, leaderEpoch: error === 0 ? 0 : -1 });

/** What ShareFetch and ShareAcknowledge carry that the checks before any partition read. */
interface ShareRequestHead {
  readonly groupId: string | null;
  readonly memberId: string | null;
  readonly shareSessionEpoch: number;
  readonly topics: ReadonlyArray<{ partitions: ReadonlyArray<{ acknowledgementBatches: readonly AckBatch[] }> }>;
}

/**
 * The checks both requests make before touching a partition, in Kafka's order: group authorization,
 * group and member named, every acknowledgement batch well formed, then the share session (only
 * ShareFetch may open one, and a request opening one carries no acknowledgements). The answer is
 * the top-level error, or the session and whether this request closes it.
 */
export function admitShareRequest(ctx: KafkaContext, conn: ConnectionInfo, req: ShareRequestHead, canOpen: boolean): { error: number; message: string | null } | { session: ShareSession; closing: boolean } {
  if (!groupAllowed(ctx, conn)) return { error: KafkaError.GROUP_AUTHORIZATION_FAILED, message: null };
  if (req.groupId === null || req.groupId === '' || req.memberId === null || req.memberId === '') return { error: KafkaError.INVALID_REQUEST, message: 'GroupId and MemberId are required' };
  const malformed = malformedAcks(req.topics);
  if (malformed !== null) return { error: KafkaError.INVALID_REQUEST, message: malformed };
  if (canOpen && req.shareSessionEpoch === 0 && req.topics.some((t) => t.partitions.some((p) => p.acknowledgementBatches.length > 0))) {
    return { error: KafkaError.INVALID_REQUEST, message: 'a request opening a share session (epoch 0) carries no acknowledgements' };
  }
  return ctx.share.sessions.check(req.groupId, req.memberId, req.shareSessionEpoch, canOpen);
}

/** Every request's acknowledgement batches are checked before any is applied: a malformed one refuses the request. */
export function malformedAcks(topics: ReadonlyArray<{ partitions: ReadonlyArray<{ acknowledgementBatches: readonly AckBatch[] }> }>): string | null {
  for (const t of topics) {
    for (const p of t.partitions) {
      const parsed = parseAckBatches(p.acknowledgementBatches);
      if ('invalid' in parsed) return parsed.invalid;
    }
  }
  return null;
}

/** Apply one partition's acknowledgement batches for the member: 0, INVALID_RECORD_STATE when one was refused, or the error of the failure. */
export async function applyAcks(ctx: KafkaContext, group: string, memberId: string, stream: string, batches: readonly AckBatch[]): Promise<{ error: number; message: string | null }> {
  const parsed = parseAckBatches(batches);
  if ('invalid' in parsed) return { error: KafkaError.INVALID_REQUEST, message: parsed.invalid };
  try {
    const ok = await ctx.share.partitions.acknowledge(group, memberId, stream, parsed.acks);
    return ok ? { error: 0, message: null } : { error: KafkaError.INVALID_RECORD_STATE, message: 'a record acknowledged is not acquired by this member, or its lock expired' };
  } catch (err) {
    return { error: kafkaErrorOf(err), message: (err as Error).message };
  }
}
