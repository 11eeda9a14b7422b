/**
 * The committed-offset store over the real local metadata store: concurrent commits on one
 * (group, topic) both land, group ids with a slash stay apart, and everything is there after the
 * store is reopened.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type MetaStore, openLocalMetaStore } from '../../../src/actors';
import { OffsetStore } from '../../../src/kafka-wire/groups/offset-store';

const at = (offset: bigint, metadata = ''): { offset: bigint; leaderEpoch: number; metadata: string; committedAt: number } => ({ offset, leaderEpoch: -1, metadata, committedAt: 1 });

describe('OffsetStore', () => {
  let dir: string;
  let meta: MetaStore;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-offsets-'));
    meta = await openLocalMetaStore(dir);
  });
  afterEach(async () => {
    await meta.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('keeps both of two commits in flight at once on different partitions of one topic', async () => {
    const store = new OffsetStore(meta);
    await Promise.all([store.commit('g', [{ topic: 't', partition: 0, offset: at(5n) }]), store.commit('g', [{ topic: 't', partition: 1, offset: at(7n) }])]);
    expect([store.get('g', 't', 0)?.offset, store.get('g', 't', 1)?.offset]).toEqual([5n, 7n]);
    await store.commit('g', [{ topic: 't', partition: 0, offset: at(6n, 'x') }]);
    expect(store.get('g', 't', 0)).toMatchObject({ offset: 6n, metadata: 'x' });
    expect(store.get('g', 't', 1)).toMatchObject({ offset: 7n });
    expect(store.get('g', 't', 2)).toBeUndefined();
  });

  test('keeps group ids that contain a slash apart from their prefixes, and lists them decoded', async () => {
    const store = new OffsetStore(meta);
    await store.commit('a', [{ topic: 't', partition: 0, offset: at(1n) }]);
    await store.commit('a/b', [{ topic: 't', partition: 0, offset: at(2n) }]);
    await store.setProtocolType('only-type', 'consumer');
    expect([...store.all('a').keys()]).toEqual(['t']);
    expect(store.all('a').get('t')!.get(0)!.offset).toBe(1n);
    expect(store.all('a/b').get('t')!.get(0)!.offset).toBe(2n);
    expect(store.groups().sort()).toEqual(['a', 'a/b', 'only-type']);
    expect(store.has('only-type')).toBe(true);
    expect(store.has('a/')).toBe(false);
  });

  test('finds every commit again after the metadata store is reopened', async () => {
    const store = new OffsetStore(meta);
    await store.commit('g', [
      { topic: 't', partition: 0, offset: at(9007199254740993n, 'big') },
      { topic: 'u', partition: 3, offset: at(4n) },
    ]);
    await store.setProtocolType('g', 'consumer');
    await meta.close();
    meta = await openLocalMetaStore(dir);
    const again = new OffsetStore(meta);
    expect(again.get('g', 't', 0)).toMatchObject({ offset: 9007199254740993n, metadata: 'big' });
    expect([...again.all('g').get('u')!.keys()]).toEqual([3]);
    expect(again.protocolType('g')).toBe('consumer');
  });
});
