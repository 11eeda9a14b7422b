import { renderBinary, sliceBatch } from '../../../src/shards/render/binary-records';
import {
  ATTR_TIMESTAMP_TYPE,
  ATTR_TRANSACTIONAL,
  Compression,
  type RecordInput,
  RecordBatchError,
  decodeRecords,
  encodeRecordBatch,
  readBatchHeader,
  verifyBatchCrc,
} from '../../../src/util/record-batch';

const records: RecordInput[] = Array.from({ length: 6 }, (_, i) => ({
  key: i % 2 ? Buffer.from(`k${i}`) : null,
  value: Buffer.from(`value ${i}`),
  headers: i === 3 ? [[Buffer.from('h'), Buffer.from('v')]] : null,
  timestampDelta: [0, 5, -2, 9, 9, 1][i] as number,
}));
const batch = encodeRecordBatch({
  baseOffset: 100,
  baseTimestamp: 50_000,
  records,
  producerId: 42n,
  producerEpoch: 3,
  baseSequence: 10,
  attributes: ATTR_TRANSACTIONAL,
});

function summary(buf: Buffer): unknown[] {
  return decodeRecords(buf).map((r) => [r.offset, r.timestamp, r.key?.toString() ?? null, r.value?.toString(), r.headers.map(([k, v]) => `${k}=${v}`)]);
}

describe('renderBinary', () => {
  test('concatenates complete batches and returns a single batch without copying', () => {
    const other = encodeRecordBatch({ baseOffset: 106, baseTimestamp: 1, records: [records[0] as RecordInput] });
    expect(renderBinary([batch, other]).equals(Buffer.concat([batch, other]))).toBe(true);
    expect(renderBinary([batch])).toBe(batch);
    expect(renderBinary([]).length).toBe(0);
  });
});

describe('sliceBatch', () => {
  test('returns the batch itself when it lies wholly inside the range', () => {
    expect(sliceBatch(batch, 100, 106)).toBe(batch);
    expect(sliceBatch(batch, 0, Number.MAX_SAFE_INTEGER)).toBe(batch);
  });

  test('returns an empty buffer when no record is in range', () => {
    expect(sliceBatch(batch, 106, 200).length).toBe(0);
    expect(sliceBatch(batch, 0, 100).length).toBe(0);
  });

  test('re-encodes only the records in range with offsets, timestamps, keys and headers preserved', () => {
    const sliced = sliceBatch(batch, 102, 105);
    expect(verifyBatchCrc(sliced)).toBe(true);
    expect(summary(sliced)).toEqual(summary(batch).slice(2, 5));
    const h = readBatchHeader(sliced);
    expect(h.baseOffset).toBe(102);
    expect(h.baseTimestamp).toBe(49_998);
    expect(h.maxTimestamp).toBe(50_009);
    expect([h.producerId, h.producerEpoch, h.attributes]).toEqual([42n, 3, ATTR_TRANSACTIONAL]);
  });

  test('moves baseSequence with the first kept record so each record keeps its producer sequence', () => {
    expect(readBatchHeader(sliceBatch(batch, 103, 200)).baseSequence).toBe(13);
    const wrapping = encodeRecordBatch({ baseOffset: 0, baseTimestamp: 0, records, producerId: 1n, producerEpoch: 0, baseSequence: 2 ** 31 - 2 });
    expect(readBatchHeader(sliceBatch(wrapping, 3, 6)).baseSequence).toBe(1);
    const plain = encodeRecordBatch({ baseOffset: 0, baseTimestamp: 0, records });
    expect(readBatchHeader(sliceBatch(plain, 3, 6)).baseSequence).toBe(-1);
  });

  test('keeps LogAppendTime timestamps', () => {
    const logAppend = encodeRecordBatch({ baseOffset: 0, baseTimestamp: 7, records, attributes: ATTR_TIMESTAMP_TYPE });
    const sliced = sliceBatch(logAppend, 1, 3);
    expect(decodeRecords(sliced).map((r) => r.timestamp)).toEqual([16, 16]);
  });

  test('throws unsupported_compression for a partly covered compressed batch', () => {
    const compressed = Buffer.from(batch);
    compressed.writeInt16BE(Compression.snappy, 21);
    expect(sliceBatch(compressed, 0, 1000)).toBe(compressed);
    expect(() => sliceBatch(compressed, 101, 1000)).toThrow(RecordBatchError);
  });
});
