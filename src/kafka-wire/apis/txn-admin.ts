/**
 * What admin tools ask of transactions and producers (KIP-664): ListTransactions (key 66) v0–1,
 * DescribeTransactions (65) v0, DescribeProducers (61) v0. They answer from the transaction
 * coordinator (txn/). DescribeProducers lists the transactional producers with a transaction open
 * on the partition; idempotent producers' state lives in the partitions' batch headers and is not
 * listed.
 */
import { type ListTransactionsRequest, type ListTransactionsResponse, LIST_TRANSACTIONS, decodeListTransactionsRequest, encodeListTransactionsResponse } from '../messages/list-transactions';
import {
  type DescribeTransactionsRequest,
  type DescribeTransactionsResponse,
  DESCRIBE_TRANSACTIONS,
  decodeDescribeTransactionsRequest,
  encodeDescribeTransactionsResponse,
} from '../messages/describe-transactions';
import {
  type DescribeProducersRequest,
  type DescribeProducersResponse,
  type PartitionResponse,
  DESCRIBE_PRODUCERS,
  decodeDescribeProducersRequest,
  encodeDescribeProducersResponse,
} from '../messages/describe-producers';
import { type AnyApiHandler, type ApiHandler } from '../handler';
import { KafkaError } from '../error-codes';
import { allowed } from '../auth';
import { lookupPartition } from '../partitions';
import { type TxnRecord } from '../txn';

/** Kafka's transaction state names (TransactionState). */
const KNOWN_STATES = new Set(['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort', 'Dead', 'PrepareEpochFence']);

export const LIST_TRANSACTIONS_HANDLER: ApiHandler<ListTransactionsRequest, ListTransactionsResponse> = {
  api: LIST_TRANSACTIONS,
  decode: decodeListTransactionsRequest,
  encode: encodeListTransactionsResponse,
  async handle(ctx, req, _version, conn) {
    const empty = { throttleTimeMs: 0, unknownStateFilters: [], transactionStates: [] };
    if (!allowed(ctx, conn, 'append')) return { ...empty, errorCode: KafkaError.CLUSTER_AUTHORIZATION_FAILED };
    const states = new Set(req.stateFilters);
    const pids = new Set(req.producerIdFilters.map((p) => p.toString()));
    const minDuration = req.durationFilter === undefined || req.durationFilter < 0n ? -1 : Number(req.durationFilter);
    const now = Date.now();
    const keep = (t: TxnRecord): boolean =>
      (states.size === 0 || states.has(t.state)) && (pids.size === 0 || pids.has(t.producerId)) && (minDuration < 0 || (t.startedAt > 0 && now - t.startedAt >= minDuration));
    return {
      throttleTimeMs: 0,
      errorCode: 0,
      unknownStateFilters: req.stateFilters.filter((s) => !KNOWN_STATES.has(s)),
      transactionStates: ctx.txns.all().filter(keep).map((t) => ({ transactionalId: t.transactionalId, producerId: BigInt(t.producerId), transactionState: t.state })),
    };
  },
};

export const DESCRIBE_TRANSACTIONS_HANDLER: ApiHandler<DescribeTransactionsRequest, DescribeTransactionsResponse> = {
  api: DESCRIBE_TRANSACTIONS,
  decode: decodeDescribeTransactionsRequest,
  encode: encodeDescribeTransactionsResponse,
  async handle(ctx, req, _version, conn) {
    const may = allowed(ctx, conn, 'append');
    return {
      throttleTimeMs: 0,
      transactionStates: req.transactionalIds.map((id) => {
        const t = may ? ctx.txns.get(id) : undefined;
        const errorCode = !may ? KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED : t === undefined ? KafkaError.TRANSACTIONAL_ID_NOT_FOUND : 0;
        const topics = new Map<string, number[]>();
        for (const p of t?.partitions ?? []) topics.set(p.topic, [...(topics.get(p.topic) ?? []), p.partition]);
        return {
          errorCode,
          transactionalId: id,
          transactionState: t?.state ?? '',
          transactionTimeoutMs: t?.timeoutMs ?? 0,
          transactionStartTimeMs: BigInt(t !== undefined && t.startedAt > 0 ? t.startedAt : -1),
          producerId: BigInt(t?.producerId ?? -1),
          producerEpoch: t?.producerEpoch ?? -1,
          topics: [...topics].map(([topic, partitions]) => ({ topic, partitions })),
        };
      }),
    };
  },
};

export const DESCRIBE_PRODUCERS_HANDLER: ApiHandler<DescribeProducersRequest, DescribeProducersResponse> = {
  api: DESCRIBE_PRODUCERS,
  decode: decodeDescribeProducersRequest,
  encode: encodeDescribeProducersResponse,
  async handle(ctx, req, _version, conn) {
    const topics = [];
    for (const q of req.topics) {
      const partitions: PartitionResponse[] = [];
      for (const index of q.partitionIndexes) {
        const { stream } = await lookupPartition(ctx, q.name, undefined, index);
        if (stream === null || !allowed(ctx, conn, 'head', stream)) {
          partitions.push({ partitionIndex: index, errorCode: stream === null ? KafkaError.UNKNOWN_TOPIC_OR_PARTITION : KafkaError.TOPIC_AUTHORIZATION_FAILED, errorMessage: null, activeProducers: [] });
          continue;
        }
        const activeProducers = [...ctx.txns.parts.openOn(stream)].map(([pid, first]) => {
          const id = ctx.txns.transactionalIdOf(BigInt(pid));
          const t = id === undefined ? undefined : ctx.txns.get(id);
          return { producerId: BigInt(pid), producerEpoch: t?.producerEpoch ?? -1, lastSequence: -1, lastTimestamp: -1n, coordinatorEpoch: 0, currentTxnStartOffset: BigInt(first) };
        });
        partitions.push({ partitionIndex: index, errorCode: 0, errorMessage: null, activeProducers });
      }
      topics.push({ name: q.name, partitions });
    }
    return { throttleTimeMs: 0, topics };
  },
};

export const TXN_ADMIN_HANDLERS: readonly AnyApiHandler[] = [LIST_TRANSACTIONS_HANDLER, DESCRIBE_TRANSACTIONS_HANDLER, DESCRIBE_PRODUCERS_HANDLER];
