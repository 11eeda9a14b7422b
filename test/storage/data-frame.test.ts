/**
 * `encodeDataFrame` (src/shards/worker/frame.ts): the DATA frame of a checked batch, its CRC
 * combined from the batch's own instead of a second pass over the bytes, built in place when the
 * bytes before the batch are free. It must be byte for byte the frame `encodeFrame` writes, and
 * a frame of a batch whose bytes no longer match its CRC must fail the frame check on read.
 */
import { encodeDataFrame, encodeFrame, FRAME_HEADER, FrameType, frameProblem, parseFrame } from '../../src/shards/worker/frame';
import { encodeRecordBatch, setBaseOffset } from '../../src/util/record-batch';

function batch(records: number, size: number): Buffer {
  const value = Buffer.alloc(size, 0x61);
  return encodeRecordBatch({ baseOffset: 0, baseTimestamp: 1_700_000_000_000, records: Array.from({ length: records }, (_, i) => ({ key: Buffer.from(`k${i}`), value, headers: null })) });
}

describe('encodeDataFrame', () => {
  test.each([
    ['one small record', 1, 10],
    ['a ~1 MB batch of 100 B records', 9000, 100],
    ['a ~1 MB batch of 1 KiB records', 1000, 1024],
  ])('%s: the same bytes as encodeFrame, copied or in place, after the base offset was rewritten', (_name, records, size) => {
    const b = batch(records, size);
    setBaseOffset(b, 123_456_789, 0);
    const want = encodeFrame(FrameType.Data, 77, b);
    expect(encodeDataFrame(77, b, false).equals(want)).toBe(true);
    // In place: the batch behind FRAME_HEADER + 5 bytes of something else in one buffer.
    const room = Buffer.alloc(FRAME_HEADER + 5 + b.length, 0xee);
    b.copy(room, FRAME_HEADER + 5);
    const inPlace = encodeDataFrame(77, room.subarray(FRAME_HEADER + 5), true);
    expect(inPlace.equals(want)).toBe(true);
    expect(inPlace.buffer).toBe(room.buffer);
    expect(inPlace.byteOffset).toBe(room.byteOffset + 5);
    expect(room.subarray(0, 5).equals(Buffer.alloc(5, 0xee))).toBe(true);
    expect(parseFrame(inPlace, 0, true)?.payload.equals(b)).toBe(true);
  });

  test('copies when the batch has no room before it in its buffer', () => {
    const b = Buffer.allocUnsafeSlow(batch(3, 10).length);
    batch(3, 10).copy(b);
    const f = encodeDataFrame(5, b, true);
    expect(f.buffer).not.toBe(b.buffer);
    expect(f.equals(encodeFrame(FrameType.Data, 5, b))).toBe(true);
  });

  test('a batch whose bytes do not match its own CRC gives a frame that fails the frame check', () => {
    const b = batch(50, 40);
    b[b.length - 3] = b[b.length - 3]! ^ 0x10;
    const f = encodeDataFrame(9, b, false);
    expect(frameProblem(f, 0)).toBe('CRC mismatch');
    expect(parseFrame(f, 0, true)).toBeNull();
  });
});
