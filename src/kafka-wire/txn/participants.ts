/**
 * The participants' side of a decided transaction (docs/kafka.md, "Transactions"; docs/cluster.md,
 * "Kafka transactions"). Once the coordinator has written PrepareCommit or PrepareAbort, every
 * participant finishes its own part, on the node that owns it, and says so in the store:
 *
 *   partition (its stream's owner)   marker appended ─▶ aborted range recorded (abort) ─▶ the
 *                                    transaction's hold on it deleted ─▶ txn-done p:<stream>
 *   group (its coordinator)          commit: the offsets of TxnOffsetCommit committed to the group
 *                                    ─▶ txn-done g:<group>
 *
 * The coordinator writes Complete… once every participant is done. A decided transaction so ends
 * the same everywhere, whatever stops meanwhile: a partition's new owner, a group's new
 * coordinator and the transaction's new coordinator all find the decision in the store and finish
 * what is missing. The one repeat possible is a second marker, when an owner stops between its
 * marker and its txn-done record; consumers skip markers, and the second one ends nothing.
 */
import { type Logger } from '../../log';
import { SvcError } from '../../errors';
import { type ShardClient } from '../../shards';
import { testFault } from '../../util/test-fault';
import { type GroupCoordinator } from '../groups';
import { markerBatch } from './markers';
import { type PartitionTxns } from './partition-state';
import { type TxnRecord, type TxnStore, groupParticipant, partitionParticipant, txnSeqOf } from './store';

/** Markers name the coordinator epoch; the store's compare-and-set fences coordinators instead, so it stays 0. */
const COORDINATOR_EPOCH = 0;

/** Which participants this node acts for. */
export interface ParticipantScope {
  /** This node owns the partition's stream (and has it open). */
  partition(stream: string): boolean;
  /** This node coordinates the group. */
  group(groupId: string): boolean;
}

export class TxnParticipants {
  readonly #store: TxnStore;
  readonly #shards: ShardClient;
  readonly #groups: GroupCoordinator;
  readonly #parts: PartitionTxns;
  readonly #scope: ParticipantScope;
  readonly #log: Logger;
  /** Participants being finished: `<txn id>\0<participant>`. */
  readonly #running = new Set<string>();

  constructor(store: TxnStore, shards: ShardClient, groups: GroupCoordinator, parts: PartitionTxns, scope: ParticipantScope, log: Logger) {
    this.#store = store;
    this.#shards = shards;
    this.#groups = groups;
    this.#parts = parts;
    this.#scope = scope;
    this.#log = log;
  }

  /** Finish this node's part of every decided transaction whose part is not done yet. */
  sweep(): void {
    // TEST-ONLY (src/util/test-fault.ts): decided transactions wait, so a test can stop their coordinator between decision and markers.
    if (testFault('txn-participants')) return;
    for (const t of this.#store.all()) {
      if (t.state !== 'PrepareCommit' && t.state !== 'PrepareAbort') continue;
      const commit = t.state === 'PrepareCommit';
      for (const p of t.partitions) {
        if (this.#scope.partition(p.stream)) this.#run(t, partitionParticipant(p.stream), commit, () => this.#mark(t, p.stream, commit));
      }
      for (const g of t.groups) {
        if (this.#scope.group(g)) this.#run(t, groupParticipant(g), commit, () => this.#applyOffsets(t, g, commit));
      }
    }
  }

  #run(t: TxnRecord, participant: string, commit: boolean, fn: () => Promise<void>): void {
    const seq = txnSeqOf(t);
    if (this.#store.done(t.transactionalId, participant)?.txnSeq === seq) return;
    const key = `${t.transactionalId}\0${participant}`;
    if (this.#running.has(key)) return;
    this.#running.add(key);
    fn()
      .then(() => this.#store.putDone(t.transactionalId, participant, { txnSeq: seq, commit }))
      .catch((err: unknown) => this.#log.warn({ txn: t.transactionalId, participant, err: (err as Error).message }, 'kafka transaction participant failed; trying again'))
      .finally(() => this.#running.delete(key));
  }

  /** The marker on one partition, then its aborted range (abort) and the end of the transaction's hold there. */
  async #mark(t: TxnRecord, stream: string, commit: boolean): Promise<void> {
    let markerOffset: number | null = null;
    try {
      const r = await this.#shards.append({ name: stream, origin: 'kafka', payload: { kind: 'batches', body: markerBatch(BigInt(t.producerId), t.producerEpoch, commit, COORDINATOR_EPOCH, Date.now()) }, contentType: null, close: false });
      markerOffset = r.startSeq;
    } catch (err) {
      // A partition deleted meanwhile has nothing left to mark.
      if (!(err instanceof SvcError && err.code === 'not_found')) throw err;
    }
    const aborted = this.#parts.close(stream, t.producerId, commit || markerOffset === null ? null : markerOffset);
    if (aborted !== null) await this.#store.putAborted(stream, aborted);
    if (this.#store.hold(stream, t.producerId) !== null) await this.#store.deleteHold(stream, t.producerId);
  }

  /** Commit: the transaction's offsets of one group, committed to it. Abort: nothing to do. */
  async #applyOffsets(t: TxnRecord, groupId: string, commit: boolean): Promise<void> {
    if (!commit) return;
    const rec = this.#store.groupOffsets(t.transactionalId, groupId);
    const offsets = rec !== null && rec.value.txnSeq === txnSeqOf(t) ? rec.value.offsets : (t.offsets ?? []).filter((o) => o.group === groupId);
    if (offsets.length === 0) return;
    const committedAt = Date.now();
    const code = await this.#groups.commit(
      groupId,
      offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: { offset: BigInt(o.offset), leaderEpoch: o.leaderEpoch, metadata: o.metadata, committedAt } })),
    );
    if (code !== 0) throw new Error(`committing the transaction's offsets of group ${groupId} failed (error ${code})`);
  }
}
