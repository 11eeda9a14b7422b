/**
 * The `binary` read format (`application/vnd.svc.batch`): complete RecordBatch v2
 * batches back to back, exactly as stored (offsets already assigned, CRCs intact).
 */
import {
  ATTR_COMPRESSION_MASK,
  type DecodedRecord,
  type RecordInput,
  decodeRecords,
  encodeRecordBatch,
  readBatchHeader,
} from '../../util/record-batch';

/** Concatenate complete batches. A single batch is returned as is (no copy). */
export function renderBinary(batches: readonly Buffer[]): Buffer {
  if (batches.length === 1) return batches[0] as Buffer;
  let total = 0;
  for (let i = 0; i < batches.length; i++) total += (batches[i] as Buffer).length;
  return Buffer.concat(batches, total);
}

/** int32 sequence arithmetic: Kafka producer sequences wrap from 2^31 − 1 to 0. */
function addSequence(base: number, delta: number): number {
  return (base + delta) % 0x8000_0000;
}

/**
 * The part of `batch` with offsets in [fromOffset, toOffsetExclusive): the batch itself
 * when it lies wholly inside the range, otherwise a new uncompressed batch holding just
 * those records, with baseOffset = the first kept offset and baseTimestamp = the first
 * kept timestamp (every record timestamp is preserved). Producer id and epoch are kept;
 * baseSequence moves with the first kept record so each record keeps its sequence
 * number. Callers pass uncompressed batches (shard-reader.ts inflates compressed ones first);
 * a partly covered compressed batch would throw `unsupported_compression`.
 * Returns an empty buffer when no record is in range. Record i of a stored batch has
 * offset baseOffset + i (`splitBatches` and `encodeRecordBatch` guarantee it).
 */
export function sliceBatch(batch: Buffer, fromOffset: number, toOffsetExclusive: number): Buffer {
  const h = readBatchHeader(batch);
  const lastOffset = h.baseOffset + h.lastOffsetDelta;
  if (h.baseOffset >= fromOffset && lastOffset < toOffsetExclusive) return batch;
  if (lastOffset < fromOffset || h.baseOffset >= toOffsetExclusive) return Buffer.alloc(0);

  const decoded = decodeRecords(batch, 0, fromOffset);
  let n = 0;
  while (n < decoded.length && (decoded[n]?.offset ?? Infinity) < toOffsetExclusive) n++;
  if (n === 0) return Buffer.alloc(0);
  const first = decoded[0] as DecodedRecord;
  const records: RecordInput[] = new Array<RecordInput>(n);
  for (let i = 0; i < n; i++) {
    const r = decoded[i] as DecodedRecord;
    records[i] = { key: r.key, value: r.value, headers: r.headers, timestampDelta: r.timestamp - first.timestamp };
  }
  return encodeRecordBatch({
    baseOffset: first.offset,
    baseTimestamp: first.timestamp,
    records,
    producerId: h.producerId,
    producerEpoch: h.producerEpoch,
    baseSequence: h.baseSequence < 0 ? h.baseSequence : addSequence(h.baseSequence, first.offset - h.baseOffset),
    attributes: h.attributes & ~ATTR_COMPRESSION_MASK,
    partitionLeaderEpoch: h.partitionLeaderEpoch,
  });
}
