/**
 * Fetch (key 1), v4–13. Each partition answers whole stored batches from the one holding the
 * fetch offset (read format `kafka`: the consumer skips the records below its offset), as stored,
 * never re-encoded; an empty partition carries empty records (length 0), never null, which
 * librdkafka needs. With fewer than MinBytes to return the request waits up to MaxWaitMs for a
 * tail to move (wait.ts) and reads again. No fetch sessions: SessionId 0 (design/kafka.md).
 * v13 names topics by id only.
 *
 * IsolationLevel 1 (read_committed, KIP-98): a partition answers only batches below its last
 * stable offset (the first offset of its oldest open transaction, txn/partition-state.ts; the high
 * watermark when none is open), and the aborted transactions within the answered range, which the
 * consumer drops up to their abort markers. read_uncommitted answers up to the high watermark and
 * the consumer drops only the control batches.
 */
import {
  type FetchRequest,
  type FetchResponse,
  type FetchableTopicResponse,
  type PartitionData,
  FETCH,
  decodeFetchRequest,
  encodeFetchResponse,
} from '../messages/fetch';
import { SvcError } from '../../errors';
import { type ApiHandler } from '../handler';
import { type KafkaContext } from '../context';
import { KafkaError, kafkaErrorOf } from '../error-codes';
import { leaderError, lookupPartition } from '../partitions';
import { allowed } from '../auth';
import { type WaitTarget, waitForAny } from '../wait';

const EMPTY = Buffer.alloc(0);
/** Record count bound of a fetch read: fetches are bounded by bytes only. */
const NO_COUNT_LIMIT = 0x7fff_ffff;

interface Slot {
  topic: number;
  partition: number;
  index: number;
  fetchOffset: number;
  maxBytes: number;
  /** The partition's stream, or null with `error` set. */
  stream: string | null;
  error: number;
}

function partitionData(index: number, errorCode: number, hw = -1, start = -1, records: Buffer = EMPTY, lso = hw, aborted: PartitionData['abortedTransactions'] = null): PartitionData {
  return {
    partitionIndex: index,
    errorCode,
    highWatermark: BigInt(hw),
    lastStableOffset: BigInt(lso),
    logStartOffset: BigInt(start),
    abortedTransactions: aborted,
    preferredReadReplica: -1,
    records,
  };
}

/** The whole batches of `body` that start below `lso`. */
function cutAt(body: Buffer, lso: number): Buffer {
  let pos = 0;
  while (pos + 12 <= body.length) {
    if (Number(body.readBigInt64BE(pos)) >= lso) break;
    pos += 12 + body.readInt32BE(pos + 8);
  }
  return pos >= body.length ? body : body.subarray(0, pos);
}

/** Read every slot once, within the request's byte budget; returns the answers and what to wait on. */
async function readAll(ctx: KafkaContext, slots: Slot[], maxBytes: number, committed: boolean): Promise<{ data: PartitionData[]; bytes: number; waits: WaitTarget[] }> {
  const results = await Promise.all(
    slots.map(async (s) => {
      if (s.stream === null) return { d: partitionData(s.index, s.error), wait: null };
      if (s.fetchOffset < 0) return { d: partitionData(s.index, KafkaError.OFFSET_OUT_OF_RANGE), wait: null };
      try {
        if (committed) {
          // The LSO first: a transaction that ends during the read only makes the answer shorter than it could be.
          const lso = ctx.txns.parts.lastStable(s.stream, Number.MAX_SAFE_INTEGER);
          const count = lso === Number.MAX_SAFE_INTEGER ? NO_COUNT_LIMIT : Math.max(1, lso - s.fetchOffset);
          const r = await ctx.shards.read({ name: s.stream, seq: s.fetchOffset, count, bytes: Math.max(1, s.maxBytes), format: 'kafka' });
          if (s.fetchOffset < r.startSeq) return { d: partitionData(s.index, KafkaError.OFFSET_OUT_OF_RANGE, r.tailSeq, r.startSeq), wait: null };
          const stable = Math.min(lso, r.tailSeq);
          const body = s.fetchOffset >= stable ? EMPTY : cutAt(r.body, stable);
          const aborted = ctx.txns.parts.abortedIn(s.stream, s.fetchOffset, stable);
          return { d: partitionData(s.index, 0, r.tailSeq, r.startSeq, body, stable, aborted), wait: { name: s.stream, seq: Math.max(r.nextSeq, r.tailSeq), streamId: r.streamId } };
        }
        const r = await ctx.shards.read({ name: s.stream, seq: s.fetchOffset, count: NO_COUNT_LIMIT, bytes: Math.max(1, s.maxBytes), format: 'kafka' });
        if (s.fetchOffset < r.startSeq) return { d: partitionData(s.index, KafkaError.OFFSET_OUT_OF_RANGE, r.tailSeq, r.startSeq), wait: null };
        return { d: partitionData(s.index, 0, r.tailSeq, r.startSeq, r.body, ctx.txns.parts.lastStable(s.stream, r.tailSeq)), wait: { name: s.stream, seq: r.nextSeq, streamId: r.streamId } };
      } catch (err) {
        if (err instanceof SvcError && err.code === 'seq_out_of_range') return { d: partitionData(s.index, KafkaError.OFFSET_OUT_OF_RANGE), wait: null };
        return { d: partitionData(s.index, kafkaErrorOf(err)), wait: null };
      }
    }),
  );
  // The request's MaxBytes: the first partition with data always gets its batches (progress), later ones only within the budget.
  let bytes = 0;
  const data: PartitionData[] = [];
  const waits: WaitTarget[] = [];
  for (const r of results) {
    const n = r.d.records?.length ?? 0;
    if (n > 0 && bytes > 0 && bytes + n > maxBytes) r.d.records = EMPTY;
    bytes += r.d.records?.length ?? 0;
    data.push(r.d);
    if (r.wait !== null) waits.push(r.wait);
  }
  return { data, bytes, waits };
}

export const FETCH_HANDLER: ApiHandler<FetchRequest, FetchResponse> = {
  api: FETCH,
  decode: decodeFetchRequest,
  encode: encodeFetchResponse,
  async handle(ctx, req, version, conn) {
    const byId = version >= 13;
    const slots: Slot[] = [];
    for (let ti = 0; ti < req.topics.length; ti++) {
      const t = req.topics[ti]!;
      for (let pi = 0; pi < t.partitions.length; pi++) {
        const p = t.partitions[pi]!;
        const found = await lookupPartition(ctx, byId ? undefined : t.topic, byId ? t.topicId : undefined, p.partition);
        const missing = found.topic === undefined && byId ? KafkaError.UNKNOWN_TOPIC_ID : KafkaError.UNKNOWN_TOPIC_OR_PARTITION;
        // Only an existing partition's stream is checked: a missing one tells nothing but that it is missing.
        const denied = found.stream !== null && !allowed(ctx, conn, 'read', found.stream);
        const notLeader = found.stream === null || denied ? 0 : leaderError(ctx, found.stream);
        const error = denied ? KafkaError.TOPIC_AUTHORIZATION_FAILED : found.stream === null ? missing : notLeader;
        slots.push({ topic: ti, partition: pi, index: p.partition, fetchOffset: Number(p.fetchOffset), maxBytes: p.partitionMaxBytes, stream: denied || notLeader !== 0 ? null : found.stream, error });
      }
    }
    const deadline = Date.now() + Math.max(0, req.maxWaitMs);
    const committed = req.isolationLevel === 1;
    let round = await readAll(ctx, slots, req.maxBytes, committed);
    while (round.bytes < Math.max(1, req.minBytes) && round.waits.length > 0 && !ctx.live.closed) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      await waitForAny(ctx.live, round.waits, left);
      round = await readAll(ctx, slots, req.maxBytes, committed);
    }
    const responses: FetchableTopicResponse[] = req.topics.map((t) => (byId ? { topicId: t.topicId, partitions: [] } : { topic: t.topic, partitions: [] }));
    slots.forEach((s, i) => responses[s.topic]!.partitions.push(round.data[i]!));
    return { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses };
  },
};
