/**
 * The etcd MetaStore backend against a real 3-member etcd cluster (Debian etcd-server, started
 * here on free loopback ports): the same contract suite as the local backend, each test on its
 * own prefix. Fault tests (members killed while writing, during catch-up, compaction) are in
 * etcd-faults.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { openMetaStore } from '../../src/actors';
import { EtcdLink } from '../../src/actors/meta/etcd/etcd-link';
import { EtcdCluster } from '../helpers/etcd-cluster';
import { metaStoreContract } from './meta-store.contract';

let cluster: EtcdCluster;
beforeAll(async () => {
  cluster = await EtcdCluster.start(3);
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});

metaStoreContract('etcd (3 members)', async () => {
  const url = cluster.url(`contract/${randomBytes(6).toString('hex')}`);
  return { store: await openMetaStore(url, ''), reopen: () => openMetaStore(url, '') };
});

describe('etcd MetaStore beside other writers', () => {
  it('sees another node\'s write after sync(), and not a write to another prefix', async () => {
    const prefix = `shared/${randomBytes(6).toString('hex')}`;
    const a = await openMetaStore(cluster.url(prefix), '');
    const b = await openMetaStore(cluster.url(prefix), '');
    const other = await openMetaStore(cluster.url(`${prefix}-other`), '');
    try {
      expect(a.viewIsCurrent()).toBe(false);
      const r = await a.put('tokens/x', { n: 1 });
      await other.put('tokens/x', { n: 'other' });
      await b.sync();
      expect(b.get('tokens/x')).toEqual(r);
      await a.delete('tokens/x', { version: r.version });
      await b.sync();
      expect(b.get('tokens/x')).toBeNull();
      // A compare-and-set with a version read on another node works across nodes.
      const v = await b.put('k', 1);
      await a.sync();
      await expect(a.put('k', 2, { version: v.version })).resolves.toMatchObject({ value: 2 });
      await expect(b.put('k', 3, { version: v.version })).rejects.toThrow(/is at version/);
    } finally {
      await Promise.all([a.close(), b.close(), other.close()]);
    }
  });

  it('shares one linearizable head read among the sync() callers of one turn', async () => {
    const store = await openMetaStore(cluster.url(`reads/${randomBytes(6).toString('hex')}`), '');
    try {
      await store.put('a', 1);
      const stats = (store as unknown as { stats: { headReads: number } }).stats;
      const before = stats.headReads;
      await Promise.all(Array.from({ length: 200 }, () => store.sync()));
      // The callers of one event-loop turn share one read, sent after the last of them arrived.
      expect(stats.headReads - before).toBe(1);
      // A caller that comes after a read was sent gets a read of its own.
      const first = store.sync();
      await new Promise((r) => setImmediate(r));
      await Promise.all([first, store.sync()]);
      expect(stats.headReads - before).toBe(3);
    } finally {
      await store.close();
    }
  });

  it('refuses a metadata URL it cannot use', async () => {
    await expect(openMetaStore('etcd://127.0.0.1:1/', '')).rejects.toThrow(/prefix/);
    await expect(openMetaStore('etcd:///x', '')).rejects.toThrow(/no etcd member/);
  });
});

describe('EtcdLink leases (for node registrations)', () => {
  it('attaches a put to a lease, keeps the lease alive, and the key goes when the lease expires', async () => {
    const link = new EtcdLink(cluster.endpoints);
    try {
      const key = `leases/${randomBytes(6).toString('hex')}`;
      const lease = await link.grantLease(2, 5000);
      const put = await link.txnOnce([{ key, absent: true }], [{ put: key, value: Buffer.from('node'), lease }], []);
      expect(put.succeeded).toBe(true);
      // Kept alive past its TTL: still there.
      for (let i = 0; i < 3; i++) {
        await new Promise((r) => setTimeout(r, 1000));
        expect(await link.keepAliveOnce(lease, 5000)).toBeGreaterThan(0);
      }
      expect((await link.get(key, 5000)).kv?.lease).toBe(lease);
      // Left alone, it expires and takes the key with it.
      const end = Date.now() + 10_000;
      while ((await link.get(key, 5000)).kv !== null) {
        if (Date.now() > end) throw new Error('the leased key outlived its lease');
        await new Promise((r) => setTimeout(r, 250));
      }
    } finally {
      link.close();
    }
  });
});
