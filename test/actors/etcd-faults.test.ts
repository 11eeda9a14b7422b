/**
 * The etcd backend under faults, on a real 3-member etcd cluster: members killed with SIGKILL
 * (by PID) while a watch catches up and while writes are in flight, and a watch that falls
 * behind a compaction. What must hold: a view receives every write exactly once and in
 * revision order; a write in flight when the leader dies is retried on another member instead
 * of waiting out etcd's ~7 s request timeout, and is applied once.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { type MetaRecord, openMetaStore } from '../../src/actors';
import { EtcdLink, type EtcdEvent } from '../../src/actors/meta/etcd/etcd-link';
import { EtcdMetaStore } from '../../src/actors/meta/etcd/etcd-meta-store';
import { parseEtcdUrl } from '../../src/actors/meta/etcd/etcd-url';
import { EtcdCluster } from '../helpers/etcd-cluster';

const ROOT = path.resolve(__dirname, '..', '..');
const DIST_LINK = path.join(ROOT, 'dist', 'actors', 'meta', 'etcd', 'etcd-link.js');
const BULK = path.join(__dirname, 'fixtures', 'etcd-bulk-writer.js');

jest.setTimeout(180_000);

let cluster: EtcdCluster;
beforeAll(async () => {
  cluster = await EtcdCluster.start(3);
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
});
/** Every member running again before the next test. */
afterEach(async () => {
  for (let i = 0; i < cluster.members.length; i++) if (cluster.members[i]!.proc === null) cluster.startMember(i);
  await cluster.waitHealthy();
});

const newPrefix = (what: string): string => `faults/${what}-${randomBytes(4).toString('hex')}`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Write `count` single-key transactions straight to etcd, `inFlight` at a time; returns the last revision. */
async function bulkWrite(link: EtcdLink, keyPrefix: string, txns: number, keysPerTxn: number): Promise<number> {
  let next = 0;
  let last = 0;
  const worker = async (): Promise<void> => {
    while (next < txns) {
      const t = next++;
      const ops = Array.from({ length: keysPerTxn }, (_, k) => ({ put: `${keyPrefix}${String(t * keysPerTxn + k).padStart(6, '0')}`, value: Buffer.from(JSON.stringify(t)) }));
      const r = await link.txnOnce([], ops, []);
      last = Math.max(last, r.revision);
    }
  };
  await Promise.all(Array.from({ length: 64 }, worker));
  return last;
}

it('resumes a watch killed during catch-up at the last delivered revision + 1: 20,000 events, each once, in order', async () => {
  const prefix = newPrefix('catchup') + '/';
  const writer = new EtcdLink(cluster.endpoints);
  const start = (await writer.get('any', 10_000)).revision;
  const last = await bulkWrite(writer, prefix, 5000, 4); // 20,000 events over 5,000 revisions
  writer.close();

  const link = new EtcdLink(cluster.endpoints);
  const got: EtcdEvent[] = [];
  let breaks = 0;
  let killed: Promise<void> | null = null;
  let deliveredAtKill = -1;
  const done = new Promise<void>((resolve) => {
    const w = link.watchPrefix(prefix, start + 1, {
      onEvents: (events) => {
        got.push(...events);
        // The first catch-up batch is in: kill the member the watch reads from.
        if (killed === null) {
          deliveredAtKill = got.length;
          killed = cluster.kill(w.member);
        }
        if (got.length >= 20_000) resolve();
      },
      onCompacted: () => Promise.reject(new Error('no compaction in this test')),
      onBreak: () => breaks++,
    });
  });
  try {
    await done;
    await killed;
    expect(breaks).toBeGreaterThanOrEqual(1);
    // The member died with most of the catch-up still to send.
    expect(deliveredAtKill).toBeGreaterThan(0);
    expect(deliveredAtKill).toBeLessThan(10_000);
    expect(got).toHaveLength(20_000);
    for (let i = 1; i < got.length; i++) expect(got[i]!.kv.modRevision).toBeGreaterThanOrEqual(got[i - 1]!.kv.modRevision);
    expect(new Set(got.map((e) => e.kv.key)).size).toBe(20_000);
    expect(got[got.length - 1]!.kv.modRevision).toBe(last);
    // Nothing more arrives: no event was delivered twice.
    await sleep(300);
    expect(got).toHaveLength(20_000);
  } finally {
    link.close();
  }
});

it('delivers all N writes in order to another node\'s view while the leader and then the watched member are killed', async () => {
  const url = cluster.url(newPrefix('writes'));
  const writer = (await openMetaStore(url, '')) as EtcdMetaStore;
  const reader = (await openMetaStore(url, '')) as EtcdMetaStore;
  const seen: Array<[string, MetaRecord | null]> = [];
  reader.onChange((key, record) => seen.push([key, record]));
  const N = 400;
  const written: MetaRecord[] = [];
  const latencies: number[] = [];
  const kills: Array<Promise<void>> = [];
  try {
    for (let i = 0; i < N; i++) {
      if (i === 100) kills.push(cluster.kill(cluster.leader()));
      if (i === 250) {
        // Bring the first back, then kill the member the reader's watch is on.
        await Promise.all(kills);
        for (let m = 0; m < cluster.members.length; m++) if (cluster.members[m]!.proc === null) cluster.startMember(m);
        await cluster.waitHealthy();
        kills.push(cluster.kill(reader.watchMember!));
      }
      const t0 = Date.now();
      written.push(await writer.put(`events/${String(i).padStart(4, '0')}`, { i }));
      latencies.push(Date.now() - t0);
    }
    await reader.sync();
    expect(seen.map(([k]) => k)).toEqual(written.map((r) => r.key));
    expect(seen.map(([, r]) => r)).toEqual(written);
    for (let i = 1; i < written.length; i++) expect(written[i]!.version).toBeGreaterThan(written[i - 1]!.version);
    // The leader's death cost an election and a retry, not etcd's ~7 s request timeout.
    expect(Math.max(...latencies)).toBeLessThan(5000);
    expect(writer.stats.writeRetries + reader.stats.watchBreaks).toBeGreaterThanOrEqual(1);
    expect(reader.stats.watchBreaks).toBeGreaterThanOrEqual(1);
  } finally {
    await Promise.all(kills);
    await Promise.all([writer.close(), reader.close()]);
  }
});

it('applies a compare-and-set once when the member it was sent to is killed with the write in flight', async () => {
  const url = cluster.url(newPrefix('inflight'));
  const store = (await openMetaStore(url, '')) as EtcdMetaStore;
  try {
    let cur = await store.put('counter', 0);
    const K = 60;
    let killedAt = -1;
    for (let i = 1; i <= K; i++) {
      const p = store.put('counter', i, { version: cur.version });
      // Kill the member the transaction went to while it is in flight, twice over the run.
      if (i === 20 || i === 40) {
        killedAt = i;
        const target = store.requestMember;
        await cluster.kill(target);
        cluster.startMember(target);
      }
      cur = await p;
      expect(cur.value).toBe(i);
    }
    expect(killedAt).toBe(40);
    await store.sync();
    expect(store.get('counter')?.value).toBe(K);
  } finally {
    await store.close();
  }
});

it('resyncs the view from a snapshot when its watch falls behind a compaction', async () => {
  expect(fs.existsSync(DIST_LINK)).toBe(true); // npm test builds dist/ first
  const url = cluster.url(newPrefix('compact'));
  const store = (await openMetaStore(url, '')) as EtcdMetaStore;
  const changes: string[] = [];
  store.onChange((key) => changes.push(key));
  try {
    await store.put('before', 1);
    const target = parseEtcdUrl(url);
    // The test's event loop is blocked while the child writes 20,000 records and compacts:
    // the watch cannot read, etcd moves it to its slow watchers, and the compaction cancels it.
    const last = Number(execFileSync(process.execPath, [BULK, DIST_LINK, target.endpoints.join(','), `${target.prefix}/k/`, '20000'], { timeout: 120_000 }).toString());
    cluster.compact();
    await store.sync();
    await waitFor(() => store.appliedIndex >= last, 30_000, () => JSON.stringify({ applied: store.appliedIndex, last, stats: store.stats }));
    expect(store.list('bulk/')).toHaveLength(20_000);
    expect(store.get('before')?.value).toBe(1);
    expect(store.stats.resyncs).toBeGreaterThanOrEqual(1);
    // Every record written was reported once to the listeners, whichever path it took.
    expect(new Set(changes.filter((k) => k.startsWith('bulk/'))).size).toBe(20_000);
    // And the store keeps working after it.
    const after = await store.put('after', 2);
    expect(store.get('after')).toEqual(after);
  } finally {
    await store.close();
  }
});

async function waitFor(cond: () => boolean, ms = 30_000, state?: () => string): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting ${state?.() ?? ''}`);
    await sleep(20);
  }
}

it('reports a compaction to the watcher and continues after the revision it resynced to', async () => {
  const prefix = newPrefix('compact-link') + '/';
  const link = new EtcdLink(cluster.endpoints);
  try {
    const start = (await link.get('any', 10_000)).revision;
    await bulkWrite(link, prefix, 50, 1);
    const compacted = cluster.compact();
    const got: EtcdEvent[] = [];
    const reported: number[] = [];
    const resyncedTo = (await link.get('any', 10_000)).revision;
    const w = link.watchPrefix(prefix, start + 1, {
      onEvents: (events) => got.push(...events),
      onCompacted: async (rev) => {
        reported.push(rev);
        return resyncedTo;
      },
    });
    await waitFor(() => reported.length > 0);
    expect(reported[0]).toBe(compacted);
    await link.txnOnce([], [{ put: `${prefix}later`, value: Buffer.from('1') }], []);
    await waitFor(() => got.length > 0);
    // Only what came after the resync revision: the compacted history is not replayed.
    expect(got.map((e) => e.kv.key)).toEqual([`${prefix}later`]);
    expect(w.nextRevision).toBeGreaterThan(resyncedTo);
  } finally {
    link.close();
  }
});

it('fails writes and syncs with storage_unavailable by the deadline while etcd has no quorum, and recovers after', async () => {
  const store = await EtcdMetaStore.open(parseEtcdUrl(cluster.url(newPrefix('quorum'))), { deadlineMs: 3000 });
  try {
    await store.put('a', 1);
    await cluster.kill(0);
    await cluster.kill(1);
    const t0 = Date.now();
    await expect(store.put('a', 2)).rejects.toMatchObject({ code: 'storage_unavailable' });
    await expect(store.sync()).rejects.toMatchObject({ code: 'storage_unavailable' });
    // Bounded by the deadline, not by etcd's request timeout per attempt.
    expect(Date.now() - t0).toBeLessThan(12_000);
    cluster.startMember(0);
    cluster.startMember(1);
    await cluster.waitHealthy();
    // Recovers by itself: a write right after the quorum is back may still meet channels to the
    // restarted members in their reconnect backoff (on a loaded machine, longer than the 3 s
    // deadline), so writes are retried as a client would, for a bounded time.
    const back = Date.now() + 30_000;
    let r: Awaited<ReturnType<typeof store.put>> | null = null;
    while (r === null) {
      try {
        r = await store.put('a', 3);
      } catch (err) {
        if ((err as { code?: string }).code !== 'storage_unavailable' || Date.now() > back) throw err;
      }
    }
    await store.sync();
    expect(store.get('a')).toEqual(r);
  } finally {
    await store.close();
  }
});
