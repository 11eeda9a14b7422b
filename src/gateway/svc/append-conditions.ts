/**
 * The headers that make an append idempotent (Svc-Producer-Id, -Epoch, -Seq) or conditional
 * (Svc-Match-Seq). The gateway checks their form; the shard applies the rules
 * (docs/protocol.md, "Idempotent producers" and "Conditional appends").
 */
import { SvcError } from '../../errors';
import { type ProducerParams } from '../../shards';
import { parseUint } from './params';

export const MAX_PRODUCER_ID_CHARS = 256;
/** Kafka's producerEpoch is an int16. */
export const MAX_PRODUCER_EPOCH = 32767;
/** Kafka's baseSequence is an int32. */
export const MAX_PRODUCER_SEQ = 2147483647;

/** The three producer headers, all or none; null when none is given. */
export function parseProducer(h: Readonly<Record<string, string | undefined>>): ProducerParams | null {
  const id = h['svc-producer-id'];
  const rawEpoch = h['svc-producer-epoch'];
  const rawSeq = h['svc-producer-seq'];
  if (id === undefined && rawEpoch === undefined && rawSeq === undefined) return null;
  if (id === undefined || rawEpoch === undefined || rawSeq === undefined) {
    throw new SvcError('invalid_parameter', 'Svc-Producer-Id, Svc-Producer-Epoch and Svc-Producer-Seq are given together or not at all');
  }
  if (id.length < 1 || id.length > MAX_PRODUCER_ID_CHARS) {
    throw new SvcError('invalid_parameter', `Svc-Producer-Id must have 1 to ${MAX_PRODUCER_ID_CHARS} characters`);
  }
  const epoch = parseUint('Svc-Producer-Epoch', rawEpoch)!;
  if (epoch > MAX_PRODUCER_EPOCH) throw new SvcError('invalid_parameter', `Svc-Producer-Epoch must be an integer from 0 to ${MAX_PRODUCER_EPOCH}`);
  const seq = parseUint('Svc-Producer-Seq', rawSeq)!;
  if (seq > MAX_PRODUCER_SEQ) throw new SvcError('invalid_parameter', `Svc-Producer-Seq must be an integer from 0 to ${MAX_PRODUCER_SEQ}`);
  return { id, epoch, seq };
}

export function parseMatchSeq(h: Readonly<Record<string, string | undefined>>): number | null {
  return parseUint('Svc-Match-Seq', h['svc-match-seq']) ?? null;
}
