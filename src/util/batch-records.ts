/**
 * The records of a run of RecordBatch v2 (a Kafka Produce partition's, or an HTTP binary batch),
 * compressed batches inflated: what schema validation checks (util/validation-rule.ts). The
 * batches themselves are left as they are (they are stored as sent).
 */
import { type DecodedRecord, decodeRecords, splitBatches } from './record-batch';
import { decompress } from './compression';

const RECORDS_POS = 61;
const ATTRIBUTES_POS = 21;
const BATCH_LENGTH_POS = 8;
const LOG_OVERHEAD = 12;
const COMPRESSION_MASK = 0x07;

export interface BatchRecords {
  batches: Buffer[];
  /** Every record, with its batch's index and its index in the batch. */
  records: Array<{ batch: number; index: number; key: Buffer | null; value: Buffer | null; rec: DecodedRecord }>;
}

/** The batches and records of `body`, or why it does not decode. */
export function batchRecords(body: Buffer): BatchRecords | string {
  const batches = splitBatches(body);
  if (!Array.isArray(batches)) return batches.message;
  const records: BatchRecords['records'] = [];
  try {
    batches.forEach((b, bi) => {
      const codec = b.readInt16BE(ATTRIBUTES_POS) & COMPRESSION_MASK;
      let plain = b;
      if (codec !== 0) {
        plain = Buffer.concat([b.subarray(0, RECORDS_POS), decompress(codec, b.subarray(RECORDS_POS))]);
        plain.writeInt16BE(plain.readInt16BE(ATTRIBUTES_POS) & ~COMPRESSION_MASK, ATTRIBUTES_POS);
        plain.writeInt32BE(plain.length - LOG_OVERHEAD, BATCH_LENGTH_POS);
      }
      decodeRecords(plain).forEach((rec, index) => records.push({ batch: bi, index, key: rec.key, value: rec.value, rec }));
    });
  } catch (err) {
    return (err as Error).message;
  }
  return { batches, records };
}
