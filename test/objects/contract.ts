/**
 * The ObjectStore contract, one suite for every backend (file-store.test.ts, s3-store.test.ts):
 * what the group commit, imports, compaction and the reaper rely on.
 */
import { MessageChannel } from 'node:worker_threads';
import {
  type ObjectStore, type ObjectStoreStats, ObjectNotFoundError, ObjectStoreError, isObjectNotFound, addObjectStoreStats, newObjectStoreStats, objectErrorData, objectErrorFromData,
} from '../../src/objects';

/** A value as another thread receives it (postMessage's structured clone). */
function acrossThreads<T>(value: T): Promise<T> {
  const { port1, port2 } = new MessageChannel();
  return new Promise<T>((resolve) => {
    port2.once('message', (m: T) => {
      port1.close();
      resolve(m);
    });
    port1.postMessage(value);
  });
}

export interface ContractTarget {
  /** A fresh, empty store; `pageSize` asks for list pages that small where the backend pages. */
  open(o: { stats?: ObjectStoreStats; pageSize?: number }): Promise<ObjectStore>;
  /** Whether list pages (S3): the continuation test then checks more than one page was asked for. */
  pages: boolean;
  /**
   * s3rver walks its directory tree (one directory per key segment, names sorted) and so lists
   * `x/a/…` before `x/a-c`, where S3 lists by UTF-8 bytes (`-` < `/`). Set for s3rver: the order
   * test then leaves out the one key that shows it. The store's own keys (fixed-width numbers
   * per segment, docs/objects.md) never meet the case.
   */
  dirWalkOrder?: boolean;
}

/** Keys chosen so that directory walks and byte order disagree unless the walk is careful. */
const ALL_ORDER_KEYS = ['x/a-c', 'x/a/b', 'x/a/b2/c', 'x/a0', 'x/b', 'x/Z', 'x/é', 'x/a/b1', 'x/B/1', 'x/0000000010', 'x/0000000009'];
const byteOrder = (keys: string[]) => [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

async function collect(it: AsyncIterable<{ key: string; size: number }>): Promise<Array<{ key: string; size: number }>> {
  const out: Array<{ key: string; size: number }> = [];
  for await (const x of it) out.push(x);
  return out;
}

async function rejection(p: Promise<unknown>): Promise<ObjectStoreError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ObjectStoreError);
    return err as ObjectStoreError;
  }
  throw new Error('expected a rejection');
}

export function objectStoreContract(t: ContractTarget): void {
  let store: ObjectStore;
  let stats: ObjectStoreStats;
  beforeEach(async () => {
    stats = newObjectStoreStats();
    store = await t.open({ stats });
  });
  afterEach(async () => {
    await store.close();
  });

  it('gives back what was put, from one buffer or several, and an overwrite replaces it', async () => {
    const body = Buffer.from('frames of one group commit');
    await store.put('g/1/1/0/000000000001', body);
    expect((await store.get('g/1/1/0/000000000001')).equals(body)).toBe(true);
    const parts = [Buffer.from('abc'), Buffer.alloc(0), Buffer.alloc(70_000, 7), Buffer.from('xyz')];
    await store.put('g/1/1/0/000000000002', parts);
    expect((await store.get('g/1/1/0/000000000002')).equals(Buffer.concat(parts))).toBe(true);
    await store.put('g/1/1/0/000000000001', Buffer.from('second'));
    expect((await store.get('g/1/1/0/000000000001')).toString()).toBe('second');
    const many = Array.from({ length: 3000 }, (_, i) => Buffer.from([i & 0xff, i >> 8])); // more buffers than IOV_MAX (1024)
    await store.put('g/1/1/0/000000000003', many);
    expect((await store.get('g/1/1/0/000000000003')).equals(Buffer.concat(many))).toBe(true);
    await store.put('empty', Buffer.alloc(0));
    expect((await store.get('empty')).length).toBe(0);
  });

  it('reads byte ranges exactly, and refuses a range past the end with InvalidRange', async () => {
    const body = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));
    await store.put('r/obj', body);
    expect((await store.get('r/obj', { offset: 0, length: 10 })).equals(body.subarray(0, 10))).toBe(true);
    expect((await store.get('r/obj', { offset: 123, length: 456 })).equals(body.subarray(123, 579))).toBe(true);
    expect((await store.get('r/obj', { offset: 990, length: 10 })).equals(body.subarray(990))).toBe(true);
    expect((await store.get('r/obj', { offset: 1000, length: 0 })).length).toBe(0);
    expect((await rejection(store.get('r/obj', { offset: 995, length: 10 }))).code).toBe('InvalidRange');
    expect((await rejection(store.get('r/obj', { offset: 2000, length: 1 }))).code).toBe('InvalidRange');
    expect((await rejection(store.get('r/obj', { offset: -1, length: 1 }))).code).toBe('InvalidRange');
  });

  it('rejects a get of an absent key with ObjectNotFoundError (code NoSuchKey), whole or ranged', async () => {
    for (const call of [() => store.get('nope/absent'), () => store.get('nope/absent', { offset: 0, length: 4 }), () => store.get('nope/absent', { offset: 0, length: 0 })]) {
      const err = await rejection(call());
      expect(err).toBeInstanceOf(ObjectNotFoundError);
      expect(err.code).toBe('NoSuchKey');
      expect(isObjectNotFound(err)).toBe(true);
      const data = await acrossThreads(objectErrorData(err));
      expect(isObjectNotFound(data)).toBe(true);
      const rebuilt = objectErrorFromData(data);
      expect(rebuilt).toBeInstanceOf(ObjectNotFoundError);
      expect([rebuilt.code, rebuilt.key, rebuilt.op, rebuilt.message]).toEqual([err.code, err.key, err.op, err.message]);
      expect(err.message).toContain('nope/absent');
    }
    expect(stats.get.notFound).toBe(3);
  });

  it('deletes idempotently: present, already gone, never there', async () => {
    await store.put('d/one', Buffer.from('1'));
    await store.delete('d/one');
    expect(await rejection(store.get('d/one'))).toBeInstanceOf(ObjectNotFoundError);
    await store.delete('d/one');
    await store.delete('d/never/was');
    expect(await collect(store.list('d/'))).toEqual([]);
    expect(stats.delete.ok).toBe(3);
    expect(stats.delete.errors).toBe(0);
  });

  it('lists keys under a prefix in UTF-8 byte order with their sizes, a partial last segment included', async () => {
    const ORDER_KEYS = t.dirWalkOrder === true ? ALL_ORDER_KEYS.filter((k) => k !== 'x/a-c') : ALL_ORDER_KEYS;
    for (const [i, k] of [...ORDER_KEYS].reverse().entries()) await store.put(k, Buffer.alloc(i + 1));
    await store.put('y/other', Buffer.from('not under x'));
    const sizeOf = (k: string) => ORDER_KEYS.length - ORDER_KEYS.indexOf(k);
    expect(await collect(store.list('x/'))).toEqual(byteOrder(ORDER_KEYS).map((key) => ({ key, size: sizeOf(key) })));
    expect((await collect(store.list('x/a'))).map((x) => x.key)).toEqual(byteOrder(ORDER_KEYS.filter((k) => k.startsWith('x/a'))));
    expect((await collect(store.list('x/a/'))).map((x) => x.key)).toEqual(['x/a/b', 'x/a/b1', 'x/a/b2/c']);
    expect((await collect(store.list(''))).map((x) => x.key)).toEqual(byteOrder([...ORDER_KEYS, 'y/other']));
    expect(await collect(store.list('z/'))).toEqual([]);
    expect(await collect(store.list('x/a/b2/c/'))).toEqual([]);
    // Resumed after a key (S3's start-after): exactly the keys after it, wherever it falls.
    const ordered = byteOrder(ORDER_KEYS);
    for (const after of [...ordered, 'x/', 'x/a', 'x/a/', 'x/a/b2', 'x/zz', 'w', 'x/0000000009x']) {
      const later = ordered.filter((k) => Buffer.compare(Buffer.from(k), Buffer.from(after)) > 0);
      expect([after, (await collect(store.list('x/', after))).map((x) => x.key)]).toEqual([after, later]);
    }
    expect((await collect(store.list('', 'x/é'))).map((x) => x.key)).toEqual(['y/other']);
  });

  it('lists past one page with continuation, in order, each key once', async () => {
    const small = await t.open({ pageSize: 3 });
    const pageStats = newObjectStoreStats();
    const paged = await t.open({ pageSize: 3, stats: pageStats });
    try {
      const keys = Array.from({ length: 10 }, (_, i) => `p/${String(i).padStart(12, '0')}`);
      for (const k of [...keys].reverse()) await small.put(k, Buffer.from(k));
      const listed = await collect(paged.list('p/'));
      expect(listed).toEqual(keys.map((key) => ({ key, size: key.length })));
      if (t.pages) expect(pageStats.list.ok).toBe(4); // 3 + 3 + 3 + 1
      // Resumed past the first page's worth: the pages from there only.
      expect(await collect(paged.list('p/', keys[3]))).toEqual(keys.slice(4).map((key) => ({ key, size: key.length })));
      if (t.pages) expect(pageStats.list.ok).toBe(6); // + 3 + 3
    } finally {
      await small.close();
      await paged.close();
    }
  });

  it('refuses keys that could leave the store or be ambiguous, for every operation', async () => {
    const bad = ['', '/abs/key', 'a/../b', '..', '../up', 'a/./b', 'a//b', 'a/', '.hidden', 'a/.tmp', 'a\\b', 'nul\u0000', 'x'.repeat(1025)];
    for (const key of bad) {
      for (const call of [() => store.put(key, Buffer.from('x')), () => store.get(key), () => store.delete(key)]) {
        const err = await rejection(call());
        expect(err.code).toBe('InvalidKey');
      }
    }
    expect((await rejection(collect(store.list('../')))).code).toBe('InvalidKey');
    expect((await rejection(collect(store.list('/abs')))).code).toBe('InvalidKey');
  });

  it('keeps figures another thread can receive and sum', async () => {
    await store.put('t/a', Buffer.alloc(10));
    const received = await acrossThreads(stats);
    const sum = newObjectStoreStats();
    addObjectStoreStats(sum, received);
    addObjectStoreStats(sum, stats);
    expect(sum.put).toMatchObject({ ok: 2, bytes: 20 });
    expect(sum.put.seconds.count).toBe(2);
  });

  it('counts requests, outcomes and bytes per operation', async () => {
    await store.put('s/a', Buffer.alloc(100));
    await store.put('s/b', [Buffer.alloc(20), Buffer.alloc(30)]);
    await store.get('s/a');
    await store.get('s/a', { offset: 10, length: 5 });
    await store.get('s/none').catch(() => undefined);
    await store.delete('s/b');
    await collect(store.list('s/'));
    expect(stats.put).toMatchObject({ ok: 2, errors: 0, bytes: 150 });
    expect(stats.get).toMatchObject({ ok: 2, notFound: 1, errors: 0, bytes: 105 });
    expect(stats.delete).toMatchObject({ ok: 1, errors: 0 });
    expect(stats.list.ok).toBeGreaterThanOrEqual(1);
    expect(stats.put.seconds.count).toBe(2);
    expect(stats.get.seconds.counts.reduce((a, b) => a + b, 0)).toBe(3);
  });

  it('describes itself without credentials', () => {
    expect(store.describe).not.toMatch(/secret|S3RVER:|@/i);
  });
}
