/**
 * ListOffsets (key 2), v1–6 (v2+ read_committed: the latest offset is the last stable offset,
 * txn/partition-state.ts): timestamp -2 is the earliest offset (the stream's start seq), -1 the
 * latest (its tail, the offset the next record gets), any other the first offset whose record
 * timestamp is at or after it (offset -1 when none is). The timestamp search walks the stream's
 * batch headers from its start and decodes only the batch where it ends.
 */
import {
  type ListOffsetsPartitionResponse,
  type ListOffsetsRequest,
  type ListOffsetsResponse,
  LIST_OFFSETS,
  decodeListOffsetsRequest,
  encodeListOffsetsResponse,
} from '../messages/list-offsets';
import { ATTR_COMPRESSION_MASK, decodeRecords, readBatchHeader } from '../../util/record-batch';
import { type ApiHandler } from '../handler';
import { type KafkaContext } from '../context';
import { KafkaError, kafkaErrorOf } from '../error-codes';
import { leaderError, lookupPartition } from '../partitions';
import { allowed } from '../auth';
import { streamOfPartition } from '../topics';

const LATEST = -1n;
const EARLIEST = -2n;
/** Bytes per read while searching by timestamp. */
const SEARCH_PAGE_BYTES = 4 * 1024 * 1024; // 4 MiB

/** The first record at or after `ts` in `stream`: its offset and timestamp, or null. */
async function offsetForTime(ctx: KafkaContext, stream: string, ts: number): Promise<{ offset: number; timestamp: number } | null> {
  let seq = (await ctx.shards.head(stream)).startSeq;
  for (;;) {
    const r = await ctx.shards.read({ name: stream, seq, count: 0x7fff_ffff, bytes: SEARCH_PAGE_BYTES, format: 'kafka' });
    for (let pos = 0; pos < r.body.length; ) {
      const h = readBatchHeader(r.body, pos);
      const size = h.batchLength + 12;
      if (h.maxTimestamp >= ts && h.baseOffset + h.lastOffsetDelta >= seq) {
        if ((h.attributes & ATTR_COMPRESSION_MASK) !== 0) return { offset: Math.max(h.baseOffset, seq), timestamp: h.maxTimestamp };
        for (const rec of decodeRecords(r.body.subarray(pos, pos + size), 0, seq)) {
          if (rec.timestamp >= ts) return { offset: rec.offset, timestamp: rec.timestamp };
        }
      }
      pos += size;
    }
    if (r.count === 0 || r.nextSeq >= r.tailSeq) return null;
    seq = r.nextSeq;
  }
}

async function answer(ctx: KafkaContext, topic: string, index: number, timestamp: bigint, conn: object, committed: boolean): Promise<ListOffsetsPartitionResponse> {
  const none = (errorCode: number): ListOffsetsPartitionResponse => ({ partitionIndex: index, errorCode, timestamp: -1n, offset: -1n, leaderEpoch: -1 });
  const found = await lookupPartition(ctx, topic, undefined, index);
  if (!allowed(ctx, conn, 'head', found.stream ?? streamOfPartition(topic, index))) return none(KafkaError.TOPIC_AUTHORIZATION_FAILED);
  if (found.stream === null) return none(KafkaError.UNKNOWN_TOPIC_OR_PARTITION);
  const notLeader = leaderError(ctx, found.stream);
  if (notLeader !== 0) return none(notLeader);
  try {
    if (timestamp === LATEST || timestamp === EARLIEST) {
      const info = await ctx.shards.head(found.stream);
      return { partitionIndex: index, errorCode: 0, timestamp: -1n, offset: BigInt(timestamp !== LATEST ? info.startSeq : committed ? ctx.txns.parts.lastStable(found.stream, info.nextSeq) : info.nextSeq), leaderEpoch: 0 };
    }
    if (timestamp < 0n) return none(KafkaError.INVALID_REQUEST);
    const hit = await offsetForTime(ctx, found.stream, Number(timestamp));
    return hit === null
      ? { partitionIndex: index, errorCode: 0, timestamp: -1n, offset: -1n, leaderEpoch: 0 }
      : { partitionIndex: index, errorCode: 0, timestamp: BigInt(hit.timestamp), offset: BigInt(hit.offset), leaderEpoch: 0 };
  } catch (err) {
    return none(kafkaErrorOf(err));
  }
}

export const LIST_OFFSETS_HANDLER: ApiHandler<ListOffsetsRequest, ListOffsetsResponse> = {
  api: LIST_OFFSETS,
  decode: decodeListOffsetsRequest,
  encode: encodeListOffsetsResponse,
  async handle(ctx, req, _version, conn) {
    const topics = [];
    for (const t of req.topics) {
      const partitions = [];
      for (const p of t.partitions) partitions.push(await answer(ctx, t.name, p.partitionIndex, p.timestamp, conn, req.isolationLevel === 1));
      topics.push({ name: t.name, partitions });
    }
    return { throttleTimeMs: 0, topics };
  },
};
