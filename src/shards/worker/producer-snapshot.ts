/**
 * Idempotent producers across a move without a copy (docs/objects.md, "Producer state across a
 * move"): a snapshot of a stream's durable producer table as of a seq, and the replay of the
 * batches from that seq on, which brings a copy of it to what the old owner held.
 *
 *   old owner: durableProducers as of seq S ──▶ inline in p/<name>, or encodeProducerSnapshot ──▶ an object (p/…)
 *   new owner: decodeProducerSnapshot ──▶ replayProducers(the batches with base ≥ S, in seq order,
 *              then the seal's producer) ──▶ the same table, eviction included
 *
 * The table changes only by `recordBatchProducer` / `recordProducer`, applied in log order (one
 * table per stream, bounded by `maxProducers`, least recently written evicted: producers.ts), so
 * applying the same batches in the same order to the snapshot gives the table the old owner had.
 * Written by producer-snapshot-writer.ts, read by adopt-producers.ts.
 */
import { SvcError } from '../../errors';
import { readBatchHeader } from '../../util/record-batch';
import { type ProducerTable, type SealProducer, type StoredProducer, decodeProducers, encodeProducers, recordBatchProducer, recordProducer } from './producers';
import { type RemoteBatch } from './remote-chunks';

const VERSION = 1;

export interface ProducerSnapshot {
  /** Every batch below this seq is applied, none at or above it. */
  seq: number;
  producers: ProducerTable;
}

export function encodeProducerSnapshot(producers: ProducerTable, seq: number): Buffer {
  return Buffer.from(JSON.stringify({ v: VERSION, seq, producers: encodeProducers(producers) }));
}

/** A snapshot read back; `data_corrupt` naming `where` when it is not one. */
export function decodeProducerSnapshot(buf: Buffer, where: string): ProducerSnapshot {
  let v: { v?: unknown; seq?: unknown; producers?: unknown };
  try {
    v = JSON.parse(buf.toString('utf8')) as typeof v;
  } catch {
    throw new SvcError('data_corrupt', `${where}: the producer snapshot is not JSON`);
  }
  if (v.v !== VERSION || typeof v.seq !== 'number' || !Number.isSafeInteger(v.seq) || v.seq < 0 || !Array.isArray(v.producers)) {
    throw new SvcError('data_corrupt', `${where}: not a producer snapshot of version ${VERSION}`);
  }
  return { seq: v.seq, producers: decodeStoredProducers(v.producers, where) };
}

/** A producer table in its stored form (`encodeProducers`), checked; `data_corrupt` naming `where` when malformed. */
export function decodeStoredProducers(list: unknown, where: string): ProducerTable {
  if (!Array.isArray(list)) throw new SvcError('data_corrupt', `${where}: the producers are not a list`);
  for (const p of list as unknown[]) {
    if (!Array.isArray(p) || p.length !== 4 || typeof p[0] !== 'string' || typeof p[1] !== 'number' || typeof p[2] !== 'number' || !Array.isArray(p[3])) {
      throw new SvcError('data_corrupt', `${where}: a producer of the snapshot is malformed`);
    }
    for (const a of p[3] as unknown[]) {
      if (!Array.isArray(a) || a.length !== 4 || !a.every((x) => typeof x === 'number')) throw new SvcError('data_corrupt', `${where}: an acknowledgement of producer ${String(p[0])} is malformed`);
    }
  }
  return decodeProducers(list as StoredProducer[]);
}

/**
 * Apply to `table` the producers of `batches` (checked batches in seq order, e.g. of the entries
 * after the snapshot) whose records start at or above `fromSeq`, then `seal`'s producer when the
 * stream was sealed by one. Returns the batches applied.
 */
export function replayProducers(table: ProducerTable, batches: Iterable<RemoteBatch>, fromSeq: number, maxProducers: number, seal: SealProducer | null = null): number {
  let n = 0;
  for (const b of batches) {
    if (b.baseSeq < fromSeq) continue;
    recordBatchProducer(table, readBatchHeader(b.batch, 0), b.baseSeq, maxProducers);
    n++;
  }
  if (seal !== null) recordProducer(table, seal.key, seal.epoch, seal.ack, maxProducers);
  return n;
}
