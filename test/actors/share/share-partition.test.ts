/** The share-partition state machine (src/actors/share/share-partition.ts), without a store or a clock. */
import { SharePartition, type SharePartitionLimits } from '../../../src/actors';

const limits: SharePartitionLimits = { deliveryLimit: 3, maxLocks: 100 };
const range = (a: number, b: number): number[] => Array.from({ length: b - a }, (_, i) => a + i);

describe('SharePartition', () => {
  it('acquires new records with delivery count 1 under a lock, and moves the start past an acknowledged prefix', () => {
    const p = new SharePartition(0);
    expect(p.acquireNew(range(0, 5), 5, 'a', 1000)).toEqual(range(0, 5).map((offset) => ({ offset, deliveryCount: 1 })));
    expect(p.acquiredCount).toBe(5);
    const r = p.acknowledge('a', [0, 1, 3].map((offset) => ({ offset, type: 'accept' as const })), 500, limits);
    expect(r).toEqual({ applied: [0, 1, 3], refused: [], archived: [] });
    expect(p.start).toBe(2); // 2 is still acquired; 3 is acknowledged behind it
    expect(p.acknowledge('a', [{ offset: 2, type: 'accept' }, { offset: 4, type: 'accept' }], 500, limits).applied).toEqual([2, 4]);
    expect(p.start).toBe(5);
    expect(p.acquiredCount).toBe(0);
  });

  it('refuses acknowledgements of records not acquired, acquired by someone else, or whose lock expired', () => {
    const p = new SharePartition(0);
    p.acquireNew([0, 1], 2, 'a', 1000);
    const r = p.acknowledge('b', [{ offset: 0, type: 'accept' }], 500, limits);
    expect(r.refused).toEqual([{ offset: 0, reason: 'not_owner' }]);
    expect(p.acknowledge('a', [{ offset: 7, type: 'accept' }], 500, limits).refused).toEqual([{ offset: 7, reason: 'not_acquired' }]);
    expect(p.acknowledge('a', [{ offset: 1, type: 'accept' }], 1000, limits).refused).toEqual([{ offset: 1, reason: 'lock_expired' }]);
    expect(p.stateOf(1)).toMatchObject({ state: 'available', deliveryCount: 1 });
  });

  it('makes a record whose lock expired available again, and delivers it with delivery count 2', () => {
    const p = new SharePartition(0);
    p.acquireNew([0, 1], 2, 'a', 1000);
    p.acknowledge('a', [{ offset: 0, type: 'accept' }], 10, limits);
    expect(p.expire(999, limits)).toEqual([]);
    expect(p.hasAvailable()).toBe(false);
    expect(p.expire(1000, limits)).toEqual([]);
    expect(p.acquireAvailable(10, 'b', 5000, limits)).toEqual([{ offset: 1, deliveryCount: 2 }]);
    expect(p.acknowledge('a', [{ offset: 1, type: 'accept' }], 1500, limits).refused[0]!.reason).toBe('not_owner');
    expect(p.acknowledge('b', [{ offset: 1, type: 'accept' }], 1500, limits).applied).toEqual([1]);
    expect(p.start).toBe(2);
  });

  it('archives a rejected record at once, and a released or expired one once it was delivered the limit', () => {
    const p = new SharePartition(0);
    p.acquireNew([0, 1, 2], 3, 'a', 100);
    expect(p.acknowledge('a', [{ offset: 0, type: 'reject' }, { offset: 1, type: 'release' }], 10, limits)).toEqual({ applied: [0, 1], refused: [], archived: [{ offset: 0, deliveryCount: 1 }] });
    expect(p.start).toBe(1);
    // Record 1: delivered twice more (3 = the limit); its third release archives it.
    expect(p.acquireAvailable(1, 'a', 200, limits)).toEqual([{ offset: 1, deliveryCount: 2 }]);
    expect(p.expire(200, limits)).toEqual([]); // both locks ended (2's at 100, 1's at 200); both below the limit
    expect(p.acquireAvailable(5, 'a', 300, limits)).toEqual([{ offset: 1, deliveryCount: 3 }, { offset: 2, deliveryCount: 2 }]);
    expect(p.acknowledge('a', [{ offset: 1, type: 'release' }, { offset: 2, type: 'release' }], 250, limits)).toEqual({ applied: [1, 2], refused: [], archived: [{ offset: 1, deliveryCount: 3 }] });
    expect(p.start).toBe(2);
    expect(p.stateOf(2)).toMatchObject({ state: 'available', deliveryCount: 2 });
  });

  it('archives an expired record past the delivery limit and reports it', () => {
    const p = new SharePartition(0);
    p.acquireNew([0], 1, 'a', 100);
    for (let i = 2; i <= 3; i++) {
      p.expire(i * 100 - 100 + 100, limits);
      expect(p.acquireAvailable(1, 'a', i * 100 + 100, limits)).toEqual([{ offset: 0, deliveryCount: i }]);
    }
    expect(p.expire(10_000, limits)).toEqual([{ offset: 0, deliveryCount: 3 }]);
    expect(p.stateOf(0).state).toBe('done');
    expect(p.start).toBe(1);
  });

  it('hands out available records oldest first, then new ones, within the lock limit', () => {
    const p = new SharePartition(10);
    p.acquireNew([10, 12, 13], 15, 'a', 100); // 11 and 14 are gaps (no record)
    p.acknowledge('a', [{ offset: 13, type: 'release' }, { offset: 10, type: 'release' }], 1, limits);
    expect(p.acquireAvailable(5, 'b', 200, limits).map((a) => a.offset)).toEqual([10, 13]);
    const small = { deliveryLimit: 3, maxLocks: 4 };
    expect(p.room(small)).toBe(1);
    expect(p.acquireNew([15], 16, 'b', 200)).toEqual([{ offset: 15, deliveryCount: 1 }]);
    expect(p.acknowledge('b', [10, 13, 15].map((offset) => ({ offset, type: 'accept' as const })), 2, limits).applied).toEqual([10, 13, 15]);
    expect(p.acknowledge('a', [{ offset: 12, type: 'accept' }], 2, limits).applied).toEqual([12]);
    expect(p.start).toBe(16); // past the gaps at 11 and 14
  });

  it('gives back every lock of an owner that left, and skips records trimmed away', () => {
    const p = new SharePartition(0);
    p.acquireNew(range(0, 4), 4, 'a', 100);
    p.acquireNew([4], 5, 'b', 100);
    expect(p.releaseOwner('a', limits)).toEqual([]);
    expect(p.counts()).toEqual({ available: 4, acquired: 1, acknowledged: 0, archived: 0 });
    p.skipTo(3);
    expect(p.start).toBe(3);
    expect(p.acquiredCount).toBe(1);
    expect(p.acquireAvailable(10, 'c', 100, limits).map((a) => a.offset)).toEqual([3]);
  });

  it('round-trips through its durable form, with runs of equal entries', () => {
    const p = new SharePartition(0);
    p.acquireNew(range(0, 1000), 1000, 'a', 100);
    p.acknowledge('a', range(1, 500).map((offset) => ({ offset, type: 'accept' as const })), 1, limits);
    p.acknowledge('a', [{ offset: 600, type: 'release' }], 1, limits);
    const rec = p.toRecord();
    expect(rec.runs).toEqual([
      [0, 0, 'acquired', 1, 100, 'a'],
      [1, 499, 'acknowledged', 1, 0, ''],
      [500, 599, 'acquired', 1, 100, 'a'],
      [600, 600, 'available', 1, 0, ''],
      [601, 999, 'acquired', 1, 100, 'a'],
    ]);
    const q = SharePartition.fromRecord(JSON.parse(JSON.stringify(rec)));
    expect(q.toRecord()).toEqual(rec);
    expect(q.acquiredCount).toBe(p.acquiredCount);
    expect(q.acknowledge('a', [{ offset: 0, type: 'accept' }], 2, limits).applied).toEqual([0]);
    expect(q.start).toBe(500);
  });

  it('keeps running totals of deliveries, redeliveries, acknowledgements and archived records, in its durable form too', () => {
    const p = new SharePartition(0);
    p.acquireNew(range(0, 6), 6, 'a', 100);
    // 0, 1 accepted; 2 rejected (archived); 3 released; 4 and 5 keep their locks until they end.
    p.acknowledge('a', [{ offset: 0, type: 'accept' }, { offset: 1, type: 'accept' }, { offset: 2, type: 'reject' }, { offset: 3, type: 'release' }], 50, limits);
    expect(p.totals()).toEqual({ delivered: 6, redelivered: 0, acknowledged: 2, archived: 1 });
    expect(p.locksEnded(99)).toBe(0);
    expect(p.locksEnded(100)).toBe(2);
    p.expire(100, limits);
    // 3, 4 and 5 again (delivery 2), then again after their locks end (delivery 3, the limit): archived at the end of that lock.
    expect(p.acquireAvailable(10, 'b', 200, limits).map((a) => [a.offset, a.deliveryCount])).toEqual([[3, 2], [4, 2], [5, 2]]);
    p.expire(200, limits);
    p.acquireAvailable(10, 'c', 300, limits);
    expect(p.expire(300, limits).map((a) => a.offset)).toEqual([3, 4, 5]);
    const totals = { delivered: 12, redelivered: 6, acknowledged: 2, archived: 4 };
    expect(p.totals()).toEqual(totals);
    expect(p.start).toBe(6);
    const rec = JSON.parse(JSON.stringify(p.toRecord())) as ReturnType<SharePartition['toRecord']>;
    expect(rec.totals).toEqual([12, 6, 2, 4]);
    expect(SharePartition.fromRecord(rec).totals()).toEqual(totals);
    // A record written before the totals existed counts from zero.
    const { totals: _, ...old } = rec;
    expect(SharePartition.fromRecord(old).totals()).toEqual({ delivered: 0, redelivered: 0, acknowledged: 0, archived: 0 });
  });
});
