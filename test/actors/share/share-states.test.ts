/** Share groups' durable state (src/actors/share/share-states.ts) on the embedded metadata store. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type MetaStore, ShareStates, limitsOf, openLocalMetaStore, parseShareGroupConfig } from '../../../src/actors';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
const tempDir = (): string => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'share-states-'));
  dirs.push(d);
  return d;
};

describe('ShareStates', () => {
  let meta: MetaStore;
  afterEach(() => meta.close());

  it('keeps every answered change across a reopen of the store, and runs the calls of one partition in order', async () => {
    const dir = tempDir();
    meta = await openLocalMetaStore(dir);
    let states = new ShareStates(meta);
    const order: number[] = [];
    const init = (): Promise<number> => Promise.resolve(7);
    const a = states.run('g/1', '/orders', init, async (p) => {
      await new Promise((r) => setTimeout(r, 20));
      order.push(1);
      return { result: p.acquireNew([7, 8, 9], 10, 'w1', Date.now() + 60_000), changed: true };
    });
    const b = states.run('g/1', '/orders', init, (p, c) => {
      order.push(2);
      return Promise.resolve({ result: p.acknowledge('w1', [{ offset: 7, type: 'accept' }, { offset: 9, type: 'reject' }], Date.now(), limitsOf(c)), changed: true });
    });
    expect((await a).map((x) => x.offset)).toEqual([7, 8, 9]);
    expect(await b).toMatchObject({ applied: [7, 9], archived: [{ offset: 9, deliveryCount: 1 }] });
    expect(order).toEqual([1, 2]);
    await meta.close();

    meta = await openLocalMetaStore(dir);
    states = new ShareStates(meta);
    const p = states.peek('g/1', '/orders')!;
    expect(p.start).toBe(8);
    expect(p.stateOf(8)).toMatchObject({ state: 'acquired', owner: 'w1', deliveryCount: 1 });
    expect(p.stateOf(9).state).toBe('archived');
    expect(states.peek('g', '/orders')).toBeNull(); // another group
  });

  it('validates and stores group configs over the defaults', async () => {
    meta = await openLocalMetaStore(tempDir());
    const states = new ShareStates(meta);
    expect(parseShareGroupConfig({ 'group.share.delivery.count.limit': 1, 'share.auto.offset.reset': 'x', nope: 1 }).problems).toEqual([
      'group.share.delivery.count.limit: an integer from 2 to 10',
      'share.auto.offset.reset: earliest or latest',
      'nope: not a share group config',
    ]);
    const { changes, problems } = parseShareGroupConfig({ 'group.share.record.lock.duration.ms': '15000', 'errors.deadletterqueue.topic.name': '/dlq' });
    expect(problems).toEqual([]);
    const c = await states.alterConfig('g', changes);
    expect(c['group.share.record.lock.duration.ms']).toBe(15_000);
    expect(c['group.share.delivery.count.limit']).toBe(5);
    expect((await states.alterConfig('g', { 'errors.deadletterqueue.topic.name': null }))['errors.deadletterqueue.topic.name']).toBe('');
    expect(states.config('other')['share.auto.offset.reset']).toBe('latest');
  });

  it('lists the groups with a stored partition state and deletes one group\'s partitions (its config stays), after the calls queued on them', async () => {
    meta = await openLocalMetaStore(tempDir());
    const states = new ShareStates(meta);
    const init = (): Promise<number> => Promise.resolve(0);
    const acquire = (group: string, stream: string): Promise<unknown> => states.run(group, stream, init, async (p) => ({ result: p.acquireNew([0, 1], 2, 'w1', Date.now() + 60_000), changed: true }));
    await states.alterConfig('only-config', { 'share.auto.offset.reset': 'earliest' });
    await states.alterConfig('g/1', { 'share.auto.offset.reset': 'earliest' });
    await Promise.all([acquire('g/1', '/a'), acquire('g/1', '/b'), acquire('g', '/a')]);
    expect(states.groups().sort()).toEqual(['g', 'g/1']);
    expect([states.hasGroup('g/1'), states.hasGroup('only-config'), states.hasGroup('nobody')]).toEqual([true, false, false]);

    // A call still queued on a partition runs (and writes) before the delete forgets it.
    const queued = states.run('g/1', '/a', init, async (p) => {
      await new Promise((r) => setTimeout(r, 20));
      return { result: p.end, changed: true };
    });
    expect(await states.deleteGroup('g/1')).toBe(2);
    await queued;
    expect([states.peek('g/1', '/a'), states.peek('g/1', '/b')]).toEqual([null, null]);
    expect(states.groups()).toEqual(['g']);
    expect(states.config('g/1')['share.auto.offset.reset']).toBe('earliest');
    expect(states.peek('g', '/a')).not.toBeNull(); // another group
    expect(await states.deleteGroup('g/1')).toBe(0);
  });

  it('holds a call made while its group is being deleted until the delete is done, which it then starts afresh after', async () => {
    meta = await openLocalMetaStore(tempDir());
    const states = new ShareStates(meta);
    let starts = 0;
    const init = (): Promise<number> => Promise.resolve(100 * ++starts);
    const acquire = (): Promise<number[]> => states.run('g', '/a', init, async (p) => ({ result: p.acquireNew([p.end, p.end + 1], p.end + 2, 'w1', Date.now() + 60_000).map((r) => r.offset), changed: true }));
    expect(await acquire()).toEqual([100, 101]);
    // A slow call keeps the delete waiting; a member joining meanwhile acquires.
    const slow = states.run('g', '/a', init, async (p) => {
      await new Promise((r) => setTimeout(r, 30));
      return { result: p.end, changed: true };
    });
    const deleted = states.deleteGroup('g');
    const joined = acquire();
    expect(await deleted).toBe(1);
    await slow;
    // It ran after the delete, on a partition started anew (not written before and forgotten with it).
    expect(await joined).toEqual([200, 201]);
    expect(states.peek('g', '/a')).not.toBeNull();
    expect(states.groups()).toEqual(['g']);
  });

  it('forgets a partition held in memory when another writer deletes its record (a cluster\'s coordinator deleting the group)', async () => {
    meta = await openLocalMetaStore(tempDir());
    const owner = new ShareStates(meta);
    const coordinator = new ShareStates(meta);
    const init = (): Promise<number> => Promise.resolve(0);
    await owner.run('g', '/a', init, async (p) => ({ result: p.acquireNew([0, 1], 2, 'w1', Date.now() + 60_000), changed: true }));
    expect(await coordinator.deleteGroup('g')).toBe(1);
    // The owner's next call starts from `init`, not from the partition it had in memory.
    const acquired = await owner.run('g', '/a', init, async (p) => ({ result: p.acquireNew([0, 1], 2, 'w2', Date.now() + 60_000), changed: true }));
    expect(acquired.map((a) => [a.offset, a.deliveryCount])).toEqual([[0, 1], [1, 1]]);
  });
});
