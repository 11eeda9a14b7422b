/**
 * `verifiedEnd`: the block-at-a-time CRC check every read runs over the chunks it takes from
 * disk (docs/storage.md). It must end a verified run exactly at the first damaged or cut-short
 * frame, wherever the damage is, in chunks of many blocks.
 */
import { randomBytes } from 'node:crypto';
import { encodeFrame, FrameType, verifiedEnd } from '../../src/shards/worker/frame';

/** Walk a chunk as a read does: the offset of the first frame refused, or -1 when all pass. */
function firstRefused(buf: Buffer): number {
  let good = 0;
  for (let off = 0; off < buf.length; off += 8 + buf.readUInt32BE(off)) {
    if (off >= good && (good = verifiedEnd(buf, off)) === off) return off;
  }
  return -1;
}

function chunk(sizes: number[]): { buf: Buffer; starts: number[] } {
  const frames = sizes.map((n) => encodeFrame(FrameType.Data, 3, randomBytes(n)));
  const starts: number[] = [];
  let at = 0;
  for (const f of frames) {
    starts.push(at);
    at += f.length;
  }
  return { buf: Buffer.concat(frames), starts };
}

describe('verifiedEnd', () => {
  it('passes every frame of an intact chunk of many blocks (equal sizes, mixed sizes, one frame larger than a block)', () => {
    for (const sizes of [Array.from({ length: 2000 }, () => 100), Array.from({ length: 400 }, (_, i) => 1 + ((i * 7919) % 3000)), [50, 100_000, 20, 70_000]]) {
      const { buf } = chunk(sizes);
      expect(firstRefused(buf)).toBe(-1);
    }
  });

  it('refuses exactly the frame holding a flipped bit, wherever it is in the chunk', () => {
    const { buf, starts } = chunk(Array.from({ length: 1200 }, (_, i) => (i % 3 === 0 ? 100 : 40 + (i % 250))));
    for (let at = 0; at < buf.length; at += 211) {
      const copy = Buffer.from(buf);
      copy[at] = copy[at]! ^ (1 << at % 8);
      const frame = starts.filter((s) => s <= at).pop()!;
      const refused = firstRefused(copy);
      // A flipped length byte can make the walk misread the frames after it; the damaged frame is still never passed.
      if (at - frame < 4) expect(refused).toBeGreaterThanOrEqual(0);
      else expect(refused).toBe(frame);
      if (refused >= 0) expect(refused).toBeLessThanOrEqual(frame);
    }
  });

  it('refuses a chunk cut short at the frame that is cut', () => {
    const { buf, starts } = chunk(Array.from({ length: 600 }, () => 100));
    expect(firstRefused(buf.subarray(0, starts[450]! + 50))).toBe(starts[450]);
  });
});
