/**
 * What the opener (src/actors/cluster/moves.ts) needs of storage in objects mode, built from the
 * ledger, the object store and the local shards (docs/cluster.md, "Transfers"):
 *
 *   open(name, e) ──▶ fence f/<name>: whatever it holds (epoch < e) ──CAS──▶ "<me>:<e>"
 *                 ──▶ recoverTail: the groups the old owner acknowledged and did not record yet,
 *                     found in its objects, recorded under the new fence (tail-recovery.ts)
 *                 ──▶ m/<name> and every i/<name>/ entry, read after the fence moved (the entries
 *                     as recovery read and recorded them), so every append the old owner
 *                     acknowledged is among them and nothing later can be
 *                 ──▶ `copy` (--objects-reads copy):
 *                       readStreamFromObjects (range reads, CRCs checked) ──▶ ShardClient.importStream
 *                       (seqs, bytes, keys, headers, timestamps, producers kept), with the fence
 *                       and the epoch's next entry counter: the shard's first write commits at once
 *                 ──▶ `remote` (the default): ShardClient.adoptStream with the entries (no frame copied; the shard
 *                       reads records below the remote end from the store on demand and replays
 *                       the idempotent producers from the entries' batch headers while it serves
 *                       the stream; a fork is imported as with `copy`)
 *   drop(name, below) ──▶ ShardClient.dropStream (the ledger is not touched: the stream lives on
 *                     elsewhere); only a copy opened below the epoch of the move that took it away
 *
 * It joins three layers — the control plane's opener (src/actors), the object store and ledger
 * (src/objects) and the data plane's import (src/shards) — so it lives beside the composition
 * root, above all three: the object store stays below the data plane and imports nothing of it.
 */
import { type MoveStorage, type OpenSpec } from './actors';
import { type Fence, type Ledger, type LedgerMeta, type ObjectStore, recoverTail } from './objects';
import { type AdoptParams, nextEntryCounter, readStreamFromObjects } from './shards';
import { phaseTimer } from './util/phase-timer';
import { testFault } from './util/test-fault';

/** The import input (ShardClient's StreamImport), as readStreamFromObjects makes it. */
type StreamImport = Omit<NonNullable<Awaited<ReturnType<typeof readStreamFromObjects>>>, 'nextCounter'>;

/** The local shards, as far as moves need them (ShardClient, passed in by src/node.ts). */
export interface LocalStreams {
  importStream(name: string, input: StreamImport): Promise<unknown>;
  adoptStream(name: string, input: Omit<AdoptParams, 'name'>): Promise<unknown>;
  dropStream(name: string, below?: number): Promise<unknown>;
  list(p: { prefix: string; startAfter: string; limit: number }): Promise<{ streams: ReadonlyArray<{ name: string }>; hasMore: boolean }>;
}

/** How an open is done (MoveStorage.open's options). */
type OpenOptions = Parameters<MoveStorage['open']>[2] & {};

export interface MoveStorageDeps {
  nodeId: number;
  ledger: Ledger;
  store: ObjectStore;
  shards: LocalStreams;
  /** the `records` ledger format: an opener records the stream's parts pending in its writer's part records (src/objects/part-records.ts). */
  records?: boolean;
  /** `--objects-reads`: copy a moved stream's records here, or serve them from the store (default remote). */
  reads?: 'copy' | 'remote';
  /** Create a stream placed here whose create never ran (a Kafka partition's intent). */
  create(name: string, spec: OpenSpec): Promise<void>;
  /** Waited for before a local copy is dropped: the gateway threads have heard that the stream moved (src/node.ts). */
  beforeDrop?: () => Promise<void>;
}

export function moveStorage(d: MoveStorageDeps): MoveStorage {
  return {
    async open(name: string, epoch: number, opts: OpenOptions = {}): Promise<'opened' | 'absent'> {
      const phases = opts.phases ?? {};
      const phase = phaseTimer(phases);
      const mine: Fence = { nodeId: d.nodeId, epoch };
      // The previous holder's fence, when the caller knows it, is tried without reading it first
      // (a wrong guess only fails the compare, which answers the fence as it is).
      let cur: Fence | null | undefined = opts.previous;
      for (;;) {
        if (cur === undefined) cur = await d.ledger.fence(name);
        if (cur !== null && cur.nodeId === mine.nodeId && cur.epoch === epoch) break;
        if (cur !== null && cur.epoch >= epoch) throw new Error(`the fence of ${name} is ${cur.nodeId}:${cur.epoch}, not below epoch ${epoch}: the stream moved on`);
        if (cur === null && (await d.ledger.meta(name)) === null) return 'absent';
        const taken = await d.ledger.takeFence(name, mine, cur === null ? { create: true } : { from: cur });
        if (taken.ok) break;
        cur = taken.current;
      }
      phase('fence');
      // m/ (and p/, the producer snapshot) are read beside the tail's recovery, and the entries come
      // from it: under our fence none of them changes.
      const remote = d.reads === 'remote';
      const [tail, meta, producerSnapshot] = await Promise.all([
        recoverTail(d.ledger, d.store, name, mine, phases, d.records === true ? { own: null } : null),
        d.ledger.meta(name),
        remote ? d.ledger.producerSnapshot(name) : null,
      ]);
      phase('tail');
      phases['tailObjects'] = tail.read;
      if (meta === null) return 'absent';
      if (remote) {
        if (!isFork(meta)) {
          const all = tail.entries ?? (await d.ledger.entries(name));
          const entries = all.map((e) => ({ o: e.o, off: e.off, len: e.len, from: e.from, to: e.to }));
          phase('read');
          // Served at once; the shard replays the producers from the snapshot and the entries after
          // it meanwhile (appends carrying one wait for it).
          await d.shards.adoptStream(name, { meta, entries, epoch, ledger: { fence: mine, counter: nextEntryCounter(all, epoch) }, replayProducers: true, producerSnapshot });
          phase('shard');
          return 'opened';
        }
      }
      const input = await readStreamFromObjects(d.ledger, d.store, name, { epoch, known: { meta, ...(tail.entries !== null ? { entries: tail.entries } : {}) } });
      if (input === null) return 'absent';
      phase('read');
      const { nextCounter, ...source } = input;
      // The fence and the entries' counter go with it: the shard's first write commits without reading them again.
      await d.shards.importStream(name, { ...source, epoch, ledger: { fence: mine, counter: nextCounter } });
      phase('shard');
      return 'opened';
    },
    create: (name: string, spec: OpenSpec) => d.create(name, spec),
    async drop(name: string, below?: number): Promise<void> {
      await d.beforeDrop?.();
      // TEST-ONLY (util/test-fault.ts): a drop held while the stream moves back here.
      while (testFault('slow-drop')) await new Promise((r) => setTimeout(r, 50));
      await d.shards.dropStream(name, below);
    },
    async localStreams(): Promise<string[]> {
      const names: string[] = [];
      let startAfter = '';
      for (;;) {
        const page = await d.shards.list({ prefix: '/', startAfter, limit: 1000 });
        names.push(...page.streams.map((s) => s.name));
        if (!page.hasMore || page.streams.length === 0) return names;
        startAfter = page.streams[page.streams.length - 1]!.name;
      }
    },
  };
}

/** A fork reads its source below its fork point: not adopted (stream-import.ts), imported. */
function isFork(m: LedgerMeta): boolean {
  const fork = (m.meta as { fork?: unknown }).fork;
  return fork !== undefined && fork !== null;
}
