import { renderRaw } from '../../../src/shards/render/raw-records';
import type { DecodedRecord } from '../../../src/util/record-batch';

const rec = (value: Buffer | null): DecodedRecord => ({ offset: 0, timestamp: 0, key: Buffer.from('ignored'), value, headers: [] });

describe('renderRaw', () => {
  test('concatenates record values and skips null values', () => {
    const out = renderRaw([rec(Buffer.from('ab')), rec(null), rec(Buffer.from('')), rec(Buffer.from([0xff, 0x00]))]);
    expect(out.toString('hex')).toBe('6162ff00');
  });

  test('renders no records as an empty buffer', () => {
    expect(renderRaw([]).length).toBe(0);
  });
});
