/**
 * Produce (key 0), v0–9. Each partition's records (RecordBatch v2, possibly compressed) are
 * appended to the partition's stream as sent, offsets assigned by rewriting the base offset
 * (AppendParams.origin 'kafka'): nothing is decompressed or re-encoded. acks=1 and acks=-1 (all) answer once
 * the batches are durable (this node is every replica); acks=0 sends no response at all. Either
 * way the next request of the connection runs once the appends were handed to the shards, which
 * keeps them in order, and with acks≠0 the response follows when they are durable (Later).
 */
import {
  type PartitionProduceResponse,
  type ProduceRequest,
  type ProduceResponse,
  type TopicProduceResponse,
  PRODUCE,
  decodeProduceRequest,
  encodeProduceResponse,
} from '../messages/produce';
import { type ApiHandler, Later } from '../handler';
import { type KafkaContext } from '../context';
import { KafkaError, kafkaErrorOf, messageOf } from '../error-codes';
import { leaderError, lookupPartition } from '../partitions';
import { allowed } from '../auth';
import { streamOfPartition } from '../topics';
import { readBatchHeader } from '../../util/record-batch';
import { CONTROL_BIT, TRANSACTIONAL_BIT } from '../txn';
import { takeFrameBuffer } from '../frame-assembler';
import { type ProduceOutcome, validateProduce } from '../produce-validation';

type Outcome = ProduceOutcome;

/** Append one partition's batches to its stream (`stream` null: the partition does not exist). */
async function appendTo(ctx: KafkaContext, topic: string, partition: number, stream: string | null, records: Buffer | null, ownBuffer: boolean): Promise<Outcome> {
  if (stream === null) return { errorCode: KafkaError.UNKNOWN_TOPIC_OR_PARTITION, baseOffset: -1n, errorMessage: `no partition ${partition} of topic ${topic}` };
  const notLeader = leaderError(ctx, stream);
  if (notLeader !== 0) return { errorCode: notLeader, baseOffset: -1n, errorMessage: `partition ${partition} of topic ${topic} is led by another node` };
  if (records === null || records.length === 0) return { errorCode: KafkaError.CORRUPT_MESSAGE, baseOffset: -1n, errorMessage: 'no records' };
  // Schema validation (produce-validation.ts): one map lookup for a partition without a rule.
  const rule = ctx.validation === null ? null : ctx.validation.rule(stream);
  if (rule !== null) {
    const checked = validateProduce(ctx, rule, stream, records);
    const verdict = checked instanceof Promise ? await checked : checked;
    if (verdict !== null) return verdict;
  }
  // A transactional producer's batch (txn/): its epoch and partition are checked by the coordinator, and its partition's LSO held below it.
  let firstOfTxn: bigint | null = null;
  if (records.length >= 61 && (records.readInt16BE(21) & (TRANSACTIONAL_BIT | CONTROL_BIT)) === TRANSACTIONAL_BIT) {
    const h = readBatchHeader(records, 0);
    // Synchronous unless this is the transaction's first batch here (or waits behind it): the
    // appends of a connection stay in order either way (TransactionCoordinator.admit).
    const gate = ctx.txns.admit(h.producerId, h.producerEpoch, stream);
    const admitted = gate instanceof Promise ? await gate.catch((err: unknown) => ({ errorCode: kafkaErrorOf(err), first: false, err })) : gate;
    if (admitted.errorCode !== 0) return { errorCode: admitted.errorCode, baseOffset: -1n, errorMessage: 'err' in admitted ? messageOf(admitted.err) : 'the transactional producer is fenced, or the partition is not in its open transaction' };
    if (admitted.first) firstOfTxn = h.producerId;
  } else if (records.length >= 61 && (records.readInt16BE(21) & CONTROL_BIT) !== 0) {
    return { errorCode: KafkaError.INVALID_RECORD, baseOffset: -1n, errorMessage: 'control batches are written by the transaction coordinator, not produced' };
  }
  try {
    const r = await ctx.shards.append({ name: stream, origin: 'kafka', payload: { kind: 'batches', body: records, ownBuffer }, contentType: null, close: false });
    if (firstOfTxn !== null) ctx.txns.afterFirstAppend(firstOfTxn, stream, r.startSeq);
    return { errorCode: 0, baseOffset: BigInt(r.startSeq), errorMessage: null };
  } catch (err) {
    const code = kafkaErrorOf(err);
    if (code === KafkaError.UNKNOWN_TOPIC_OR_PARTITION) ctx.topics.removed(topic);
    // Benign for the client (librdkafka and the Java client count it delivered), but its delivery
    // report has no offset: a repeat this old means the producer and this partition disagree on
    // what was answered, which is worth an operator's look.
    if (code === KafkaError.DUPLICATE_SEQUENCE_NUMBER) ctx.log.warn({ topic, partition, err: messageOf(err) }, 'a produce repeated a batch older than the acknowledgements kept');
    return { errorCode: code, baseOffset: -1n, errorMessage: messageOf(err) };
  }
}

export const PRODUCE_HANDLER: ApiHandler<ProduceRequest, ProduceResponse> = {
  api: PRODUCE,
  decode: decodeProduceRequest,
  encode: encodeProduceResponse,
  async handle(ctx, req, _version, conn) {
    const acks = req.acks;
    if (acks !== 0 && acks !== 1 && acks !== -1) {
      return {
        responses: req.topicData.map((t) => ({
          name: t.name,
          partitionResponses: t.partitionData.map((p) => ({ index: p.index, errorCode: KafkaError.INVALID_REQUIRED_ACKS, baseOffset: -1n, logAppendTimeMs: -1n, logStartOffset: -1n, recordErrors: [], errorMessage: `acks ${acks} is not 0, 1 or -1` })),
        })),
        throttleTimeMs: 0,
      };
    }
    // Look every partition up first, then issue all appends in one turn: the shards see them in request order.
    const targets: Array<{ topic: number; p: number; stream: string | null; denied: boolean; failed: unknown }> = [];
    for (let ti = 0; ti < req.topicData.length; ti++) {
      const t = req.topicData[ti]!;
      for (let pi = 0; pi < t.partitionData.length; pi++) {
        const index = t.partitionData[pi]!.index;
        let stream: string | null = null;
        let failed: unknown = null;
        try {
          stream = (await lookupPartition(ctx, t.name, undefined, index)).stream;
        } catch (err) {
          // The topic index could not be built (a shard worker is down): this partition's error, in Kafka's shape.
          failed = err;
        }
        targets.push({ topic: ti, p: pi, stream, denied: failed === null && !allowed(ctx, conn, 'append', stream ?? streamOfPartition(t.name, index)), failed });
      }
    }
    // A request carrying one partition's batches in a large frame of its own (frame-assembler.ts)
    // gives that frame's buffer to the shard: the batch crosses to the worker without a copy.
    // With several partitions the frame's buffer is shared between them, and each is copied.
    const only = targets.length === 1 ? req.topicData[targets[0]!.topic]!.partitionData[targets[0]!.p]!.records : null;
    const ownBuffer = only !== null && only.length > 0 && takeFrameBuffer(only);
    const pending = targets.map((x) => {
      const t = req.topicData[x.topic]!;
      const p = t.partitionData[x.p]!;
      const outcome: Promise<Outcome> = x.failed !== null
        ? Promise.resolve({ errorCode: kafkaErrorOf(x.failed), baseOffset: -1n, errorMessage: messageOf(x.failed) })
        : x.denied
        ? Promise.resolve({ errorCode: KafkaError.TOPIC_AUTHORIZATION_FAILED, baseOffset: -1n, errorMessage: `the token does not allow appending to topic ${t.name}` })
        : appendTo(ctx, t.name, p.index, x.stream, p.records, ownBuffer);
      // Not `{ ...x, outcome }`: a property after a spread makes a hidden class per object (program/http/engine.ts, requestOf).
      return { topic: x.topic, p: x.p, stream: x.stream, denied: x.denied, failed: x.failed, outcome };
    });
    if (acks === 0) {
      for (const x of pending) {
        void x.outcome.then((o) => {
          if (o.errorCode !== 0) ctx.log.debug({ conn: conn.id, errorCode: o.errorCode, err: o.errorMessage }, 'kafka produce with acks=0 failed');
        });
      }
      return null;
    }
    // The appends are with the shards, in order: the connection's next request may run while these become durable.
    return new Later(
      Promise.all(pending.map((x) => x.outcome)).then((outcomes) => {
        const responses: TopicProduceResponse[] = req.topicData.map((t) => ({ name: t.name, partitionResponses: [] as PartitionProduceResponse[] }));
        pending.forEach((x, i) => {
          const o = outcomes[i]!;
          const index = req.topicData[x.topic]!.partitionData[x.p]!.index;
          responses[x.topic]!.partitionResponses.push({ index, errorCode: o.errorCode, baseOffset: o.baseOffset, logAppendTimeMs: -1n, logStartOffset: -1n, recordErrors: o.recordErrors ?? [], errorMessage: o.errorMessage });
        });
        return { responses, throttleTimeMs: 0 };
      }),
    );
  },
};
