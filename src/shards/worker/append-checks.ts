/**
 * The checks an append passes before a shard assigns it seqs: the body's shape and limits
 * (JSON batch, binary RecordBatches, compressed Kafka batches), the stream's content type and
 * Durable Streams writer sequence, and an idempotent Kafka producer's sequence. Nothing here
 * changes state: a refused append writes nothing (shard.ts applies an accepted one).
 */
import { SvcError } from '../../errors';
import { parseJsonBatch } from '../../util/json-batch';
import { ATTR_COMPRESSION_MASK, type BatchStats, type RecordInput, RecordBatchError, readBatchHeader, splitBatches } from '../../util/record-batch';
import { inflateBatch } from '../render/inflate-batch';
import { mediaType } from '../names';
import { type BatchLimits } from '../types';
import { splitJsonMessages } from './json-split';
import { ACKS_KEPT, type ProducerAck, type ProducerTable, checkProducer, isHttpProducerId, isKafkaProducerId, lastSequenceOf } from './producers';

/** A JSON-array append body as records, within the limits. */
export function checkJsonBatch(body: Buffer, l: BatchLimits): RecordInput[] {
  const parsed = parseJsonBatch(body, { maxRecords: l.maxBatchRecords, maxRecordBytes: l.maxRecordBytes });
  if ('error' in parsed) throw new SvcError(parsed.error, parsed.message);
  return parsed.records;
}

/**
 * A Durable Streams JSON-mode append body (`application/json`) as its messages, one record each,
 * split by slicing the body (json-split.ts). The same refusals the listener gave when it parsed
 * the body itself: invalid JSON and an append of `[]` are 400, a message over `--max-record-bytes`
 * is 413. No count limit: a Durable Streams client batches as many messages as it holds into one
 * append (docs/durable-streams.md), so only the request body limit bounds it.
 */
export function checkDsJson(body: Buffer, l: BatchLimits): RecordInput[] {
  const split = splitJsonMessages(body);
  if ('error' in split) throw new SvcError('invalid_json', split.error);
  if (split.messages.length === 0) throw new SvcError('empty_batch', 'an append of [] carries no message');
  const records = new Array<RecordInput>(split.messages.length);
  for (let i = 0; i < records.length; i++) {
    const value = split.messages[i]!;
    // A JSON message is one record: it cannot be cut, so its size limit stays.
    if (value.length > l.maxRecordBytes) throw new SvcError('record_too_large', `a message is limited to ${l.maxRecordBytes} bytes`);
    records[i] = { key: null, value, headers: null };
  }
  return records;
}

/**
 * Binary batches: whole and valid, and within the same limits as a JSON batch; uncompressed,
 * except from Kafka Produce, whose compressed batches are stored as sent after a check that they
 * decompress to well-formed records within the limits (schemas are not checked on them: a stream
 * that validates takes uncompressed batches only).
 */
export function checkBatches(body: Buffer, l: BatchLimits, kafka: boolean, validating: boolean): Buffer[] {
  // The record walk that validates the batches also finds their largest value (no second pass).
  const stats: BatchStats = { largestValue: 0 };
  const batches = splitBatches(body, stats);
  if (batches instanceof RecordBatchError) throw new SvcError(batches.code === 'unsupported_compression' ? 'unsupported_compression' : 'invalid_batch', batches.message);
  let count = 0;
  for (const b of batches) {
    const h = readBatchHeader(b, 0);
    const compressed = (h.attributes & ATTR_COMPRESSION_MASK) !== 0;
    if (compressed && !kafka) throw new SvcError('unsupported_compression', 'compressed record batches are not accepted over HTTP yet');
    if (compressed && validating) throw new SvcError('unsupported_compression', 'a stream that validates its records against a schema takes uncompressed batches only');
    if (isHttpProducerId(h.producerId)) throw new SvcError('invalid_batch', 'producer ids from 2^62 up are reserved for Svc-Producer-Id appends');
    // Offsets are assigned from lastOffsetDelta; a compressed batch must agree with its header's count.
    if (compressed && h.recordsCount !== h.lastOffsetDelta + 1) throw new SvcError('invalid_batch', `recordsCount ${h.recordsCount} does not match lastOffsetDelta ${h.lastOffsetDelta}`);
    count += h.recordsCount;
    if (count > l.maxBatchRecords) throw new SvcError('batch_too_large', `a batch is limited to ${l.maxBatchRecords} records`);
    // A compressed batch is stored as sent but checked like any other: it must decompress to well-formed records (as a Kafka broker validates it).
    if (compressed) inflateChecked(b, stats);
  }
  if (stats.largestValue > l.maxRecordBytes) {
    throw new SvcError('record_too_large', `a record is limited to ${l.maxRecordBytes} bytes (a record of the batch has ${stats.largestValue})`);
  }
  return batches;
}

function inflateChecked(b: Buffer, stats: BatchStats): void {
  let plain: Buffer;
  try {
    plain = inflateBatch(b);
  } catch (err) {
    throw new SvcError('invalid_batch', (err as Error).message);
  }
  const split = splitBatches(plain, stats);
  if (split instanceof RecordBatchError) throw new SvcError('invalid_batch', `compressed batch: ${split.message}`);
}

/** The append's content type, when it names one, must be the stream's (parameters aside). */
export function contentTypeMismatch(given: string | null, stream: string): SvcError | null {
  // The same string (a client sending the stream's own type) matches without a lower-cased copy of each.
  if (given === null || given === stream || mediaType(given) === mediaType(stream)) return null;
  return new SvcError('conflict', `content type ${given} does not match the stream's ${stream}`);
}

/** Durable Streams Stream-Seq: compared bytewise, it must increase over the last one accepted. */
export function writerSeqRegression(writerSeq: string, last: string | null): SvcError | null {
  if (last === null || Buffer.compare(Buffer.from(writerSeq), Buffer.from(last)) > 0) return null;
  return new SvcError('conflict', `Stream-Seq ${writerSeq} does not follow the last one accepted (${last})`, { writer_seq: last });
}

/** An idempotent Kafka producer's accepted batch: what the shard records once it is appended. */
export interface KafkaProducerAppend {
  key: string;
  epoch: number;
  seq: number;
  lastSeq: number;
}

export type KafkaProducerCheck = KafkaProducerAppend | { error: SvcError } | { duplicate: ProducerAck } | null;

/**
 * Kafka idempotence (design/kafka.md): a batch with a producer id carries baseSequence, one
 * sequence per record. The next batch of a producer starts right after the last one's last
 * sequence; a repeat of one of the last ACKS_KEPT batches is answered with its original
 * offsets; anything else is refused with an outcome (outcomes.ts: `duplicate` for an older
 * repeat, `unknown_producer`, `invalid_epoch_seq`, `sequence_gap`, `stale_epoch`), which the
 * Kafka listener maps to its error code. Kafka sends one batch per partition.
 * Null: no idempotent producer in the batches.
 */
export function checkKafkaProducer(producers: ProducerTable, batches: Buffer[]): KafkaProducerCheck {
  const headers = batches.map((b) => readBatchHeader(b, 0));
  const idempotent = headers.filter((h) => isKafkaProducerId(h.producerId) && h.baseSequence >= 0);
  if (idempotent.length === 0) return null;
  if (batches.length > 1) return { error: new SvcError('invalid_batch', 'an idempotent producer sends one record batch per partition and request') };
  const h = idempotent[0]!;
  const key = h.producerId.toString();
  const c = checkProducer(producers, key, h.producerEpoch, h.baseSequence);
  if (c.kind === 'append') return { key, epoch: h.producerEpoch, seq: h.baseSequence, lastSeq: lastSequenceOf(h.baseSequence, h.lastOffsetDelta) };
  if (c.kind === 'duplicate') {
    if (c.ack !== null) return { duplicate: c.ack };
    const kept = producers.get(key)?.acks.map((a) => a.seq).join(', ') ?? '';
    const message = `sequence ${h.baseSequence} of producer ${key} was written before, longer ago than the last ${ACKS_KEPT} batches (its last sequence is ${c.lastSeq}; batches kept from sequences ${kept})`;
    return { error: SvcError.refused({ kind: 'duplicate', receivedSeq: h.baseSequence }, message) };
  }
  // A Kafka client is told which partition does not know its producer.
  const message = c.outcome.kind === 'unknown_producer' ? `producer ${key} is not known to this partition and starts at sequence 0, not ${h.baseSequence}` : c.message;
  return { error: SvcError.refused(c.outcome, message) };
}
