/**
 * Idempotent producers (Svc-Producer-Id / -Epoch / -Seq): per stream, per producer, the
 * current epoch, the last accepted sequence and the acknowledgements of the last few appends.
 *
 * The state is derivable from the log: an HTTP producer append is one RecordBatch whose header
 * carries producerId = producerKey(id), producerEpoch = epoch and baseSequence = seq (one HTTP
 * append is one producer sequence number, whatever its record count). A shard keeps two tables
 * per stream that see the same updates in the same order: one at accept time (checks, so that
 * concurrent appends of one producer are ordered by arrival) and one when the batch is durable
 * (persisted with the stream's catalog entry and rebuilt by log replay).
 *
 * Both tables are bounded (least recently written producer evicted); because updates happen
 * only on writes and in log order, eviction is deterministic and replay reproduces it.
 */
import { createHash } from 'node:crypto';
import { type Outcome } from '../../outcomes';

/** Kafka keeps the metadata of the last 5 batches per producer; so do we. */
export const ACKS_KEPT = 5;
/** Default bound of producers remembered per stream. */
export const DEFAULT_MAX_PRODUCERS = 10_000;

/** HTTP producer ids have bit 62 set (and bit 63 clear): never a small counter-allocated Kafka id. */
export const HTTP_PRODUCER_ID_BASE = 1n << 62n;
const LOW_62 = HTTP_PRODUCER_ID_BASE - 1n;

export interface ProducerAck {
  seq: number;
  start: number;
  next: number;
  ts: number;
}

export interface ProducerState {
  epoch: number;
  lastSeq: number;
  /** The acknowledgements of the last ACKS_KEPT appends, oldest first. */
  acks: ProducerAck[];
}

/** An idempotent producer's seal without records: the SEAL frame's payload (JSON), replayed like a batch header. */
export interface SealProducer {
  key: string;
  epoch: number;
  ack: ProducerAck;
}

/** Producer key (the 64-bit producer id as a decimal string) → state, in least-recently-written order. */
export type ProducerTable = Map<string, ProducerState>;

/** The 64-bit batch producerId of an HTTP producer id: SHA-256 of its UTF-8, 62 bits, bit 62 set. */
export function producerIdOf(id: string): bigint {
  const h = createHash('sha256').update(id, 'utf8').digest();
  return (h.readBigUInt64BE(0) & LOW_62) | HTTP_PRODUCER_ID_BASE;
}

/** A batch producerId that belongs to an HTTP producer (the namespace binary batches may not use). */
export function isHttpProducerId(pid: bigint): boolean {
  return pid >= HTTP_PRODUCER_ID_BASE;
}

/** A batch producerId of an idempotent Kafka producer (InitProducerId hands out ids below 2^62; -1 is none). */
export function isKafkaProducerId(pid: bigint): boolean {
  return pid >= 0n && pid < HTTP_PRODUCER_ID_BASE;
}

/** The last producer sequence a batch uses: Kafka counts one sequence per record, wrapping after 2^31 − 1. */
export function lastSequenceOf(baseSequence: number, lastOffsetDelta: number): number {
  return (baseSequence + lastOffsetDelta) % 0x8000_0000;
}

/** The outcomes a producer check refuses with (outcomes.ts). */
export type ProducerRefusal = Extract<Outcome, { kind: 'stale_epoch' | 'invalid_epoch_seq' | 'unknown_producer' | 'sequence_gap' }>;

export type ProducerCheck =
  | { kind: 'append' }
  /** A repeat: `ack` is the original acknowledgement when it is still remembered. */
  | { kind: 'duplicate'; ack: ProducerAck | null; lastSeq: number }
  | { kind: 'refused'; outcome: ProducerRefusal; message: string };

/** Decide what an append of (epoch, seq) by producer `key` is, without changing anything. */
export function checkProducer(table: ProducerTable, key: string, epoch: number, seq: number): ProducerCheck {
  const p = table.get(key);
  if (p === undefined || epoch > p.epoch) {
    // A producer not seen (never, or evicted) and a new epoch both start at sequence 0.
    if (seq === 0) return { kind: 'append' };
    if (p === undefined) return { kind: 'refused', outcome: { kind: 'unknown_producer', expectedSeq: 0, receivedSeq: seq }, message: 'a producer not known to this stream starts at sequence 0' };
    return { kind: 'refused', outcome: { kind: 'invalid_epoch_seq', expectedSeq: 0, receivedSeq: seq }, message: `epoch ${epoch} is new and starts at sequence 0` };
  }
  if (epoch < p.epoch) {
    return { kind: 'refused', outcome: { kind: 'stale_epoch', currentEpoch: p.epoch }, message: `producer epoch ${epoch} is fenced: the stream has seen epoch ${p.epoch}` };
  }
  if (seq === p.lastSeq + 1) return { kind: 'append' };
  if (seq <= p.lastSeq) return { kind: 'duplicate', ack: p.acks.find((a) => a.seq === seq) ?? null, lastSeq: p.lastSeq };
  return { kind: 'refused', outcome: { kind: 'sequence_gap', expectedSeq: p.lastSeq + 1, receivedSeq: seq }, message: `producer sequence ${seq} leaves a gap: expected ${p.lastSeq + 1}` };
}

/**
 * Record an accepted (or durable, or replayed) append. Idempotent: a repeat of an older or the
 * same sequence in the current epoch changes nothing, so replaying a frame twice is harmless.
 * `lastSeq`: the last sequence the append used: `ack.seq` for an HTTP append (one sequence per
 * append), baseSequence + lastOffsetDelta for a Kafka batch (one sequence per record).
 */
export function recordProducer(table: ProducerTable, key: string, epoch: number, ack: ProducerAck, maxProducers: number, lastSeq = ack.seq): void {
  let p = table.get(key);
  if (p !== undefined && epoch === p.epoch && lastSeq <= p.lastSeq) return;
  if (p !== undefined && epoch < p.epoch) return;
  if (p === undefined || epoch > p.epoch) p = { epoch, lastSeq, acks: [] };
  p.lastSeq = lastSeq;
  p.acks.push({ seq: ack.seq, start: ack.start, next: ack.next, ts: ack.ts });
  if (p.acks.length > ACKS_KEPT) p.acks.shift();
  // Most recently written last: delete and set again.
  table.delete(key);
  table.set(key, p);
  while (table.size > maxProducers) table.delete(table.keys().next().value as string);
}

export function cloneProducers(table: ProducerTable): ProducerTable {
  const out: ProducerTable = new Map();
  for (const [k, p] of table) out.set(k, { epoch: p.epoch, lastSeq: p.lastSeq, acks: p.acks.map((a) => ({ ...a })) });
  return out;
}

/** Compact stored form: [key, epoch, lastSeq, [[seq, start, next, ts], …]] in table order. */
export type StoredProducer = [string, number, number, Array<[number, number, number, number]>];

export function encodeProducers(table: ProducerTable): StoredProducer[] {
  const out: StoredProducer[] = [];
  for (const [k, p] of table) out.push([k, p.epoch, p.lastSeq, p.acks.map((a): [number, number, number, number] => [a.seq, a.start, a.next, a.ts])]);
  return out;
}

export function decodeProducers(stored: StoredProducer[] | undefined): ProducerTable {
  const table: ProducerTable = new Map();
  for (const [k, epoch, lastSeq, acks] of stored ?? []) {
    table.set(k, { epoch, lastSeq, acks: acks.map(([seq, start, next, ts]) => ({ seq, start, next, ts })) });
  }
  return table;
}

/** The batch header fields that carry a producer. */
export interface BatchProducerFields {
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  baseTimestamp: number;
  lastOffsetDelta: number;
}

/**
 * Record the producer a durable (or replayed) batch carries, if any: an HTTP producer (one
 * sequence per append) or an idempotent Kafka producer (one sequence per record).
 */
export function recordBatchProducer(table: ProducerTable, h: BatchProducerFields, base: number, maxProducers: number): boolean {
  const ack = { seq: h.baseSequence, start: base, next: base + h.lastOffsetDelta + 1, ts: h.baseTimestamp };
  if (isHttpProducerId(h.producerId)) recordProducer(table, h.producerId.toString(), h.producerEpoch, ack, maxProducers);
  else if (isKafkaProducerId(h.producerId) && h.baseSequence >= 0) {
    recordProducer(table, h.producerId.toString(), h.producerEpoch, ack, maxProducers, lastSequenceOf(h.baseSequence, h.lastOffsetDelta));
  } else return false;
  return true;
}
