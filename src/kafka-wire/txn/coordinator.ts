/**
 * The transaction coordinator (KIP-98; docs/kafka.md, "Transactions"; docs/cluster.md, "Kafka
 * transactions"). A transactional id is coordinated by one node (FindCoordinator: the node
 * cluster.ts names; alone, this node); its state lives in the metadata store (store.ts), shared by
 * every node, so a new coordinator takes over from the record alone.
 *
 *   InitProducerId(txn id) ─▶ producer id, epoch+1 (fences older epochs; an open transaction of
 *                             the id is aborted first)
 *   AddPartitionsToTxn / AddOffsetsToTxn ─▶ Ongoing (a new transaction number), partitions and
 *                             groups recorded
 *   Produce (on each partition's owner) ─▶ checked against the record (epoch, partition added);
 *                             the first batch of a transaction there writes its hold, the
 *                             partition's last stable offset, before it is appended
 *   TxnOffsetCommit (on the group's coordinator) ─▶ offsets kept under the transaction's number
 *   EndTxn(commit|abort) ─▶ Prepare… (durable: the decision) ─▶ every participant finishes its part
 *                             on its own node (participants.ts) ─▶ Complete…
 *   timeout ─▶ epoch+1 (the old producer is fenced), then abort as above
 *
 * Every write of a record is a compare-and-set on the version this node read, so two nodes that
 * both believe they coordinate an id (while membership changes) cannot both move it: the loser
 * reads the store again and, if the id is no longer its own, answers NOT_COORDINATOR. Operations on
 * one id run one at a time on a node (#lock), so a timeout cannot interleave with an EndTxn.
 */
import { type MetaRecord, type MetaStore, MetaConflictError } from '../../actors';
import { type Logger } from '../../log';
import { type ShardClient } from '../../shards';
import { type KafkaCluster } from '../cluster';
import { type GroupCoordinator } from '../groups';
import { KafkaError } from '../error-codes';
import { ProducerIds } from '../producer-ids';
import { mirrorPartitionTxns } from './partition-mirror';
import { type PartitionTxns } from './partition-state';
import { TxnParticipants } from './participants';
import { DONE, TXN, type TxnOffset, type TxnRecord, TxnStore, groupParticipant, partitionParticipant, txnSeqOf } from './store';

/** Longest transaction timeout a producer may ask for (Kafka's transaction.max.timeout.ms default). */
export const MAX_TXN_TIMEOUT_MS = 900_000; // 15 min
/** How often open transactions are checked against their timeout, and decided ones swept. */
const SWEEP_MS = 250;
/** How long EndTxn and InitProducerId wait for a decided transaction to complete before answering. */
const COMPLETE_WAIT_MS = 5_000;
/** Compare-and-set attempts of one operation before it answers NOT_COORDINATOR. */
const CAS_ATTEMPTS = 3;

export interface TxnPartitionRef {
  topic: string;
  partition: number;
  /** The partition's stream, or null when it does not exist. */
  stream: string | null;
}

/** Whether a transactional batch may be appended; `first`: it is the transaction's first on the partition here. */
export interface Admission {
  errorCode: number;
  first: boolean;
}

const ADMITTED: Admission = { errorCode: 0, first: false };

export interface TxnCoordinatorOptions {
  nodeId: number;
  /** In a cluster: coordinators and partition owners (cluster.ts); null: this node is every one. */
  cluster: KafkaCluster | null;
  /** The partitions' state restored already (mirrorPartitionTxns), so HTTP and DS reads could be bounded before the listener started. */
  parts?: PartitionTxns;
}

/** A retryable refusal inside an operation: answered as its code. */
class Refused extends Error {
  constructor(readonly errorCode: number) {
    super(`refused with ${errorCode}`);
  }
}

export class TransactionCoordinator {
  readonly #store: TxnStore;
  readonly #meta: MetaStore;
  readonly #shards: ShardClient;
  readonly #log: Logger;
  readonly #nodeId: number;
  readonly #cluster: KafkaCluster | null;
  readonly #participants: TxnParticipants;
  /** producer id → transactional id, from every record. */
  readonly #byPid = new Map<string, string>();
  readonly #locks = new Map<string, Promise<unknown>>();
  /** First batches of a transaction on a partition whose hold is being written: `<stream>\0<pid>`. */
  readonly #admitting = new Map<string, Promise<Admission>>();
  /** Called when a transaction's record or one of its participants' done records changes. */
  readonly #waiters = new Map<string, Set<() => void>>();
  readonly #timer: NodeJS.Timeout;
  #sweepSoon = false;
  readonly parts: PartitionTxns;
  /** The node's one producer id source (idempotent producers too), drawing blocks shared by the cluster. */
  readonly ids: ProducerIds;
  #closed = false;

  constructor(meta: MetaStore, shards: ShardClient, groups: GroupCoordinator, log: Logger, o: TxnCoordinatorOptions) {
    this.#meta = meta;
    this.#store = new TxnStore(meta);
    this.#shards = shards;
    this.#log = log.child({ component: 'txn' });
    this.#nodeId = o.nodeId;
    this.#cluster = o.cluster;
    this.ids = new ProducerIds(meta);
    this.parts = o.parts ?? mirrorPartitionTxns(meta);
    const cluster = o.cluster;
    this.#participants = new TxnParticipants(
      this.#store,
      shards,
      groups,
      this.parts,
      {
        partition: (stream) => cluster === null || (cluster.leaderOf(stream) === o.nodeId && !cluster.moving(stream)),
        group: (groupId) => cluster === null || cluster.coordinatorOf(groupId)?.nodeId === o.nodeId,
      },
      this.#log,
    );
    for (const t of this.#store.all()) this.#byPid.set(t.producerId, t.transactionalId);
    meta.onChange((key, record) => this.#changed(key, record));
    this.#timer = setInterval(() => this.#sweep(), SWEEP_MS);
    this.#timer.unref();
    // Decided before a stop: finish what was decided.
    this.#soon();
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
    return this.#store.record(transactionalId)?.value;
  }

  all(): TxnRecord[] {
    return this.#store.all();
  }

  /** This node coordinates `transactionalId`. */
  #here(transactionalId: string): boolean {
    return this.#cluster === null || this.#cluster.coordinatorOf(transactionalId)?.nodeId === this.#nodeId;
  }

  /** InitProducerId with a transactional id: the producer id and a new epoch. */
  initProducerId(transactionalId: string, timeoutMs: number): Promise<{ errorCode: number; producerId: bigint; producerEpoch: number }> {
    const refused = (errorCode: number): { errorCode: number; producerId: bigint; producerEpoch: number } => ({ errorCode, producerId: -1n, producerEpoch: -1 });
    if (timeoutMs <= 0 || timeoutMs > MAX_TXN_TIMEOUT_MS) return Promise.resolve(refused(KafkaError.INVALID_TRANSACTION_TIMEOUT));
    if (!this.#here(transactionalId)) return Promise.resolve(refused(KafkaError.NOT_COORDINATOR));
    return this.#lock(transactionalId, async () => {
      // An open transaction of the id: a new instance of the producer, whose predecessor is fenced
      // by an epoch+1 abort; a decided one is completed first.
      const open = this.#store.record(transactionalId)?.value;
      if (open !== undefined && open.state === 'Ongoing') {
        const r = await this.#mutate(transactionalId, (t) => (t?.state === 'Ongoing' ? { ...t, producerEpoch: t.producerEpoch + 1, state: 'PrepareAbort' } : null));
        if (r !== 0) return refused(r);
      }
      if (!(await this.#completed(transactionalId))) return refused(KafkaError.CONCURRENT_TRANSACTIONS);
      // A new id, or one whose epoch ran out, takes a new producer id (drawn before the write; an id not used is only skipped).
      const cur = this.#store.record(transactionalId)?.value;
      const spare = cur === undefined || cur.producerEpoch >= 32766 ? await this.ids.next() : null;
      let answer = { producerId: -1n, producerEpoch: -1 };
      const r = await this.#mutate(transactionalId, (t) => {
        if (t !== null && (t.state === 'PrepareCommit' || t.state === 'PrepareAbort')) throw new Refused(KafkaError.CONCURRENT_TRANSACTIONS);
        // The epoch is an int16: past its end the id gets a new producer id.
        const renew = t === null || t.producerEpoch >= 32766;
        if (renew && spare === null) throw new Refused(KafkaError.CONCURRENT_TRANSACTIONS);
        const base: TxnRecord = t ?? { transactionalId, producerId: '', producerEpoch: -1, timeoutMs, state: 'Empty', txnSeq: 0, startedAt: 0, partitions: [], groups: [] };
        const next: TxnRecord = { ...base, producerId: renew ? spare!.toString() : base.producerId, producerEpoch: renew ? 0 : base.producerEpoch + 1, timeoutMs };
        answer = { producerId: BigInt(next.producerId), producerEpoch: next.producerEpoch };
        return next;
      });
      if (r !== 0) return refused(r);
      this.#log.info({ txn: transactionalId, producerId: answer.producerId.toString(), epoch: answer.producerEpoch }, 'kafka transactional producer initialized');
      return { errorCode: 0, ...answer };
    });
  }

  /** Why a transactional request of (producerId, epoch) is refused, or 0. `fenced`: the code for an old epoch (PRODUCER_FENCED, or INVALID_PRODUCER_EPOCH for older request versions). */
  #checkProducer(t: TxnRecord | null, producerId: bigint, epoch: number, fenced: number): number {
    if (t === null || t.producerId !== producerId.toString()) return KafkaError.INVALID_PRODUCER_ID_MAPPING;
    if (epoch !== t.producerEpoch) return fenced;
    if (t.state === 'PrepareCommit' || t.state === 'PrepareAbort') return KafkaError.CONCURRENT_TRANSACTIONS;
    return 0;
  }

  /** The record with a transaction open: the same if one is, else a new one (the next number). */
  #begun(t: TxnRecord): TxnRecord {
    if (t.state === 'Ongoing') return t;
    return { ...t, state: 'Ongoing', txnSeq: txnSeqOf(t) + 1, startedAt: Date.now(), partitions: [], groups: [], offsets: undefined };
  }

  /** AddPartitionsToTxn: one error code per partition (all OPERATION_NOT_ATTEMPTED but the failing ones when any fails). */
  addPartitions(transactionalId: string, producerId: bigint, epoch: number, refs: TxnPartitionRef[], fenced: number): Promise<number[]> {
    if (!this.#here(transactionalId)) return Promise.resolve(refs.map(() => KafkaError.NOT_COORDINATOR));
    return this.#lock(transactionalId, async () => {
      if (refs.some((r) => r.stream === null)) {
        const refused = this.#checkProducer(this.#store.record(transactionalId)?.value ?? null, producerId, epoch, fenced);
        if (refused !== 0) return refs.map(() => refused);
        return refs.map((r) => (r.stream === null ? KafkaError.UNKNOWN_TOPIC_OR_PARTITION : KafkaError.OPERATION_NOT_ATTEMPTED));
      }
      const r = await this.#mutate(transactionalId, (cur) => {
        const refused = this.#checkProducer(cur, producerId, epoch, fenced);
        if (refused !== 0) throw new Refused(refused);
        const t = this.#begun(cur!);
        const added = refs.filter((x, i) => !t.partitions.some((p) => p.stream === x.stream) && refs.findIndex((y) => y.stream === x.stream) === i);
        if (added.length === 0 && t === cur) return null;
        return { ...t, partitions: [...t.partitions, ...added.map((x) => ({ topic: x.topic, partition: x.partition, stream: x.stream! }))] };
      });
      return refs.map(() => r);
    });
  }

  /** AddOffsetsToTxn: the group's offsets will be committed with the transaction. */
  addOffsets(transactionalId: string, producerId: bigint, epoch: number, group: string, fenced: number): Promise<number> {
    if (!this.#here(transactionalId)) return Promise.resolve(KafkaError.NOT_COORDINATOR);
    return this.#lock(transactionalId, () =>
      this.#mutate(transactionalId, (cur) => {
        const refused = this.#checkProducer(cur, producerId, epoch, fenced);
        if (refused !== 0) throw new Refused(refused);
        const t = this.#begun(cur!);
        if (t.groups.includes(group)) return t === cur ? null : t;
        return { ...t, groups: [...t.groups, group] };
      }),
    );
  }

  /**
   * TxnOffsetCommit, on the group's coordinator (which need not coordinate the transaction): the
   * offsets are kept under the transaction's number, and committed to the group when it commits.
   */
  commitOffsets(transactionalId: string, producerId: bigint, epoch: number, group: string, offsets: Array<Omit<TxnOffset, 'group'>>, fenced: number): Promise<number> {
    return this.#lock(`offsets\0${transactionalId}\0${group}`, async () => {
      for (let attempt = 0; ; attempt++) {
        const t = this.#store.record(transactionalId)?.value ?? null;
        let refused = this.#checkProducer(t, producerId, epoch, fenced);
        if (refused === 0 && (t!.state !== 'Ongoing' || !t!.groups.includes(group))) refused = KafkaError.INVALID_TXN_STATE;
        // The coordinator may have written more than this node's view holds yet: read again once.
        if (refused !== 0 && attempt === 0) {
          await this.#meta.sync();
          continue;
        }
        if (refused !== 0) return refused;
        const seq = txnSeqOf(t!);
        const cur = this.#store.groupOffsets(transactionalId, group);
        const kept = cur !== null && cur.value.txnSeq === seq ? cur.value.offsets : [];
        const merged = [...kept.filter((x) => !offsets.some((o) => o.topic === x.topic && o.partition === x.partition)), ...offsets.map((o) => ({ group, ...o }))];
        try {
          await this.#store.putGroupOffsets(transactionalId, group, { txnSeq: seq, offsets: merged }, cur?.version ?? null);
          return 0;
        } catch (err) {
          if (!(err instanceof MetaConflictError) || attempt >= CAS_ATTEMPTS) throw err;
          await this.#meta.sync();
        }
      }
    });
  }

  /** EndTxn: commit or abort the open transaction. */
  endTxn(transactionalId: string, producerId: bigint, epoch: number, commit: boolean, fenced: number): Promise<number> {
    if (!this.#here(transactionalId)) return Promise.resolve(KafkaError.NOT_COORDINATOR);
    return this.#lock(transactionalId, async () => {
      const decided = commit ? 'PrepareCommit' : 'PrepareAbort';
      let retried = false;
      const r = await this.#mutate(transactionalId, (t) => {
        // A retried EndTxn whose first attempt was decided, or completed.
        if (t !== null && t.producerId === producerId.toString() && t.producerEpoch === epoch && (t.state === decided || t.state === (commit ? 'CompleteCommit' : 'CompleteAbort'))) {
          retried = true;
          return null;
        }
        const refused = this.#checkProducer(t, producerId, epoch, fenced);
        if (refused !== 0) throw new Refused(refused);
        if (t!.state !== 'Ongoing') throw new Refused(KafkaError.INVALID_TXN_STATE);
        return { ...t!, state: decided };
      });
      if (r !== 0) return r;
      // The decision is durable: the transaction completes whatever happens now. The answer waits
      // a while for that, so the producer's next transaction rarely meets CONCURRENT_TRANSACTIONS.
      await this.#completed(transactionalId);
      if (!retried) this.#log.info({ txn: transactionalId, producerId: producerId.toString(), epoch, commit }, commit ? 'kafka transaction committed' : 'kafka transaction aborted');
      return 0;
    });
  }

  /**
   * Whether a transactional batch of (producerId, epoch) may be appended to `stream`, on the
   * partition's owner: INVALID_PRODUCER_EPOCH (an old epoch: a fenced or timed-out producer),
   * INVALID_TXN_STATE (no open transaction, or the partition was not added to it). The
   * transaction's first batch on the partition waits for its hold — a lower bound of where it
   * lands, which holds the partition's last stable offset — to be durable; batches after it wait
   * behind it, so the partition's batches are appended in the order they came.
   */
  admit(producerId: bigint, epoch: number, stream: string): Admission | Promise<Admission> {
    const key = `${stream}\0${producerId}`;
    const pending = this.#admitting.get(key);
    if (pending !== undefined) return pending.then(() => this.admit(producerId, epoch, stream));
    const t = this.#txnOf(producerId);
    if (this.#checkProduce(t, epoch, stream) === 0 && this.#held(stream, t!)) return ADMITTED;
    const p = (async (): Promise<Admission> => {
      let cur = t;
      if (this.#checkProduce(cur, epoch, stream) !== 0) {
        // The coordinator (another node, maybe) may have recorded the partition after this view.
        await this.#meta.sync();
        cur = this.#txnOf(producerId);
        const code = this.#checkProduce(cur, epoch, stream);
        if (code !== 0) return { errorCode: code, first: false };
      }
      if (this.#held(stream, cur!)) return ADMITTED;
      const from = (await this.#shards.head(stream)).nextSeq;
      await this.#store.putHold(stream, cur!.producerId, { from, transactionalId: cur!.transactionalId, txnSeq: txnSeqOf(cur!) });
      // The gateway threads' readers know the transaction is open here before its first batch is appended.
      await this.parts.mirrored();
      return { errorCode: 0, first: true };
    })().finally(() => this.#admitting.delete(key));
    this.#admitting.set(key, p);
    return p;
  }

  /** After the transaction's first batch on `stream` was appended at `offset`: its last stable offset, exact. */
  afterFirstAppend(producerId: bigint, stream: string, offset: number): void {
    this.parts.settle(stream, producerId.toString(), offset);
  }

  #checkProduce(t: TxnRecord | null, epoch: number, stream: string): number {
    if (t === null) return KafkaError.INVALID_PRODUCER_ID_MAPPING;
    if (epoch < t.producerEpoch) return KafkaError.INVALID_PRODUCER_EPOCH;
    if (epoch !== t.producerEpoch || t.state !== 'Ongoing' || !t.partitions.some((p) => p.stream === stream)) return KafkaError.INVALID_TXN_STATE;
    return 0;
  }

  /** The open transaction `t` holds `stream` already (a record of an earlier version: its first offset there is known). */
  #held(stream: string, t: TxnRecord): boolean {
    const h = this.#store.hold(stream, t.producerId);
    if (h !== null && h.transactionalId === t.transactionalId && h.txnSeq === txnSeqOf(t)) return true;
    const p = t.partitions.find((x) => x.stream === stream);
    return p?.firstOffset !== undefined && p.firstOffset !== null;
  }

  #txnOf(producerId: bigint): TxnRecord | null {
    const id = this.#byPid.get(producerId.toString());
    return id === undefined ? null : (this.#store.record(id)?.value ?? null);
  }

  /**
   * Apply `fn` to the id's record and write what it returns (null: nothing to write) with a
   * compare-and-set; 0, or the code a Refused carried, or NOT_COORDINATOR when the record kept
   * changing under this node (another node coordinates it now).
   */
  async #mutate(transactionalId: string, fn: (t: TxnRecord | null) => TxnRecord | null): Promise<number> {
    for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
      const rec: MetaRecord<TxnRecord> | null = this.#store.record(transactionalId);
      let next: TxnRecord | null;
      try {
        next = fn(rec?.value ?? null);
      } catch (err) {
        if (err instanceof Refused) return err.errorCode;
        throw err;
      }
      if (next === null) return 0;
      try {
        await this.#store.put(next, rec?.version ?? null);
        return 0;
      } catch (err) {
        if (!(err instanceof MetaConflictError)) throw err;
        await this.#meta.sync();
        if (!this.#here(transactionalId)) return KafkaError.NOT_COORDINATOR;
      }
    }
    return KafkaError.NOT_COORDINATOR;
  }

  /** Wait (a while) until the id has no decided transaction pending; false when one still is. */
  async #completed(transactionalId: string): Promise<boolean> {
    const pending = (): boolean => {
      const s = this.#store.record(transactionalId)?.value.state;
      return s === 'PrepareCommit' || s === 'PrepareAbort';
    };
    if (!pending()) return true;
    this.#soon();
    const end = Date.now() + COMPLETE_WAIT_MS;
    while (pending() && !this.#closed && Date.now() < end) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, SWEEP_MS);
        let set = this.#waiters.get(transactionalId);
        if (set === undefined) this.#waiters.set(transactionalId, (set = new Set()));
        set.add(done);
        function done(): void {
          clearTimeout(timer);
          set!.delete(done);
          resolve();
        }
      });
    }
    return !pending();
  }

  #changed(key: string, record: MetaRecord | null): void {
    let id: string | null = null;
    if (key.startsWith(TXN)) {
      id = decodeURIComponent(key.slice(TXN.length));
      if (record !== null) this.#byPid.set((record.value as TxnRecord).producerId, id);
      const s = (record?.value as TxnRecord | undefined)?.state;
      if (s === 'PrepareCommit' || s === 'PrepareAbort') this.#soon();
    } else if (key.startsWith(DONE)) {
      const rest = key.slice(DONE.length);
      id = decodeURIComponent(rest.slice(0, rest.indexOf('/')));
      this.#soon();
    }
    if (id === null) return;
    const set = this.#waiters.get(id);
    if (set !== undefined) for (const w of [...set]) w();
  }

  /** A sweep on the next turn (coalesced): a decision or a participant's done record arrived. */
  #soon(): void {
    if (this.#sweepSoon || this.#closed) return;
    this.#sweepSoon = true;
    setImmediate(() => {
      this.#sweepSoon = false;
      this.#sweep();
    });
  }

  /**
   * This node's participants finish their parts of decided transactions; the transactions this
   * node coordinates complete once every participant is done, and time out when open too long.
   */
  #sweep(): void {
    if (this.#closed) return;
    this.#participants.sweep();
    const now = Date.now();
    for (const t of this.#store.all()) {
      const id = t.transactionalId;
      if (!this.#here(id) || this.#locks.has(`complete\0${id}`)) continue;
      if (t.state === 'PrepareCommit' || t.state === 'PrepareAbort') {
        if (this.#allDone(t)) void this.#lock(`complete\0${id}`, () => this.#complete(id)).catch((err: unknown) => this.#log.warn({ txn: id, err: (err as Error).message }, 'kafka transaction completion failed; trying again'));
        continue;
      }
      if (t.state !== 'Ongoing' || now - t.startedAt <= t.timeoutMs || this.#locks.has(id)) continue;
      void this.#lock(id, async () => {
        const r = await this.#mutate(id, (cur) => (cur?.state === 'Ongoing' && Date.now() - cur.startedAt > cur.timeoutMs ? { ...cur, producerEpoch: cur.producerEpoch + 1, state: 'PrepareAbort' } : null));
        if (r === 0) this.#log.info({ txn: id, timeoutMs: t.timeoutMs }, 'kafka transaction timed out: aborting');
      }).catch((err: unknown) => this.#log.warn({ txn: id, err: (err as Error).message }, 'kafka transaction timeout abort failed'));
    }
  }

  /** Every participant of the decided transaction `t` finished its part (a partition nobody owns any more has none left). */
  #allDone(t: TxnRecord): boolean {
    const seq = txnSeqOf(t);
    for (const p of t.partitions) if (this.#store.done(t.transactionalId, partitionParticipant(p.stream))?.txnSeq !== seq && !this.#gone(p.stream)) return false;
    for (const g of t.groups) if (this.#store.done(t.transactionalId, groupParticipant(g))?.txnSeq !== seq) return false;
    return true;
  }

  /** In a cluster: no node owns `stream` (deleted), so no participant will mark it. */
  #gone(stream: string): boolean {
    return this.#cluster !== null && this.#cluster.leaderOf(stream) === null && !this.#cluster.moving(stream);
  }

  /** Prepare… → Complete…, once every participant is done. */
  async #complete(transactionalId: string): Promise<void> {
    // A partition deleted meanwhile has no owner to end its hold: a stream created again under its name must not inherit it.
    const t = this.#store.record(transactionalId)?.value;
    for (const p of t?.partitions ?? []) {
      if (this.#gone(p.stream) && this.#store.hold(p.stream, t!.producerId) !== null) await this.#store.deleteHold(p.stream, t!.producerId);
    }
    await this.#mutate(transactionalId, (t) => {
      if (t === null || (t.state !== 'PrepareCommit' && t.state !== 'PrepareAbort') || !this.#allDone(t)) return null;
      return { ...t, state: t.state === 'PrepareCommit' ? 'CompleteCommit' : 'CompleteAbort', startedAt: 0, partitions: [], groups: [], offsets: undefined };
    });
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
