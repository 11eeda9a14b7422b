/**
 * A moved stream's open (src/move-storage.ts) against a real etcd (one Debian etcd-server member)
 * and a `file:` object store, with the local shards stood in for by a recorder (the cluster
 * suites run it with real shards): the fence is taken from the previous holder named by the
 * caller without reading it first, and a wrong name costs only the failed compare; the entries
 * the tail recovery read and recorded are handed to the shard without reading the ledger again,
 * with `remote` and with `copy` reads; a fence already at the epoch or above refuses the open.
 */
import { randomBytes } from 'node:crypto';
import { moveStorage, type LocalStreams } from '../../src/move-storage';
import { type Fence, Ledger, type ObjectStore, groupObjectKey, openObjectStore } from '../../src/objects';
import { etcdForFile } from '../helpers/etcd-for-file';
import { tempDir } from '../helpers/node-process';
import { groupOf } from '../objects/group-fixture';

const etcd = etcdForFile();

const A: Fence = { nodeId: 1, epoch: 1 };
const g = (n: number): string => groupObjectKey(1, 1, 0, n);
const META = { meta: { contentType: 'text/plain' }, startSeq: 0, sealed: false };

/** Stream s held by node 1 at epoch 1: one recorded group, and one acknowledged early that the ledger does not name yet. */
async function setup(): Promise<{ ledger: Ledger; store: ObjectStore }> {
  const ledger = new Ledger(etcd.link, `open/${randomBytes(6).toString('hex')}`);
  const store = openObjectStore(`file:${tempDir('open-')}`);
  await store.put(g(1), groupOf([{ stream: 's', from: 0, to: 1, early: false }]), { ifAbsent: true });
  await ledger.commitObjects(new Map([[g(1), 1]]), [{ stream: 's', fence: A, create: true, meta: META, position: g(1), entries: [{ o: g(1), counter: 0, off: 0, len: 10, from: 0, to: 1 }] }]);
  await store.put(g(2), groupOf([{ stream: 's', from: 1, to: 3, early: true }]), { ifAbsent: true });
  return { ledger, store };
}

interface Handed {
  adopted: Array<{ entries: unknown[]; ledger: unknown }>;
  imported: Array<{ meta: unknown; ledger: unknown }>;
}

function shards(): LocalStreams & Handed {
  const adopted: Handed['adopted'] = [];
  const imported: Handed['imported'] = [];
  return {
    adopted,
    imported,
    importStream: async (_name, input) => void imported.push({ meta: input.meta, ledger: input.ledger }),
    adoptStream: async (_name, input) => void adopted.push({ entries: [...input.entries], ledger: input.ledger }),
    dropStream: async () => undefined,
    list: async () => ({ streams: [], hasMore: false }),
  };
}

const entriesAfterTail = [
  { o: g(1), off: 0, len: 10, from: 0, to: 1 },
  { o: g(2), off: 0, len: 10, from: 1, to: 3 },
];

it('takes the fence from the previous holder it is told of without reading it, and adopts the entries the tail recovery read and recorded', async () => {
  const { ledger, store } = await setup();
  const local = shards();
  const fenceReads = jest.spyOn(ledger, 'fence');
  const entryReads = jest.spyOn(ledger, 'entries');
  const phases: Record<string, number> = {};
  const open = moveStorage({ nodeId: 2, ledger, store, shards: local, reads: 'remote', create: async () => undefined }).open;
  await expect(open('s', 2, { previous: A, phases })).resolves.toBe('opened');
  expect(fenceReads).not.toHaveBeenCalled();
  expect(entryReads).toHaveBeenCalledTimes(1);
  await expect(ledger.fence('s')).resolves.toEqual({ nodeId: 2, epoch: 2 });
  expect(local.adopted).toEqual([{ entries: entriesAfterTail, ledger: { fence: { nodeId: 2, epoch: 2 }, counter: 1 } }]);
  expect((await ledger.entries('s')).map((e) => ({ o: e.o, off: e.off, len: e.len, from: e.from, to: e.to }))).toEqual(entriesAfterTail);
  expect(Object.keys(phases)).toEqual(expect.arrayContaining(['fence', 'tailLedger', 'tailWalk', 'tailRecord', 'tail', 'tailObjects', 'read', 'shard']));
  expect(phases['tailObjects']).toBe(1); // g(2); g(3) was absent and took the marker
});

it('a wrong previous holder costs the failed compare only; with copy reads the import gets m/ and the counter without the ledger read again', async () => {
  const { ledger, store } = await setup();
  const local = shards();
  const entryReads = jest.spyOn(ledger, 'entries');
  const open = moveStorage({ nodeId: 3, ledger, store, shards: local, reads: 'copy', create: async () => undefined }).open;
  await expect(open('s', 2, { previous: { nodeId: 9, epoch: 1 } })).resolves.toBe('opened');
  await expect(ledger.fence('s')).resolves.toEqual({ nodeId: 3, epoch: 2 });
  expect(entryReads).toHaveBeenCalledTimes(1);
  expect(local.imported).toEqual([{ meta: META, ledger: { fence: { nodeId: 3, epoch: 2 }, counter: 1 } }]);
});

it('refuses an open whose fence is at its epoch or above, whatever previous holder it is told of', async () => {
  const { ledger, store } = await setup();
  await ledger.takeFence('s', { nodeId: 4, epoch: 5 }, { from: A });
  const open = moveStorage({ nodeId: 2, ledger, store, shards: shards(), reads: 'remote', create: async () => undefined }).open;
  await expect(open('s', 3, { previous: A })).rejects.toThrow(/the fence of s is 4:5, not below epoch 3/);
  await expect(ledger.fence('s')).resolves.toEqual({ nodeId: 4, epoch: 5 });
});

it('answers absent for a stream the ledger never had, told of a previous holder or not', async () => {
  const { ledger, store } = await setup();
  const open = moveStorage({ nodeId: 2, ledger, store, shards: shards(), reads: 'remote', create: async () => undefined }).open;
  await expect(open('never', 2, { previous: A })).resolves.toBe('absent');
  await expect(open('never', 2)).resolves.toBe('absent');
});
