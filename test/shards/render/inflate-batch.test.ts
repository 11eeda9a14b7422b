/** A compressed stored batch turned back into the uncompressed batch it was made from (render/inflate-batch.ts). */
import { inflateBatch, isCompressed } from '../../../src/shards/render/inflate-batch';
import { compress, ready } from '../../../src/util/compression';
import { crc32cRange } from '../../../src/util/crc32c';
import { ATTRIBUTES_POS, BATCH_LENGTH_POS, CRC_POS, Compression, LOG_OVERHEAD, RECORDS_POS, decodeRecords, encodeRecordBatch, setBaseOffset, verifyBatchCrc } from '../../../src/util/record-batch';

function compressedCopy(batch: Buffer, codec: number): Buffer {
  const out = Buffer.concat([batch.subarray(0, RECORDS_POS), compress(codec, batch.subarray(RECORDS_POS))]);
  out.writeInt32BE(out.length - LOG_OVERHEAD, BATCH_LENGTH_POS);
  out.writeInt16BE(out.readInt16BE(ATTRIBUTES_POS) | codec, ATTRIBUTES_POS);
  out.writeUInt32BE(crc32cRange(out, ATTRIBUTES_POS, out.length) >>> 0, CRC_POS);
  return out;
}

describe('inflateBatch', () => {
  beforeAll(() => ready());

  const plain = encodeRecordBatch({
    baseOffset: 0,
    baseTimestamp: 1_700_000_000_000,
    records: Array.from({ length: 50 }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`value ${i} `.repeat(5)), headers: [[Buffer.from('h'), Buffer.from(String(i))]] as const, timestampDelta: i })),
    producerId: 42n,
    producerEpoch: 3,
    baseSequence: 7,
  });

  test.each([
    ['gzip', Compression.gzip],
    ['snappy', Compression.snappy],
    ['lz4', Compression.lz4],
    ['zstd', Compression.zstd],
  ])('%s: gives back exactly the uncompressed batch, at its assigned offset, with a valid CRC', (_name, codec) => {
    const stored = compressedCopy(plain, codec);
    setBaseOffset(stored, 1000);
    expect(isCompressed(stored)).toBe(true);
    const inflated = inflateBatch(stored);
    expect(isCompressed(inflated)).toBe(false);
    expect(verifyBatchCrc(inflated)).toBe(true);
    const expected = Buffer.from(plain);
    setBaseOffset(expected, 1000);
    expect(inflated).toEqual(expected);
    expect(decodeRecords(inflated).map((r) => r.offset)).toEqual(Array.from({ length: 50 }, (_, i) => 1000 + i));
  });

  test('returns an uncompressed batch as it is', () => {
    expect(inflateBatch(plain)).toBe(plain);
  });

  test('refuses a batch whose records do not decompress as corrupt_batch', () => {
    const bad = Buffer.concat([plain.subarray(0, RECORDS_POS), Buffer.from('garbage')]);
    bad.writeInt32BE(bad.length - LOG_OVERHEAD, BATCH_LENGTH_POS);
    bad.writeInt16BE(Compression.lz4, ATTRIBUTES_POS);
    expect(() => inflateBatch(bad)).toThrow(expect.objectContaining({ code: 'corrupt_batch' }));
  });
});
