/**
 * The page pool's rules (src/shards/worker/page-pool.ts): a slab is rendered into only while it is
 * free; one given twice, or given while out, or handed back with an unknown id, is never made free
 * a second time; the budget bounds the free slabs; a page posted as shared memory crosses the wire
 * with its slab id (wire.ts).
 */
import { PagePool } from '../../../src/shards/worker/page-pool';
import { Writer, readEntries } from '../../../src/shards/wire';

const KiB = 1024;

describe('the page pool', () => {
  test('lends whole slabs of power-of-two sizes, and exact buffers outside them or when off', () => {
    const p = new PagePool(4 * 1024 * KiB);
    const a = p.take(100 * KiB);
    expect(a.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(a.length).toBe(128 * KiB);
    expect(p.lent(a)).toBe(true);
    const small = p.take(10 * KiB);
    expect(small.length).toBe(10 * KiB);
    expect(p.lent(small)).toBe(false);
    expect(p.take(33 * 1024 * KiB).length).toBe(33 * 1024 * KiB);
    const off = new PagePool(0);
    expect(off.enabled).toBe(false);
    expect(off.take(100 * KiB).buffer).not.toBeInstanceOf(SharedArrayBuffer);
  });

  test('a slab given back is taken again; given twice it is still lent out once', () => {
    const p = new PagePool(4 * 1024 * KiB);
    const a = p.take(100 * KiB);
    p.give(a);
    p.give(a);
    expect(p.stats.bytes).toBe(128 * KiB);
    const b = p.take(128 * KiB);
    expect(b.buffer).toBe(a.buffer);
    // The free list held it once: the next take is a new slab, never the one just lent.
    const c = p.take(128 * KiB);
    expect(c.buffer).not.toBe(a.buffer);
    expect(p.stats).toMatchObject({ reused: 1, allocated: 2 });
  });

  test('a slab out comes back only by its id, once; given locally meanwhile it stays out', () => {
    const p = new PagePool(4 * 1024 * KiB);
    const a = p.take(200 * KiB);
    const id = p.share(a.buffer as SharedArrayBuffer)!;
    expect(id).toBeGreaterThan(0);
    expect(p.share(a.buffer as SharedArrayBuffer)).toBeNull();
    p.give(a); // out: ignored
    expect(p.stats.bytes).toBe(0);
    expect(p.take(256 * KiB).buffer).not.toBe(a.buffer);
    p.giveReturned(id + 1000); // unknown: ignored
    p.giveReturned(id);
    p.giveReturned(id); // a second time: ignored
    expect(p.stats).toMatchObject({ returned: 1, bytes: 256 * KiB });
    expect(p.take(256 * KiB).buffer).toBe(a.buffer);
    expect(p.take(256 * KiB).buffer).not.toBe(a.buffer);
  });

  test('keeps at most its budget in free slabs, and lets them go after an idle trim', () => {
    const p = new PagePool(256 * KiB);
    const a = p.take(128 * KiB);
    const b = p.take(128 * KiB);
    const c = p.take(128 * KiB);
    for (const x of [a, b, c]) p.give(x);
    expect(p.stats.bytes).toBe(256 * KiB);
    p.trim(); // takes happened since the last trim: kept
    expect(p.stats.bytes).toBe(256 * KiB);
    p.trim(); // none since: all go
    expect(p.stats.bytes).toBe(0);
    expect([a, b, c].map((x) => p.take(128 * KiB).buffer === x.buffer)).toEqual([false, false, false]);
  });

  test('a page in a lent slab crosses the wire as shared memory with its id, and is not copied', () => {
    const p = new PagePool(4 * 1024 * KiB);
    const w = new Writer(true, (sab) => p.share(sab));
    const page = p.take(100 * KiB).subarray(0, 90 * KiB);
    page.fill(7);
    const mark = w.beginEntry(1, 5, 0);
    expect(w.blob(page)).toBe(true);
    w.endEntry(mark);
    const { message, extras, shared } = w.take();
    expect(shared).toEqual([page.buffer]);
    expect(message.byteLength).toBeLessThan(1024);
    const seen: Array<[number, number]> = [];
    readEntries(message, extras, (_id, _code, _shard, r) => void r.blob(), shared, (b, slab) => seen.push([b.length, slab]));
    expect(seen).toEqual([[90 * KiB, 1]]);
    // Not a lent slab (out already): copied like any other bytes.
    const w2 = new Writer(true, (sab) => p.share(sab));
    const m2 = w2.beginEntry(1, 5, 0);
    w2.blob(page);
    w2.endEntry(m2);
    expect(w2.take().shared).toEqual([]);
  });
});
