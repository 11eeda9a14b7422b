/**
 * Remote chunks (src/shards/worker/remote-chunks.ts): a stream's ledger entries as the seqs a
 * shard serves from the object store — lookup by seq, holes, trims, compaction's replacement —
 * and the check of a fetched range: whole frames with their CRC, batches seq for seq, damage
 * named by stream, seqs and object.
 */
import { type SvcError } from '../../src/errors';
import { FrameType, encodeDataFrame, encodeFrame, encodeTrimPayload } from '../../src/shards/worker/frame';
import { NO_OBJECT, RemoteChunks, type RemoteEntry, checkRemoteRange } from '../../src/shards/worker/remote-chunks';
import { encodeRecordBatch } from '../../src/util/record-batch';

const S = '/r/s';

function batch(base: number, n: number): Buffer {
  const records = Array.from({ length: n }, (_, i) => ({ key: null, value: Buffer.from(`v${base + i}`), headers: null }));
  // A view of Node's pool must not be framed in place: copy.
  return Buffer.from(encodeRecordBatch({ baseOffset: base, baseTimestamp: 1_700_000_000_000, records }));
}

/** Frames of seqs [from, to) in batches of `per`, as a writer with stream id 7 wrote them (a TRIM frame among them). */
function frames(from: number, to: number, per = 3): Buffer {
  const out: Buffer[] = [];
  for (let s = from; s < to; s += per) {
    out.push(encodeDataFrame(7, batch(s, Math.min(per, to - s)), false));
    if (s === from) out.push(encodeFrame(FrameType.Trim, 7, encodeTrimPayload(0)));
  }
  return Buffer.concat(out);
}

const e = (o: string, from: number, to: number, len = 100, off = 0): RemoteEntry => ({ o, off, len, from, to });

function caught(f: () => unknown): SvcError {
  try {
    f();
  } catch (err) {
    return err as SvcError;
  }
  throw new Error('did not throw');
}

describe('RemoteChunks', () => {
  it('finds the entry holding a seq; entries without data or below the start are left out', () => {
    const rc = new RemoteChunks(S, [e('g/a', 0, 10), e('g/b', 10, 10), e('g/c', 10, 25), e('g/d', 25, 40)], 12);
    expect(rc.entries.map((x) => x.o)).toEqual(['g/c', 'g/d']);
    expect(rc.start).toBe(10);
    expect(rc.end).toBe(40);
    expect(rc.find(9)).toBe(-1);
    expect(rc.find(10)).toBe(0);
    expect(rc.find(24)).toBe(0);
    expect(rc.find(25)).toBe(1);
    expect(rc.find(39)).toBe(1);
    expect(rc.find(40)).toBe(-1);
  });

  it('keeps a hole in the seqs as an entry without object, whose reads are data_corrupt', () => {
    const rc = new RemoteChunks(S, [e('g/a', 0, 10), e('g/c', 20, 30)], 0);
    const i = rc.find(15);
    expect(rc.at(i)).toEqual({ o: NO_OBJECT, off: 0, len: 0, from: 10, to: 20 });
    const err = caught(() => checkRemoteRange(S, rc.at(i)!, Buffer.alloc(0)));
    expect(err.code).toBe('data_corrupt');
    expect(err.details).toMatchObject({ stream: S, from_seq: 10, to_seq: 19 });
    // Read-ahead skips it.
    expect(rc.ahead(0, 1 << 20).map((x) => x.o)).toEqual(['g/c']);
  });

  it('refuses entries that name a seq twice', () => {
    expect(caught(() => new RemoteChunks(S, [e('g/a', 0, 10), e('g/b', 5, 12)], 0)).code).toBe('data_corrupt');
  });

  it('read-ahead: the next entries up to a byte budget, at least one', () => {
    const rc = new RemoteChunks(S, [e('a', 0, 1, 50), e('b', 1, 2, 50), e('c', 2, 3, 50), e('d', 3, 4, 500)], 0);
    expect(rc.ahead(0, 100).map((x) => x.o)).toEqual(['b', 'c']);
    expect(rc.ahead(2, 100).map((x) => x.o)).toEqual(['d']);
    expect(rc.ahead(3, 100)).toEqual([]);
  });

  it('follows compaction: a run of whole entries is replaced by one; anything else is refused', () => {
    const rc = new RemoteChunks(S, [e('g/a', 0, 10), e('g/b', 10, 20), e('g/c', 20, 30), e('g/d', 30, 40)], 0);
    expect(rc.replace(e('c/1', 10, 30, 250))).toBe(true);
    expect(rc.entries.map((x) => x.o)).toEqual(['g/a', 'c/1', 'g/d']);
    expect(rc.at(rc.find(25))!.o).toBe('c/1');
    // Not on entry boundaries, or past the end: the caller reads the ledger again.
    expect(rc.replace(e('c/2', 5, 20))).toBe(false);
    expect(rc.replace(e('c/3', 30, 45))).toBe(false);
    expect(rc.entries.map((x) => x.o)).toEqual(['g/a', 'c/1', 'g/d']);
  });

  it('trims whole entries below a new start; a reset never moves the end back', () => {
    const rc = new RemoteChunks(S, [e('g/a', 0, 10), e('g/b', 10, 20), e('g/c', 20, 30)], 0);
    rc.trim(15);
    expect(rc.entries.map((x) => x.o)).toEqual(['g/b', 'g/c']);
    rc.reset([e('g/b', 10, 20)], 15);
    expect(rc.end).toBe(30);
    expect(rc.find(25)).toBe(-1);
  });

  it('a reset keeps an entry compaction joined with the local appends (it starts below the end), and leaves out those starting at the end or past it', () => {
    const rc = new RemoteChunks(S, [e('g/a', 0, 10), e('g/b', 10, 20), e('g/c', 20, 30)], 0);
    // The ledger read again: the appends after the open (30..) were recorded, and compaction joined some of them with the remote entries.
    rc.reset([e('c/1', 0, 35), e('g/d', 35, 40), e('g/e', 40, 45)], 0);
    expect(rc.entries.map((x) => x.o)).toEqual(['c/1']);
    expect(rc.end).toBe(30);
    expect(rc.find(0)).toBe(0);
    expect(rc.find(29)).toBe(0);
    rc.reset([e('g/a', 0, 10), e('c/2', 10, 32), e('g/e', 32, 45)], 0);
    expect(rc.entries.map((x) => x.o)).toEqual(['g/a', 'c/2']);
    expect(rc.end).toBe(30);
  });
});

describe('checkRemoteRange', () => {
  it('returns the batches of a range of another writer, other frames skipped', () => {
    const buf = frames(10, 20);
    const bs = checkRemoteRange(S, e('g/a', 10, 20, buf.length), buf);
    expect(bs.map((b) => [b.baseSeq, b.lastSeq])).toEqual([[10, 12], [13, 15], [16, 18], [19, 19]]);
  });

  it('hands a SEAL frame\'s producer to the caller that asks', () => {
    const seal = { key: '4611686018427387905', epoch: 2, ack: { seq: 7, start: 19, next: 20, ts: 5 } };
    const buf = Buffer.concat([frames(10, 20), encodeFrame(FrameType.Seal, 7, Buffer.from(JSON.stringify(seal)))]);
    const seals: unknown[] = [];
    expect(checkRemoteRange(S, e('g/a', 10, 20, buf.length), buf, seals as never)).toHaveLength(4);
    expect(seals).toEqual([seal]);
  });

  it('a flipped byte, a short read, a gap or a range that ends early is data_corrupt naming stream, seqs and object', () => {
    const buf = frames(10, 20);
    const entry = e('g/a', 10, 20, buf.length, 4096);
    const flipped = Buffer.from(buf);
    flipped[40]! ^= 0x01;
    const gap = Buffer.concat([encodeDataFrame(7, batch(10, 3), false), encodeDataFrame(7, batch(14, 6), false)]);
    const early = Buffer.concat([encodeDataFrame(7, batch(10, 3), false)]);
    for (const [bytes, entryOf] of [
      [flipped, entry],
      [buf.subarray(0, buf.length - 1), entry],
      [gap, { ...entry, len: gap.length }],
      [early, { ...entry, len: early.length }],
    ] as Array<[Buffer, RemoteEntry]>) {
      const err = caught(() => checkRemoteRange(S, entryOf, bytes));
      expect(err.code).toBe('data_corrupt');
      expect(err.message).toContain('g/a');
      expect(err.details).toEqual({ stream: S, from_seq: 10, to_seq: 19, object: 'g/a', offset: 4096, length: entryOf.len });
    }
  });
});
