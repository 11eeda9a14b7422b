import { compactValues } from '../../../src/shards/render/raw-copy';
import { decodeRecords, encodeRecordBatch } from '../../../src/util/record-batch';

function batchOf(values: Array<Buffer | null>, baseOffset: number): Buffer {
  return encodeRecordBatch({
    baseOffset,
    baseTimestamp: 1_700_000_000_000,
    records: values.map((value, i) => ({ key: i % 3 === 0 ? null : Buffer.from(`key-${i}`), value, headers: i % 2 ? [[Buffer.from('h'), Buffer.from('v')]] : null })),
  });
}

describe('compactValues', () => {
  it('moves exactly the values decodeRecords would return, in order, for every start offset', () => {
    const values = Array.from({ length: 40 }, (_, i) => (i === 7 ? null : Buffer.alloc((i * 37) % 300, 65 + (i % 26))));
    const batch = batchOf(values, 1000);
    for (let from = 1000; from <= 1040; from++) {
      const expected = Buffer.concat(decodeRecords(batch, 0, from).map((r) => r.value ?? Buffer.alloc(0)));
      const work = Buffer.from(batch);
      const r = compactValues(work, 0, from, Infinity, Infinity, Infinity, 0);
      expect(r.n).toBe(1040 - from);
      expect(r.full).toBe(false);
      expect(work.subarray(0, r.bytes)).toEqual(expected);
      expect(r.next).toBe(r.n > 0 ? 1040 : from);
    }
  });

  it('stops at the record count, the end offset and the byte room, reporting where it stopped', () => {
    const batch = batchOf(Array.from({ length: 10 }, () => Buffer.alloc(100, 1)), 0);
    expect(compactValues(Buffer.from(batch), 0, 0, Infinity, 3, Infinity, 0)).toEqual({ n: 3, bytes: 300, written: 300, next: 3, full: true });
    expect(compactValues(Buffer.from(batch), 0, 2, 5, Infinity, Infinity, 0)).toEqual({ n: 3, bytes: 300, written: 300, next: 5, full: true });
    expect(compactValues(Buffer.from(batch), 0, 0, Infinity, Infinity, 250, 0)).toEqual({ n: 2, bytes: 200, written: 200, next: 2, full: true });
  });

  it('works on a batch that sits after other bytes in the buffer, writing behind its read position', () => {
    const batch = batchOf([Buffer.from('alpha'), Buffer.from('beta')], 5);
    const work = Buffer.concat([Buffer.alloc(13, 9), batch]);
    const r = compactValues(work, 13, 0, Infinity, Infinity, Infinity, 0);
    expect(work.subarray(0, r.bytes).toString()).toBe('alphabeta');
  });
});
