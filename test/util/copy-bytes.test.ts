import { copyBytes } from '../../src/util/copy-bytes';

function pattern(n: number, seed: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
}

describe('copyBytes', () => {
  const targets: Array<[string, () => Buffer]> = [
    ['a buffer of its own', () => Buffer.alloc(4096, 0xee)],
    ['shared memory (a pooled read page)', () => Buffer.from(new SharedArrayBuffer(4096)).fill(0xee)],
  ];

  it.each(targets)('copies exactly the range asked, at every alignment, into %s', (_name, make) => {
    const src = pattern(1000, 7);
    for (let at = 0; at < 17; at++) {
      for (const [start, end] of [[0, 1000], [3, 1000], [0, 997], [5, 611], [1, 2]] as const) {
        const dst = make();
        expect(copyBytes(src, dst, at, start, end)).toBe(end - start);
        expect(dst.subarray(at, at + end - start).equals(src.subarray(start, end))).toBe(true);
        // Nothing around the range is touched.
        expect(dst.subarray(0, at).every((b) => b === 0xee)).toBe(true);
        expect(dst.subarray(at + end - start).every((b) => b === 0xee)).toBe(true);
      }
    }
  });

  it('copies a source that itself lives in shared memory, and a view into the middle of one', () => {
    const shared = Buffer.from(new SharedArrayBuffer(2048));
    pattern(2048, 3).copy(shared);
    const dst = Buffer.from(new SharedArrayBuffer(2048));
    expect(copyBytes(shared.subarray(100, 900), dst, 9)).toBe(800);
    expect(dst.subarray(9, 809).equals(shared.subarray(100, 900))).toBe(true);
  });

  it('copies nothing for an empty range (Buffer.fill with an empty value would write zeros)', () => {
    const dst = Buffer.alloc(64, 0xee);
    expect(copyBytes(Buffer.alloc(0), dst, 0)).toBe(0);
    expect(copyBytes(pattern(10, 1), dst, 5, 4, 4)).toBe(0);
    expect(dst.every((b) => b === 0xee)).toBe(true);
  });

  it('refuses a range past the end of the target instead of writing part of it', () => {
    const dst = Buffer.alloc(16, 0xee);
    expect(() => copyBytes(pattern(10, 1), dst, 10)).toThrow();
  });
});
