import { type ChunkCursor } from '../../../src/shards/worker/chunk-index';
import { RawPage, chunkScratch, planPage } from '../../../src/shards/worker/raw-page';
import { type Chunk } from '../../../src/shards/worker/stream-state';

function chunk(baseSeq: number, lastSeq: number, len: number): Chunk {
  return { baseSeq, lastSeq, segId: 0, pos: 0, len, maxTs: 0 };
}

function cursorOf(chunks: Chunk[]): ChunkCursor & { taken: () => number } {
  let i = 0;
  return { next: () => chunks[i++] ?? null, taken: () => i };
}

describe('planPage', () => {
  const chunks = [chunk(0, 9, 1000), chunk(10, 19, 1000), chunk(20, 29, 1000), chunk(30, 39, 1000)];

  it('takes chunks until the values they can hold reach the byte budget, and sizes the page to the budget', () => {
    const c = cursorOf(chunks);
    const plan = planPage(c, 0, 40, 1000, 1500);
    expect(plan.chunks.map((x) => x.baseSeq)).toEqual([0, 10]);
    expect(plan.capacity).toBe(1500);
    expect(c.taken()).toBe(2); // the rest stay in the cursor for the walk
  });

  it('sizes a page that reaches the end of the stream to its frames less their fixed parts, counting the first chunk from the start seq', () => {
    // The index's cursor starts at the chunk holding the start seq.
    const plan = planPage(cursorOf(chunks.slice(3)), 35, 40, 1000, 1 << 20);
    expect(plan.chunks.map((x) => x.baseSeq)).toEqual([30]);
    expect(plan.capacity).toBe(500 - 74 - 5 * 7); // half of the chunk's records, less one frame's and five records' fixed bytes
  });

  it('stops at the record count and at the end of what may be read', () => {
    expect(planPage(cursorOf(chunks), 0, 40, 15, 1 << 20).chunks).toHaveLength(2);
    expect(planPage(cursorOf(chunks), 0, 20, 1000, 1 << 20).chunks).toHaveLength(2);
  });

  it('makes room for a first chunk larger than the budget (its first record is taken whatever its size)', () => {
    expect(planPage(cursorOf([chunk(0, 0, 5000), chunk(1, 1, 10)]), 0, 2, 1000, 100).capacity).toBe(5000 - 74 - 7);
  });

  it('plans nothing at the tail', () => {
    expect(planPage(cursorOf([]), 7, 7, 1000, 1 << 20)).toEqual({ chunks: [], capacity: 0 });
  });
});

describe('RawPage', () => {
  it('appends the fronts of buffers in order and grows past its plan when it must', () => {
    const page = new RawPage(4);
    page.append(Buffer.from('abcXXX'), 3);
    page.append(Buffer.from('defghiYY'), 6);
    page.append(Buffer.from('Z'), 0);
    expect(page.length).toBe(9);
    expect(page.take().toString()).toBe('abcdefghi');
  });

  it('hands over an exact-size copy when the values fill less than half of a large plan', () => {
    const page = new RawPage(1 << 20);
    page.append(Buffer.from('hello'), 5);
    const body = page.take();
    expect(body.toString()).toBe('hello');
    expect(body.buffer.byteLength).toBeLessThan(1 << 20);
  });

  it('hands over its own buffer when the plan was close', () => {
    const page = new RawPage(200 * 1024);
    const src = Buffer.alloc(150 * 1024, 7);
    page.append(src, src.length);
    const body = page.take();
    expect(body.length).toBe(src.length);
    expect(body.buffer.byteLength).toBe(200 * 1024);
  });
});

describe('chunkScratch', () => {
  it('reuses one buffer for chunks up to its bound and gives a larger chunk a buffer of its own', () => {
    const a = chunkScratch(1000);
    expect(chunkScratch(500)).toBe(a);
    expect(chunkScratch(1 << 20).length).toBeGreaterThanOrEqual(1 << 20);
    const big = chunkScratch(3 << 20);
    expect(big.length).toBe(3 << 20);
    expect(chunkScratch(3 << 20)).not.toBe(big);
  });
});
