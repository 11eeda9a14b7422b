import { MemoryTier } from '../../../src/s3/cache/memory-tier';
import { type ObjectMeta } from '../../../src/s3/cache/entry';

const meta: ObjectMeta = { size: 4, etag: '"e"', lastModified: 'Tue, 24 Nov 2026 00:00:00 GMT', headers: {} };
const entry = (n: number) => ({ meta, body: Buffer.alloc(n), checkedAt: 0 });

describe('the memory tier', () => {
  it('evicts the least recently used entry, counting repeated hits on the newest one', () => {
    let evicted = 0;
    const t = new MemoryTier(12, 12, () => evicted++);
    t.set('a', entry(4));
    t.set('b', entry(4));
    t.set('c', entry(4));
    // a is read (moves to newest), then read again while it is the newest.
    expect(t.get('a')).toBeDefined();
    expect(t.get('a')).toBeDefined();
    t.set('d', entry(4)); // evicts b, the least recently used
    expect(evicted).toBe(1);
    expect(t.get('b')).toBeUndefined();
    expect(t.get('c')).toBeDefined();
    t.set('e', entry(4)); // evicts a: c was read after it
    expect(t.get('a')).toBeUndefined();
    expect(t.get('c')).toBeDefined();
    expect(t.get('d')).toBeDefined();
    expect(t.get('e')).toBeDefined();
    expect(t.bytes).toBe(12);
  });

  it('forgets the newest entry when it is deleted, so a re-stored id is ordered anew', () => {
    const t = new MemoryTier(8, 8);
    t.set('a', entry(4));
    t.set('b', entry(4));
    t.delete('b');
    t.set('c', entry(4));
    expect(t.get('a')).toBeDefined(); // a becomes newest, c the oldest
    t.set('d', entry(4)); // evicts c
    expect(t.get('c')).toBeUndefined();
    expect(t.get('a')).toBeDefined();
    expect(t.get('d')).toBeDefined();
  });
});
