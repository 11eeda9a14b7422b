/**
 * The idempotent producers of a stream adopted from the object store (docs/objects.md, "Producer
 * state across a move"), as the old owner held them: its newest producer snapshot (`p/<name>`,
 * inline or an object), then the batch headers (and each SEAL frame's producer) of the entries
 * after the snapshot's seq applied in seq order; every entry from an empty table when the
 * stream has no snapshot (or one that does not fit the entries: read as none). Entries wholly
 * below the start are left out, as the import leaves them out.
 *
 *   p/<name> ──▶ the table as of S ──┐
 *   entries with `to` > S ──▶ ranged GETs, 8 in flight, in order ──▶ checkRemoteRange (CRC, seq order)
 *           ──▶ recordBatchProducer / recordProducer (batches from S on) ──▶ the table
 *
 * This reads the entries once (no frame is written locally): with snapshots every 16 MiB of a
 * stream (producer-snapshot-writer.ts), at most that much. The shard runs it after an adopt
 * that asked for it (`AdoptParams.replayProducers`), while the stream is served: only appends
 * that carry a producer wait for it (shard.ts).
 */
import { SvcError } from '../../errors';
import { type ProducerSnapshotRecord, isObjectNotFound } from '../../objects';
import { readBatchHeader } from '../../util/record-batch';
import { type ProducerTable, type SealProducer, DEFAULT_MAX_PRODUCERS, recordBatchProducer, recordProducer } from './producers';
import { type ProducerSnapshot, decodeProducerSnapshot, decodeStoredProducers } from './producer-snapshot';
import { type RemoteEntry, checkRemoteRange, remoteCorrupt } from './remote-chunks';

/** Ranged GETs in flight at once. */
const FETCH_CONCURRENCY = 8;

interface RangeReader {
  get(key: string, range: { offset: number; length: number }): Promise<Buffer>;
}

/** What the replay gives: the table, and the bytes of entries it read (a snapshot saves the next owner those). */
export interface AdoptedProducers {
  table: ProducerTable;
  bytes: number;
  /** The snapshot's seq the replay started from, or null when it started from an empty table. */
  from: number | null;
  /** Why the stream's snapshot was not used (damaged, missing), when it was not. */
  unusable: string | null;
}

/**
 * The producers replayed from `snapshot` (when given and within the entries) and then from
 * `entries` in order, the batches below `end` (the remote end: an entry compaction joined with
 * the local appends' reaches past it, and those are not replayed).
 */
export async function adoptProducers(
  store: RangeReader,
  name: string,
  entries: readonly RemoteEntry[],
  startSeq: number,
  end: number,
  maxProducers = DEFAULT_MAX_PRODUCERS,
  snapshot: ProducerSnapshotRecord | null = null,
): Promise<AdoptedProducers> {
  // A snapshot past the entries' end (never written by an owner whose entries these are) is none;
  // a damaged or missing one costs the whole replay, not the stream's producers.
  let base: ProducerSnapshot | null = null;
  let unusable: string | null = null;
  if (snapshot !== null && snapshot.seq <= end) {
    try {
      base = await readSnapshot(store, name, snapshot);
    } catch (err) {
      if (!(err instanceof SvcError) || err.code !== 'data_corrupt') throw err;
      unusable = err.message;
    }
  }
  const from = base?.seq ?? -1;
  // After a snapshot: entries holding seqs from its seq on, and entries of no data at or after it (a seal's).
  const list = entries.filter((e) => !(e.from < e.to && e.to <= startSeq) && (base === null || (e.from < e.to ? e.to > from : e.from >= from)));
  const table: ProducerTable = base?.producers ?? new Map();
  const inFlight: Array<Promise<Buffer>> = [];
  let next = 0;
  let bytes = 0;
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
    bytes += e.len;
    const seals: SealProducer[] = [];
    for (const b of checkRemoteRange(name, e, buf, seals)) if (b.baseSeq < end && b.baseSeq >= from) recordBatchProducer(table, readBatchHeader(b.batch, 0), b.baseSeq, maxProducers);
    for (const s of seals) recordProducer(table, s.key, s.epoch, s.ack, maxProducers);
  }
  return { table, bytes, from: base === null ? null : base.seq, unusable };
}

/** The snapshot's table: inline, or read from its object (`data_corrupt` when that is not a snapshot of the seq named). */
async function readSnapshot(store: RangeReader, name: string, rec: ProducerSnapshotRecord): Promise<ProducerSnapshot> {
  const where = `stream ${name}: the producer snapshot${rec.o === undefined ? '' : ` in object ${rec.o}`}`;
  if (rec.o === undefined) return { seq: rec.seq, producers: decodeStoredProducers(rec.producers ?? [], where) };
  let buf: Buffer;
  try {
    buf = await store.get(rec.o, { offset: 0, length: rec.bytes ?? 0 });
  } catch (err) {
    if (isObjectNotFound(err)) throw new SvcError('data_corrupt', `${where}: the object is missing from the object store`);
    throw new SvcError('storage_unavailable', `${where}: the object store did not answer: ${(err as Error).message}`, { reason: 'object_store' });
  }
  const snap = decodeProducerSnapshot(buf, where);
  if (snap.seq !== rec.seq) throw new SvcError('data_corrupt', `${where}: it is as of seq ${snap.seq}, the ledger names it as of ${rec.seq}`);
  return snap;
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
