/**
 * Raw Fetch of one partition (the project's own codecs): the batches exactly as the listener
 * serves them to Kafka consumers, to see the codec each batch was stored with.
 */
import { decodeFetchResponse, encodeFetchRequest } from '../../src/kafka-wire/messages/fetch';
import { ATTR_COMPRESSION_MASK, batchSize, readBatchHeader } from '../../src/util/record-batch';
import { RawKafka } from './kafka-test-client';

export interface ServedBatch {
  baseOffset: number;
  codec: number;
  records: number;
  producerId: bigint;
}

/** Every batch of partition 0 of `topic` from offset 0 to the high watermark. */
export async function servedBatches(broker: string, topic: string): Promise<ServedBatch[]> {
  const k = await RawKafka.connect(broker);
  const out: ServedBatch[] = [];
  try {
    let next = 0n;
    for (let round = 0; round < 100; round++) {
      const r = await k.request(1, 11, false, (w) =>
        encodeFetchRequest(w, {
          replicaId: -1, maxWaitMs: 100, minBytes: 1, maxBytes: 1 << 22, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
          topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: next, logStartOffset: -1n, partitionMaxBytes: 1 << 22 }] }],
          forgottenTopicsData: [], rackId: '',
        }, 11),
      );
      const p = decodeFetchResponse(r, 11).responses[0]!.partitions[0]!;
      if (p.errorCode !== 0) throw new Error(`fetch error ${p.errorCode}`);
      const records = p.records ?? Buffer.alloc(0);
      for (let pos = 0; pos + 61 <= records.length; pos += batchSize(records, pos)) {
        const h = readBatchHeader(records, pos);
        out.push({ baseOffset: h.baseOffset, codec: h.attributes & ATTR_COMPRESSION_MASK, records: h.recordsCount, producerId: h.producerId });
        next = BigInt(h.baseOffset + h.lastOffsetDelta + 1);
      }
      if (next >= p.highWatermark) break;
    }
  } finally {
    k.close();
  }
  return out;
}
