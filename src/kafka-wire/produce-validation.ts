/**
 * Schema validation of a Produce (docs/kafka.md, "Schema validation"): a partition whose stream has
 * a rule (`confluent.value.schema.validation`…, topic-configs.ts) has its records checked on this
 * thread before the shard hop; a partition without one never reaches this file.
 *
 *   batches ──▶ records (compressed batches inflated here) ──▶ RecordValidation.check
 *     all pass ──▶ null: the batches are appended as sent
 *     refused, no dead letter (or an idempotent / transactional batch) ──▶ INVALID_RECORD (87),
 *         recordErrors [{batchIndex, message}] and an errorMessage naming the first record; nothing written
 *     refused, dead letter set ──▶ the refused records to the dead-letter stream (key, value and
 *         headers unchanged, plus svc.validation.* headers), the others to the partition as one batch
 *
 * Why here and not on the shard worker: the registry lives in the metadata store's view on this
 * thread, and an id seen for the first time may need a read of it (etcd); a worker would have to
 * ask this thread for it in the middle of an append. The cost falls only on validated partitions.
 *
 * Order: a check is synchronous once its schema ids are compiled, so the append is issued in the
 * same turn as an unvalidated one would be. A check that must first read the registry holds the
 * partition's later appends behind it (`#gates`), so a connection's appends stay in order.
 */
import { type AppendResult, type RecordInput } from '../shards';
import { readBatchHeader } from '../util/record-batch';
import { type BatchRecords, batchRecords } from '../util/batch-records';
import { DEAD_LETTER_HEADERS, type RefusedRecord, type ValidationRule } from '../util/validation-rule';
import { type KafkaContext } from './context';
import { KafkaError, kafkaErrorOf, messageOf } from './error-codes';

export interface ProduceOutcome {
  errorCode: number;
  baseOffset: bigint;
  errorMessage: string | null;
  recordErrors?: Array<{ batchIndex: number; batchIndexErrorMessage: string | null }>;
}

const TRANSACTIONAL_OR_CONTROL = 0x30;

/** Per stream, the check that waits for the registry; later appends to the stream wait behind it. */
const gates = new Map<string, Promise<unknown>>();

type Decoded = BatchRecords;

const refusedMessage = (r: RefusedRecord): string => `record ${r.index}${r.batch > 0 ? ` of batch ${r.batch}` : ''}: ${r.reason}`;

/**
 * The outcome of a validated partition's produce when it is not a plain append (refused, or
 * dead-lettered), or null: append the batches as sent. `append` appends to the partition.
 */
export function validateProduce(ctx: KafkaContext, rule: ValidationRule, stream: string, body: Buffer): ProduceOutcome | null | Promise<ProduceOutcome | null> {
  const gate = gates.get(stream);
  if (gate !== undefined) return settle(stream, gate.then(() => run(ctx, rule, stream, body)));
  const r = run(ctx, rule, stream, body);
  return r instanceof Promise ? settle(stream, r) : r;
}

function settle<T>(stream: string, p: Promise<T>): Promise<T> {
  const gate = p.catch(() => undefined);
  gates.set(stream, gate);
  void gate.then(() => {
    if (gates.get(stream) === gate) gates.delete(stream);
  });
  return p;
}

function run(ctx: KafkaContext, rule: ValidationRule, stream: string, body: Buffer): ProduceOutcome | null | Promise<ProduceOutcome | null> {
  const d = batchRecords(body);
  if (typeof d === 'string') return { errorCode: KafkaError.CORRUPT_MESSAGE, baseOffset: -1n, errorMessage: d };
  const refused = ctx.validation!.check(rule, d.records);
  if (refused instanceof Promise) return refused.then((x) => decide(ctx, rule, stream, d, x));
  return decide(ctx, rule, stream, d, refused);
}

function decide(ctx: KafkaContext, rule: ValidationRule, stream: string, d: Decoded, refused: RefusedRecord[]): ProduceOutcome | null | Promise<ProduceOutcome> {
  if (refused.length === 0) return null;
  const sequenced = d.batches.some((b) => readBatchHeader(b).producerId >= 0n || (b.readInt16BE(21) & TRANSACTIONAL_OR_CONTROL) !== 0);
  if (rule.deadLetter === null || sequenced) {
    const first = refused[0]!;
    const more = refused.length > 1 ? ` (and ${refused.length - 1} more)` : '';
    const why = rule.deadLetter !== null ? '; an idempotent or transactional batch is not dead-lettered: its sequence numbers cannot skip records' : '';
    return {
      errorCode: KafkaError.INVALID_RECORD,
      baseOffset: -1n,
      errorMessage: `schema validation refused ${refusedMessage(first)}${more}${why}`,
      recordErrors: refused.map((r) => ({ batchIndex: r.index, batchIndexErrorMessage: refusedMessage(r) })),
    };
  }
  return deadLetter(ctx, rule.deadLetter, stream, d, refused);
}

async function deadLetter(ctx: KafkaContext, dlq: string, stream: string, d: Decoded, refused: RefusedRecord[]): Promise<ProduceOutcome> {
  const bad = new Map<string, RefusedRecord>();
  for (const r of refused) if (!bad.has(`${r.batch}:${r.index}`)) bad.set(`${r.batch}:${r.index}`, r);
  const kept: RecordInput[] = [];
  const dead: RecordInput[] = [];
  for (const r of d.records) {
    const why = bad.get(`${r.batch}:${r.index}`);
    const input: RecordInput = { key: r.key, value: r.value, headers: r.rec.headers };
    if (why === undefined) kept.push(input);
    else {
      const headers: Array<readonly [Uint8Array, Uint8Array | null]> = [...r.rec.headers];
      headers.push([Buffer.from(DEAD_LETTER_HEADERS.reason), Buffer.from(why.reason)], [Buffer.from(DEAD_LETTER_HEADERS.stream), Buffer.from(stream)], [Buffer.from(DEAD_LETTER_HEADERS.part), Buffer.from(why.part)]);
      dead.push({ key: r.key, value: r.value, headers });
    }
  }
  // Both appends issued in this turn: the partition's stays in order with the connection's others.
  const toPartition: Promise<AppendResult> | null = kept.length === 0 ? null : ctx.shards.append({ name: stream, origin: 'kafka', payload: { kind: 'records', records: kept }, contentType: null, close: false });
  const toDlq = ctx.shards.append({ name: dlq, origin: 'kafka', payload: { kind: 'records', records: dead }, contentType: null, close: false });
  try {
    await toDlq;
  } catch (err) {
    await toPartition?.catch(() => undefined);
    return { errorCode: kafkaErrorOf(err), baseOffset: -1n, errorMessage: `the dead-letter stream ${dlq} refused the records schema validation refused: ${messageOf(err)}` };
  }
  ctx.log.debug({ stream, deadLetter: dlq, refused: dead.length }, 'records refused by schema validation were dead-lettered');
  if (toPartition === null) return { errorCode: 0, baseOffset: -1n, errorMessage: null };
  try {
    const r = await toPartition;
    return { errorCode: 0, baseOffset: BigInt(r.startSeq), errorMessage: null };
  } catch (err) {
    return { errorCode: kafkaErrorOf(err), baseOffset: -1n, errorMessage: messageOf(err) };
  }
}
