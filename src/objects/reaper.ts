/**
 * The destroyed-object reaper (docs/cluster.md, "Compaction and the reaper"): runs on the node
 * that holds the maintenance lease, every ~2 s, and only while it holds it.
 *
 *   1. dead:   o/<k> with no r/<k>/ key (trimmed, deleted, compacted away) and older than a grace
 *              txn If(maintenance key unchanged, o/<k> unchanged, no r/<k>/ key)
 *                  Then(put d/<k>, delete o/<k>)                               ── the lease fences it
 *              or, a group object with a reference marker r/<k>/ (ledger.ts: its writer's commit
 *              names the object's entries in it) and no r/<k>/<stream> key: dead once none of
 *              the entries the marker names points into it (each read; gone, or compacted into
 *              another object under its key)
 *              txn If(maintenance key unchanged, o/<k> unchanged, the marker unchanged, no
 *                     r/<k>/<stream> key) Then(put d/<k>, delete o/<k>, delete the marker)
 *   2. delete: for each d/<k> (this tick's and any a deposed holder left): delete the store
 *              object (idempotent), then txn If(maintenance key unchanged) Then(delete d/<k>)
 *   3. orphans (every ~20 s): store objects under g/, c/ and p/ with neither o/ nor d/ record, seen so
 *              in every sweep that looked at them for at least 60 s (a PUT whose commit never
 *              happened, a fenced compaction, a group put after its writer was fenced) are
 *              deleted — never a fence marker (group-object.ts), and 60 s is far above the
 *              ledger's lag behind groups acknowledged before they are recorded (object-commit.ts).
 *              A sweep looks at up to 10,000 store keys and the next one resumes after the last
 *              (a listing with start-after), so a sweep costs the same however much is stored;
 *              a store of N objects is gone through once every N / 10,000 sweeps
 *   kept:     a writer's group object above its run's h/ mark (run-tails.ts), recorded (1) or
 *              an orphan (3): the tail walk of a stream fenced in that run reads every object of
 *              it in order and stops at the first gap, so none may go before the walk came
 *              (create-only stores). For runTailPinMs (1 h) after it was recorded or first seen
 *              without looking; after that while an object from it to the run's end holds an
 *              early part its stream's ledger records do not reach (TailNeeds), however long
 *
 * Only objects with a `d/` record, which only a holder writes, and orphans are ever deleted: an
 * object that something refers to is never touched, and a deposed holder's transactions fail
 * their compare, so it marks nothing more. A holder that dies between 1 and 2 leaves `d/` keys;
 * the next holder finishes them (restart-safe). `destroyedObjectBacklog` counts them.
 * Work is bounded per tick: up to `pagesPerTick` pages of `perTick` records looked at, marked and
 * deleted. A stream written as fast as W1 writes it makes some 600 group objects a second, which
 * compaction kills as fast: the reaper reads each page's references with one range read (and the
 * entries their markers name, 128 an etcd call), marks a page's dead objects with a few
 * transactions of up to 63 (42 with markers), and removes d/ records 64 to a transaction, so it
 * keeps well ahead of that. A pass that marked nothing is not made again until etcd's revision
 * moves or something it left for the clock is due (#quiet): an idle holder reads one key a tick.
 */
import { type LedgerKeys, objectRun, parseGroupObjectKey, streamOfSegment } from './ledger-keys';
import { decodeCursor } from './part-records';
import { RunTails, TailNeeds } from './run-tails';
import { Ticker } from './ticker';
import { mayBeMarker, readGroupObject } from './group-object';
import { eachLimited, json, LEDGER_DEADLINE_MS, type LedgerCompare, type LedgerKv, type LedgerOp, type LedgerRead, type MaintenanceLog, type MaintenanceStore, scanPages, scanPrefix } from './maintenance-ledger';

/** The compare that proves this node holds the maintenance lease (the holder key at the version it wrote). */
export type HolderCompare = { key: string; modRevision: number };

export interface ReaperOptions {
  /** Period of the timer `start()` sets (ms; default 2 s). */
  intervalMs?: number;
  /** o/ and d/ records per page (default 256). */
  perTick?: number;
  /** Pages of o/ records looked at, and of d/ records deleted, per tick at most (default 8). */
  pagesPerTick?: number;
  /** An unreferenced o/ record younger than this is left for a later tick (ms; default 10 s). */
  deadGraceMs?: number;
  /** A store object without o/ or d/ record this long is an orphan (ms; default 60 s). */
  orphanAgeMs?: number;
  /** How often the store is listed for orphans (ms; default 20 s). */
  orphanSweepMs?: number;
  /** Store keys one orphan sweep looks at, at most; the next sweep goes on from there (default 10,000). */
  orphanSweepKeys?: number;
  /** A marked object found live is read again no sooner than this (ms; default 15 s). */
  liveRecheckMs?: number;
  /**
   * A group object above its run's h/ mark (run-tails.ts) is kept this long after it was recorded
   * (or, unrecorded, first seen by an orphan sweep), whatever refers to it, without looking: a
   * tail walk may still need it. After that it is kept while its tail's part tables say a walk
   * still needs it (TailNeeds; ms; default 1 h: a run's tail is read only once it is that old).
   */
  runTailPinMs?: number;
}

export interface ReaperDeps {
  kv: LedgerKv;
  keys: LedgerKeys;
  store: MaintenanceStore;
  /** The holder compare while this node holds the maintenance lease, else null. */
  holder: () => HolderCompare | null;
  log?: MaintenanceLog;
}

/** What a tick did. */
export interface ReaperTick {
  /** False when this node did not hold the lease (nothing was done). */
  holder: boolean;
  /** o/ records turned into d/ records. */
  destroyed: number;
  /** Store objects deleted after their d/ record (and d/ records removed). */
  deleted: number;
  /** Orphans deleted. */
  orphans: number;
  /** A transaction found the lease gone: the tick stopped there. */
  deposed: boolean;
}

/**
 * Compares (after the holder's) and operations of one marking transaction at most: etcd takes 128
 * of each (`--max-txn-ops`). An object takes 2 of each, one with a reference marker 3: 63 or 42 a
 * transaction.
 */
const MARK_MAX_OPS = 127;
/** Entries read per etcd call when checking what reference markers name (one read-only txn: etcd's 128 operations at most). */
const MARKED_READS = 128;
/** How an entry's value starts (ledger.ts): its object's key follows. */
const ENTRY_HEAD = '{"o":"';
/** Marked objects whose live entry the reaper remembers (Reaper.#liveBy): about 80 B each. */
const LIVE_KEPT = 100_000;
/**
 * Store objects deleted before the transaction that removes their d/ records and proves the lease
 * still held (within etcd's 128 operations a txn). A holder deposed meanwhile deletes at most this
 * many more, every one of them dead already (a d/ record is written only under the lease, for an
 * object nothing refers to, and no key is used twice), so the bound is on wasted work, not on
 * safety. One transaction per 8 deletes was most of the reaper's etcd calls under W1.
 */
const DELETE_BATCH = 64;
/** Store deletes in flight at once within a batch. */
const DELETES_IN_FLIGHT = 8;

/** Object key prefixes in the store (group and compacted objects): nothing else is ever deleted. */
const OBJECT_PREFIXES = ['c/', 'g/', 'p/'];

export class Reaper {
  readonly #deps: ReaperDeps;
  readonly #o: Required<ReaperOptions>;
  /** Where the next tick's o/ scan starts. */
  #cursor: string | null = null;
  /**
   * The pass over the o/ records in progress: the etcd revision its first page was read at, and
   * the earliest time something it left alone for time alone (a record within its grace, a live
   * object not read again yet, a run's tail still pinned) may be due.
   */
  #pass: { revision: number | null; wakeAt: number; destroyed: number } = { revision: null, wakeAt: Infinity, destroyed: 0 };
  /**
   * The last pass, once it went round, when nothing it left alone can change without etcd
   * changing before `wakeAt` (#markDead): while the revision stays where that pass began, the
   * next pass would find what it found, and is not made. An idle cluster's holder read every
   * live object's references again at each pass, its budget's worth every tick: with 10,000
   * compacted streams a few percent of a core on the node and more on etcd, for nothing.
   */
  #quiet: { revision: number; wakeAt: number } | null = null;
  /**
   * The streams with a fence (`f/` key segments) as read once in this pass over the o/ records
   * (null: not read yet). A live compacted object's references are checked against it, and only
   * a reference whose stream it lacks is looked at on its own (#dropDanglingRefs).
   */
  #fenced: Set<string> | null = null;
  /** Orphan candidates: store key → when first seen without a record (reset when seen with one). */
  readonly #orphans = new Map<string, number>();
  /**
   * Per marked object found live, the entry that held it (its marker's name) and when: not read
   * again within liveRecheckMs, then that entry first, so a live object costs one read per
   * liveRecheckMs, not one per entry its marker names every pass (under W2's load over 1,000
   * streams that was most of the reaper's etcd calls and a tenth of the node's CPU). An object
   * dies only once its last entry lets go, so it is reaped at most liveRecheckMs later. Dropped
   * when the object is found dead; bounded (LIVE_KEPT).
   */
  readonly #liveBy = new Map<string, { name: string; at: number }>();
  /** Where the next orphan sweep starts: an index in OBJECT_PREFIXES and the store key it resumes after (null: the prefix's first). */
  #sweepAt: { top: number; after: string | null } = { top: 0, after: null };
  /** Store keys known to hold fence markers. */
  readonly #markers = new Set<string>();
  #lastSweep = 0;
  /** Which group objects lie in their run's unrecorded tail, and are kept (runTailPinMs). */
  readonly #tails: RunTails;
  /** Which old ones of those a tail walk may still need. */
  readonly #tailNeeds: TailNeeds;
  readonly #ticker: Ticker<ReaperTick>;

  constructor(deps: ReaperDeps, options: ReaperOptions = {}) {
    this.#deps = deps;
    this.#o = {
      intervalMs: options.intervalMs ?? 2_000, // 2 s
      perTick: options.perTick ?? 256,
      pagesPerTick: options.pagesPerTick ?? 8,
      deadGraceMs: options.deadGraceMs ?? 10_000, // 10 s
      orphanAgeMs: options.orphanAgeMs ?? 60_000, // 60 s
      orphanSweepMs: options.orphanSweepMs ?? 20_000, // 20 s
      orphanSweepKeys: options.orphanSweepKeys ?? 10_000,
      liveRecheckMs: options.liveRecheckMs ?? 15_000, // 15 s
      runTailPinMs: options.runTailPinMs ?? 3_600_000, // 1 h
    };
    this.#tails = new RunTails(deps.kv, deps.keys);
    this.#tailNeeds = new TailNeeds(deps.kv, deps.keys, deps.store);
    this.#ticker = new Ticker(() => this.tick(), this.#o.intervalMs, (err) => this.#deps.log?.warn({ err }, 'object reaper failed; retried at the next tick'));
  }

  start(): void {
    this.#ticker.start();
  }

  stop(): Promise<void> {
    return this.#ticker.stop();
  }

  async tick(now = Date.now()): Promise<ReaperTick> {
    const out: ReaperTick = { holder: false, destroyed: 0, deleted: 0, orphans: 0, deposed: false };
    const h = this.#deps.holder();
    if (h === null) {
      this.#orphans.clear(); // a later holding starts its orphan clock anew
      this.#fenced = null; // and reads the fences anew
      this.#quiet = null; // and goes round the records at once
      return out;
    }
    out.holder = true;
    out.destroyed = await this.#markDead(h, now, out);
    if (!out.deposed) out.deleted = await this.#deleteDestroyed(h, out);
    if (!out.deposed && now - this.#lastSweep >= this.#o.orphanSweepMs) {
      this.#lastSweep = now;
      out.orphans = await this.#sweepOrphans(h, now);
    }
    if (out.destroyed + out.deleted + out.orphans > 0 || out.deposed) {
      this.#deps.log?.info({ destroyed: out.destroyed, deleted: out.deleted, orphans: out.orphans, deposed: out.deposed }, 'object reaper');
    }
    return out;
  }

  /**
   * Step 1: pages of o/ records from the cursor (up to pagesPerTick, and once round at most); the
   * unreferenced ones become d/ records.
   */
  async #markDead(h: HolderCompare, now: number, out: ReaperTick): Promise<number> {
    const { kv, keys } = this.#deps;
    const prefix = keys.objects;
    let destroyed = 0;
    if (this.#cursor === null) {
      // A pass begins, unless the last went round quietly and neither etcd nor the clock has moved past it since.
      const quiet = this.#quiet;
      if (quiet !== null && now < quiet.wakeAt && (await kv.get(h.key, LEDGER_DEADLINE_MS)).revision === quiet.revision) return 0;
      this.#quiet = null;
      this.#pass = { revision: null, wakeAt: Infinity, destroyed: 0 };
    }
    const pass = this.#pass;
    for (let pages = 0; pages < this.#o.pagesPerTick && !out.deposed; pages++) {
      const page = await kv.rangePage(this.#cursor ?? prefix, prefix, this.#o.perTick, LEDGER_DEADLINE_MS);
      pass.revision ??= page.revision;
      // A run's objects are recorded in the order of their numbers, so after one too young for
      // the grace the rest of its run is too: skipped, and the next page starts past the run. A
      // tick then reads the old records and one page per busy run, not every record there is.
      const candidates: Array<{ objectKey: string; modRevision: number; at: number }> = [];
      const pending: Array<{ objectKey: string; modRevision: number; at: number; writer: string; n: number }> = [];
      let young: string | null = null;
      for (const p of page.kvs) {
        const objectKey = p.key.slice(prefix.length);
        if (young !== null && objectKey.startsWith(young)) continue;
        const record = readRecord(p.value);
        if (now - record.at < this.#o.deadGraceMs) {
          young = objectRun(objectKey);
          pass.wakeAt = Math.min(pass.wakeAt, record.at + this.#o.deadGraceMs);
        } else if (record.q) {
          const g = parseGroupObjectKey(objectKey);
          if (g !== null) pending.push({ objectKey, modRevision: p.modRevision, at: record.at, writer: g.writer, n: g.n });
        } else candidates.push({ objectKey, modRevision: p.modRevision, at: record.at });
      }
      // A group object of the records format (part-records.ts) is a candidate only once its
      // writer's index cursor is past it: until then a pending record may name it. The cursor
      // never moves back, so an object found past it stays past it.
      for (const c of await this.#indexedPast(pending)) candidates.push(c);
      const last = page.kvs[page.kvs.length - 1]?.key.slice(prefix.length);
      this.#cursor = !page.more || last === undefined ? null : young !== null && last.startsWith(young) ? prefix + pastRun(young) : `${prefix}${last}\0`;
      const candidateKeys: string[] = [];
      for (const c of candidates) candidateKeys.push(c.objectKey);
      const referenced = await this.#referenced(candidateKeys);
      const onlyMarked: Array<{ objectKey: string; names: readonly string[] }> = [];
      for (const [objectKey, r] of referenced) if (r.refs.length === 0 && r.marker !== null) onlyMarked.push({ objectKey, names: r.marker.names });
      const marked = await this.#liveMarked(onlyMarked, now);
      let dead: Array<Dead & { at: number }> = [];
      for (const c of candidates) {
        const r = referenced.get(c.objectKey);
        if (r === undefined) dead.push({ objectKey: c.objectKey, modRevision: c.modRevision, at: c.at });
        else if (r.refs.length > 0) {
          if (c.objectKey.startsWith('c/') || c.objectKey.startsWith('p/')) await this.#dropDanglingRefs(h, c.objectKey, r.refs);
        } else if (r.marker !== null && !marked.has(c.objectKey)) dead.push({ objectKey: c.objectKey, modRevision: c.modRevision, at: c.at, marker: r.marker.modRevision });
      }
      // Of those nothing refers to, a run's unrecorded tail is kept for its walk: a young one until
      // its pin ends, an old one a walk may still need (or whose objects could not be read) looked
      // at again like a live object.
      const unpinned = await this.#unpinned(dead, now);
      if (unpinned.length < dead.length) {
        const free = new Set<string>();
        for (const d of unpinned) free.add(d.objectKey);
        for (const d of dead) {
          if (!free.has(d.objectKey)) pass.wakeAt = Math.min(pass.wakeAt, now - d.at < this.#o.runTailPinMs ? d.at + this.#o.runTailPinMs : now + this.#o.liveRecheckMs);
        }
      }
      dead = unpinned;
      for (const batch of markBatches(dead)) {
        if (out.deposed) break;
        const marked = await this.#markBatch(h, batch, out);
        destroyed += marked;
        pass.destroyed += marked;
      }
      if (this.#cursor === null) {
        this.#fenced = null; // the next pass reads the fences again
        // One that marked objects moved the revision itself: only a pass that marked nothing can be quiet.
        if (!out.deposed && pass.destroyed === 0 && pass.revision !== null) this.#quiet = { revision: pass.revision, wakeAt: pass.wakeAt };
        break; // once round the records: the rest is the next tick's
      }
    }
    return destroyed;
  }

  /**
   * Of `candidates` (recorded at `at`), those not kept in their run's unrecorded tail
   * (run-tails.ts): a group object above its run's h/ mark is kept, so a tail walk that comes
   * after its other streams' entries are compacted away still finds every object of the run —
   * one younger than runTailPinMs without looking, an older one while a walk may still need it
   * (TailNeeds reads the tail's part tables: an early part its stream's records do not reach).
   */
  async #unpinned<T extends { objectKey: string; at: number }>(candidates: T[], now: number): Promise<T[]> {
    // Without create-only puts no group is acknowledged before it is recorded: no run has a tail to walk.
    if (this.#deps.store.createOnly !== true) return candidates;
    const groups: string[] = [];
    for (const c of candidates) if (c.objectKey.startsWith('g/')) groups.push(c.objectKey);
    if (groups.length === 0) return candidates;
    const inTail = await this.#tails.inTail(groups);
    if (inTail.size === 0) return candidates;
    const old = new Set<string>();
    for (const c of candidates) if (inTail.has(c.objectKey) && now - c.at >= this.#o.runTailPinMs) old.add(c.objectKey);
    const needed = old.size === 0 ? old : await this.#tailNeeds.needed([...old], this.#o.perTick);
    return candidates.filter((c) => !inTail.has(c.objectKey) || (old.has(c.objectKey) && !needed.has(c.objectKey)));
  }

  /** Of the records format's group objects `pending`, those their writer's index cursor (x/) is past, read with one etcd call per page. */
  async #indexedPast<T extends { writer: string; n: number }>(pending: readonly T[]): Promise<T[]> {
    if (pending.length === 0) return [];
    const { kv, keys } = this.#deps;
    const writers = [...new Set(pending.map((p) => p.writer))];
    const { results } = await kv.readMany(writers.map((w) => ({ get: keys.indexCursor(w) })), LEDGER_DEADLINE_MS);
    const past = new Map<string, number>();
    writers.forEach((w, k) => past.set(w, decodeCursor(results[k]!.kvs[0]?.value ?? null).o));
    return pending.filter((p) => p.n < past.get(p.writer)!);
  }

  /**
   * Of `objectKeys` (a page's, in key order), those with any key under `r/<object>/`: the stream
   * segments of their references (`r/<object>/<segment>`) and their reference marker, if any (the
   * entries it names, and its mod revision). One read of the r/ keys from the first one's to the
   * last one's (values too: a marker's list; a reference's value is one byte). A read: each
   * marking transaction checks again, atomically, that nothing refers to the object.
   */
  async #referenced(objectKeys: readonly string[]): Promise<Map<string, References>> {
    const out = new Map<string, References>();
    if (objectKeys.length === 0) return out;
    const { kv, keys } = this.#deps;
    const prefixes: Array<{ k: string; p: string }> = [];
    for (const k of objectKeys) prefixes.push({ k, p: keys.refs(k) });
    prefixes.sort(byPrefix);
    const lastPrefix = prefixes[prefixes.length - 1]!.p;
    // Both in key order: walk the prefixes beside the references (no object key is another's prefix).
    let at = 0;
    pages: for await (const page of scanPages(kv, keys.references, 1000, { from: prefixes[0]!.p })) for (const r of page) {
      if (r.key > lastPrefix && !r.key.startsWith(lastPrefix)) break pages;
      while (at < prefixes.length && prefixes[at]!.p < r.key && !r.key.startsWith(prefixes[at]!.p)) at++;
      if (at < prefixes.length && r.key.startsWith(prefixes[at]!.p)) {
        const { k, p } = prefixes[at]!;
        let o = out.get(k);
        if (o === undefined) out.set(k, (o = { refs: [], marker: null }));
        const segment = r.key.slice(p.length);
        const names = segment === '' ? markerNames(r.value) : null;
        if (names !== null) o.marker = { names, modRevision: r.modRevision };
        // A marker that is not a list of names is kept as a reference: the object is never reaped on its word.
        else o.refs.push(segment);
      }
    }
    return out;
  }

  /**
   * Of the objects whose reference marker is all that refers to them, those that an entry the
   * marker names still points into (read now, up to MARKED_READS entries an etcd call): an entry
   * gone (trimmed, deleted, compacted away) or holding another object (a compacted run keeps its
   * first entry's key) lets go of it. First one entry per object (the one that held it at the last
   * pass, or its first), then the rest of those whose first let go: a live object is read once.
   */
  async #liveMarked(all: ReadonlyArray<{ objectKey: string; names: readonly string[] }>, now: number): Promise<Set<string>> {
    const live = new Set<string>();
    // Loops, not callbacks made each pass (a callback's optimized code goes with its last closure: byPrefix).
    const objects: Array<{ objectKey: string; names: readonly string[] }> = [];
    for (const o of all) {
      const seen = this.#liveBy.get(o.objectKey);
      if (seen === undefined || now - seen.at >= this.#o.liveRecheckMs) objects.push(o);
      else {
        live.add(o.objectKey);
        this.#pass.wakeAt = Math.min(this.#pass.wakeAt, seen.at + this.#o.liveRecheckMs);
      }
    }
    const first: Array<{ objectKey: string; name: string }> = [];
    const tried = new Map<string, string>();
    for (const { objectKey, names } of objects) {
      const cached = this.#liveBy.get(objectKey)?.name;
      const name = cached !== undefined && names.includes(cached) ? cached : names[0];
      if (name === undefined) continue;
      first.push({ objectKey, name });
      tried.set(objectKey, name);
    }
    await this.#readMarked(first, live, now);
    const rest: Array<{ objectKey: string; name: string }> = [];
    for (const { objectKey, names } of objects) {
      if (live.has(objectKey)) continue;
      for (const name of names) if (name !== tried.get(objectKey)) rest.push({ objectKey, name });
    }
    await this.#readMarked(rest, live, now);
    for (const { objectKey } of objects) if (!live.has(objectKey)) this.#liveBy.delete(objectKey);
    return live;
  }

  /** Read the named entries (MARKED_READS an etcd call); an object one of them points into is live, and remembered by that entry. */
  async #readMarked(reads: ReadonlyArray<{ objectKey: string; name: string }>, live: Set<string>, now: number): Promise<void> {
    const { kv, keys } = this.#deps;
    for (let i = 0; i < reads.length; i += MARKED_READS) {
      const batch = reads.slice(i, i + MARKED_READS);
      const gets: LedgerRead[] = [];
      for (const b of batch) gets.push({ get: keys.entryOfMarker(b.name) });
      const r = await kv.readMany(gets, LEDGER_DEADLINE_MS);
      for (let j = 0; j < batch.length; j++) {
        const b = batch[j]!;
        const kv0 = r.results[j]?.kvs[0];
        // An entry whose value cannot be read may point anywhere: it keeps the object.
        if (kv0 === undefined || live.has(b.objectKey) || !pointsInto(kv0.value, b.objectKey)) continue;
        live.add(b.objectKey);
        if (this.#liveBy.size >= LIVE_KEPT && !this.#liveBy.has(b.objectKey)) this.#liveBy.delete(this.#liveBy.keys().next().value!);
        this.#liveBy.set(b.objectKey, { name: b.name, at: now });
      }
    }
  }

  /** Mark a batch of dead objects destroyed in one transaction; when it fails and this node still holds the lease, each on its own. */
  async #markBatch(h: HolderCompare, dead: readonly Dead[], out: ReaperTick): Promise<number> {
    const { kv, keys } = this.#deps;
    const at = json({ at: Date.now() });
    const all: Marking[] = [];
    const compare: LedgerCompare[] = [h];
    const ops: LedgerOp[] = [];
    for (const d of dead) {
      const m = marking(keys, d, at);
      all.push(m);
      compare.push(...m.compare);
      ops.push(...m.ops);
    }
    const res = await kv.txnOnce(compare, ops, []);
    if (res.succeeded) return dead.length;
    if (await this.#deposed(h)) {
      out.deposed = true;
      return 0;
    }
    // A reference or a record changed since the read: the others are still dead, each on its own.
    let destroyed = 0;
    for (const m of dead.length > 1 ? all : []) {
      if ((await kv.txnOnce([h, ...m.compare], m.ops, [])).succeeded) destroyed++;
      else if (await this.#deposed(h)) {
        out.deposed = true;
        break;
      }
    }
    return destroyed;
  }

  /**
   * A compacted object holds one stream's frames, a producer snapshot object one stream's
   * producers. A delete that read the stream's entries (or `p/`) before a compaction (or a
   * snapshot) committed removes them by key but leaves the new object's reference behind; once
   * the stream's fence is gone (the delete's last step) such a reference is dangling. It is removed
   * here under the lease and `f/` still absent, and the object is dead at a later tick.
   *
   * Every live compacted object comes here at each pass over the o/ records (one per stream and
   * size tier, thousands on a node of many streams). A read of each one's references and each
   * stream's fence, every pass, was an idle node's main etcd load (some 700 reads a second with
   * 1,000 compacted streams, a fifth of a core on the maintenance thread): now the references come
   * from the page's read (#referenced) and the fences from one keys-only scan a pass (#fenced), and
   * only a reference whose stream had no fence then is looked at on its own. A stream deleted
   * after that scan is found at the next pass: its object is freed a pass later, no more.
   */
  async #dropDanglingRefs(h: HolderCompare, objectKey: string, segments: readonly string[]): Promise<void> {
    const { kv, keys } = this.#deps;
    const fenced = this.#fenced ?? (this.#fenced = await this.#fences());
    for (const segment of segments) {
      if (fenced.has(segment)) continue;
      const fence = keys.fence(streamOfSegment(segment));
      if ((await kv.get(fence, LEDGER_DEADLINE_MS)).kv !== null) continue; // made since the scan
      const ref = `${keys.refs(objectKey)}${segment}`;
      const res = await kv.txnOnce([h, { key: fence, absent: true }], [{ delete: ref }], []);
      if (res.succeeded) this.#deps.log?.info({ object: objectKey, ref }, 'dangling reference of a deleted stream removed');
    }
  }

  /** The `f/` key segments there are now (keys only, pages of 1,000). */
  async #fences(): Promise<Set<string>> {
    const { kv, keys } = this.#deps;
    const out = new Set<string>();
    for await (const page of scanPages(kv, keys.fences, 1000, { keysOnly: true })) for (const p of page) out.add(p.key.slice(keys.fences.length));
    return out;
  }

  /**
   * Step 2: delete the store objects of d/ records (this holder's and any left by an earlier one),
   * then the records, page by page (up to pagesPerTick).
   */
  async #deleteDestroyed(h: HolderCompare, out: ReaperTick): Promise<number> {
    const { kv, keys, store } = this.#deps;
    const prefix = keys.destroyedObjects;
    let deleted = 0;
    for (let pages = 0; pages < this.#o.pagesPerTick && !out.deposed; pages++) {
      const page = await kv.rangePage(prefix, prefix, this.#o.perTick, LEDGER_DEADLINE_MS, { keysOnly: true });
      if (page.kvs.length === 0) break;
      // A deposed holder that has not heard of it yet stops here, before deleting anything.
      if (await this.#deposed(h)) {
        out.deposed = true;
        break;
      }
      // A batch of store deletes, then one transaction removing their records under the lease: a
      // holder deposed meanwhile finds out there and deletes nothing more.
      for (let i = 0; i < page.kvs.length; i += DELETE_BATCH) {
        const batch = page.kvs.slice(i, i + DELETE_BATCH);
        await eachLimited(batch, DELETES_IN_FLIGHT, (p) => store.delete(p.key.slice(prefix.length)));
        if (!(await kv.txnOnce([h], batch.map((p) => ({ delete: p.key })), [])).succeeded) {
          out.deposed = true;
          break;
        }
        deleted += batch.length;
      }
      if (!page.more) break;
    }
    return deleted;
  }

  /**
   * Step 3: store objects without any ledger record for at least `orphanAgeMs` are deleted. One
   * sweep looks at up to `orphanSweepKeys` store keys, from where the previous one stopped.
   */
  async #sweepOrphans(h: HolderCompare, now: number): Promise<number> {
    const { kv, keys, store } = this.#deps;
    const destroyed = new Set<string>();
    for await (const page of scanPages(kv, keys.destroyedObjects, 1000, { keysOnly: true })) for (const p of page) destroyed.add(p.key.slice(keys.destroyedObjects.length));
    const seen = new Map<string, number>();
    let budget = this.#o.orphanSweepKeys;
    let { top, after } = this.#sweepAt;
    while (budget > 0 && top < OBJECT_PREFIXES.length) {
      const prefix = OBJECT_PREFIXES[top]!;
      // Both listings are in key order: walk the o/ records beside the store's keys, from the same place.
      const records = scanPrefix(kv, keys.object(prefix), 1000, { keysOnly: true, ...(after === null ? {} : { from: `${keys.object(after)}\0` }) })[Symbol.asyncIterator]();
      let rec = await records.next();
      const recordKey = (): string | null => (rec.done === true ? null : rec.value.key.slice(keys.objects.length));
      let last: string | null = null;
      let ended = true;
      for await (const { key, size } of store.list(prefix, after ?? undefined)) {
        if (budget === 0) {
          ended = false;
          break;
        }
        budget--;
        last = key;
        let r = recordKey();
        while (r !== null && r < key) {
          rec = await records.next();
          r = recordKey();
        }
        if (r === key || destroyed.has(key)) continue;
        if (mayBeMarker(size) && (await this.#isMarker(key))) continue;
        seen.set(key, this.#orphans.get(key) ?? now);
      }
      await records.return?.(undefined);
      // Candidates in the stretch just looked at that it did not find again are gone or recorded now.
      for (const key of this.#orphans.keys()) {
        if (key.startsWith(prefix) && (after === null || key > after) && (ended || key <= last!) && !seen.has(key)) this.#orphans.delete(key);
      }
      if (ended) {
        top++;
        after = null;
      } else {
        after = last;
      }
    }
    // Past the last prefix: the next sweep starts the store over.
    this.#sweepAt = top < OBJECT_PREFIXES.length ? { top, after } : { top: 0, after: null };
    for (const [key, first] of seen) this.#orphans.set(key, first);
    let ripe = [...seen].filter(([, first]) => now - first >= this.#o.orphanAgeMs);
    // A group object put and never recorded may be the tail of a run whose writer died or was
    // fenced: kept like a recorded one (#unpinned), from when a sweep first saw it.
    ripe = (await this.#unpinned(ripe.map(([objectKey, at]) => ({ objectKey, at })), now)).map((r): [string, number] => [r.objectKey, r.at]).slice(0, this.#o.perTick);
    if (ripe.length === 0 || (await this.#deposed(h))) return 0;
    let deleted = 0;
    await eachLimited(ripe, 8, async ([key]) => {
      // Checked once more right before: a commit may have named it since the listing.
      const [o, d] = await Promise.all([kv.get(keys.object(key), LEDGER_DEADLINE_MS), kv.get(keys.destroyed(key), LEDGER_DEADLINE_MS)]);
      if (o.kv !== null || d.kv !== null) return;
      await store.delete(key);
      this.#orphans.delete(key);
      deleted++;
      this.#deps.log?.info({ object: key }, 'orphan object deleted (stored, never recorded in the ledger)');
    });
    return deleted;
  }

  /**
   * A fence marker (group-object.ts) holds a writer's next object name so that writer can never
   * take it: it is never an orphan (deleting it would let a paused writer acknowledge a group
   * that nobody recovers). Markers are a few dozen bytes, one per fenced writer.
   */
  async #isMarker(key: string): Promise<boolean> {
    if (this.#markers.has(key)) return true;
    let body: Buffer;
    try {
      body = await this.#deps.store.get(key);
    } catch {
      return true; // unknown now (gone, or the store failed): not taken for an orphan this time
    }
    let marker = false;
    try {
      marker = readGroupObject(body).kind === 'marker';
    } catch {
      // Not a group object's trailer (a partial or foreign object): an orphan like any other.
    }
    if (marker) this.#markers.add(key);
    return marker;
  }

  /** Whether the maintenance key moved on from `h` (a linearizable read). */
  async #deposed(h: HolderCompare): Promise<boolean> {
    const cur = await this.#deps.kv.get(h.key, LEDGER_DEADLINE_MS);
    return cur.kv === null || cur.kv.modRevision !== h.modRevision;
  }
}

/** The first key after every key of the run (a run ends with `/`, and `0` follows `/`). */
function pastRun(run: string): string {
  return `${run.slice(0, -1)}0`;
}

/** The `at` of an o/ record (0 when it has none: old enough). */
/** An o/ record: when it was written (0 when it does not say) and whether it is a group object of the records format (`q: 1`). */
function readRecord(value: Buffer): { at: number; q: boolean } {
  try {
    const r = JSON.parse(value.toString('utf8')) as { at?: unknown; q?: unknown };
    return { at: typeof r.at === 'number' ? r.at : 0, q: r.q === 1 };
  } catch {
    return { at: 0, q: false };
  }
}

/** What refers to an object: the stream segments of its `r/<object>/<segment>` keys, and its reference marker (the entries it names, its revision) or null. */
interface References {
  refs: string[];
  marker: { names: string[]; modRevision: number } | null;
}

/** A dead object as marked: its o/ record's revision, and its reference marker's when it has one. */
interface Dead {
  objectKey: string;
  modRevision: number;
  marker?: number;
}

/** Dead objects cut into marking transactions of at most MARK_MAX_OPS compares and operations. */
/** A dead object's marking: what its transaction compares and does. */
interface Marking {
  compare: LedgerCompare[];
  ops: LedgerOp[];
}

/** The marking of `d` destroyed at `at` (#markBatch). */
function marking(keys: LedgerKeys, d: Dead, at: Buffer): Marking {
  return d.marker === undefined
    ? {
        // The references were read before; the txn checks again that nothing refers to the object, atomically.
        compare: [{ key: keys.object(d.objectKey), modRevision: d.modRevision }, { prefix: keys.refs(d.objectKey), empty: true }],
        ops: [{ put: keys.destroyed(d.objectKey), value: at }, { delete: keys.object(d.objectKey) }],
      }
    : {
        // The entries the marker names were read dead. None is ever made to point into the
        // object again but by its writer's commit sent again, which puts the marker again too:
        // the marker's revision stands for them. A tail recovery's r/<o>/<stream> would come
        // after the marker, which sorts first.
        compare: [
          { key: keys.object(d.objectKey), modRevision: d.modRevision },
          { key: keys.referenceMarker(d.objectKey), modRevision: d.marker },
          { prefix: keys.refs(d.objectKey), empty: true, from: `${keys.referenceMarker(d.objectKey)}\0` },
        ],
        ops: [{ put: keys.destroyed(d.objectKey), value: at }, { delete: keys.object(d.objectKey) }, { delete: keys.referenceMarker(d.objectKey) }],
      };
}

/**
 * Reference prefixes in key order. Made once: V8 keeps the optimized code of a callback written
 * inline only while one of its closures lives, so one made each pass was compiled again after
 * every full collection, which this thread runs every second or two under load (perf/README.md).
 */
const byPrefix = (a: { p: string }, b: { p: string }): number => (a.p < b.p ? -1 : a.p > b.p ? 1 : 0);

function markBatches(dead: readonly Dead[]): Dead[][] {
  const out: Dead[][] = [];
  let batch: Dead[] = [];
  let ops = 0;
  for (const d of dead) {
    const n = d.marker === undefined ? 2 : 3;
    if (ops + n > MARK_MAX_OPS) {
      out.push(batch);
      batch = [];
      ops = 0;
    }
    batch.push(d);
    ops += n;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}

/** The entries a reference marker names (ledger-keys.ts markedEntry), or null when it is not a list of names. */
function markerNames(value: Buffer): string[] | null {
  try {
    const v = JSON.parse(value.toString()) as unknown;
    return Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : null;
  } catch {
    return null;
  }
}

/**
 * Whether an entry's value points into `objectKey`, or cannot be read (then it may point anywhere,
 * and keeps the object). Entries are written `{"o":"<object>",…}` (ledger.ts, compaction.ts), and
 * object keys hold no character JSON escapes: the object is read from that prefix without parsing;
 * anything else is parsed.
 */
function pointsInto(value: Buffer, objectKey: string): boolean {
  if (value.length > ENTRY_HEAD.length && value.toString('latin1', 0, ENTRY_HEAD.length) === ENTRY_HEAD) {
    const end = value.indexOf(0x22, ENTRY_HEAD.length); // the closing quote
    if (end > 0) return value.toString('latin1', ENTRY_HEAD.length, end) === objectKey;
  }
  try {
    const v = JSON.parse(value.toString()) as { o?: unknown };
    return typeof v.o !== 'string' || v.o === objectKey;
  } catch {
    return true;
  }
}
