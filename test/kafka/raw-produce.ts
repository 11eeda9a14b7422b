/** Produce and InitProducerId over a raw connection (the project's own codecs), for protocol checks no client makes on purpose. */
import { decodeInitProducerIdResponse, encodeInitProducerIdRequest } from '../../src/kafka-wire/messages/init-producer-id';
import { type PartitionProduceResponse, decodeProduceResponse, encodeProduceRequest } from '../../src/kafka-wire/messages/produce';
import { crc32cRange } from '../../src/util/crc32c';
import { compress } from '../../src/util/compression';
import { ATTRIBUTES_POS, BATCH_LENGTH_POS, CRC_POS, LOG_OVERHEAD, RECORDS_POS, encodeRecordBatch } from '../../src/util/record-batch';
import { type RawKafka } from './kafka-test-client';

export async function initProducerId(k: RawKafka): Promise<{ errorCode: number; producerId: bigint; producerEpoch: number }> {
  const r = await k.request(22, 4, true, (w) => encodeInitProducerIdRequest(w, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }, 4));
  return decodeInitProducerIdResponse(r, 4);
}

/** A batch of `values` (keys k<i>), optionally of an idempotent producer. */
export function batchOf(values: string[], producer?: { id: bigint; epoch: number; seq: number }): Buffer {
  return encodeRecordBatch({
    baseOffset: 0,
    baseTimestamp: Date.now(),
    records: values.map((v, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(v), headers: null, timestampDelta: i })),
    ...(producer === undefined ? {} : { producerId: producer.id, producerEpoch: producer.epoch, baseSequence: producer.seq }),
  });
}

/** The same batch with its records compressed by `codec` (header kept, CRC recomputed). */
export function compressed(batch: Buffer, codec: number): Buffer {
  const body = compress(codec, batch.subarray(RECORDS_POS));
  return withRecords(batch, body, codec);
}

/** `batch`'s header with `records` as its records section and `codec` in its attributes; a valid CRC. */
export function withRecords(batch: Buffer, records: Buffer, codec: number): Buffer {
  const out = Buffer.concat([batch.subarray(0, RECORDS_POS), records]);
  out.writeInt32BE(out.length - LOG_OVERHEAD, BATCH_LENGTH_POS);
  out.writeInt16BE((out.readInt16BE(ATTRIBUTES_POS) & ~7) | codec, ATTRIBUTES_POS);
  out.writeUInt32BE(crc32cRange(out, ATTRIBUTES_POS, out.length) >>> 0, CRC_POS);
  return out;
}

/** Produce v9 of `records` to partition 0 of `topic` with acks=-1; the partition's answer. */
export async function produce(k: RawKafka, topic: string, records: Buffer): Promise<PartitionProduceResponse> {
  const r = await k.request(0, 9, true, (w) => encodeProduceRequest(w, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] }, 9));
  return decodeProduceResponse(r, 9).responses[0]!.partitionResponses[0]!;
}
