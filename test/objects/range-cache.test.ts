/**
 * The object cache (src/objects/range-cache.ts): bounded in bytes, least recently used evicted,
 * one load per range however many readers, failures remembered with a growing back-off, and
 * read-ahead bounded in loads at once. The loads here are ranged reads of a real `file:` store.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type ObjectStore, RangeCache, isObjectNotFound, openObjectStore, rangeKey } from '../../src/objects';

let dir: string;
let store: ObjectStore;
const gets: string[] = [];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-range-cache-'));
  store = openObjectStore(`file:${dir}`);
  for (const k of ['a', 'b', 'c', 'd', 'e']) await store.put(`g/${k}`, Buffer.alloc(1000, k));
});
afterAll(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function loader(o: string, off: number, len: number): { key: string; load: () => Promise<Buffer> } {
  return {
    key: rangeKey(o, off, len),
    load: async () => {
      gets.push(`${o}@${off}+${len}`);
      return store.get(o, { offset: off, length: len });
    },
  };
}

const cacheOf = (budgetBytes: number, more: Partial<ConstructorParameters<typeof RangeCache>[0]> = {}) =>
  new RangeCache<Buffer>({ budgetBytes, sizeOf: (b) => (b as Buffer).length, ...more });

beforeEach(() => {
  gets.length = 0;
});

it('keeps what fits, evicts the least recently used, and never keeps a value above the budget', async () => {
  const c = cacheOf(250);
  const [a, b, d] = [loader('g/a', 0, 100), loader('g/b', 100, 100), loader('g/d', 0, 100)];
  expect((await c.get(a.key, a.load)).toString()).toBe('a'.repeat(100));
  await c.get(b.key, b.load);
  expect(c.peek(a.key)).toBeDefined(); // a is now the younger
  await c.get(d.key, d.load); // evicts b
  expect(c.peek(b.key)).toBeUndefined();
  expect(c.peek(a.key)).toBeDefined();
  expect(c.stats).toMatchObject({ bytes: 200, entries: 2, evictions: 1 });
  const big = loader('g/e', 0, 1000);
  expect((await c.get(big.key, big.load)).length).toBe(1000);
  expect(c.peek(big.key)).toBeUndefined();
  expect(gets).toEqual(['g/a@0+100', 'g/b@100+100', 'g/d@0+100', 'g/e@0+1000']);
});

it('shares one load among concurrent readers of a range', async () => {
  const c = cacheOf(10_000);
  const a = loader('g/a', 0, 500);
  const all = await Promise.all([c.get(a.key, a.load), c.get(a.key, a.load), c.get(a.key, a.load)]);
  expect(all.every((b) => b.equals(all[0]!))).toBe(true);
  expect(gets).toEqual(['g/a@0+500']);
  expect(c.stats).toMatchObject({ misses: 1, joined: 2 });
});

it('remembers a failure for its back-off, doubling it, and loads again after', async () => {
  let now = 0;
  const c = cacheOf(10_000, { now: () => now, failureBackoffMs: 1000, maxFailureBackoffMs: 3000 });
  const gone = loader('g/missing', 0, 10);
  const failures = async (): Promise<unknown> => c.get(gone.key, gone.load).catch((err: unknown) => err);
  expect(isObjectNotFound(await failures())).toBe(true);
  now = 999;
  expect(isObjectNotFound(await failures())).toBe(true);
  expect(gets).toHaveLength(1);
  now = 1000;
  await failures(); // loaded again, fails again: 2 s now
  now = 2999;
  await failures();
  expect(gets).toHaveLength(2);
  now = 3000;
  await failures(); // 3 s (the bound)
  now = 6000;
  await failures();
  expect(gets).toHaveLength(4);
  expect(c.stats.failedHits).toBe(2);
  // Forgotten on request (the ledger was read again): loaded at once.
  c.delete(gone.key);
  await failures();
  expect(gets).toHaveLength(5);
});

it('read-ahead: starts at most maxPrefetchInFlight loads, skips what is held or in flight, never throws', async () => {
  const c = cacheOf(10_000, { maxPrefetchInFlight: 2 });
  const items = ['g/a', 'g/b', 'g/missing', 'g/c'].map((o) => loader(o, 0, 10));
  await c.get(items[0]!.key, items[0]!.load);
  expect(c.prefetch(items)).toBe(2); // b and missing; a is held, c waits for room
  expect(c.prefetch(items)).toBe(0);
  // Wait for the prefetches to settle, by condition.
  for (let i = 0; i < 500 && c.stats.inFlight > 0; i++) await new Promise((r) => setTimeout(r, 10));
  expect(c.peek(items[1]!.key)).toBeDefined();
  expect(c.prefetch(items)).toBe(1); // c; missing's failure is remembered
  for (let i = 0; i < 500 && c.stats.inFlight > 0; i++) await new Promise((r) => setTimeout(r, 10));
  expect(c.peek(items[3]!.key)).toBeDefined();
  expect(isObjectNotFound(await c.get(items[2]!.key, items[2]!.load).catch((err: unknown) => err))).toBe(true);
  expect(gets).toEqual(['g/a@0+10', 'g/b@0+10', 'g/missing@0+10', 'g/c@0+10']);
});
