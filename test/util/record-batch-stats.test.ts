/** splitBatches reports the largest record value of the batches it validates (the shard's record-size limit). */
import { encodeRecordBatch, splitBatches } from '../../src/util/record-batch';

describe('splitBatches with stats', () => {
  test('finds the largest value over every batch, null values and value lengths across varint sizes included', () => {
    const sizes = [0, 63, 64, 8191, 8192, 300];
    const a = encodeRecordBatch({ baseOffset: 0, baseTimestamp: 1, records: sizes.slice(0, 3).map((n) => ({ key: Buffer.from('k'), value: Buffer.alloc(n), headers: [[Buffer.from('h'), Buffer.alloc(9000)]] as const })) });
    const b = encodeRecordBatch({ baseOffset: 0, baseTimestamp: 1, records: [...sizes.slice(3).map((n) => ({ key: null, value: Buffer.alloc(n), headers: null })), { key: null, value: null, headers: null }] });
    const stats = { largestValue: 0 };
    const out = splitBatches(Buffer.concat([a, b]), stats);
    expect(Array.isArray(out) && out.length).toBe(2);
    expect(stats.largestValue).toBe(8192);
  });

  test('is 0 for batches of null values only', () => {
    const stats = { largestValue: 0 };
    splitBatches(encodeRecordBatch({ baseOffset: 0, baseTimestamp: 1, records: [{ key: Buffer.from('k'), value: null, headers: null }] }), stats);
    expect(stats.largestValue).toBe(0);
  });
});
