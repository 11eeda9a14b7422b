/**
 * The transaction coordinator (KIP-98; docs/kafka.md, "Transactions"). This node coordinates every
 * transactional id; the state lives in the metadata store (store.ts), so it survives restarts.
 *
 *   InitProducerId(txn id) ─▶ producer id, epoch+1 (fences older epochs; an open transaction of
 *                             the id is aborted first)
 *   AddPartitionsToTxn / AddOffsetsToTxn ─▶ Ongoing, partitions and groups recorded
 *   Produce (transactional batch) ─▶ checked here (epoch, partition added); its first offset per
 *                             partition holds the partition's last stable offset (partition-state.ts)
 *   TxnOffsetCommit ─▶ offsets kept with the transaction
 *   EndTxn(commit|abort) ─▶ Prepare… (durable) ─▶ a marker on every partition (markers.ts) ─▶
 *                             offsets committed to the groups (commit) ─▶ Complete…
 *   timeout ─▶ epoch+1 (the old producer is fenced), then abort as above
 *
 * Every operation on one transactional id runs alone (#lock), so a timeout cannot interleave with
 * an EndTxn. A node that stops in Prepare… completes the transaction when it starts again.
 */
import { type MetaStore } from '../../actors';
import { type Logger } from '../../log';
import { SvcError } from '../../errors';
import { type ShardClient } from '../../shards';
import { type GroupCoordinator } from '../groups';
import { KafkaError, kafkaErrorOf } from '../error-codes';
import { ProducerIds } from '../producer-ids';
import { markerBatch } from './markers';
import { PartitionTxns } from './partition-state';
import { type TxnOffset, type TxnPartition, type TxnRecord, TxnStore } from './store';

/** Longest transaction timeout a producer may ask for (Kafka's transaction.max.timeout.ms default). */
export const MAX_TXN_TIMEOUT_MS = 900_000; // 15 min
/** How often open transactions are checked against their timeout. */
const TIMEOUT_CHECK_MS = 250;
/** Markers name the coordinator epoch; one coordinator, so it stays 0. */
const COORDINATOR_EPOCH = 0;

export interface TxnPartitionRef {
  topic: string;
  partition: number;
  /** The partition's stream, or null when it does not exist. */
  stream: string | null;
}

/**
 * The partitions' transaction state as the metadata store holds it: the aborted ranges, and every
 * open transaction holding its partitions' last stable offset.
 */
export function restorePartitionTxns(meta: MetaStore): PartitionTxns {
  const store = new TxnStore(meta);
  const parts = new PartitionTxns(store.abortedAll());
  for (const t of store.all()) {
    const open = t.state === 'Ongoing' || t.state === 'PrepareCommit' || t.state === 'PrepareAbort';
    // A write may have landed without its first offset recorded (a crash in between): hold from where the partition was added.
    if (open) for (const p of t.partitions) parts.open(p.stream, t.producerId, p.firstOffset ?? p.addedAt);
  }
  return parts;
}

export class TransactionCoordinator {
  readonly #store: TxnStore;
  readonly #shards: ShardClient;
  readonly #groups: GroupCoordinator;
  readonly #log: Logger;
  readonly #txns = new Map<string, TxnRecord>();
  /** producer id → transactional id. */
  readonly #byPid = new Map<string, string>();
  readonly #locks = new Map<string, Promise<unknown>>();
  readonly #timer: NodeJS.Timeout;
  readonly parts: PartitionTxns;
  /** The node's one producer id source (idempotent producers too): two sources could repeat an id. */
  readonly ids = new ProducerIds();
  #closed = false;

  /** `parts`: the partitions' state restored already (restorePartitionTxns), so HTTP and DS reads could be bounded before the listener started. */
  constructor(meta: MetaStore, shards: ShardClient, groups: GroupCoordinator, log: Logger, parts?: PartitionTxns) {
    this.#store = new TxnStore(meta);
    this.#shards = shards;
    this.#groups = groups;
    this.#log = log.child({ component: 'txn' });
    this.parts = parts ?? restorePartitionTxns(meta);
    for (const t of this.#store.all()) {
      this.#txns.set(t.transactionalId, t);
      this.#byPid.set(t.producerId, t.transactionalId);
      // Stopped between Prepare… and Complete…: finish what was decided.
      if (t.state === 'PrepareCommit' || t.state === 'PrepareAbort') {
        void this.#lock(t.transactionalId, () => this.#complete(t, t.state === 'PrepareCommit')).catch((err: unknown) => this.#log.warn({ txn: t.transactionalId, err: (err as Error).message }, 'kafka transaction completion after restart failed'));
      }
    }
    this.#timer = setInterval(() => this.#expire(), TIMEOUT_CHECK_MS);
    this.#timer.unref();
  }

  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
  }

  /** The transactional id of a producer id, if it has one. */
  transactionalIdOf(producerId: bigint): string | undefined {
    return this.#byPid.get(producerId.toString());
  }

  get(transactionalId: string): TxnRecord | undefined {
    return this.#txns.get(transactionalId);
  }

  all(): TxnRecord[] {
    return [...this.#txns.values()];
  }

  /** InitProducerId with a transactional id: the producer id and a new epoch. */
  initProducerId(transactionalId: string, timeoutMs: number): Promise<{ errorCode: number; producerId: bigint; producerEpoch: number }> {
    return this.#lock(transactionalId, async () => {
      if (timeoutMs <= 0 || timeoutMs > MAX_TXN_TIMEOUT_MS) return { errorCode: KafkaError.INVALID_TRANSACTION_TIMEOUT, producerId: -1n, producerEpoch: -1 };
      let t = this.#txns.get(transactionalId);
      if (t === undefined) {
        t = { transactionalId, producerId: this.ids.next().toString(), producerEpoch: -1, timeoutMs, state: 'Empty', startedAt: 0, partitions: [], groups: [], offsets: [] };
        this.#txns.set(transactionalId, t);
        this.#byPid.set(t.producerId, transactionalId);
      } else if (t.state === 'Ongoing') {
        // A new instance of the producer: the old one's transaction is aborted under a new epoch, which fences it.
        t.producerEpoch++;
        await this.#complete(t, false);
      } else if (t.state === 'PrepareCommit' || t.state === 'PrepareAbort') {
        await this.#complete(t, t.state === 'PrepareCommit');
      }
      if (t.producerEpoch >= 32766) {
        this.#byPid.delete(t.producerId);
        t.producerId = this.ids.next().toString();
        t.producerEpoch = -1;
        this.#byPid.set(t.producerId, transactionalId);
      }
      t.producerEpoch++;
      t.timeoutMs = timeoutMs;
      await this.#store.put(t);
      this.#log.info({ txn: transactionalId, producerId: t.producerId, epoch: t.producerEpoch }, 'kafka transactional producer initialized');
      return { errorCode: 0, producerId: BigInt(t.producerId), producerEpoch: t.producerEpoch };
    });
  }

  /** Why a transactional request of (producerId, epoch) is refused, or 0. `fenced`: the code for an old epoch (PRODUCER_FENCED, or INVALID_PRODUCER_EPOCH for older request versions). */
  #checkProducer(t: TxnRecord | undefined, producerId: bigint, epoch: number, fenced: number): number {
    if (t === undefined || t.producerId !== producerId.toString()) return KafkaError.INVALID_PRODUCER_ID_MAPPING;
    if (epoch !== t.producerEpoch) return fenced;
    if (t.state === 'PrepareCommit' || t.state === 'PrepareAbort') return KafkaError.CONCURRENT_TRANSACTIONS;
    return 0;
  }

  #begin(t: TxnRecord): void {
    if (t.state === 'Ongoing') return;
    t.state = 'Ongoing';
    t.startedAt = Date.now();
    t.partitions = [];
    t.groups = [];
    t.offsets = [];
  }

  /** AddPartitionsToTxn: one error code per partition (all OPERATION_NOT_ATTEMPTED but the failing ones when any fails). */
  addPartitions(transactionalId: string, producerId: bigint, epoch: number, refs: TxnPartitionRef[], fenced: number): Promise<number[]> {
    return this.#lock(transactionalId, async () => {
      const t = this.#txns.get(transactionalId);
      const refused = this.#checkProducer(t, producerId, epoch, fenced);
      if (refused !== 0) return refs.map(() => refused);
      if (refs.some((r) => r.stream === null)) return refs.map((r) => (r.stream === null ? KafkaError.UNKNOWN_TOPIC_OR_PARTITION : KafkaError.OPERATION_NOT_ATTEMPTED));
      const added: TxnPartition[] = [];
      try {
        for (const r of refs) {
          if (t!.partitions.some((p) => p.stream === r.stream) || added.some((p) => p.stream === r.stream)) continue;
          const addedAt = (await this.#shards.head(r.stream!)).nextSeq;
          added.push({ topic: r.topic, partition: r.partition, stream: r.stream!, firstOffset: null, addedAt });
        }
      } catch (err) {
        const code = kafkaErrorOf(err);
        return refs.map(() => code);
      }
      this.#begin(t!);
      t!.partitions.push(...added);
      await this.#store.put(t!);
      return refs.map(() => 0);
    });
  }

  /** AddOffsetsToTxn: the group's offsets will be committed with the transaction. */
  addOffsets(transactionalId: string, producerId: bigint, epoch: number, group: string, fenced: number): Promise<number> {
    return this.#lock(transactionalId, async () => {
      const t = this.#txns.get(transactionalId);
      const refused = this.#checkProducer(t, producerId, epoch, fenced);
      if (refused !== 0) return refused;
      this.#begin(t!);
      if (!t!.groups.includes(group)) t!.groups.push(group);
      await this.#store.put(t!);
      return 0;
    });
  }

  /** TxnOffsetCommit: kept with the transaction, committed to the group by EndTxn(commit). */
  commitOffsets(transactionalId: string, producerId: bigint, epoch: number, group: string, offsets: Array<Omit<TxnOffset, 'group'>>, fenced: number): Promise<number> {
    return this.#lock(transactionalId, async () => {
      const t = this.#txns.get(transactionalId);
      const refused = this.#checkProducer(t, producerId, epoch, fenced);
      if (refused !== 0) return refused;
      if (t!.state !== 'Ongoing' || !t!.groups.includes(group)) return KafkaError.INVALID_TXN_STATE;
      for (const o of offsets) {
        t!.offsets = t!.offsets.filter((x) => !(x.group === group && x.topic === o.topic && x.partition === o.partition));
        t!.offsets.push({ group, ...o });
      }
      await this.#store.put(t!);
      return 0;
    });
  }

  /** EndTxn: commit or abort the open transaction. */
  endTxn(transactionalId: string, producerId: bigint, epoch: number, commit: boolean, fenced: number): Promise<number> {
    return this.#lock(transactionalId, async () => {
      const t = this.#txns.get(transactionalId);
      const refused = this.#checkProducer(t, producerId, epoch, fenced);
      if (refused !== 0) return refused;
      // A retried EndTxn whose first attempt completed.
      if (t!.state === (commit ? 'CompleteCommit' : 'CompleteAbort')) return 0;
      if (t!.state !== 'Ongoing') return KafkaError.INVALID_TXN_STATE;
      await this.#complete(t!, commit);
      return 0;
    });
  }

  /**
   * Whether a transactional batch of (producerId, epoch) may be appended to `stream`: 0, or
   * INVALID_PRODUCER_EPOCH (an old epoch: a fenced or timed-out producer) / INVALID_TXN_STATE
   * (no open transaction, or the partition was not added to it).
   */
  checkProduce(producerId: bigint, epoch: number, stream: string): number {
    const id = this.#byPid.get(producerId.toString());
    const t = id === undefined ? undefined : this.#txns.get(id);
    if (t === undefined) return KafkaError.INVALID_PRODUCER_ID_MAPPING;
    if (epoch < t.producerEpoch) return KafkaError.INVALID_PRODUCER_EPOCH;
    if (epoch !== t.producerEpoch || t.state !== 'Ongoing' || !t.partitions.some((p) => p.stream === stream)) return KafkaError.INVALID_TXN_STATE;
    return 0;
  }

  /**
   * Before a transactional batch is appended (synchronously, so the Produce's appends stay in
   * request order): hold the partition's LSO at where the partition was added to the
   * transaction, a lower bound of where the batch lands, until afterAppend names the real offset.
   */
  beforeAppend(producerId: bigint, stream: string): void {
    const t = this.#txnOf(producerId);
    const p = t?.partitions.find((x) => x.stream === stream);
    if (t === undefined || p === undefined || p.firstOffset !== null) return;
    this.parts.open(stream, t.producerId, p.addedAt);
  }

  /** After it was appended at `offset`: the transaction's first offset there, durable before the Produce is answered. */
  async afterAppend(producerId: bigint, stream: string, offset: number): Promise<void> {
    const t = this.#txnOf(producerId);
    const p = t?.partitions.find((x) => x.stream === stream);
    if (t === undefined || p === undefined || p.firstOffset !== null) return;
    p.firstOffset = offset;
    this.parts.settle(stream, t.producerId, offset);
    await this.#store.put(t);
  }

  #txnOf(producerId: bigint): TxnRecord | undefined {
    const id = this.#byPid.get(producerId.toString());
    return id === undefined ? undefined : this.#txns.get(id);
  }

  /** Prepare… (durable), markers on every partition, offsets to the groups (commit), Complete… (durable). */
  async #complete(t: TxnRecord, commit: boolean): Promise<void> {
    t.state = commit ? 'PrepareCommit' : 'PrepareAbort';
    await this.#store.put(t);
    const pid = BigInt(t.producerId);
    for (const p of t.partitions) {
      let markerOffset: number;
      try {
        const r = await this.#shards.append({ name: p.stream, origin: 'kafka', payload: { kind: 'batches', body: markerBatch(pid, t.producerEpoch, commit, COORDINATOR_EPOCH, Date.now()) }, contentType: null, close: false });
        markerOffset = r.startSeq;
      } catch (err) {
        // A partition deleted meanwhile has nothing left to mark.
        if (!(err instanceof SvcError && err.code === 'not_found')) throw err;
        this.parts.close(p.stream, t.producerId, null);
        continue;
      }
      const aborted = this.parts.close(p.stream, t.producerId, commit ? null : markerOffset);
      if (aborted !== null) await this.#store.putAborted(p.stream, aborted);
    }
    if (commit) {
      const byGroup = new Map<string, TxnOffset[]>();
      for (const o of t.offsets) byGroup.set(o.group, [...(byGroup.get(o.group) ?? []), o]);
      const committedAt = Date.now();
      for (const [group, offsets] of byGroup) {
        await this.#groups.commit(group, offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: { offset: BigInt(o.offset), leaderEpoch: o.leaderEpoch, metadata: o.metadata, committedAt } })));
      }
    }
    this.#log.info({ txn: t.transactionalId, producerId: t.producerId, epoch: t.producerEpoch, partitions: t.partitions.length, commit }, commit ? 'kafka transaction committed' : 'kafka transaction aborted');
    t.state = commit ? 'CompleteCommit' : 'CompleteAbort';
    t.startedAt = 0;
    t.partitions = [];
    t.groups = [];
    t.offsets = [];
    await this.#store.put(t);
  }

  /** Abort every open transaction past its timeout, under a new epoch (the producer is fenced, as in Kafka). */
  #expire(): void {
    if (this.#closed) return;
    const now = Date.now();
    for (const t of this.#txns.values()) {
      if ((t.state === 'PrepareCommit' || t.state === 'PrepareAbort') && !this.#locks.has(t.transactionalId)) {
        // A completion that failed (a storage error writing a marker): try again.
        const commit = t.state === 'PrepareCommit';
        void this.#lock(t.transactionalId, () => (t.state === (commit ? 'PrepareCommit' : 'PrepareAbort') ? this.#complete(t, commit) : Promise.resolve())).catch(() => undefined);
        continue;
      }
      if (t.state !== 'Ongoing' || now - t.startedAt <= t.timeoutMs || this.#locks.has(t.transactionalId)) continue;
      void this.#lock(t.transactionalId, async () => {
        if (t.state !== 'Ongoing' || Date.now() - t.startedAt <= t.timeoutMs) return;
        this.#log.info({ txn: t.transactionalId, timeoutMs: t.timeoutMs }, 'kafka transaction timed out: aborting');
        t.producerEpoch++;
        await this.#complete(t, false);
      }).catch((err: unknown) => this.#log.warn({ txn: t.transactionalId, err: (err as Error).message }, 'kafka transaction timeout abort failed'));
    }
  }

  /** Run `fn` after every earlier operation on `id` ended. */
  #lock<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.#locks.get(id) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.#locks.set(id, tail);
    void tail.then(() => {
      if (this.#locks.get(id) === tail) this.#locks.delete(id);
    });
    return run;
  }
}
