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

  test('copies on other threads (gateway threads) get every change, and mirrored() waits for all of them', async () => {
    const p = new PartitionTxns(new Map());
    const copies = [new PartitionTxns(new Map()), new PartitionTxns(new Map())];
    const pending: Array<() => void> = [];
    for (const c of copies) {
      // Each copy acknowledges when the test says so, as a thread does after its turn.
      p.copyTo((stream) => {
        const state = p.state(stream);
        return new Promise<void>((resolve) => pending.push(() => (c.apply(stream, state), resolve())));
      });
    }
    p.open('/t', '7', 4);
    let mirrored = false;
    void p.mirrored().then(() => (mirrored = true));
    pending.shift()!();
    await new Promise((r) => setImmediate(r));
    expect(mirrored).toBe(false);
    pending.shift()!();
    await new Promise((r) => setImmediate(r));
    expect(mirrored).toBe(true);
    for (const c of copies) {
      expect(c.stableSeq('/t')).toBe(4);
      expect(c.visibility('/t', 0)).toEqual({ stableSeq: 4, aborted: [] });
    }
    // An abort: the copies drop the open transaction, keep the aborted range and tell their readers.
    const ended: string[] = [];
    copies[0]!.onEnded((s) => ended.push(s));
    p.close('/t', '7', 9);
    for (const f of pending.splice(0)) f();
    await p.mirrored();
    expect(copies[0]!.stableSeq('/t')).toBeNull();
    expect(copies[0]!.visibility('/t', 0)).toEqual({ stableSeq: null, aborted: [{ producerId: '7', first: 4, last: 9 }] });
    expect(ended).toEqual(['/t']);
    // A new copy starts from the whole state.
    const late = new PartitionTxns(new Map());
    for (const s of p.streams()) late.apply(s, p.state(s));
    expect(late.abortedIn('/t', 0, 20)).toEqual([{ producerId: 7n, firstOffset: 4n }]);
  });
});
