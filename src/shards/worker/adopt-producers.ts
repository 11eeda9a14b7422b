/**
 * The idempotent producers of a stream adopted from the object store (docs/objects.md, "Producer
 * state across a move"), as the import rebuilt them: every batch header of the stream's entries
 * (and each SEAL frame's producer) applied in seq order, from an empty table. Entries wholly
 * below the start are left out, as the import leaves them out.
 *
 *   entries ──▶ ranged GETs, 8 in flight, in order ──▶ checkRemoteRange (CRC, seq order)
 *           ──▶ recordBatchProducer / recordProducer ──▶ the table
 *
 * This reads every entry once (no frame is written locally). The shard runs it after an adopt
 * that asked for it (`AdoptParams.replayProducers`), while the stream is served: only appends
 * that carry a producer wait for it (shard.ts). Producer snapshots (`p/<name>`, a replay from the
 * snapshot's seq only) are what will bound it; they are not written yet.
 */
import { SvcError } from '../../errors';
import { isObjectNotFound } from '../../objects';
import { readBatchHeader } from '../../util/record-batch';
import { type ProducerTable, type SealProducer, DEFAULT_MAX_PRODUCERS, recordBatchProducer, recordProducer } from './producers';
import { type RemoteEntry, checkRemoteRange, remoteCorrupt } from './remote-chunks';

/** Ranged GETs in flight at once. */
const FETCH_CONCURRENCY = 8;

interface RangeReader {
  get(key: string, range: { offset: number; length: number }): Promise<Buffer>;
}

/**
 * The producers replayed from `entries` in order, the batches below `end` (the remote end: an
 * entry compaction joined with the local appends' reaches past it, and those are not replayed).
 */
export async function adoptProducers(store: RangeReader, name: string, entries: readonly RemoteEntry[], startSeq: number, end: number, maxProducers = DEFAULT_MAX_PRODUCERS): Promise<ProducerTable> {
  const list = entries.filter((e) => !(e.from < e.to && e.to <= startSeq));
  const table: ProducerTable = new Map();
  const inFlight: Array<Promise<Buffer>> = [];
  let next = 0;
  const start = (): void => {
    const e = list[next++]!;
    const p = fetch(store, name, e);
    p.catch(() => undefined);
    inFlight.push(p);
  };
  while (next < list.length && inFlight.length < FETCH_CONCURRENCY) start();
  for (let i = 0; i < list.length; i++) {
    const buf = await inFlight.shift()!;
    if (next < list.length) start();
    const e = list[i]!;
    const seals: SealProducer[] = [];
    for (const b of checkRemoteRange(name, e, buf, seals)) if (b.baseSeq < end) recordBatchProducer(table, readBatchHeader(b.batch, 0), b.baseSeq, maxProducers);
    for (const s of seals) recordProducer(table, s.key, s.epoch, s.ack, maxProducers);
  }
  return table;
}

async function fetch(store: RangeReader, name: string, e: RemoteEntry): Promise<Buffer> {
  if (e.len === 0) return Buffer.alloc(0);
  try {
    return await store.get(e.o, { offset: e.off, length: e.len });
  } catch (err) {
    if (isObjectNotFound(err)) throw remoteCorrupt(name, e, 'the object is missing from the object store');
    throw new SvcError('storage_unavailable', `stream ${name}: records ${e.from}..${e.to - 1} in object ${e.o}: the object store did not answer: ${(err as Error).message}`, { reason: 'object_store' });
  }
}
