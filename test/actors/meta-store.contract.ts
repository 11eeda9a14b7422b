/**
 * The MetaStore contract: one black-box suite that every backend runs (local now, etcd later),
 * so the admin API and the token checks behave the same on either. A backend's test file calls
 * `metaStoreContract(name, open)`; `open` gives a store on fresh, empty data and `reopen`, which
 * opens a new store on the same data (the test closes the old one first).
 *
 * Expectations hold for a store with no other writers: with etcd, give each test its own prefix
 * on a dedicated cluster, since indices are revisions shared by the whole cluster.
 */
import { randomBytes } from 'node:crypto';
import { type MetaRecord, type MetaStore, MetaConflictError, ROOT_SCOPE, Tokens } from '../../src/actors';

export interface OpenedStore {
  store: MetaStore;
  reopen: () => Promise<MetaStore>;
}

export function metaStoreContract(name: string, open: () => Promise<OpenedStore>): void {
  describe(`MetaStore contract: ${name}`, () => {
    const opened: MetaStore[] = [];
    /** Opens a store and registers it for closing after the test. */
    async function fresh(): Promise<{ store: MetaStore; reopen: () => Promise<MetaStore> }> {
      const o = await open();
      opened.push(o.store);
      return {
        store: o.store,
        reopen: async () => {
          const s = await o.reopen();
          opened.push(s);
          return s;
        },
      };
    }
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });

    const conflict = expect.any(MetaConflictError) as unknown;

    it('starts empty', async () => {
      const { store } = await fresh();
      expect(store.list('')).toEqual([]);
      expect(store.get('tokens/a')).toBeNull();
      expect(store.appliedIndex).toBeGreaterThanOrEqual(0);
    });

    it('reads a write as soon as the put resolves, with the value as JSON', async () => {
      const { store } = await fresh();
      const value = { id: 'a', scope: { streams: ['/x/*'], ops: ['read'] }, n: 1.5, none: null, list: [1, 'two'] };
      const r = await store.put('tokens/a', value);
      expect(r).toEqual({ key: 'tokens/a', value, version: r.version });
      expect(store.get('tokens/a')).toEqual(r);
      expect(store.list('tokens/')).toEqual([r]);
    });

    it('lists records by prefix in key order', async () => {
      const { store } = await fresh();
      for (const k of ['tokens/b', 'nodes/1', 'tokens/a', 'tokens', 'tokens/a/x', 'tokens0', 'cluster/id', 'tokens/B']) await store.put(k, k);
      expect(store.list('tokens/').map((r) => r.key)).toEqual(['tokens/B', 'tokens/a', 'tokens/a/x', 'tokens/b']);
      expect(store.list('tokens').map((r) => r.key)).toEqual(['tokens', 'tokens/B', 'tokens/a', 'tokens/a/x', 'tokens/b', 'tokens0']);
      expect(store.list('').map((r) => r.key)).toEqual(['cluster/id', 'nodes/1', 'tokens', 'tokens/B', 'tokens/a', 'tokens/a/x', 'tokens/b', 'tokens0']);
      expect(store.list('streams/')).toEqual([]);
    });

    it("gives each record the index of the command that last wrote it", async () => {
      const { store } = await fresh();
      const a = await store.put('k/a', 1);
      expect(a.version).toBe(store.appliedIndex);
      const b = await store.put('k/b', 2);
      expect(b.version).toBe(store.appliedIndex);
      expect(b.version).toBeGreaterThan(a.version);
      const a2 = await store.put('k/a', 3);
      expect(a2.version).toBe(store.appliedIndex);
      expect(a2.version).toBeGreaterThan(b.version);
      expect(store.get('k/a')?.version).toBe(a2.version);
      expect(store.get('k/b')?.version).toBe(b.version);
    });

    it('creates only when absent with {absent: true}', async () => {
      const { store } = await fresh();
      const first = await store.put('cluster/id', 'one', { absent: true });
      const err = await store.put('cluster/id', 'two', { absent: true }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MetaConflictError);
      expect((err as MetaConflictError).key).toBe('cluster/id');
      expect(store.get('cluster/id')).toEqual(first);
    });

    it('compares and sets with {version}', async () => {
      const { store } = await fresh();
      const v1 = await store.put('tokens/a', { n: 1 });
      const v2 = await store.put('tokens/a', { n: 2 }, { version: v1.version });
      expect(v2.version).toBeGreaterThan(v1.version);
      await expect(store.put('tokens/a', { n: 3 }, { version: v1.version })).rejects.toEqual(conflict);
      expect(store.get('tokens/a')).toEqual(v2);
      await expect(store.put('tokens/missing', 1, { version: v1.version })).rejects.toEqual(conflict);
      expect(store.get('tokens/missing')).toBeNull();
    });

    it('lets exactly one of two concurrent compare-and-set writes on one key win', async () => {
      const { store } = await fresh();
      const base = await store.put('tokens/a', { who: 'base' });
      const results = await Promise.allSettled([
        store.put('tokens/a', { who: 'left' }, { version: base.version }),
        store.put('tokens/a', { who: 'right' }, { version: base.version }),
      ]);
      const won = results.filter((r): r is PromiseFulfilledResult<MetaRecord<{ who: string }>> => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(lost[0]!.reason).toBeInstanceOf(MetaConflictError);
      expect(store.get('tokens/a')).toEqual(won[0]!.value);
    });

    it('lets exactly one of two concurrent create-only writes win', async () => {
      const { store } = await fresh();
      const results = await Promise.allSettled([store.put('nodes/1', 'left', { absent: true }), store.put('nodes/1', 'right', { absent: true })]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(results.filter((r) => r.status === 'rejected' && r.reason instanceof MetaConflictError)).toHaveLength(1);
    });

    it('lets a caller that lost a compare-and-set re-read and retry', async () => {
      const { store } = await fresh();
      await store.put('counter', 0);
      // Each worker reads, then writes with the version it read; a loser re-reads and tries again.
      const increment = async (): Promise<void> => {
        for (;;) {
          const cur = store.get<number>('counter')!;
          try {
            await store.put('counter', cur.value + 1, { version: cur.version });
            return;
          } catch (e) {
            if (!(e instanceof MetaConflictError)) throw e;
          }
        }
      };
      await Promise.all(Array.from({ length: 10 }, increment));
      expect(store.get('counter')?.value).toBe(10);
    });

    it('deletes without an expectation, and says whether there was something to delete', async () => {
      const { store } = await fresh();
      await store.put('tokens/a', 1);
      await expect(store.delete('tokens/a')).resolves.toBe(true);
      expect(store.get('tokens/a')).toBeNull();
      expect(store.list('tokens/')).toEqual([]);
      await expect(store.delete('tokens/a')).resolves.toBe(false);
    });

    it('deletes with a version only when the version holds', async () => {
      const { store } = await fresh();
      const v1 = await store.put('tokens/a', 1);
      const v2 = await store.put('tokens/a', 2);
      await expect(store.delete('tokens/a', { version: v1.version })).rejects.toEqual(conflict);
      expect(store.get('tokens/a')).toEqual(v2);
      await expect(store.delete('tokens/a', { version: v2.version })).resolves.toBe(true);
      expect(store.get('tokens/a')).toBeNull();
      await expect(store.delete('tokens/a', { version: v2.version })).rejects.toEqual(conflict);
    });

    it('lets exactly one of two concurrent deletes with the same version win', async () => {
      const { store } = await fresh();
      const v = await store.put('tokens/a', 1);
      const results = await Promise.allSettled([store.delete('tokens/a', { version: v.version }), store.delete('tokens/a', { version: v.version })]);
      expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
      expect(store.get('tokens/a')).toBeNull();
    });

    it('advances appliedIndex with every command, and not for a write that was refused', async () => {
      const { store } = await fresh();
      const seen = [store.appliedIndex];
      const v = await store.put('a', 1);
      seen.push(store.appliedIndex);
      await store.put('a', 2, { version: v.version });
      seen.push(store.appliedIndex);
      await store.put('b', 3, { absent: true });
      seen.push(store.appliedIndex);
      await store.delete('a');
      seen.push(store.appliedIndex);
      for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThan(seen[i - 1]!);

      const before = store.appliedIndex;
      await expect(store.put('b', 4, { absent: true })).rejects.toEqual(conflict);
      await expect(store.put('b', 4, { version: v.version })).rejects.toEqual(conflict);
      await expect(store.delete('a')).resolves.toBe(false);
      expect(store.appliedIndex).toBe(before);
    });

    it('recovers records, versions and appliedIndex after a restart', async () => {
      const { store, reopen } = await fresh();
      await store.put('cluster/id', 'c-1', { absent: true });
      const a = await store.put('tokens/a', { id: 'a', secretHash: 'h-a' });
      await store.put('tokens/b', { id: 'b', secretHash: 'h-b' });
      await store.delete('tokens/b');
      const a2 = await store.put('tokens/a', { id: 'a', secretHash: 'h-a2' }, { version: a.version });
      const records = store.list('');
      const applied = store.appliedIndex;
      await store.close();

      const again = await reopen();
      expect(again.list('')).toEqual(records);
      expect(again.get('tokens/a')).toEqual(a2);
      expect(again.get('tokens/b')).toBeNull();
      expect(again.appliedIndex).toBeGreaterThanOrEqual(applied);
      // Versions read before the restart still work as compare-and-set tokens after it.
      const a3 = await again.put('tokens/a', { id: 'a', secretHash: 'h-a3' }, { version: a2.version });
      expect(a3.version).toBeGreaterThan(applied);
    });

    it('never lowers appliedIndex across a restart, also when the last command was a delete', async () => {
      const { store, reopen } = await fresh();
      await store.put('tokens/a', 1);
      await store.delete('tokens/a');
      const applied = store.appliedIndex;
      await store.close();
      const again = await reopen();
      expect(again.appliedIndex).toBeGreaterThanOrEqual(applied);
      expect(again.list('')).toEqual([]);
      const r = await again.put('tokens/a', 2);
      expect(r.version).toBeGreaterThan(applied);
    });

    it('recovers tokens after a restart: issued ones authenticate, revoked ones do not', async () => {
      const { store, reopen } = await fresh();
      const root = `${Buffer.from('root').toString('base64url')}.${randomBytes(32).toString('base64url')}`;
      const tokens = new Tokens(store);
      await tokens.bootstrap(root);
      const caller = { id: 'root', scope: ROOT_SCOPE };
      const scope = { streams: [{ prefix: '/a/' }], ops: ['read' as const], audiences: ['svc' as const], groups: { stream: { read: true, write: false } } };
      const kept = await tokens.issue(caller, { id: 'kept', scope });
      const gone = await tokens.issue(caller, { id: 'gone', scope });
      await tokens.revoke(caller, 'gone');
      const applied = store.appliedIndex;
      await store.close();

      const again = await reopen();
      const after = new Tokens(again);
      expect(await after.authenticate(`Bearer ${kept.token}`)).toEqual({ id: 'kept', scope });
      expect(await after.authenticate(`Bearer ${gone.token}`)).toBe('unknown');
      expect(await after.authenticate(`Bearer ${root}`)).toEqual({ id: 'root', scope: ROOT_SCOPE });
      // Bootstrapping again with the same token is a no-op; another secret under its id is refused.
      await after.bootstrap(root);
      expect(again.appliedIndex).toBeGreaterThanOrEqual(applied);
      await expect(after.bootstrap(`${Buffer.from('root').toString('base64url')}.${randomBytes(32).toString('base64url')}`)).rejects.toThrow(/a different token with id "root" already exists/);
      expect(after.list(caller)).toEqual({ count: 2, tokens: [expect.objectContaining({ id: 'kept', issuedBy: 'root' }), expect.objectContaining({ id: 'root', issuedBy: 'bootstrap' })] });
    });

    it('notifies listeners of every applied command, in order, before the call resolves', async () => {
      const { store } = await fresh();
      const changes: Array<[string, MetaRecord | null]> = [];
      store.onChange((key, record) => changes.push([key, record]));
      const a = await store.put('tokens/a', 1);
      expect(changes).toEqual([['tokens/a', a]]);
      const [b, c] = await Promise.all([store.put('tokens/b', 2), store.put('tokens/c', 3)]);
      await expect(store.put('tokens/a', 9, { absent: true })).rejects.toEqual(conflict);
      await store.delete('tokens/a');
      await store.delete('tokens/missing');
      expect(changes).toEqual([
        ['tokens/a', a],
        ['tokens/b', b],
        ['tokens/c', c],
        ['tokens/a', null],
      ]);
    });

    it('holds every acknowledged write in the view whenever it says the view is current', async () => {
      const { store } = await fresh();
      const r = await store.put('tokens/a', 1);
      if (store.viewIsCurrent()) expect(store.get('tokens/a')).toEqual(r);
      await store.sync();
      expect(store.get('tokens/a')).toEqual(r);
    });

    it('resolves sync with every acknowledged write in the view', async () => {
      const { store } = await fresh();
      const r = await store.put('tokens/a', 1);
      await store.sync();
      expect(store.get('tokens/a')).toEqual(r);
      expect(store.appliedIndex).toBeGreaterThanOrEqual(r.version);
    });

    it('refuses values that are not JSON and empty keys', async () => {
      const { store } = await fresh();
      await expect(store.put('tokens/a', undefined)).rejects.toThrow(TypeError);
      await expect(store.put('', 1)).rejects.toThrow(TypeError);
      expect(store.list('')).toEqual([]);
    });

    it('finishes accepted writes on close and refuses writes after it', async () => {
      const { store, reopen } = await fresh();
      const writes = Array.from({ length: 20 }, (_, i) => store.put(`k/${String(i).padStart(2, '0')}`, i));
      await store.close();
      const records = await Promise.all(writes);
      await expect(store.put('k/late', 1)).rejects.toThrow();
      const again = await reopen();
      expect(again.list('k/')).toEqual(records);
    });
  });
}
