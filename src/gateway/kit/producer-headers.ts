/**
 * The three headers of an idempotent producer (Svc-Producer-Id/-Epoch/-Seq on the Svc listener,
 * Producer-Id/-Epoch/-Seq on the Durable Streams listener): all or none, and within the bounds a
 * Kafka producer has, so that one producer state serves every protocol (docs/protocol.md
 * "Idempotent producers", docs/durable-streams.md). The gateway checks their form; the shard
 * applies the rules.
 */
import { SvcError } from '../../errors';
import { type ProducerParams } from '../../shards';

export const MAX_PRODUCER_ID_CHARS = 256;
/** Kafka's producerEpoch is an int16. */
export const MAX_PRODUCER_EPOCH = 32767;
/** Kafka's baseSequence is an int32. */
export const MAX_PRODUCER_SEQ = 2147483647;

/** A listener's names for the three headers, as clients write them (error messages use them). */
export interface ProducerHeaderNames {
  readonly id: string;
  readonly epoch: string;
  readonly seq: string;
}

/**
 * The listener's integer syntax: the value of `raw` as an integer >= 0, or a throw naming `name`
 * (the Svc listener takes leading zeros, the Durable Streams listener does not).
 */
export type UintParser = (name: string, raw: string) => number;

/** The three header values (undefined: absent) → the producer, or null when none is given. */
export function parseProducerHeaders(
  names: ProducerHeaderNames,
  id: string | undefined,
  rawEpoch: string | undefined,
  rawSeq: string | undefined,
  uint: UintParser,
): ProducerParams | null {
  if (id === undefined && rawEpoch === undefined && rawSeq === undefined) return null;
  if (id === undefined || rawEpoch === undefined || rawSeq === undefined) {
    throw new SvcError('invalid_parameter', `${names.id}, ${names.epoch} and ${names.seq} are given together or not at all`);
  }
  if (id.length < 1 || id.length > MAX_PRODUCER_ID_CHARS) {
    throw new SvcError('invalid_parameter', `${names.id} must have 1 to ${MAX_PRODUCER_ID_CHARS} characters`);
  }
  const epoch = uint(names.epoch, rawEpoch);
  if (epoch > MAX_PRODUCER_EPOCH) throw new SvcError('invalid_parameter', `${names.epoch} must be an integer from 0 to ${MAX_PRODUCER_EPOCH}`);
  const seq = uint(names.seq, rawSeq);
  if (seq > MAX_PRODUCER_SEQ) throw new SvcError('invalid_parameter', `${names.seq} must be an integer from 0 to ${MAX_PRODUCER_SEQ}`);
  return { id, epoch, seq };
}
