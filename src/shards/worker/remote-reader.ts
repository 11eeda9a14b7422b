/**
 * Reads of one stream's remote chunks through the object cache (docs/objects.md, "How a read
 * finds its object and byte range"): what a shard's read asks when it reaches a seq below the
 * stream's remote end.
 *
 *   peek(seq, bytes) ── synchronous: the checked batches from `seq` the cache holds now, up to
 *                       `bytes`, and the first entry it did not hold (`missing`), if any
 *   fetch(seq) ──────── the entry holding `seq` into the cache (one GET however many readers),
 *                       plus read-ahead of the entries after it; resolves once it is held
 *
 *   a fetch when the entries were read from the ledger over refreshMs ago ──▶ read again first
 *        (one etcd range read a stream at most that often, only on a cache miss): what compaction
 *        joined into one object is fetched from it, not from the small objects it replaced
 *   a GET answered "no such object" ──▶ the ledger read again (`refresh`), the remote chunks
 *        reset from it ──▶ the entry holding the seq now names another object (compaction
 *        replaced it, the reaper deleted the old one): fetched instead; still the same object:
 *        `data_corrupt` (the ledger names it, so it was durable once)
 *   a range whose frames fail (checkRemoteRange) ──▶ `data_corrupt` naming stream, seqs, object;
 *        remembered by the cache with its back-off, so a reader in a loop is not a GET loop
 *   the store does not answer ──▶ `storage_unavailable` (not remembered: the next read tries again)
 *
 * Only the reads that reach a damaged range fail: the entries around it are served. The range
 * fetched last is also kept by the reader itself, so a read re-run after its fetch finds it even
 * when the cache keeps nothing (`--objects-cache-bytes 0`, or an entry above its budget).
 * The shard's read of an adopted stream below its remote end comes here (shard.ts, `read`).
 */
import { SvcError } from '../../errors';
import { type RangeCache, isObjectNotFound, rangeKey } from '../../objects';
import { type RemoteBatch, type RemoteChunks, type RemoteEntry, checkRemoteRange, NO_OBJECT, remoteCorrupt } from './remote-chunks';

/** Default read-ahead of a reader, in bytes of entries after the one it reached. */
export const DEFAULT_READ_AHEAD_BYTES = 16 << 20; // 16 MiB
/**
 * A cache miss reads the stream's entries from the ledger again first when they were read longer
 * ago than this (ms): compaction's replacements are preferred within that, and the reaper deletes
 * the objects they replace only after its grace, so a reader rarely meets a deleted one.
 */
export const DEFAULT_REFRESH_MS = 30_000;

export interface RemoteReaderDeps {
  chunks: RemoteChunks;
  cache: RangeCache<RemoteBatch[]>;
  /** A ranged GET of the object store. */
  get(key: string, range: { offset: number; length: number }): Promise<Buffer>;
  /** The stream's ledger entries read again (Ledger.entries), all of them: RemoteChunks.reset keeps those below its end. */
  refresh(): Promise<readonly RemoteEntry[]>;
  /** The stream's start now (entries wholly below it are left out). */
  startSeq(): number;
  readAheadBytes?: number;
  /** DEFAULT_REFRESH_MS unless given. */
  refreshMs?: number;
  /** The clock (ms): performance.now() unless given (tests). */
  now?(): number;
}

/** What the cache holds from a seq on. */
export interface RemotePeek {
  batches: RemoteBatch[];
  /** The seq after the last batch returned (the seq asked for when none was). */
  next: number;
  /** The entry holding `next` when the cache does not hold it and `next` is still remote; else null. */
  missing: RemoteEntry | null;
}

/** The cache's answer for failures: damage is remembered (with its back-off), an outage is not. */
export function rememberDamage(err: unknown): boolean {
  return err instanceof SvcError && err.code === 'data_corrupt';
}

export class RemoteReader {
  readonly #d: RemoteReaderDeps;
  readonly #ahead: number;
  /** The range fetched last, whether or not the cache kept it. */
  #last: { key: string; value: RemoteBatch[] } | null = null;
  readonly #refreshMs: number;
  readonly #now: () => number;
  /** When the entries were last read (made from the adopt's, read then); a refresh in flight. */
  #readAt: number;
  #refreshing: Promise<void> | null = null;

  constructor(d: RemoteReaderDeps) {
    this.#d = d;
    this.#ahead = d.readAheadBytes ?? DEFAULT_READ_AHEAD_BYTES;
    this.#refreshMs = d.refreshMs ?? DEFAULT_REFRESH_MS;
    this.#now = d.now ?? (() => performance.now());
    this.#readAt = this.#now();
  }

  /** See the file comment. At least one batch is returned when the first entry is held, whatever `bytes`. */
  peek(seq: number, bytes: number): RemotePeek {
    const { chunks, cache } = this.#d;
    const out: RemoteBatch[] = [];
    let n = 0;
    let next = seq;
    for (let i = chunks.find(next); i >= 0 && i < chunks.size; i++) {
      const e = chunks.at(i)!;
      const key = e.o === NO_OBJECT ? '' : rangeKey(e.o, e.off, e.len);
      const held = key === '' ? undefined : (cache.peek(key) ?? (this.#last?.key === key ? this.#last.value : undefined));
      if (held === undefined) return { batches: out, next, missing: e };
      for (const b of held) {
        if (b.lastSeq < next) continue;
        // An entry compaction joined with local records: those are served from the local log.
        if (b.baseSeq >= chunks.end) return { batches: out, next, missing: null };
        if (out.length > 0 && n + b.batch.length > bytes) return { batches: out, next, missing: null };
        out.push(b);
        n += b.batch.length;
        next = b.lastSeq + 1;
      }
    }
    return { batches: out, next, missing: null };
  }

  /** Fetch the entry holding `seq` (see the file comment) and read ahead; resolves once it is held. */
  async fetch(seq: number): Promise<void> {
    if (this.#now() - this.#readAt >= this.#refreshMs) await this.#refresh();
    for (let attempt = 0; ; attempt++) {
      const i = this.#d.chunks.find(seq);
      if (i < 0) return; // not remote (any more): trimmed, or local
      const e = this.#d.chunks.at(i)!;
      // The entry asked for is requested first, then the read-ahead.
      const loaded = this.#load(e);
      this.#readAhead(i);
      try {
        await loaded;
        return;
      } catch (err) {
        if (!(err instanceof Moved) || attempt > 0) throw err instanceof Moved ? remoteCorrupt(this.#d.chunks.stream, e, 'the object is missing from the object store') : err;
        // The ledger changed under the read: look the seq up again.
      }
    }
  }

  /** Start the read-ahead after the entry holding `seq` (a reader served from the cache moves on without a fetch of its own). */
  readAhead(seq: number): void {
    const i = this.#d.chunks.find(seq);
    if (i >= 0) this.#readAhead(i);
  }

  #readAhead(i: number): void {
    const items = this.#d.chunks.ahead(i, this.#ahead).map((e) => ({ key: rangeKey(e.o, e.off, e.len), load: () => this.#fetchRange(e) }));
    this.#d.cache.prefetch(items);
  }

  async #load(e: RemoteEntry): Promise<void> {
    if (e.o === NO_OBJECT) throw remoteCorrupt(this.#d.chunks.stream, e, 'no ledger entry holds them');
    const key = rangeKey(e.o, e.off, e.len);
    try {
      this.#last = { key, value: await this.#d.cache.get(key, () => this.#fetchRange(e)) };
    } catch (err) {
      if (!(err instanceof Gone)) throw err;
      // Missing: does the ledger still name it?
      const fresh = await this.#d.refresh();
      this.#d.chunks.reset(fresh, this.#d.startSeq());
      this.#readAt = this.#now();
      const still = fresh.some((x) => x.o === e.o && x.off === e.off && x.len === e.len);
      const corrupt = remoteCorrupt(this.#d.chunks.stream, e, 'the object is missing from the object store');
      if (still) {
        this.#d.cache.delete(key);
        throw corrupt;
      }
      this.#d.cache.delete(key);
      throw new Moved();
    }
  }

  /** The entries read again (one read however many fetches wait for it); a failure keeps the ones held. */
  #refresh(): Promise<void> {
    this.#readAt = this.#now();
    this.#refreshing ??= this.#d
      .refresh()
      .then(
        (fresh) => this.#d.chunks.reset(fresh, this.#d.startSeq()),
        () => undefined, // an etcd outage: the entries held still name durable objects
      )
      .finally(() => (this.#refreshing = null));
    return this.#refreshing;
  }

  /** One GET and its check: the entry's batches, or `data_corrupt` / `storage_unavailable` / Gone. */
  async #fetchRange(e: RemoteEntry): Promise<RemoteBatch[]> {
    let buf: Buffer;
    try {
      buf = await this.#d.get(e.o, { offset: e.off, length: e.len });
    } catch (err) {
      if (isObjectNotFound(err)) throw new Gone();
      throw new SvcError('storage_unavailable', `stream ${this.#d.chunks.stream}: records ${e.from}..${e.to - 1} in object ${e.o}: the object store did not answer: ${(err as Error).message}`, { reason: 'object_store' });
    }
    return checkRemoteRange(this.#d.chunks.stream, e, buf);
  }
}

/** A GET found no such object (decided by a ledger read, not remembered by the cache as damage). */
class Gone extends Error {
  constructor() {
    super('no such object');
  }
}

/** The ledger no longer names the range: the read looks its seq up again. */
class Moved extends Error {
  constructor() {
    super('the ledger entry was replaced');
  }
}
