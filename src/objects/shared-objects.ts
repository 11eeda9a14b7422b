/**
 * Compacted objects shared by the runs of several streams (compaction.ts). Compaction rewrote
 * each run into an object of its own: under W2's load (1,000 streams written a little each) some
 * 95 objects a second of ~5 KB, each one a create, a write, two syncs and a directory's
 * descriptor on a `file:` store (a PUT paid for on S3), then an `o/` record, a reaper's pass and a
 * delete. The runs a tick makes together (32 streams at a time) now go into one object, up to
 * SHARED_OBJECT_MAX bytes, each run's entry pointing at its range (offset, length) and naming the
 * object's size, so the next tier's run reads it whole, once, for all its streams.
 *
 * An object of one run is recorded as before, by that run's transaction (`o/` put beside its
 * entry). An object of several runs is recorded first, by a transaction of its own (`o/<key>`),
 * and each run's transaction then compares that record's revision: the reaper marks an object
 * dead by deleting its `o/` record (after a grace, with no reference left), so a run's
 * transaction that arrives after that — however late — fails its compare and points nothing at
 * an object being deleted. A crash between the record and the runs' transactions leaves an
 * object nothing refers to, which the reaper deletes after the grace; a failed record, an object
 * with no record, which its orphan sweep deletes.
 */

/** What a run is told of the object it went into. */
export interface PlacedRun {
  objectKey: string;
  /** Where the run's bytes start in the object. */
  off: number;
  /** The whole object's bytes. */
  size: number;
  /**
   * The `o/` record's revision when the object was recorded ahead of its runs (several runs):
   * each run's transaction compares it. Null: the run is the object's only one, and its own
   * transaction records it.
   */
  recorded: number | null;
}

export interface SharedObjectsDeps<S> {
  /** PUT the parts under a new key, named after one of the streams whose runs they are (in the order added); the key. */
  put(streams: S[], parts: Buffer[]): Promise<string>;
  /** Record the object (`o/<key>` with its bytes); the record's revision. */
  record(objectKey: string, bytes: number): Promise<number>;
}

interface Run<S> {
  stream: S;
  parts: Buffer[];
  off: number;
  resolve: (r: PlacedRun) => void;
  reject: (err: unknown) => void;
}

interface Gathering<S> {
  runs: Array<Run<S>>;
  bytes: number;
  timer: NodeJS.Timeout;
}

export class SharedObjects<S> {
  readonly #deps: SharedObjectsDeps<S>;
  readonly #maxBytes: number;
  readonly #waitMs: number;
  #open: Gathering<S> | null = null;
  /** Runs on their way (coming()), not yet added or given up. */
  #coming = 0;

  /**
   * `maxBytes`: an object holds runs up to this many bytes together (a larger run goes alone);
   * `waitMs`: how long an object waits for more runs after its first one.
   */
  constructor(deps: SharedObjectsDeps<S>, maxBytes: number, waitMs: number) {
    this.#deps = deps;
    this.#maxBytes = maxBytes;
    this.#waitMs = waitMs;
  }

  /**
   * A run is on its way (its ranges being read): the object being gathered waits for it, up to
   * waitMs; it must then add() or notComing(). When no run is on its way the object goes at once:
   * a stream compacted alone (W1's one stream: its runs follow one another) waits for nothing.
   */
  coming(): void {
    this.#coming++;
  }

  /** A run announced by coming() will not be added after all (a damaged frame, a stop). */
  notComing(): void {
    this.#coming--;
    if (this.#coming === 0) this.#close();
  }

  /**
   * Put `parts` (`bytes` in all) of a run announced by coming() into the object being gathered;
   * settles once it is stored (and recorded, when shared).
   */
  add(stream: S, parts: Buffer[], bytes: number): Promise<PlacedRun> {
    this.#coming--;
    if (this.#open !== null && this.#open.bytes + bytes > this.#maxBytes) this.#close();
    const g = (this.#open ??= { runs: [], bytes: 0, timer: setTimeout(() => this.#close(), this.#waitMs) });
    const placed = new Promise<PlacedRun>((resolve, reject) => g.runs.push({ stream, parts, off: g.bytes, resolve, reject }));
    g.bytes += bytes;
    if (g.bytes >= this.#maxBytes || this.#coming === 0) this.#close();
    return placed;
  }

  /** The object being gathered goes now (no more runs join it). */
  #close(): void {
    const g = this.#open;
    if (g === null) return;
    this.#open = null;
    clearTimeout(g.timer);
    void this.#write(g);
  }

  async #write(g: Gathering<S>): Promise<void> {
    try {
      const objectKey = await this.#deps.put(
        g.runs.map((r) => r.stream),
        g.runs.flatMap((r) => r.parts),
      );
      const recorded = g.runs.length === 1 ? null : await this.#deps.record(objectKey, g.bytes);
      for (const r of g.runs) r.resolve({ objectKey, off: r.off, size: g.bytes, recorded });
    } catch (err) {
      for (const r of g.runs) r.reject(err);
    }
  }
}
