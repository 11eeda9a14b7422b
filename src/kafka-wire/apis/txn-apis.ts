/**
 * The transaction APIs a transactional producer sends (KIP-98), thin over the transaction
 * coordinator (txn/): AddPartitionsToTxn (key 24) v0–3, AddOffsetsToTxn (25) v0–3, EndTxn (26)
 * v0–3, TxnOffsetCommit (28) v0–3. An old epoch is PRODUCER_FENCED (90) from the versions that
 * know it (KIP-588: AddPartitionsToTxn/AddOffsetsToTxn/EndTxn v2+, TxnOffsetCommit v3+), else
 * INVALID_PRODUCER_EPOCH (47). With `--auth required` they need the `append` op, as
 * InitProducerId does; TxnOffsetCommit also the group rights of OffsetCommit.
 */
import {
  type AddPartitionsToTxnRequest,
  type AddPartitionsToTxnResponse,
  ADD_PARTITIONS_TO_TXN,
  decodeAddPartitionsToTxnRequest,
  encodeAddPartitionsToTxnResponse,
} from '../messages/add-partitions-to-txn';
import { type AddOffsetsToTxnRequest, type AddOffsetsToTxnResponse, ADD_OFFSETS_TO_TXN, decodeAddOffsetsToTxnRequest, encodeAddOffsetsToTxnResponse } from '../messages/add-offsets-to-txn';
import { type EndTxnRequest, type EndTxnResponse, END_TXN, decodeEndTxnRequest, encodeEndTxnResponse } from '../messages/end-txn';
import { type TxnOffsetCommitRequest, type TxnOffsetCommitResponse, TXN_OFFSET_COMMIT, decodeTxnOffsetCommitRequest, encodeTxnOffsetCommitResponse } from '../messages/txn-offset-commit';
import { type AnyApiHandler, type ApiHandler } from '../handler';
import { type ConnectionInfo, type KafkaContext } from '../context';
import { KafkaError } from '../error-codes';
import { accessOf, groupAllowed, kafkaDenial } from '../auth';
import { lookupPartition } from '../partitions';
import { type TxnPartitionRef } from '../txn';

const fencedCode = (version: number, from: number): number => (version >= from ? KafkaError.PRODUCER_FENCED : KafkaError.INVALID_PRODUCER_EPOCH);

function mayProduce(ctx: KafkaContext, conn: ConnectionInfo): boolean {
  return kafkaDenial(accessOf(conn, ctx.authenticate !== null), 'append') === null;
}

export const ADD_PARTITIONS_TO_TXN_HANDLER: ApiHandler<AddPartitionsToTxnRequest, AddPartitionsToTxnResponse> = {
  api: ADD_PARTITIONS_TO_TXN,
  decode: decodeAddPartitionsToTxnRequest,
  encode: encodeAddPartitionsToTxnResponse,
  async handle(ctx, req, version, conn) {
    const refs: TxnPartitionRef[] = [];
    for (const t of req.v3AndBelowTopics) {
      for (const partition of t.partitions) refs.push({ topic: t.name, partition, stream: (await lookupPartition(ctx, t.name, undefined, partition)).stream });
    }
    const codes = mayProduce(ctx, conn)
      ? await ctx.txns.addPartitions(req.v3AndBelowTransactionalId, req.v3AndBelowProducerId, req.v3AndBelowProducerEpoch, refs, fencedCode(version, 2))
      : refs.map(() => KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    let i = 0;
    const resultsByTopicV3AndBelow = req.v3AndBelowTopics.map((t) => ({ name: t.name, resultsByPartition: t.partitions.map((partitionIndex) => ({ partitionIndex, partitionErrorCode: codes[i++]! })) }));
    return { throttleTimeMs: 0, resultsByTopicV3AndBelow };
  },
};

export const ADD_OFFSETS_TO_TXN_HANDLER: ApiHandler<AddOffsetsToTxnRequest, AddOffsetsToTxnResponse> = {
  api: ADD_OFFSETS_TO_TXN,
  decode: decodeAddOffsetsToTxnRequest,
  encode: encodeAddOffsetsToTxnResponse,
  async handle(ctx, req, version, conn) {
    if (!mayProduce(ctx, conn)) return { throttleTimeMs: 0, errorCode: KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED };
    if (!groupAllowed(ctx, conn)) return { throttleTimeMs: 0, errorCode: KafkaError.GROUP_AUTHORIZATION_FAILED };
    return { throttleTimeMs: 0, errorCode: await ctx.txns.addOffsets(req.transactionalId, req.producerId, req.producerEpoch, req.groupId, fencedCode(version, 2)) };
  },
};

export const END_TXN_HANDLER: ApiHandler<EndTxnRequest, EndTxnResponse> = {
  api: END_TXN,
  decode: decodeEndTxnRequest,
  encode: encodeEndTxnResponse,
  async handle(ctx, req, version, conn) {
    if (!mayProduce(ctx, conn)) return { throttleTimeMs: 0, errorCode: KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED };
    return { throttleTimeMs: 0, errorCode: await ctx.txns.endTxn(req.transactionalId, req.producerId, req.producerEpoch, req.committed, fencedCode(version, 2)) };
  },
};

export const TXN_OFFSET_COMMIT_HANDLER: ApiHandler<TxnOffsetCommitRequest, TxnOffsetCommitResponse> = {
  api: TXN_OFFSET_COMMIT,
  decode: decodeTxnOffsetCommitRequest,
  encode: encodeTxnOffsetCommitResponse,
  async handle(ctx, req, version, conn) {
    const all = (errorCode: number): TxnOffsetCommitResponse => ({ throttleTimeMs: 0, topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })) })) });
    if (!mayProduce(ctx, conn)) return all(KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    if (!groupAllowed(ctx, conn)) return all(KafkaError.GROUP_AUTHORIZATION_FAILED);
    // Sent to the group's coordinator (which need not coordinate the transaction): the offsets wait there for the decision.
    if (ctx.cluster !== null && ctx.cluster.coordinatorOf(req.groupId)?.nodeId !== ctx.nodeId) return all(KafkaError.NOT_COORDINATOR);
    // v3 names the consumer's generation: a zombie consumer of the group is fenced like in OffsetCommit (KIP-447).
    if (req.memberId !== undefined && req.memberId !== '' && req.generationId !== undefined && req.generationId >= 0) {
      await ctx.groups.loadConsumer(req.groupId);
      const code = ctx.groups.validateCommit(req.groupId, req.memberId, req.generationId);
      if (code !== 0) return all(code);
    }
    const offsets = req.topics.flatMap((t) =>
      t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex, offset: p.committedOffset.toString(), leaderEpoch: p.committedLeaderEpoch ?? -1, metadata: p.committedMetadata ?? '' })),
    );
    return all(await ctx.txns.commitOffsets(req.transactionalId, req.producerId, req.producerEpoch, req.groupId, offsets, fencedCode(version, 3)));
  },
};

export const TXN_HANDLERS: readonly AnyApiHandler[] = [ADD_PARTITIONS_TO_TXN_HANDLER, ADD_OFFSETS_TO_TXN_HANDLER, END_TXN_HANDLER, TXN_OFFSET_COMMIT_HANDLER];
