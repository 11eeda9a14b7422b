/**
 * DeleteRecords (key 21), v0–2: a trim of each partition's stream below the offset (offsets are
 * seqs); -1 trims to the high watermark. The answer's low watermark is the stream's new start.
 * An offset beyond the high watermark is OFFSET_OUT_OF_RANGE (1), as in Kafka.
 */
import {
  type DeleteRecordsPartitionResult,
  type DeleteRecordsRequest,
  type DeleteRecordsResponse,
  type DeleteRecordsTopicResult,
  DELETE_RECORDS,
  decodeDeleteRecordsRequest,
  encodeDeleteRecordsResponse,
} from '../messages/delete-records';
import { type ApiHandler } from '../handler';
import { KafkaError, kafkaErrorOf } from '../error-codes';
import { allowed } from '../auth';
import { leaderError, lookupPartition } from '../partitions';

export const DELETE_RECORDS_HANDLER: ApiHandler<DeleteRecordsRequest, DeleteRecordsResponse> = {
  api: DELETE_RECORDS,
  decode: decodeDeleteRecordsRequest,
  encode: encodeDeleteRecordsResponse,
  async handle(ctx, req, _version, conn) {
    const topics: DeleteRecordsTopicResult[] = [];
    for (const q of req.topics) {
      const partitions: DeleteRecordsPartitionResult[] = [];
      for (const p of q.partitions) {
        const res = (errorCode: number, lowWatermark = -1n): number => partitions.push({ partitionIndex: p.partitionIndex, lowWatermark, errorCode });
        const { stream } = await lookupPartition(ctx, q.name, undefined, p.partitionIndex);
        if (stream === null) {
          res(KafkaError.UNKNOWN_TOPIC_OR_PARTITION);
          continue;
        }
        if (!allowed(ctx, conn, 'trim', stream)) {
          res(KafkaError.TOPIC_AUTHORIZATION_FAILED);
          continue;
        }
        // DeleteRecords goes to the partition's leader (docs/cluster.md, "Kafka").
        if (leaderError(ctx, stream) !== 0) {
          res(leaderError(ctx, stream));
          continue;
        }
        try {
          const info = await ctx.shards.head(stream);
          const seq = p.offset === -1n ? info.nextSeq : Number(p.offset);
          if (p.offset < -1n || seq > info.nextSeq) {
            res(KafkaError.OFFSET_OUT_OF_RANGE);
            continue;
          }
          const r = await ctx.shards.trim({ name: stream, seq });
          res(0, BigInt(r.startSeq));
        } catch (err) {
          res(kafkaErrorOf(err));
        }
      }
      topics.push({ name: q.name, partitions });
    }
    return { throttleTimeMs: 0, topics };
  },
};
