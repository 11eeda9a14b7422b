import { PartitionTxns } from '../../../src/kafka-wire/txn/partition-state';

describe('PartitionTxns (last stable offset and aborted ranges)', () => {
  test('the LSO is the first offset of the oldest open transaction, else the high watermark', () => {
    const p = new PartitionTxns(new Map());
    expect(p.lastStable('/t', 10)).toBe(10);
    p.open('/t', '7', 4);
    p.open('/t', '8', 6);
    expect(p.lastStable('/t', 10)).toBe(4);
    p.settle('/t', '7', 5);
    expect(p.lastStable('/t', 10)).toBe(5);
    expect(p.close('/t', '7', null)).toBeNull();
    expect(p.lastStable('/t', 10)).toBe(6);
    expect(p.lastStable('/other', 3)).toBe(3);
  });

  test('an abort is remembered up to its marker and listed for fetches that overlap it', () => {
    const p = new PartitionTxns(new Map([['/t', [{ pid: '1', first: 0, last: 2 }]]]));
    p.open('/t', '9', 5);
    expect(p.close('/t', '9', 8)).toEqual([
      { pid: '1', first: 0, last: 2 },
      { pid: '9', first: 5, last: 8 },
    ]);
    expect(p.abortedIn('/t', 3, 20)).toEqual([{ producerId: 9n, firstOffset: 5n }]);
    expect(p.abortedIn('/t', 0, 5)).toEqual([{ producerId: 1n, firstOffset: 0n }]);
    expect(p.abortedIn('/t', 9, 20)).toEqual([]);
    expect(p.lastStable('/t', 9)).toBe(9);
  });
});
