/**
 * A compressed stored batch (a Kafka Produce stores batches as the client compressed them) as
 * the equivalent uncompressed batch, for every read format but `kafka`: same header fields
 * (offsets, timestamps, producer), codec bits cleared, records decompressed, batchLength and
 * CRC-32C recomputed. The renderers then see only uncompressed batches.
 */
import { crc32cRange } from '../../util/crc32c';
import { CompressionError, decompress } from '../../util/compression';
import {
  ATTRIBUTES_POS,
  ATTR_COMPRESSION_MASK,
  BATCH_LENGTH_POS,
  CRC_POS,
  LOG_OVERHEAD,
  RECORDS_POS,
  RecordBatchError,
  batchSize,
} from '../../util/record-batch';

export function isCompressed(batch: Buffer, pos = 0): boolean {
  return (batch.readInt16BE(pos + ATTRIBUTES_POS) & ATTR_COMPRESSION_MASK) !== 0;
}

/** The batch at `batch[pos]`, uncompressed (the batch itself when it is not compressed). */
export function inflateBatch(batch: Buffer, pos = 0): Buffer {
  const attributes = batch.readInt16BE(pos + ATTRIBUTES_POS);
  const codec = attributes & ATTR_COMPRESSION_MASK;
  const end = pos + batchSize(batch, pos);
  if (codec === 0) return pos === 0 && end === batch.length ? batch : batch.subarray(pos, end);
  let records: Buffer;
  try {
    records = decompress(codec, batch.subarray(pos + RECORDS_POS, end));
  } catch (err) {
    if (err instanceof CompressionError) throw new RecordBatchError('corrupt_batch', `stored batch does not decompress: ${err.message}`);
    throw err;
  }
  const out = Buffer.allocUnsafe(RECORDS_POS + records.length);
  batch.copy(out, 0, pos, pos + RECORDS_POS);
  records.copy(out, RECORDS_POS);
  out.writeInt32BE(out.length - LOG_OVERHEAD, BATCH_LENGTH_POS);
  out.writeInt16BE(attributes & ~ATTR_COMPRESSION_MASK, ATTRIBUTES_POS);
  out.writeUInt32BE(crc32cRange(out, ATTRIBUTES_POS, out.length) >>> 0, CRC_POS);
  return out;
}
