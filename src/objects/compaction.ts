/**
 * Compaction (docs/cluster.md, "Compaction and the reaper"): each owner rewrites runs of its
 * streams' small `i/` entries into one `c/` object, so a stream that took many small group
 * commits is read back with a few range GETs and the small group objects can die.
 *
 *   tick (the owner's object maintenance thread, every ~1 s)
 *     read, for the 64 streams of the turn     one read-only etcd txn per 32 streams (#readTurn):
 *       i/<stream>/ from its cursor (64)       entries in key order; the large ones before the
 *       and m/<stream>                         first small one are skipped, and next time so is
 *                                              the read of them (the cursor); m/: the trim point
 *     for each stream this node has placed (with its fence "<nodeId>:<epoch>"), 32 streams at once
 *     (their runs holding at most 16 MiB in memory together: BytesHeld):
 *       read the rest of i/<stream>/           page by page, only for a stream with more entries
 *       runs, oldest first, one after another (up to 32 a tick, over all streams):
 *         pick a run of small ones            (len < 1 MiB; > 32 entries, or all seen ≥ 10 s ago;
 *                                              its heaviest entry no heavier than the rest: #window)
 *         GET each range, check every frame   (length + CRC-32C; a bad frame stops the run: never copied;
 *                                              a small group object is read once, whole, for all
 *                                              the streams whose parts it holds: GroupObjects)
 *         PUT c/<streamId>/<epoch>.<counter>  the frames concatenated, in order, with the runs of the
 *                                              other streams that reach it within 5 ms (up to 256 KiB:
 *                                              shared-objects.ts), under a key never used before
 *                                              (create-only where the store can: CompactedCounter); an object
 *                                              of several runs is then recorded, o/<c>, on its own
 *           (each GET and each run's bytes first wait under --objects-compact-bytes-per-second)
 *         txn If(f/<stream> == fence, m/ unchanged since the tick read it, each replaced i/ unchanged,
 *                o/<c> as recorded when shared)
 *             Then(i/<first> = new entry (its range of c and c's size), delete the other replaced
 *                  i/, delete r/<o>/<stream> no longer used (entries a group object's marker names
 *                  have none), put r/<c>/<stream>, and o/<c> when the run is c's only one)
 *
 * A stream written as fast as W1 writes it gains some 600 entries a second; one run a tick (60
 * entries) fell behind, and each tick then read every entry again, so its reads grew without end
 * and took the gateway thread for tens of milliseconds a second. Runs now follow one another
 * along one read, and the read starts at the cursor and stops at what the tick's runs can use.
 *
 * The new entry keeps the first replaced entry's key, so entry order (and every reader's walk)
 * is unchanged; it covers [first.from, last.to). A txn whose compare fails (the stream moved,
 * trimmed or was deleted meanwhile) writes nothing: an object of that run alone has no `o/` record
 * and the reaper removes it as an orphan, a shared one once its other runs let go of it. Work is
 * bounded per tick (runs and bytes).
 *
 * With a byte rate (`bytesPerSecond`, byte-rate.ts) every GET and PUT waits until its bytes fit the
 * bound: compaction's store I/O stays within it over every second, and only compaction waits (it
 * runs on its own thread, beside nothing but the reaper, which has no bound). A run is then at most
 * half the bound, so its GETs and its PUT fit one second's bytes.
 */
import { type EntryValue } from './ledger';
import { ByteRate, type ByteRateClock } from './byte-rate';
import { RangeCache } from './range-cache';
import { type PlacedRun, SharedObjects } from './shared-objects';
import { Ticker } from './ticker';
import { compactedObjectKey, type Fence, fenceValue, type LedgerKeys, parseEntryName } from './ledger-keys';
import { eachLimited, framesProblem, json, LEDGER_DEADLINE_MS, type LedgerCompare, type LedgerKv, type LedgerOp, type LedgerPair, type LedgerRead, type MaintenanceLog, type MaintenanceStore, scanPages } from './maintenance-ledger';

/** A stream this node owns now, as compaction needs it. */
export interface PlacedStream {
  name: string;
  /** The placement row's stream id (names the `c/` objects). */
  streamId: number;
  /** The fence this node holds (`f/<stream>` = "<nodeId>:<epoch>"). */
  fence: Fence;
}

export interface CompactionOptions {
  /** Entries at or above this size are left alone (bytes; default 1 MiB). */
  smallBytes?: number;
  /** A stream with more entries than this is compacted at once (default 32). */
  maxEntries?: number;
  /** Otherwise small entries are compacted once seen this long (ms; default 10 s). */
  settleMs?: number;
  /** Most entries one run replaces (bounded by etcd's 128 ops per txn: 2n + 3; default 60). */
  maxRun?: number;
  /** Most bytes one compacted object holds (default 16 MiB). */
  maxRunBytes?: number;
  /** Runs per tick, over all streams (default 32: one stream under W1's load adds some 600 entries a second). */
  runsPerTick?: number;
  /** Streams looked at per tick, taken in turn (default 64): read together, one etcd call per 32 (#readTurn). */
  streamsPerTick?: number;
  /**
   * Streams compacted at once within a tick (default 32): each waits for etcd and the store most
   * of its time; their runs hold at most maxRunBytes in memory together (BytesHeld).
   */
  streamsInParallel?: number;
  /** Period of the timer `start()` sets (ms; default 1 s). */
  intervalMs?: number;
  /**
   * Most bytes compaction reads from and writes to the store in any one second, together (bytes per
   * second; `--objects-compact-bytes-per-second`); 0 or absent: no bound. Runs are then at most half
   * of it (maxRunBytes).
   */
  bytesPerSecond?: number;
}

export interface CompactionDeps {
  kv: LedgerKv;
  keys: LedgerKeys;
  store: MaintenanceStore;
  /**
   * The streams this node has placed now, with their fences. The same array again means the same
   * streams (never changed in place): the main thread sends a new list only when a placement row
   * changed, and what a tick derives from it (the name order) is kept until then.
   */
  placed: () => readonly PlacedStream[] | Promise<readonly PlacedStream[]>;
  log?: MaintenanceLog;
  /** Where the byte rate reads the time and waits (tests: a fake clock); the process clock by default. */
  clock?: ByteRateClock;
  /** The compacted objects' key counter, when another writer of `c/` objects on this thread shares it (the indexer). */
  counter?: CompactedCounter;
}

/**
 * The counter of compacted objects' keys (`c/<streamId>/<epoch>.<counter>`). A key is never used
 * twice: an object under it may be live (an entry points into it) or an orphan the reaper is
 * about to delete, and a PUT over either loses data. The stream's epoch stays while this node
 * owns it, across restarts of the maintenance thread (each with a new counter) and of the node,
 * so the counter starts at the milliseconds since 2026 times 1,000: ahead of every key an earlier
 * one made unless it made over 1,000 objects a second over its whole life. On a `file:` store
 * (create-only puts) a key that exists anyway is passed over (putCompacted).
 */
export class CompactedCounter {
  #next = (Date.now() - COUNTER_EPOCH_MS) * 1000;

  next(): number {
    return this.#next++;
  }

  /** Past a key found taken: a restarted writer's keys run on from there. */
  skip(): void {
    this.#next += COUNTER_SKIP;
  }
}

/**
 * PUTs a compacted object's frames under a key no object has had: on a store with create-only
 * puts, a key that exists (an earlier writer's) is passed over for the next; elsewhere the
 * counter's start makes one (CompactedCounter).
 */
export async function putCompacted(store: MaintenanceStore, counter: CompactedCounter, s: PlacedStream, parts: Buffer[], log?: MaintenanceLog): Promise<string> {
  for (let tries = 1; ; tries++) {
    const key = compactedObjectKey(s.streamId, s.fence.epoch, counter.next());
    if (store.createOnly !== true) {
      await store.put(key, parts);
      return key;
    }
    try {
      await store.put(key, parts, { ifAbsent: true });
      return key;
    } catch (err) {
      if ((err as { code?: string }).code !== 'PreconditionFailed' || tries >= 8) throw err;
      log?.warn({ stream: s.name, object: key }, 'object compaction: the key of a new compacted object exists; the next one is taken');
      counter.skip();
    }
  }
}

/** What compaction has moved since its start (the node's svc_objects_compaction_* metrics). */
export interface CompactionStats {
  /** Bytes fetched from the store (the runs' ranges). */
  readBytes: number;
  /** Bytes written to the store (the c/ objects). */
  writtenBytes: number;
  /** Time spent waiting for the byte rate (ms); 0 without a bound. */
  throttledMs: number;
}

/** What a tick did (for tests and logs). */
export interface CompactionTick {
  runs: number;
  entriesReplaced: number;
  bytes: number;
  fenced: number;
}

/** Where compacted objects' counters start from (CompactedCounter): 2026-01-01. */
const COUNTER_EPOCH_MS = Date.UTC(2026, 0, 1);
/** How far the counter moves on past a key that exists (a restarted compactor's keys run on from there). */
const COUNTER_SKIP = 1000;

/**
 * What an entry weighs beyond its bytes when compaction picks a run (#window): it costs the ledger
 * a key and a reader a range GET, whatever its size. So entries of no or few bytes still merge,
 * by count, and a small compacted object is not copied again for a few bytes.
 */
const ENTRY_WEIGHT = 4096;

/**
 * Bytes in memory for the runs rewritten at once (their fetched ranges, then the object PUT):
 * streams are compacted several at a time, and their runs together hold at most `limit` bytes,
 * as one run did when streams went one at a time; a run larger than what is free waits, and one
 * alone always goes. Many small runs (many streams written a little) go together.
 */
class BytesHeld {
  readonly #limit: number;
  #held = 0;
  readonly #waiting: Array<{ bytes: number; go: () => void }> = [];

  constructor(limit: number) {
    this.#limit = limit;
  }

  take(bytes: number): Promise<void> | void {
    if (this.#waiting.length === 0 && (this.#held === 0 || this.#held + bytes <= this.#limit)) {
      this.#held += bytes;
      return;
    }
    return new Promise<void>((go) => this.#waiting.push({ bytes, go }));
  }

  give(bytes: number): void {
    this.#held -= bytes;
    // In order: a large run is not passed by smaller ones for ever.
    while (this.#waiting.length > 0 && (this.#held === 0 || this.#held + this.#waiting[0]!.bytes <= this.#limit)) {
      const w = this.#waiting.shift()!;
      this.#held += w.bytes;
      w.go();
    }
  }
}

/**
 * A group object at most this large (its `size` recorded in the entry) is read whole, once, and
 * kept for the runs of the other streams whose parts it holds: a group object holds a part of
 * every stream its group wrote (a few to hundreds when appends spread over many streams), and
 * each stream's run used to GET its part on its own, one GET per entry, the largest part of
 * compaction's cost under W2's load. Larger ones (a Kafka batch's) are read by range as before.
 */
export const GROUP_OBJECT_WHOLE_MAX = 256 << 10; // 256 KiB
/**
 * The group objects kept (bytes). The streams whose parts one object holds are compacted within
 * seconds of each other (each once its small entries settle, ~10 s, or crowd); at W2's 4,000
 * appends a second a node writes about 0.5 MB of group objects a second, so this holds some 30 s.
 */
export const GROUP_OBJECT_CACHE_BYTES = 16 << 20; // 16 MiB

/**
 * Runs of several streams go into one compacted object up to this many bytes (shared-objects.ts):
 * no larger than a group object read whole, so the next tier's run reads it once for all of them.
 */
export const SHARED_OBJECT_MAX = GROUP_OBJECT_WHOLE_MAX;
/**
 * How long a compacted object waits for more runs after its first one (ms). The runs of the
 * streams a tick compacts at once reach it within a few milliseconds of each other (their ranges
 * mostly come from group objects already read); a few more only delay a run's transaction.
 */
const SHARE_WAIT_MS = 5;

/**
 * The stream a compacted object is named after (`c/<streamId>/…`): of the streams whose runs it
 * holds, the one with the lowest id. On a `file:` store every name prefix is a directory: named
 * after its first run's stream, the objects of 1,000 streams written a little each went into
 * directories made (a mkdir and a sync of the parent) and removed again once empty, for some
 * streams over and over; the lowest ids of many streams are few, and their directories stay.
 */
function namesake(streams: readonly PlacedStream[]): PlacedStream {
  return streams.reduce((a, b) => (b.streamId < a.streamId ? b : a));
}

/** Streams whose first reads go in one etcd call (two reads each: within etcd's 128 operations a transaction). */
const READS_PER_CALL = 32;
/**
 * Entries of a stream read with the turn's first reads: a stream written a little (W2) has a few
 * dozen between visits; one with more (W1) reads the rest page by page, as before.
 */
const FIRST_PAGE = 64;

/** The placement a stream's cursor holds for (stream id and fence): another one reads the stream from its first entry. */
const placementOf = (s: PlacedStream): string => `${s.streamId}/${fenceValue(s.fence)}`;

/**
 * Streams in name order. Made once: a comparator written inline is a new closure every tick, and
 * V8 keeps optimized code for a closure's literal only while one of its closures lives, so each
 * was compiled again after every full collection (#visit).
 */
const byName = (a: PlacedStream, b: PlacedStream): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** A stream's first reads of a turn (#readTurn): its first page of entries from its cursor, and its m/ record (null: none). */
interface FirstRead {
  page: { kvs: LedgerPair[]; more: boolean };
  meta: LedgerPair | null;
}

/** What #place's reads of a run's ranges gathered: the ranges in run order, the first damage found, or that stop() ended them. */
interface RunRead {
  parts: Buffer[];
  damaged: { i: number; problem: string } | null;
  stopped: boolean;
}

/** An `i/` entry as read: its key, its etcd mod revision (a compaction's txn compares it) and its value. */
interface Entry {
  key: string;
  modRevision: number;
  e: EntryValue;
}

export class Compactor {
  readonly #deps: CompactionDeps;
  readonly #o: Required<CompactionOptions>;
  /** Per stream: entry key → when this compactor first saw it (the ledger keeps no time per entry). */
  readonly #seen = new Map<string, Map<string, number>>();
  /**
   * Per stream: before this time a visit cannot find a run (the last one found none, and the
   * stream was not crowded): the turn passes it over until then (#restUntilDue). Under W2's load
   * (1,000 streams written a little each) six visits in ten found nothing to compact, each an etcd
   * read of the stream's entries and their decoding, for entries that had not settled yet.
   */
  readonly #due = new Map<string, number>();
  /** Per stream: the key its small entries start from, and the placement that holds for (see #entries). */
  readonly #cursors = new Map<string, { at: string; placement: string }>();
  /** The stream after which the next tick starts (streams are taken in name order, in turn). */
  #after: string | null = null;
  /** The placed streams in name order, sorted from `from` (made again only when the list is a new one). */
  #sorted: { from: readonly PlacedStream[]; all: PlacedStream[] } | null = null;
  /** The compacted objects' key counter (shared with the indexer of the records format: CompactedCounter). */
  readonly #counter: CompactedCounter;
  readonly #ticker: Ticker<CompactionTick>;
  /** The bound on the store I/O (null: none). */
  readonly #rate: ByteRate | null;
  /** Aborted by stop(): a wait for the byte rate gives up, and the tick ends. */
  #stopping = new AbortController();
  #readBytes = 0;
  #writtenBytes = 0;
  /** The bytes of the runs being rewritten now, in memory at once: at most maxRunBytes, or one run (BytesHeld). */
  readonly #held: BytesHeld;
  /** Small group objects read whole (GROUP_OBJECT_WHOLE_MAX), by key: objects are immutable, so nothing held goes stale. */
  readonly #groupObjects = new RangeCache<Buffer>({ budgetBytes: GROUP_OBJECT_CACHE_BYTES, sizeOf: (b) => (b as Buffer).length, remember: () => false });
  /** The compacted object the runs being made now go into (shared-objects.ts). */
  readonly #shared = new SharedObjects<PlacedStream>({ put: (streams, parts) => this.#putNew(namesake(streams), parts), record: (key, bytes) => this.#record(key, bytes) }, SHARED_OBJECT_MAX, SHARE_WAIT_MS);

  constructor(deps: CompactionDeps, options: CompactionOptions = {}) {
    this.#deps = deps;
    this.#counter = deps.counter ?? new CompactedCounter();
    const bytesPerSecond = options.bytesPerSecond ?? 0;
    this.#rate = bytesPerSecond > 0 ? new ByteRate(bytesPerSecond, deps.clock) : null;
    // A run's GETs and its PUT together fit one second of the bound (see byte-rate.ts on larger requests).
    const maxRunBytes = options.maxRunBytes ?? 16 << 20; // 16 MiB
    this.#o = {
      smallBytes: options.smallBytes ?? 1 << 20, // 1 MiB
      maxEntries: options.maxEntries ?? 32,
      settleMs: options.settleMs ?? 10_000, // 10 s
      maxRun: Math.min(options.maxRun ?? 60, 62),
      maxRunBytes: bytesPerSecond > 0 ? Math.max(1, Math.min(maxRunBytes, Math.floor(bytesPerSecond / 2))) : maxRunBytes,
      runsPerTick: options.runsPerTick ?? 32,
      streamsPerTick: options.streamsPerTick ?? 64,
      streamsInParallel: Math.max(1, options.streamsInParallel ?? 32),
      intervalMs: options.intervalMs ?? 1_000, // 1 s
      bytesPerSecond,
    };
    this.#held = new BytesHeld(this.#o.maxRunBytes);
    // A tick that spent its whole run budget is followed at once by the next (ticker.ts): the
    // budget bounds one pass, not the entries compacted a second, which must keep up with what
    // the streams gain (else their entries pile up in etcd).
    this.#ticker = new Ticker(
      () => this.tick(),
      this.#o.intervalMs,
      (err) => this.#deps.log?.warn({ err }, 'object compaction failed; retried at the next tick'),
      (t) => t.runs >= this.#o.runsPerTick,
    );
  }

  start(): void {
    if (this.#stopping.signal.aborted) this.#stopping = new AbortController();
    this.#ticker.start();
  }

  /** Stops the timer and waits for the tick in progress, which gives up a wait for the byte rate at once. */
  stop(): Promise<void> {
    this.#stopping.abort();
    return this.#ticker.stop();
  }

  /** The group objects read whole and the gets they answered (tests). */
  get groupObjectStats(): { hits: number; misses: number; joined: number; bytes: number } {
    const { hits, misses, joined, bytes } = this.#groupObjects.stats;
    return { hits, misses, joined, bytes };
  }

  /** Bytes read and written since the start, and the time spent waiting for the byte rate. */
  stats(): CompactionStats {
    return { readBytes: this.#readBytes, writtenBytes: this.#writtenBytes, throttledMs: this.#rate?.waitedMs ?? 0 };
  }

  /** Waits until `bytes` of store I/O fit the byte rate ('stopped': stop() was called meanwhile). */
  #pace(bytes: number): Promise<'granted' | 'stopped'> | 'granted' | 'stopped' {
    if (this.#stopping.signal.aborted) return 'stopped';
    return this.#rate === null ? 'granted' : this.#rate.take(bytes, this.#stopping.signal);
  }

  /** One pass over up to `streamsPerTick` placed streams (in turn), at most `runsPerTick` runs. */
  async tick(now = Date.now()): Promise<CompactionTick> {
    const done: CompactionTick = { runs: 0, entriesReplaced: 0, bytes: 0, fenced: 0 };
    const all = this.#order(await this.#deps.placed());
    let from = 0;
    if (this.#after !== null) while (from < all.length && all[from]!.name <= this.#after) from++;
    if (from === all.length) from = 0;
    const turn: PlacedStream[] = [];
    for (let k = 0; k < all.length && turn.length < this.#o.streamsPerTick; k++) {
      const s = all[(from + k) % all.length]!;
      if ((this.#due.get(s.name) ?? 0) <= now) turn.push(s);
    }
    // Streams are compacted several at a time: a stream's work is mostly waiting (etcd reads and
    // its txn, the store's GETs and PUT), one after another, and one stream at a time left the
    // thread idle while a node's streams gained entries faster than it replaced them (W2).
    // What each stream of the turn starts from, read for all of them at once (#readTurn): its
    // first entries and its m/ record, a few etcd calls a tick instead of one or two a stream.
    const firstReads = await this.#readTurn(turn, Math.min(FIRST_PAGE, this.#o.runsPerTick * this.#o.maxRun + 1));
    await eachLimited(turn, this.#o.streamsInParallel, (s) => this.#visit(s, firstReads.get(s.name)!, done, now));
    return done;
  }

  /**
   * `placed` in name order. Sorting it, and forgetting the streams no longer here (moved,
   * deleted), is O(streams): done when the list is a new one, not every tick (with 10,000 streams
   * placed that was most of an idle node's compaction CPU).
   */
  #order(placed: readonly PlacedStream[]): PlacedStream[] {
    if (this.#sorted !== null && this.#sorted.from === placed) return this.#sorted.all;
    const all = [...placed].sort(byName);
    // Loops, not callbacks, over the placed streams (thousands): see #visit.
    const names = new Set<string>();
    for (const s of all) names.add(s.name);
    for (const name of this.#seen.keys()) if (!names.has(name)) this.#seen.delete(name);
    for (const name of this.#cursors.keys()) if (!names.has(name)) this.#cursors.delete(name);
    for (const name of this.#due.keys()) if (!names.has(name)) this.#due.delete(name);
    this.#sorted = { from: placed, all };
    return all;
  }

  /**
   * One stream of a tick's turn: its entries from the first read on, then runs until the tick's
   * budget is spent. A method, not a closure made each tick: V8 keeps a closure's optimized code
   * only while one of its closures lives, so a body made anew every tick was compiled again after
   * every full collection (every second or two on this thread under W2: perf/README.md).
   */
  async #visit(s: PlacedStream, first: FirstRead, done: CompactionTick, now: number): Promise<void> {
    if (done.runs >= this.#o.runsPerTick || this.#stopping.signal.aborted) return;
    this.#after = s.name;
    // Enough entries for the runs this tick may still make (the newest one read is never in a run).
    const entries = await this.#entries(s, now, Math.max(1, this.#o.runsPerTick - done.runs) * this.#o.maxRun + 1, first);
    this.#due.delete(s.name);
    if (this.#pickRun(s.name, entries, 0, now, 0) === null) return this.#restUntilDue(s.name, entries, now);
    // Its m/ record: its trim point (see #pickRun). Read with the first entries (the later ones,
    // if any, after it): the txn compares it, and a trim written before this read leaves its
    // entries out of the runs.
    if (first.meta === null) return; // being created or deleted
    const startSeq = (JSON.parse(first.meta.value.toString('utf8')) as { startSeq?: number }).startSeq ?? 0;
    const metaRevision = first.meta.modRevision;
    // A stream written fast gains entries faster than one run a tick would replace them: runs
    // follow one another along the entries read, each its own txn, until the tick's budget is spent.
    let next = 0;
    while (done.runs < this.#o.runsPerTick) {
      const run = this.#pickRun(s.name, entries, startSeq, now, next);
      if (run === null) break;
      const r = await this.#compact(s, entries, run, metaRevision);
      if (r === 'stopped') return;
      if (r === 'fenced') {
        done.fenced++;
        break;
      }
      if (r === null) {
        next = run[run.length - 1]! + 1; // a damaged frame: that run stays as it is, the next starts after it
        continue;
      }
      done.runs++;
      done.entriesReplaced += run.length;
      done.bytes += r.bytes;
      // The run is one entry now, under its first key: later runs of this tick see what the ledger holds.
      entries.splice(run[0]!, run.length, r.entry);
      next = run[0]! + 1;
    }
    // Runs may have made the first small entries large: the next read starts after them.
    const cursor = this.#cursors.get(s.name);
    const at = (entries.find((x) => x.e.len < this.#o.smallBytes) ?? entries[entries.length - 1])?.key;
    if (cursor !== undefined && at !== undefined) cursor.at = at;
  }

  /**
   * The first reads of a turn's streams, in calls of up to READS_PER_CALL streams: each stream's
   * first `limit` entries from its cursor (#entries) and its m/ record, all of one call at one
   * revision. Visiting a stream was one or two etcd calls of its own (its entries, and its m/ when
   * they held a run): with 1,000 streams, 70 calls a second from an idle node and 180–230 in the
   * drain after W2's load, most of the node's etcd calls, and etcd spends its CPU per call. Now a
   * few a tick: etcd's CPU for that node fell by a third (perf/README.md, "Objects mode").
   */
  async #readTurn(turn: readonly PlacedStream[], limit: number): Promise<Map<string, FirstRead>> {
    const { kv, keys } = this.#deps;
    const out = new Map<string, FirstRead>();
    const calls: Array<Promise<void>> = [];
    for (let i = 0; i < turn.length; i += READS_PER_CALL) {
      const streams = turn.slice(i, i + READS_PER_CALL);
      const reads: LedgerRead[] = [];
      for (const s of streams) {
        const prefix = keys.entries(s.name);
        reads.push({ from: this.#cursorOf(s) ?? prefix, prefix, limit }, { get: keys.meta(s.name) });
      }
      calls.push(
        kv.readMany(reads, LEDGER_DEADLINE_MS).then(({ results }) => {
          streams.forEach((s, k) => {
            const page = results[2 * k]!;
            out.set(s.name, { page, meta: results[2 * k + 1]!.kvs[0] ?? null });
          });
        }),
      );
    }
    await Promise.all(calls);
    return out;
  }

  /** Where the stream's entries are read from: its cursor, if it holds for the stream's placement (else its first entry). */
  #cursorOf(s: PlacedStream): string | undefined {
    const cursor = this.#cursors.get(s.name);
    return cursor !== undefined && cursor.placement === placementOf(s) ? cursor.at : undefined;
  }

  /**
   * The pages of the stream's entries from its cursor on: the first page read for the turn, then
   * further pages as needed. Pages, not pairs: a pair at a time from an async generator cost a
   * promise and a result object each, for every entry of every visit.
   */
  async *#pages(prefix: string, first: FirstRead, pageSize: number): AsyncGenerator<readonly LedgerPair[]> {
    yield first.page.kvs;
    const last = first.page.kvs[first.page.kvs.length - 1];
    if (!first.page.more || last === undefined) return;
    yield* scanPages(this.#deps.kv, prefix, pageSize, { from: `${last.key}\0` });
  }

  /**
   * The stream's small entries from its cursor on, at most `limit`. Entries below the cursor are
   * large (smallBytes or more): compaction never rewrites a large entry, and writes only under
   * the key of a small one, so a stream with a long history is not read whole every tick. The
   * cursor holds for the placement it was found under (stream id and fence): a stream deleted and
   * made again, or moved away and back, is read from its first entry.
   */
  async #entries(s: PlacedStream, now: number, limit: number, first: FirstRead): Promise<Entry[]> {
    const prefix = this.#deps.keys.entries(s.name);
    const placement = placementOf(s);
    const out: Entry[] = [];
    const before = this.#seen.get(s.name);
    const seen = new Map<string, number>();
    let firstSmall: string | null = null;
    let last: string | null = null;
    pages: for await (const page of this.#pages(prefix, first, Math.min(limit, 1000))) {
      for (const p of page) {
        if (parseEntryName(p.key.slice(prefix.length)) === null) continue;
        const e = JSON.parse(p.value.toString('utf8')) as EntryValue;
        last = p.key;
        if (firstSmall === null) {
          if (e.len >= this.#o.smallBytes) continue; // never in a run
          firstSmall = p.key;
        }
        out.push({ key: p.key, modRevision: p.modRevision, e });
        seen.set(p.key, before?.get(p.key) ?? now);
        if (out.length >= limit) break pages;
      }
    }
    const at = firstSmall ?? last;
    if (at !== null) this.#cursors.set(s.name, { at, placement });
    this.#seen.set(s.name, seen);
    return out;
  }

  /**
   * A visit found no run: until the first of the stream's entries not settled yet settles (or, with
   * none, a settle time from now: only entries gained since can make a run), no visit can find one,
   * unless the stream gains so many entries meanwhile that it is crowded, which then waits at most
   * that long. A crowded stream (every entry a candidate) is visited every turn, as before.
   */
  #restUntilDue(stream: string, entries: readonly Entry[], now: number): void {
    if (entries.length > this.#o.maxEntries) return;
    const seen = this.#seen.get(stream);
    let due = now + this.#o.settleMs;
    for (const { key } of entries) {
      const settles = (seen?.get(key) ?? now) + this.#o.settleMs;
      if (settles > now) due = Math.min(due, settles);
    }
    this.#due.set(stream, due);
  }

  /**
   * Indexes of the oldest run of small entries worth rewriting, or null. Entries a trim to
   * `startSeq` removes (`to` ≤ startSeq) are never part of a run: a trim that read the entries
   * before this compaction commits deletes exactly those keys, and the run's first key (which the
   * new entry keeps) must not be among them. Candidates are small, settled and not trimmed; a run
   * is the first window of consecutive candidates worth rewriting (#window).
   */
  #pickRun(stream: string, entries: readonly Entry[], startSeq: number, now: number, from: number): number[] | null {
    const crowded = entries.length > this.#o.maxEntries;
    const seen = this.#seen.get(stream);
    let candidates: number[] = [];
    // The newest entry is never rewritten: its group object key marks where the stream's writer
    // was, which tail recovery starts from (tail-recovery.ts).
    for (let i = from; i < entries.length - 1; i++) {
      const { key, e } = entries[i]!;
      const settled = crowded || now - (seen?.get(key) ?? now) >= this.#o.settleMs;
      if (e.len < this.#o.smallBytes && e.len <= this.#o.maxRunBytes && settled && e.to > startSeq) {
        candidates.push(i);
        continue;
      }
      const run = this.#window(entries, candidates);
      if (run !== null) return run;
      candidates = [];
    }
    return this.#window(entries, candidates);
  }

  /**
   * The first window of `candidates` (consecutive entry indexes) worth rewriting, the longest
   * from its start, or null. Worth it: its heaviest entry weighs no more than the others together
   * (an entry weighs its bytes plus ENTRY_WEIGHT), within maxRun entries and maxRunBytes.
   *
   * Why: a compacted entry under smallBytes is small too. Merged with whatever came after it, a
   * stream that gains a small entry now and then had its whole compacted object copied again by
   * every run until it reached 1 MiB, some thousand times for a stream of 1 KiB appends: bytes
   * rewritten grew with the square of the stream. Merged only with at least its own weight of
   * newer entries (size-tiered, as LSM stores merge), every object a byte is copied into is at
   * least twice the one before, so a byte is copied at most log2(smallBytes ÷ its entry) times;
   * newer entries merge among themselves meanwhile, so a stream keeps about that many small
   * entries (a binary counter's digits), not one.
   */
  #window(entries: readonly Entry[], candidates: readonly number[]): number[] | null {
    for (let a = 0; a + 1 < candidates.length; a++) {
      let bytes = 0;
      let weight = 0;
      let heaviest = 0;
      let end = -1;
      for (let b = a; b < candidates.length && b - a < this.#o.maxRun; b++) {
        const len = entries[candidates[b]!]!.e.len;
        if (bytes + len > this.#o.maxRunBytes) break;
        bytes += len;
        weight += len + ENTRY_WEIGHT;
        heaviest = Math.max(heaviest, len + ENTRY_WEIGHT);
        if (b > a && heaviest <= weight - heaviest) end = b;
      }
      if (end >= 0) return candidates.slice(a, end + 1);
    }
    return null;
  }

  /**
   * Rewrite one run; the bytes written and the entry now in its place, 'fenced' when the txn's
   * compare failed, null when skipped, 'stopped' when stop() ended a wait for the byte rate (before
   * the PUT: nothing written).
   */
  async #compact(s: PlacedStream, entries: readonly Entry[], run: number[], metaRevision: number): Promise<{ bytes: number; entry: Entry } | 'fenced' | 'stopped' | null> {
    const bytes = run.reduce((n, i) => n + entries[i]!.e.len, 0);
    await this.#held.take(bytes);
    try {
      return await this.#rewrite(s, entries, run, metaRevision);
    } finally {
      this.#held.give(bytes);
    }
  }

  /** PUTs a run's frames under a key no object has had (putCompacted). */
  #putNew(s: PlacedStream, parts: Buffer[]): Promise<string> {
    return putCompacted(this.#deps.store, this.#counter, s, parts, this.#deps.log);
  }

  /**
   * An entry's bytes: from its group object read whole when that is small (once for every stream
   * whose part it holds), else its range. Each read from the store first waits for its bytes under
   * the byte rate; a part taken from an object already read costs no store I/O.
   */
  async #part(e: EntryValue): Promise<Buffer | 'stopped'> {
    // An entry of no bytes (a group that wrote nothing of this stream's frames) has nothing to fetch.
    if (e.len === 0) return Buffer.alloc(0);
    const { store } = this.#deps;
    const size = e.size;
    if (size !== undefined && size <= GROUP_OBJECT_WHOLE_MAX && e.off + e.len <= size) {
      const wait = { stopped: false };
      const whole = await this.#groupObjects.get(e.o, () => this.#whole(e.o, size, wait));
      if (wait.stopped) {
        this.#groupObjects.delete(e.o);
        return 'stopped';
      }
      // A shorter object than its entry says is damage: the range check's refusal, as a ranged GET would give.
      if (e.off + e.len <= whole.length) return whole.subarray(e.off, e.off + e.len);
    }
    if ((await this.#pace(e.len)) === 'stopped') return 'stopped';
    const part = await store.get(e.o, { offset: e.off, length: e.len });
    this.#readBytes += part.length;
    return part;
  }

  /** A group object read whole for the cache of them (#part); `wait.stopped` when stop() ended the wait for the byte rate. */
  async #whole(key: string, size: number, wait: { stopped: boolean }): Promise<Buffer> {
    if ((await this.#pace(size)) === 'stopped') {
      wait.stopped = true;
      return Buffer.alloc(0);
    }
    const b = await this.#deps.store.get(key);
    this.#readBytes += b.length;
    return b;
  }

  /** Record a compacted object that several runs share (shared-objects.ts): its `o/` record's revision. */
  async #record(objectKey: string, bytes: number): Promise<number> {
    const { kv, keys } = this.#deps;
    const res = await kv.txnOnce([], [{ put: keys.object(objectKey), value: json({ bytes, at: Date.now() }) }], []);
    return res.revision;
  }

  async #rewrite(s: PlacedStream, entries: readonly Entry[], run: number[], metaRevision: number): Promise<{ bytes: number; entry: Entry } | 'fenced' | 'stopped' | null> {
    this.#shared.coming();
    let added = false;
    try {
      const replaced: Entry[] = [];
      for (const i of run) replaced.push(entries[i]!);
      const placed = await this.#place(s, replaced);
      if (placed === null || placed === 'stopped') return placed;
      added = true;
      return await this.#commit(s, entries, run, replaced, metaRevision, placed);
    } finally {
      if (!added) this.#shared.notComing();
    }
  }

  /**
   * Read a run's ranges, check every frame and add them to the compacted object being gathered:
   * where they went, null when a frame is damaged (nothing added), 'stopped' when stop() ended a
   * wait for the byte rate (nothing added).
   */
  async #place(s: PlacedStream, replaced: readonly Entry[]): Promise<{ placed: Promise<PlacedRun>; bytes: number } | 'stopped' | null> {
    const order: number[] = [];
    for (let i = 0; i < replaced.length; i++) order.push(i);
    const read: RunRead = { parts: new Array<Buffer>(replaced.length), damaged: null, stopped: false };
    await eachLimited(order, 8, (i) => this.#placePart(replaced[i]!, i, read));
    const { parts, damaged } = read;
    if (read.stopped) return 'stopped';
    if (damaged !== null) {
      const { i, problem } = damaged;
      // Never copy damaged bytes into a new object: the run stays as it is, readers get data_corrupt.
      this.#deps.log?.error({ stream: s.name, entry: replaced[i]!.key, object: replaced[i]!.e.o }, `object compaction skipped: ${problem}`);
      return null;
    }
    let bytes = 0;
    for (const p of parts) bytes += p.length;
    if ((await this.#pace(bytes)) === 'stopped') return 'stopped';
    return { placed: this.#shared.add(s, parts, bytes), bytes };
  }

  /** One entry's range of a run being placed, read and checked into `read` (#place; a method: see #visit). */
  async #placePart(r: Entry, i: number, read: RunRead): Promise<void> {
    if (read.damaged !== null || read.stopped) return;
    const part = await this.#part(r.e);
    if (part === 'stopped') {
      read.stopped = true;
      return;
    }
    // Checked as it arrives: a run's frames (up to maxRunBytes of them, often of a hundred
    // bytes each) checked at once would hold the thread for milliseconds in one piece.
    const problem = framesProblem(part);
    if (problem !== null) read.damaged ??= { i, problem };
    read.parts[i] = part;
  }

  /** Once the run's object is stored: its transaction under the stream's fence (see #rewrite). */
  async #commit(s: PlacedStream, entries: readonly Entry[], run: number[], replaced: readonly Entry[], metaRevision: number, added: { placed: Promise<PlacedRun>; bytes: number }): Promise<{ bytes: number; entry: Entry } | 'fenced'> {
    const { kv, keys } = this.#deps;
    const { bytes } = added;
    const placed = await added.placed;
    const { objectKey } = placed;
    this.#writtenBytes += bytes;

    const first = replaced[0]!;
    const last = replaced[replaced.length - 1]!;
    // The object's size, when the next tier's run may read it whole (#part): once for all its runs.
    const entry: EntryValue =
      placed.size <= GROUP_OBJECT_WHOLE_MAX
        ? { o: objectKey, off: placed.off, len: bytes, from: first.e.from, to: last.e.to, size: placed.size }
        : { o: objectKey, off: placed.off, len: bytes, from: first.e.from, to: last.e.to };
    // A reference r/<o>/<stream> stands for every entry of the stream in o: drop it only when no
    // entry left points into o. A stream has one entry per object (a group's part of it, or a c/
    // object's run: a stream's runs follow one another, each into an object stored before the
    // next begins), so only the entries read can (the cursor skips large ones, never into o).
    // An entry its group object's marker names (`m`) has no such key: the marker lets go of the
    // object by itself once none of the entries it names points into it (reaper.ts).
    const gone = new Set(run);
    const stillUsed = new Set<string>();
    for (let i = 0; i < entries.length; i++) if (!gone.has(i)) stillUsed.add(entries[i]!.e.o);
    const unreferenced = new Set<string>();
    for (const r of replaced) if (r.e.m !== 1 && !stillUsed.has(r.e.o)) unreferenced.add(r.e.o);
    // A trim writes m/ (its group's commit) before it reads the entries it removes, and removes
    // them by key: so the txn compares m/ with the revision the tick read, before it picked the
    // run (which leaves out every entry that start trims). A trim, a delete, a config change or a
    // seal since then fails the compare: the run is void (a trim may delete its first key, which
    // the new entry keeps), and the next tick picks again. Compared, not read again per run: one
    // etcd call less for every run (many streams written a little make one run each a visit).
    // An object shared with other runs was recorded ahead of them: its record must still be the
    // one written then (the reaper deletes it when it takes the object for dead).
    // Pushed, not spread: spreading mapped arrays, empty for some runs, took V8's optimized code
    // of this method back ("wrong map" at the spread) several times a minute, each a recompile.
    const compare: LedgerCompare[] = [
      { key: keys.fence(s.name), value: Buffer.from(fenceValue(s.fence)) },
      { key: keys.meta(s.name), modRevision: metaRevision },
    ];
    for (const r of replaced) compare.push({ key: r.key, modRevision: r.modRevision });
    if (placed.recorded !== null) compare.push({ key: keys.object(objectKey), modRevision: placed.recorded });
    const success: LedgerOp[] = [{ put: first.key, value: json(entry) }];
    for (let k = 1; k < replaced.length; k++) success.push({ delete: replaced[k]!.key });
    for (const o of unreferenced) success.push({ delete: keys.ref(o, s.name) });
    success.push({ put: keys.ref(objectKey, s.name), value: Buffer.from('1') });
    if (placed.recorded === null) success.push({ put: keys.object(objectKey), value: json({ bytes, at: Date.now() }) });
    const res = await kv.txnOnce(compare, success, []);
    if (!res.succeeded) {
      // Nothing refers to the run's range: the reaper deletes the object as an orphan (no o/
      // record), or once its other runs let go of it (shared-objects.ts).
      this.#deps.log?.info({ stream: s.name, object: objectKey }, 'object compaction fenced: the stream moved or changed meanwhile');
      return 'fenced';
    }
    for (const r of replaced) this.#seen.get(s.name)?.delete(r.key);
    this.#deps.log?.debug({ stream: s.name, object: objectKey, entries: replaced.length, bytes }, 'object compaction');
    return { bytes, entry: { key: first.key, modRevision: res.revision, e: entry } };
  }
}
