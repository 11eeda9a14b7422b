/**
 * A stream as the object store holds it, read back for `ShardClient.importStream` (docs/storage.md,
 * "Imported streams"; the objects-mode design, "Opening a stream"):
 *
 *   ledger m/<stream> ──▶ meta, startSeq, sealed ─────────────────────────────┐
 *   ledger i/<stream>/… ──▶ entries in write order ──▶ range GETs (≤ 8 in flight, │
 *                           entries wholly below the start skipped)             ├─▶ StreamImport
 *                           ──▶ every frame's CRC checked, DATA frames below the │
 *                               start dropped, in entry order ─────────────────┘ (frames: async, lazy)
 *
 * The frames are fetched as the import takes them, a bounded window ahead, so a stream of any size
 * is read with bounded memory. The caller reads the ledger only after it moved the stream's fence
 * (a paused old owner can add no entry after that), so the entries read once here are complete.
 *
 * The ledger and the object store (src/objects) sit below the data plane; only the calls used here
 * are declared (structural types), and of src/objects only the store's "no such object" test is
 * taken. A damaged range or a missing object is `data_corrupt` naming the stream, the seqs and the
 * object (docs/cluster.md, "Damaged objects").
 */
import { SvcError } from '../errors';
import { isObjectNotFound } from '../objects';
import { liveFrames } from './import-chunks';
import { type ImportedMeta, type StreamImport } from './types';

/** One `i/<stream>/…` entry: bytes off..off+len of object `o` hold frames of data seqs [from, to). */
export interface StreamEntry {
  o: string;
  off: number;
  len: number;
  from: number;
  to: number;
  /** The fence epoch it was recorded under, and its counter within that epoch (the Ledger's entries have them). */
  epoch?: number;
  counter?: number;
}

/** What is read of the ledger (the Ledger of src/objects has these calls). */
export interface StreamLedgerReader {
  /** The stream's `m/` record, or null when the ledger has no such stream. */
  meta(stream: string): Promise<ImportedMeta | null>;
  /** Every entry of the stream, in the order its frames were written. */
  entries(stream: string): Promise<ReadonlyArray<StreamEntry>>;
}

/** What is read of the object store (the ObjectStore of src/objects has this call). */
export interface ObjectRangeReader {
  get(key: string, range?: { offset: number; length: number }): Promise<Buffer>;
}

/** Range reads in flight at once. */
export const DEFAULT_FETCH_CONCURRENCY = 8;

/** The import input, and the ledger's next entry counter within the epoch asked for. */
export interface StreamSource extends StreamImport {
  /** One above the highest counter of the entries recorded under `options.epoch` (0 when none, or no epoch given). */
  nextCounter: number;
}

/**
 * The import input of `name` from the ledger and the store, or null when the ledger holds no such
 * stream. The frames are fetched lazily (see the file comment); a missing object or a short read
 * fails the import with `storage_unavailable`, a damaged frame with `data_corrupt`. `epoch`: the
 * fence epoch the caller holds, for `nextCounter`. `known`: m/, and the entries when it has them,
 * already read under the caller's fence.
 */
export async function readStreamFromObjects(
  reader: StreamLedgerReader,
  store: ObjectRangeReader,
  name: string,
  options: { concurrency?: number; epoch?: number; known?: { meta: ImportedMeta; entries?: ReadonlyArray<StreamEntry> } } = {},
): Promise<StreamSource | null> {
  // Both reads at once: the caller moved the fence first, so neither changes meanwhile (and a
  // caller that read them under its fence already passes what it read as `known`).
  const known = options.known;
  const [meta, all] = await Promise.all([known?.meta ?? reader.meta(name), known?.entries ?? reader.entries(name)]);
  if (meta === null) return null;
  const nextCounter = options.epoch === undefined ? 0 : nextEntryCounter(all, options.epoch);
  // Entries whose data is wholly below the start hold nothing to import (those without data are kept: a seal's producer, say).
  const entries = all.filter((e) => !(e.from < e.to && e.to <= meta.startSeq));
  return { meta, frames: fetchFrames(store, name, entries, meta.startSeq, Math.max(1, options.concurrency ?? DEFAULT_FETCH_CONCURRENCY)), nextCounter };
}

/** One above the highest counter of `entries` recorded under `epoch`, or 0. */
export function nextEntryCounter(entries: ReadonlyArray<Pick<StreamEntry, 'epoch' | 'counter'>>, epoch: number): number {
  let n = 0;
  for (const e of entries) if (e.epoch === epoch && e.counter !== undefined) n = Math.max(n, e.counter + 1);
  return n;
}

/** The entries' frames in order, up to `concurrency` range reads ahead of the consumer. */
async function* fetchFrames(store: ObjectRangeReader, name: string, entries: readonly StreamEntry[], startSeq: number, concurrency: number): AsyncGenerator<Buffer> {
  const inFlight: Array<Promise<Buffer>> = [];
  let next = 0;
  const start = (): void => {
    const e = entries[next++]!;
    const p = fetchEntry(store, name, e, startSeq);
    // Read in order below; a consumer that stops early must not leave a rejection unhandled.
    p.catch(() => undefined);
    inFlight.push(p);
  };
  while (next < entries.length && inFlight.length < concurrency) start();
  while (inFlight.length > 0) {
    const frames = await inFlight.shift()!;
    if (next < entries.length) start();
    if (frames.length > 0) yield frames;
  }
}

async function fetchEntry(store: ObjectRangeReader, name: string, e: StreamEntry, startSeq: number): Promise<Buffer> {
  const where = `stream ${name}: records ${e.from}..${e.to - 1} in object ${e.o} bytes ${e.off}..${e.off + e.len}`;
  // What a client and the log see of damage here: the stream, the seqs and the object.
  const details = { stream: name, from_seq: e.from, to_seq: e.to - 1, object: e.o, offset: e.off, length: e.len };
  let buf: Buffer;
  try {
    buf = await store.get(e.o, { offset: e.off, length: e.len });
  } catch (err) {
    // The ledger names the object, so it was durable once: gone now is damage, not an outage
    // (only the owner's compaction replaces entries, and the reaper deletes what none names).
    if (isObjectNotFound(err)) throw new SvcError('data_corrupt', `${where}: the object is missing from the object store`, details);
    throw new SvcError('storage_unavailable', `${where}: cannot read it: ${(err as Error).message}`, { reason: 'object_store' });
  }
  if (buf.length !== e.len) throw new SvcError('data_corrupt', `${where}: the object store returned ${buf.length} bytes`, details);
  try {
    return liveFrames(buf, startSeq, where);
  } catch (err) {
    if (err instanceof SvcError && err.code === 'data_corrupt') throw new SvcError('data_corrupt', err.message, details);
    throw err;
  }
}
