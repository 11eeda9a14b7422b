/** TCP chunks to request frames (src/kafka-wire/frame-assembler.ts): every split point, small and large frames, refusals. */
import { FrameAssembler, FramePool, LARGE_FRAME_BYTES, takeFrameBuffer } from '../../src/kafka-wire/frame-assembler';

/** A size-prefixed frame of `size` bytes whose content tells frames and positions apart. */
function framed(size: number, seed: number): Buffer {
  const b = Buffer.alloc(4 + size);
  b.writeInt32BE(size, 0);
  for (let i = 0; i < size; i++) b[4 + i] = (seed * 31 + i * 7) & 0xff;
  return b;
}

/** Feed `stream` in the given chunk lengths (the rest as one last chunk); the frames that came out. */
function feed(a: FrameAssembler, stream: Buffer, cuts: number[]): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  for (const n of [...cuts, stream.length]) {
    if (at >= stream.length) break;
    const end = Math.min(stream.length, at + n);
    // A copy: the socket hands over buffers of its own.
    if (a.push(Buffer.from(stream.subarray(at, end)), (f) => out.push(Buffer.from(f))) !== null) throw new Error('refused');
    at = end;
  }
  return out;
}

describe('FrameAssembler', () => {
  const small = framed(300, 1);
  const large = framed(LARGE_FRAME_BYTES + 1000, 2);
  const small2 = framed(5, 3);
  const stream = Buffer.concat([small, large, small2]);
  const want = [small.subarray(4), large.subarray(4), small2.subarray(4)];
  /** The frames are the ones sent (Buffer.equals: jest's deep equality is slow on 64 KiB). */
  const same = (got: Buffer[]): boolean => got.length === want.length && got.every((f, i) => f.equals(want[i]!));

  test('yields the same frames wherever the stream is cut once', () => {
    // Every cut near a boundary (inside a size prefix, right after it, at a frame's end) and a spread of others.
    const edges = [small.length, small.length + large.length, stream.length];
    const points = new Set<number>();
    for (let p = 1; p < 12; p++) points.add(p);
    for (const e of edges) for (let d = -6; d <= 6; d++) points.add(e + d);
    for (let p = 1; p < stream.length; p += 4099) points.add(p);
    for (const p of points) {
      if (p <= 0 || p >= stream.length) continue;
      expect(same(feed(new FrameAssembler(1 << 20), stream, [p]))).toBe(true);
    }
  });

  test('yields the same frames from chunks of one byte, of 64 KiB and of odd sizes', () => {
    for (const n of [1, 3, 4, 5, 1000, 65536, 65537]) {
      const cuts = Array.from({ length: Math.ceil(stream.length / n) }, () => n);
      expect(same(feed(new FrameAssembler(1 << 20), stream, cuts))).toBe(true);
    }
  });

  test('a large frame has an ArrayBuffer of its own, which can be taken over once; a small one has not', () => {
    const a = new FrameAssembler(1 << 20);
    const frames: Buffer[] = [];
    for (const c of [stream.subarray(0, 1000), stream.subarray(1000)]) a.push(Buffer.from(c), (f) => frames.push(f));
    expect(frames).toHaveLength(3);
    const [s, l, s2] = frames as [Buffer, Buffer, Buffer];
    expect(l.byteOffset).toBe(0);
    expect(l.buffer.byteLength).toBe(l.length);
    expect(takeFrameBuffer(l.subarray(100, 200))).toBe(true);
    expect(takeFrameBuffer(l)).toBe(false);
    expect(takeFrameBuffer(s)).toBe(false);
    expect(takeFrameBuffer(s2)).toBe(false);
    expect(a.pendingBytes).toBe(0);
  });

  test('counts what has arrived of an incomplete frame', () => {
    const a = new FrameAssembler(1 << 20);
    expect(a.push(Buffer.from(large.subarray(0, 2)), () => undefined)).toBeNull();
    expect(a.pendingBytes).toBe(2);
    expect(a.push(Buffer.from(large.subarray(2, 5000)), () => undefined)).toBeNull();
    // The size prefix is not part of the frame's buffer.
    expect(a.pendingBytes).toBe(4996);
  });

  /**
   * Read `stream` in place as a socket with net's `onread` would: each read fills at most `n`
   * bytes of the buffer `readBuffer` gives, and the scratch buffer is scribbled over after each
   * read (the next read overwrites it), so a frame or kept chunk that still pointed into it would
   * come out wrong.
   */
  function readInPlace(a: FrameAssembler, n: number): Buffer[] {
    const frames: Buffer[] = [];
    // Nothing is being received yet: the first buffer is the scratch one.
    const scratch = a.readBuffer();
    let at = 0;
    while (at < stream.length) {
      const into = a.readBuffer();
      const got = Math.min(n, into.length, stream.length - at);
      stream.copy(into, 0, at, at + got);
      at += got;
      if (a.received(got, (f) => frames.push(f)) !== null) throw new Error('refused');
      if (into.buffer === scratch.buffer) scratch.fill(0xee);
    }
    return frames;
  }

  test('reading in place yields the same frames for every read size, none of them in the scratch buffer', () => {
    for (const n of [1, 3, 4, 5, 299, 1000, 4096, 65536, 1 << 20]) {
      const a = new FrameAssembler(1 << 20);
      expect(same(readInPlace(a, n))).toBe(true);
      expect(a.pendingBytes).toBe(0);
    }
  });

  test('reading in place, a large frame is read straight into its own buffer once its size is known', () => {
    const a = new FrameAssembler(1 << 20);
    // The small frame and the large frame's size and first bytes arrive in one read into the scratch buffer.
    const scratch = a.readBuffer();
    stream.copy(scratch, 0, 0, small.length + 100);
    expect(a.received(small.length + 100, () => undefined)).toBeNull();
    const rest = a.readBuffer();
    expect(rest.buffer).not.toBe(scratch.buffer);
    expect(rest.length).toBe(large.length - 4 - 96);
    stream.copy(rest, 0, small.length + 100, small.length + large.length);
    const frames: Buffer[] = [];
    expect(a.received(rest.length, (f) => frames.push(f))).toBeNull();
    expect(frames).toHaveLength(1);
    expect(frames[0]!.equals(large.subarray(4))).toBe(true);
    // The frame is the buffer the read landed in, which can be taken over.
    expect(frames[0]!.buffer).toBe(rest.buffer);
    expect(takeFrameBuffer(frames[0]!)).toBe(true);
    expect(a.readBuffer().buffer).toBe(scratch.buffer);
  });

  test('refuses a negative size and one above the limit, after yielding the frames before it', () => {
    const frames: Buffer[] = [];
    const tooLarge = Buffer.alloc(4);
    tooLarge.writeInt32BE(2000, 0);
    expect(new FrameAssembler(1000).push(Buffer.concat([framed(10, 4), tooLarge]), (f) => frames.push(f))).toEqual({ size: 2000 });
    expect(frames).toHaveLength(1);
    expect(new FrameAssembler(1000).push(Buffer.from([0xff, 0xff, 0xff, 0xf0]), () => undefined)).toEqual({ size: -16 });
  });
});

const large = framed(LARGE_FRAME_BYTES + 1000, 2);

describe('FramePool', () => {
  test('gives back a returned buffer that fits (at most twice the size), else a new one rounded up to 64 KiB', () => {
    const pool = new FramePool();
    const a = new ArrayBuffer(1 << 20);
    pool.put(a);
    expect(pool.bytes).toBe(1 << 20);
    // Too small for 2 MB, too large (more than twice) for 100 KB: new ones.
    expect(pool.take(2_000_000).byteLength).toBe(31 * 65536);
    expect(pool.take(100_000).byteLength).toBe(2 * 65536);
    expect(pool.take(1_000_000)).toBe(a);
    expect(pool.bytes).toBe(0);
    expect(pool.take(1_000_000)).not.toBe(a);
  });

  test('keeps neither small buffers nor more than its limit, dropping the oldest: new sizes replace old ones', () => {
    const pool = new FramePool();
    pool.put(new ArrayBuffer(1000));
    expect(pool.bytes).toBe(0);
    // An earlier load's buffers, too small for the frames that follow.
    for (let i = 0; i < 400; i++) pool.put(new ArrayBuffer(128 << 10));
    expect(pool.bytes).toBe(32 << 20);
    const now = Array.from({ length: 40 }, () => new ArrayBuffer(1 << 20));
    for (const ab of now) pool.put(ab);
    expect(pool.bytes).toBe(32 << 20);
    for (let i = 0; i < 32; i++) expect(now.includes(pool.take(1_000_000))).toBe(true);
    expect(pool.bytes).toBe(0);
  });

  test('a large frame is assembled in a pooled buffer, which can be taken over', () => {
    const pool = new FramePool();
    const ab = new ArrayBuffer(LARGE_FRAME_BYTES * 2);
    pool.put(ab);
    const frames: Buffer[] = [];
    const a = new FrameAssembler(1 << 20, pool);
    // As a socket delivers it: a read holds at most 64 KiB.
    for (const c of [large.subarray(0, 65536), large.subarray(65536)]) a.push(Buffer.from(c), (f) => frames.push(f));
    expect(frames).toHaveLength(1);
    expect(frames[0]!.buffer).toBe(ab);
    expect(frames[0]!.equals(large.subarray(4))).toBe(true);
    expect(takeFrameBuffer(frames[0]!)).toBe(true);
  });
});

