/**
 * ShareFetch (key 78), v0: a share group member's fetch (KIP-932). Within its share session
 * (share/share-sessions.ts: epoch 0 opens, n continues, -1 closes) the request adds partitions to
 * the session and forgets others, acknowledges what it names (as ShareAcknowledge does: a
 * request opening a session may carry none), then acquires records of every session partition for
 * the member under the group's lock (`group.share.record.lock.duration.ms`): redeliveries first,
 * then records never delivered. Each partition answers the stored batches holding what it
 * acquired and the AcquiredRecords (first/last offset, delivery count); the client keeps only
 * those offsets. With nothing acquired the request waits up to MaxWaitMs for a tail to move (or a
 * lock to end). MaxBytes bounds the answer: once it is reached no more is acquired.
 */
import {
  type PartitionData,
  type ShareFetchRequest,
  type ShareFetchResponse,
  type ShareFetchableTopicResponse,
  SHARE_FETCH,
  decodeShareFetchRequest,
  encodeShareFetchResponse,
} from '../messages/share-fetch';
import { type ApiHandler } from '../handler';
import { type ConnectionInfo, type KafkaContext } from '../context';
import { kafkaErrorOf } from '../error-codes';
import { type WaitTarget, waitForAny } from '../wait';
import { type SessionPartition, type ShareSession, partitionKey } from '../share';
import { admitShareRequest, applyAcks, leaderOf, resolvePartition } from './share-common';

const EMPTY = Buffer.alloc(0);

/** Most records one partition hands out per fetch (Kafka's `max.poll.records` default is 500). */
export const SHARE_FETCH_MAX_RECORDS = 500;

/** How long one wait for new records lasts before locks are looked at again (ms): a lock that ended makes records available without a tail moving. */
const WAIT_SLICE_MS = 1000;

function partitionData(ctx: KafkaContext, index: number, errorCode: number, errorMessage: string | null = null): PartitionData {
  return { partitionIndex: index, errorCode, errorMessage, acknowledgeErrorCode: 0, acknowledgeErrorMessage: null, currentLeader: leaderOf(ctx, errorCode), records: EMPTY, acquiredRecords: [] };
}

interface Slot {
  sp: SessionPartition;
  stream: string | null;
  data: PartitionData;
  /** Named in this request (answered even with nothing acquired). */
  named: boolean;
}

/** One round of acquisition over the session's partitions; what to wait on when nothing came. */
async function acquireRound(ctx: KafkaContext, group: string, session: ShareSession, slots: Slot[], maxBytes: number): Promise<{ got: number; waits: WaitTarget[] }> {
  let bytes = 0;
  let got = 0;
  const waits: WaitTarget[] = [];
  for (const s of slots) {
    if (s.stream === null || s.sp.maxBytes <= 0 || s.data.errorCode !== 0) continue;
    if (bytes >= maxBytes) break;
    try {
      const a = await ctx.share.partitions.acquire(group, session.memberId, s.stream, SHARE_FETCH_MAX_RECORDS, Math.min(s.sp.maxBytes, maxBytes - bytes));
      if (a.ranges.length > 0) {
        session.streams.add(s.stream);
        s.data.records = a.records;
        s.data.acquiredRecords = a.ranges.map((r) => ({ firstOffset: BigInt(r.firstOffset), lastOffset: BigInt(r.lastOffset), deliveryCount: r.deliveryCount }));
        bytes += a.records.length;
        got += a.ranges.length;
      } else if (a.wait !== null) waits.push({ name: s.stream, seq: a.wait.seq, streamId: a.wait.streamId });
    } catch (err) {
      s.data.errorCode = kafkaErrorOf(err);
      s.data.errorMessage = (err as Error).message;
      s.data.currentLeader = leaderOf(ctx, s.data.errorCode);
    }
  }
  return { got, waits };
}

export const SHARE_FETCH_HANDLER: ApiHandler<ShareFetchRequest, ShareFetchResponse> = {
  api: SHARE_FETCH,
  decode: decodeShareFetchRequest,
  encode: encodeShareFetchResponse,
  async handle(ctx, req, _version, conn) {
    const top = (errorCode: number, errorMessage: string | null): ShareFetchResponse => ({ throttleTimeMs: 0, errorCode, errorMessage, responses: [], nodeEndpoints: [] });
    const chk = admitShareRequest(ctx, conn, req, true);
    if ('error' in chk) return top(chk.error, chk.message);
    const { session, closing } = chk;
    return closing ? closeWithAcks(ctx, conn, req, session) : fetch(ctx, conn, req, session);
  },
};

/** Epoch -1: the acknowledgements, then the session closes (nothing is acquired). */
async function closeWithAcks(ctx: KafkaContext, conn: ConnectionInfo, req: ShareFetchRequest, session: ShareSession): Promise<ShareFetchResponse> {
  const responses: ShareFetchableTopicResponse[] = [];
  for (const t of req.topics) {
    const out: ShareFetchableTopicResponse = { topicId: t.topicId, partitions: [] };
    for (const p of t.partitions) {
      const where = await resolvePartition(ctx, conn, t.topicId, p.partitionIndex);
      const data = partitionData(ctx, p.partitionIndex, where.error);
      if (where.stream !== null && p.acknowledgementBatches.length > 0) {
        const r = await applyAcks(ctx, session.groupId, session.memberId, where.stream, p.acknowledgementBatches);
        data.acknowledgeErrorCode = r.error;
        data.acknowledgeErrorMessage = r.message;
      }
      out.partitions.push(data);
    }
    responses.push(out);
  }
  await ctx.share.closeSession(session.groupId, session.memberId);
  return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, responses, nodeEndpoints: [] };
}

async function fetch(ctx: KafkaContext, conn: ConnectionInfo, req: ShareFetchRequest, session: ShareSession): Promise<ShareFetchResponse> {
  for (const f of req.forgottenTopicsData) for (const p of f.partitions) session.partitions.delete(partitionKey(f.topicId, p));
  const named = new Set<string>();
  for (const t of req.topics) {
    for (const p of t.partitions) {
      const key = partitionKey(t.topicId, p.partitionIndex);
      named.add(key);
      session.partitions.set(key, { topicId: t.topicId, partition: p.partitionIndex, maxBytes: p.partitionMaxBytes });
    }
  }
  const slots: Slot[] = [];
  const byKey = new Map<string, Slot>();
  for (const [key, sp] of session.partitions) {
    const where = await resolvePartition(ctx, conn, sp.topicId, sp.partition);
    const slot: Slot = { sp, stream: where.stream, data: partitionData(ctx, sp.partition, where.error), named: named.has(key) };
    slots.push(slot);
    byKey.set(key, slot);
  }
  // Acknowledgements first: a record released here may be acquired again by this very fetch.
  for (const t of req.topics) {
    for (const p of t.partitions) {
      const s = byKey.get(partitionKey(t.topicId, p.partitionIndex))!;
      if (s.stream === null || p.acknowledgementBatches.length === 0) continue;
      const r = await applyAcks(ctx, session.groupId, session.memberId, s.stream, p.acknowledgementBatches);
      s.data.acknowledgeErrorCode = r.error;
      s.data.acknowledgeErrorMessage = r.message;
    }
  }
  const maxBytes = req.maxBytes > 0 ? req.maxBytes : 0x7fff_ffff;
  const deadline = Date.now() + Math.max(0, req.maxWaitMs);
  let round = await acquireRound(ctx, session.groupId, session, slots, maxBytes);
  while (round.got === 0 && !ctx.live.closed) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    await waitForAny(ctx.live, round.waits, Math.min(left, WAIT_SLICE_MS));
    round = await acquireRound(ctx, session.groupId, session, slots, maxBytes);
  }
  // Partitions named, with an error or acknowledgement outcome, or with records; in topic order.
  const responses: ShareFetchableTopicResponse[] = [];
  const byTopic = new Map<string, ShareFetchableTopicResponse>();
  for (const s of slots) {
    const d = s.data;
    if (!s.named && d.errorCode === 0 && d.acknowledgeErrorCode === 0 && d.acquiredRecords.length === 0) continue;
    let t = byTopic.get(s.sp.topicId);
    if (t === undefined) {
      t = { topicId: s.sp.topicId, partitions: [] };
      byTopic.set(s.sp.topicId, t);
      responses.push(t);
    }
    t.partitions.push(d);
  }
  return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, responses, nodeEndpoints: [] };
}
