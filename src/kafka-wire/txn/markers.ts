/**
 * Transaction markers (kafka.apache.org/documentation, "Control Batches"): a control batch
 * (attributes bit 5) that is also transactional (bit 4), written by the coordinator to each
 * partition of a transaction at its end, with the producer's id and epoch, baseSequence -1 and one
 * record: key = version int16 (0) | type int16 (0 abort, 1 commit), value = version int16 (0) |
 * coordinatorEpoch int32. Consumers drop control batches; read_committed consumers drop the
 * records of aborted transactions up to their abort marker.
 */
import { encodeRecordBatch } from '../../util/record-batch';

/** Batch attribute bits (record batch v2). */
export const TRANSACTIONAL_BIT = 0x10;
export const CONTROL_BIT = 0x20;

export function markerBatch(producerId: bigint, producerEpoch: number, commit: boolean, coordinatorEpoch: number, nowMs: number): Buffer {
  const key = Buffer.alloc(4);
  key.writeInt16BE(0, 0);
  key.writeInt16BE(commit ? 1 : 0, 2);
  const value = Buffer.alloc(6);
  value.writeInt16BE(0, 0);
  value.writeInt32BE(coordinatorEpoch, 2);
  return encodeRecordBatch({
    baseOffset: 0,
    baseTimestamp: nowMs,
    records: [{ key, value, headers: null }],
    producerId,
    producerEpoch,
    baseSequence: -1,
    attributes: TRANSACTIONAL_BIT | CONTROL_BIT,
  });
}
