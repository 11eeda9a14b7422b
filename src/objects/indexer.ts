/**
 * The indexer of the records format (part-records.ts; on the object maintenance thread):
 * on the writer's node, it turns the writer's settled part records into one entry per stream and
 * run, their frames copied into one compacted object, then moves the writer's index cursor past
 * them and deletes them.
 *
 *   tick, per writer of this node (`writers()`)
 *     read x/<writer> and the records after it         one read-only txn
 *     take the settled ones, in order                  (seen settleMs ago, or more than maxPending
 *                                                      waiting; at most maxRecords and maxBytes)
 *     per stream, its parts:
 *       placed here under the fence they were recorded under ──▶ indexed (wholly below the
 *         stream's start, m/ read 128 streams an etcd call: dropped)
 *       otherwise (moved away, opened again since, deleted) ──▶ stranded
 *     indexed: a part of inPlaceBytes or more (1 MiB) is its own run, its entry naming its group
 *       object where it is (no read, no copy); the others read (a small group object whole, once
 *       for all its parts), every frame checked (a damaged part is stranded: never copied); the
 *       runs (a stream's parts of contiguous seqs) concatenated into one c/ object, PUT under a
 *       key never used, o/<c> recorded
 *     txn per ≤ 40 runs: If(f/<stream> == fence, o/<c> as recorded)
 *                        Then(i/<stream>/<epoch>.<first counter> = the run, r/<c or g>/<stream>)
 *       a stream whose fence moved meanwhile ──▶ stranded
 *     stranded: txn per stream: If(f/<stream> exists) Then(u/<stream>/<epoch>.<counter> = the part,
 *       r/<o>/<stream>) (a deleted stream's parts are dropped)
 *     txn: x/<writer> = {q: the last record taken, o: past its objects}, delete the records taken
 *
 * Every part is in a record until its entry or its stranded copy is written (part-records.ts): a
 * crash between two steps leaves it in both, told apart by seqs, and the next tick (which finds
 * the records still there) writes the same entries under the same keys again.
 */
import { type EntryValue } from './ledger';
import { type LedgerKeys, fenceValue, parseGroupObjectKey } from './ledger-keys';
import { LEDGER_DEADLINE_MS, type LedgerCompare, type LedgerKv, type LedgerOp, type MaintenanceLog, type MaintenanceStore, framesProblem, json, scanPages } from './maintenance-ledger';
import { type IndexCursor, type PartRecord, type RecordedPart, decodeCursor, decodePartRecord, encodeCursor, partsByStream, uncovered } from './part-records';
import { type CompactedCounter, GROUP_OBJECT_WHOLE_MAX, type PlacedStream, putCompacted } from './compaction';
import { RangeCache } from './range-cache';
import { Ticker } from './ticker';

export interface IndexerOptions {
  /** A record is taken once seen this long ago (ms; default 10 s): a stream's parts of that long go into one entry. */
  settleMs?: number;
  /** More records than this waiting: the oldest are taken at once (default 256). */
  maxPending?: number;
  /** Records taken per writer and tick (default 1,000). */
  maxRecords?: number;
  /** Bytes of parts taken per writer and tick (default 16 MiB): one compacted object. */
  maxBytes?: number;
  /** Period of the timer `start()` sets (ms; default 1 s). */
  intervalMs?: number;
  /**
   * A part of this many bytes or more is indexed where it is, not copied (default 1 MiB, the size
   * from which compaction leaves an entry alone): its entry names its group object, which its
   * reference keeps. Copying every byte of large appends again cost the object store a second
   * write of all of them, and a node's moves under such a load waited behind it.
   */
  inPlaceBytes?: number;
}

export interface IndexerDeps {
  kv: LedgerKv;
  keys: LedgerKeys;
  store: MaintenanceStore;
  /** The streams this node has placed now, with their fences; the same array again means the same streams (CompactionDeps.placed). */
  placed: () => readonly PlacedStream[] | Promise<readonly PlacedStream[]>;
  /** The writers (`g/<node>/<nodeEpoch>/<worker>/`) whose records this node indexes: its own (ownWriters). */
  writers: () => readonly string[] | Promise<readonly string[]>;
  /**
   * Writers of this node's earlier starts with records left (absent: none): nobody indexes them,
   * so every part of theirs is stranded at once, for its stream's next opener (a reopen after the
   * restart usually recorded it already: then its stranded copy goes at the next open).
   */
  retired?: () => readonly string[] | Promise<readonly string[]>;
  /** The compacted objects' key counter, shared with compaction: a key is never used twice. */
  counter: CompactedCounter;
  log?: MaintenanceLog;
}

/** What a tick did (tests, logs). */
export interface IndexTick {
  records: number;
  entries: number;
  stranded: number;
  bytes: number;
}

/** Streams a txn of entries names (design: ≤ 40 a txn: f/ compare, i/ and r/ puts each). */
const STREAMS_PER_TXN = 40;

/** What the indexer holds of a writer between ticks (Indexer.#writers). */
interface WriterState {
  cursor: IndexCursor;
  /** The key to read the next records from. */
  from: string;
  /** `rev`: the record's revision (written once: when it was written). */
  records: Array<PartRecord & { key: string; seen: number; rev: number }>;
  /** The last read stopped at its limit: more records wait in etcd. */
  more: boolean;
}

/** A retired writer's streams are placed nowhere: its parts are all stranded. */
const NOTHING_PLACED: ReadonlyMap<string, PlacedStream> = new Map();

/** A stream's `m/` record as the indexer read it: its start, its revision, and the revision it was created at (this stream of the name was). */
interface Start {
  start: number;
  rev: number;
  born: number;
}

/** One stream's run of parts: contiguous seqs under one epoch, one entry. */
interface Run {
  stream: PlacedStream;
  /** The stream's m/ record as read when its parts were sorted (its mod revision; 0: none): its start then. */
  metaRev: number;
  parts: RecordedPart[];
  /** The parts' frames, to copy; null: one large part indexed where it is (IndexerOptions.inPlaceBytes). */
  bytes: Buffer[] | null;
}

export class Indexer {
  readonly #deps: IndexerDeps;
  readonly #o: Required<IndexerOptions>;
  /**
   * Per writer: its cursor and the records read after it, not taken yet, with when each was first
   * seen (records carry no time). Each tick reads only the records written since: a tick that
   * read every pending record again, to take none of them (not settled yet), cost the idle node
   * a tenth of a core under W2's load. Only this indexer moves its writers' cursors and takes
   * their records; a failed tick forgets the writer, which is read afresh.
   */
  readonly #writers = new Map<string, WriterState>();
  #placedByName: { from: readonly PlacedStream[]; map: Map<string, PlacedStream> } | null = null;
  readonly #objects = new RangeCache<Buffer>({ budgetBytes: 16 << 20, sizeOf: (b) => (b as Buffer).length, remember: () => false });
  /** Bytes read from the store (parts, or the small group objects holding them) and written to it (compacted objects). */
  #readBytes = 0;
  #writtenBytes = 0;
  readonly #ticker: Ticker<IndexTick>;

  constructor(deps: IndexerDeps, options: IndexerOptions = {}) {
    this.#deps = deps;
    this.#o = {
      settleMs: options.settleMs ?? 10_000,
      maxPending: options.maxPending ?? 256,
      maxRecords: options.maxRecords ?? 1_000,
      maxBytes: options.maxBytes ?? 16 << 20,
      intervalMs: options.intervalMs ?? 1_000,
      inPlaceBytes: options.inPlaceBytes ?? 1 << 20, // 1 MiB
    };
    // A tick that took a full batch is followed at once (ticker.ts): the records must not pile up.
    this.#ticker = new Ticker(
      () => this.tick(),
      this.#o.intervalMs,
      (err) => this.#deps.log?.warn({ err }, 'indexing the ledger\'s part records failed; retried at the next tick'),
      (t) => t.records >= this.#o.maxRecords,
    );
  }

  start(): void {
    this.#ticker.start();
  }

  /** Bytes read and written so far (svc_objects_compaction_bytes_total counts them with compaction's). */
  stats(): { readBytes: number; writtenBytes: number } {
    return { readBytes: this.#readBytes, writtenBytes: this.#writtenBytes };
  }

  /** Stops the timer and waits for the tick in progress. */
  stop(): Promise<void> {
    return this.#ticker.stop();
  }

  /** One pass over this node's writers. */
  async tick(now = Date.now()): Promise<IndexTick> {
    const done: IndexTick = { records: 0, entries: 0, stranded: 0, bytes: 0 };
    const placed = this.#byName(await this.#deps.placed());
    for (const w of await this.#deps.writers()) await this.#writer(w, placed, now, done);
    for (const w of (await this.#deps.retired?.()) ?? []) await this.#writer(w, NOTHING_PLACED, now, done, true);
    return done;
  }

  /** `placed` by name, made again only when the list is a new one (the same array means the same streams: IndexerDeps.placed). */
  #byName(placed: readonly PlacedStream[]): ReadonlyMap<string, PlacedStream> {
    if (this.#placedByName !== null && this.#placedByName.from === placed) return this.#placedByName.map;
    const map = new Map<string, PlacedStream>();
    for (const s of placed) map.set(s.name, s);
    this.#placedByName = { from: placed, map };
    return map;
  }

  async #writer(writer: string, placed: ReadonlyMap<string, PlacedStream>, now: number, done: IndexTick, retired = false): Promise<void> {
    try {
      await this.#take(writer, placed, now, done, retired);
    } catch (err) {
      this.#writers.delete(writer);
      throw err;
    }
  }

  /** The records written since the last tick, read (the cursor too, the first time). */
  async #state(writer: string, now: number): Promise<WriterState> {
    const { kv, keys } = this.#deps;
    const prefix = keys.partRecords(writer);
    let state = this.#writers.get(writer);
    if (state === undefined) {
      const cursor = decodeCursor((await kv.get(keys.indexCursor(writer), LEDGER_DEADLINE_MS)).kv?.value ?? null);
      state = { cursor, from: cursor.q === '' ? prefix : `${prefix}${cursor.q}\0`, records: [], more: false };
      this.#writers.set(writer, state);
    }
    const room = this.#o.maxPending + 1 - state.records.length;
    if (room > 0) {
      const page = await kv.rangePage(state.from, prefix, room, LEDGER_DEADLINE_MS);
      for (const p of page.kvs) state.records.push({ key: p.key, name: p.key.slice(prefix.length), parts: decodePartRecord(p.value), seen: now, rev: p.modRevision });
      const last = page.kvs[page.kvs.length - 1];
      if (last !== undefined) state.from = `${last.key}\0`;
      state.more = page.more;
    }
    return state;
  }

  async #take(writer: string, placed: ReadonlyMap<string, PlacedStream>, now: number, done: IndexTick, retired: boolean): Promise<void> {
    const { kv, keys } = this.#deps;
    const state = await this.#state(writer, now);
    // The oldest first, while settled (or while too many wait), within the tick's bounds.
    const crowded = retired || state.more || state.records.length > this.#o.maxPending;
    const taken: WriterState['records'] = [];
    let bytes = 0;
    for (const r of state.records) {
      if (!crowded && now - r.seen < this.#o.settleMs) break;
      const size = r.parts.reduce((n, p) => n + p.len, 0);
      if (taken.length >= this.#o.maxRecords || (taken.length > 0 && bytes + size > this.#o.maxBytes)) break;
      taken.push(r);
      bytes += size;
    }
    if (taken.length === 0) return;
    const { runs, stranded, starts } = await this.#sort(taken, placed, writer);
    const fenced = await this.#index(runs, done);
    for (const r of fenced) for (const p of r.parts) stranded.push(p);
    await this.#strand(stranded, starts, done);
    // Past every object the taken records name: what they held is indexed or stranded now.
    let o = state.cursor.o;
    for (const r of taken) for (const p of r.parts) o = Math.max(o, (parseGroupObjectKey(p.o)?.n ?? -1) + 1);
    // The records taken are the first ones after the cursor, in key order: one range delete.
    const last = taken[taken.length - 1]!;
    const cursor: IndexCursor = { q: last.name, o };
    await kv.txnOnce([], [{ put: keys.indexCursor(writer), value: encodeCursor(cursor) }, { deleteFrom: taken[0]!.key, to: `${last.key}\0` }], []);
    state.cursor = cursor;
    state.records.splice(0, taken.length);
    done.records += taken.length;
  }

  /**
   * The taken records' parts: runs to index (their bytes read and checked), and the parts to
   * strand; with the `m/` records of their streams as read (#starts). A part of a stream without
   * `m/` (deleted) or of an earlier stream of the name (its record older than the `m/`: deleted
   * and created again since) is dropped: its stream is gone.
   */
  async #sort(taken: ReadonlyArray<PartRecord & { rev: number }>, placed: ReadonlyMap<string, PlacedStream>, writer: string): Promise<{ runs: Run[]; stranded: RecordedPart[]; starts: Map<string, Start> }> {
    const node = Number(writer.split('/')[1]);
    const names = new Set<string>();
    for (const r of taken) for (const p of r.parts) names.add(p.stream);
    const starts = await this.#starts([...names]);
    const live: RecordedPart[] = [];
    for (const r of taken) {
      for (const p of r.parts) {
        const m = starts.get(p.stream);
        if (m !== undefined && r.rev >= m.born) live.push(p);
      }
    }
    const byStream = partsByStream(live);
    const runs: Run[] = [];
    const stranded: RecordedPart[] = [];
    for (const [name, parts] of byStream) {
      const s = placed.get(name);
      const { start, rev } = starts.get(name)!;
      let run: Run | null = null;
      for (const p of parts) {
        // Recorded under the fence this node holds now: else it moved, or was opened again (its opener recorded the part).
        const ours = s !== undefined && s.fence.nodeId === node && s.fence.epoch === p.epoch;
        // Wholly below the stream's start (trimmed after it was recorded, before it was indexed:
        // the trim removed the entries there were then): no read reaches it, so it gets no entry,
        // which nothing would ever remove.
        if (ours && p.to <= start) {
          run = null;
          continue;
        }
        if (ours && p.len >= this.#o.inPlaceBytes) {
          // Indexed where it is: not read, not checked (its readers check its frames, as any entry's).
          runs.push({ stream: s, metaRev: rev, parts: [p], bytes: null });
          run = null;
          continue;
        }
        const bytes = ours ? await this.#bytes(p) : null;
        if (bytes === null) {
          stranded.push(p);
          run = null;
          continue;
        }
        const last = run?.parts[run.parts.length - 1];
        if (run === null || last === undefined || last.to !== p.from) runs.push((run = { stream: s!, metaRev: rev, parts: [], bytes: [] }));
        run.parts.push(p);
        run.bytes!.push(bytes);
      }
    }
    return { runs, stranded, starts };
  }

  /** The streams' `m/` records (#sort, Start), read 128 an etcd call; a stream without `m/` is left out. */
  async #starts(streams: readonly string[]): Promise<Map<string, Start>> {
    const { kv, keys } = this.#deps;
    const out = new Map<string, Start>();
    for (let i = 0; i < streams.length; i += 128) {
      const batch = streams.slice(i, i + 128);
      const { results } = await kv.readMany(batch.map((s) => ({ get: keys.meta(s) })), LEDGER_DEADLINE_MS);
      batch.forEach((s, k) => {
        const m = results[k]?.kvs[0];
        if (m !== undefined) out.set(s, { start: (JSON.parse(m.value.toString()) as { startSeq?: number }).startSeq ?? 0, rev: m.modRevision, born: m.createRevision ?? 0 });
      });
    }
    return out;
  }

  /** A part's frames, checked; null when damaged (it is stranded: never copied, its readers get data_corrupt). */
  async #bytes(p: RecordedPart): Promise<Buffer | null> {
    if (p.len === 0) return Buffer.alloc(0);
    const { store } = this.#deps;
    let b: Buffer;
    if (p.size !== undefined && p.size <= GROUP_OBJECT_WHOLE_MAX && p.off + p.len <= p.size) {
      const whole = await this.#objects.get(p.o, async () => {
        const body = await store.get(p.o);
        this.#readBytes += body.length;
        return body;
      });
      b = whole.subarray(p.off, Math.min(whole.length, p.off + p.len));
    } else {
      b = await store.get(p.o, { offset: p.off, length: p.len });
      this.#readBytes += b.length;
    }
    const problem = b.length !== p.len ? `${b.length} bytes where ${p.len} were recorded` : framesProblem(b);
    if (problem === null) return b;
    this.#deps.log?.error({ stream: p.stream, object: p.o, from: p.from, to: p.to }, `indexing skipped a damaged part: ${problem}`);
    return null;
  }

  /** The runs' object and their entries; the runs whose stream's fence moved meanwhile. */
  async #index(runs: readonly Run[], done: IndexTick): Promise<Run[]> {
    if (runs.length === 0) return [];
    const { kv, keys } = this.#deps;
    const body: Buffer[] = [];
    const at = new Map<Run, { off: number; len: number }>();
    let size = 0;
    const copied = runs.filter((r) => r.bytes !== null);
    for (const r of copied) {
      const off = size;
      for (const b of r.bytes!) {
        body.push(b);
        size += b.length;
      }
      at.set(r, { off, len: size - off });
    }
    // The compacted object, when a run is copied: its key and the revision of its o/ record.
    let compacted: { key: string; recorded: number } | null = null;
    if (copied.length > 0) {
      // Named after the lowest stream id among the runs (compaction.ts, namesake: few directories on a file: store).
      const namesake = copied.reduce((a, r) => (r.stream.streamId < a.stream.streamId ? r : a)).stream;
      const key = await putCompacted(this.#deps.store, this.#deps.counter, namesake, body, this.#deps.log);
      // Recorded first, and compared by each txn: the reaper may take an object without references for dead.
      compacted = { key, recorded: (await kv.txnOnce([], [{ put: keys.object(key), value: json({ bytes: size, at: Date.now() }) }], [])).revision };
      done.bytes += size;
      this.#writtenBytes += size;
    }
    const entry = (r: Run): EntryValue => {
      const first = r.parts[0]!;
      // In place: the group object's range (the reaper keeps it by its cursor until this entry's reference is written).
      if (r.bytes === null) return { o: first.o, off: first.off, len: first.len, from: first.from, to: first.to, ...(first.size !== undefined ? { size: first.size } : {}) };
      const { off, len } = at.get(r)!;
      return { o: compacted!.key, off, len, from: first.from, to: r.parts[r.parts.length - 1]!.to, ...(size <= GROUP_OBJECT_WHOLE_MAX ? { size } : {}) };
    };
    const fenced: Run[] = [];
    for (let i = 0; i < runs.length; i += STREAMS_PER_TXN) {
      let chunk = runs.slice(i, i + STREAMS_PER_TXN);
      // A txn whose compare fails goes again without the streams whose fence moved (those are stranded).
      for (let attempt = 0; chunk.length > 0; attempt++) {
        if (await this.#entriesTxn(chunk, compacted, entry)) {
          done.entries += chunk.length;
          break;
        }
        const still = await this.#stillOurs(chunk.map((r) => r.stream));
        const moved = chunk.filter((r) => !still.has(r.stream.name));
        // A start moved since the parts were sorted (a trim or TTL expiry): some may now lie below
        // it. The records stay, and the next tick sorts them again against the new start.
        if (moved.length === 0 && (await this.#metaMoved(chunk))) throw new Error('indexing: a stream\'s start moved meanwhile; its records are taken again at the next tick');
        if (moved.length === 0 && attempt > 0) throw new Error(`indexing: the compacted object ${compacted?.key ?? '(none)'} was taken for dead before its entries were written`);
        fenced.push(...moved);
        chunk = chunk.filter((r) => still.has(r.stream.name));
      }
    }
    return fenced;
  }

  /** One txn of entries: each run's, under its stream's fence and the compacted object's record as written. */
  async #entriesTxn(chunk: readonly Run[], compacted: { key: string; recorded: number } | null, entry: (r: Run) => EntryValue): Promise<boolean> {
    const { kv, keys } = this.#deps;
    const compare: LedgerCompare[] = [];
    if (compacted !== null && chunk.some((r) => r.bytes !== null)) compare.push({ key: keys.object(compacted.key), modRevision: compacted.recorded });
    const ops: LedgerOp[] = [];
    const refs = new Set<string>();
    const streams = new Set<string>();
    for (const r of chunk) {
      if (!streams.has(r.stream.name)) {
        compare.push({ key: keys.fence(r.stream.name), value: Buffer.from(fenceValue(r.stream.fence)) });
        // The start its parts were sorted against (#sort drops those below it) is still the stream's.
        if (r.metaRev > 0) compare.push({ key: keys.meta(r.stream.name), modRevision: r.metaRev });
      }
      streams.add(r.stream.name);
      const first = r.parts[0]!;
      const e = entry(r);
      ops.push({ put: keys.entry(r.stream.name, first.epoch, first.counter), value: json(e) });
      refs.add(keys.ref(e.o, r.stream.name));
    }
    for (const ref of refs) ops.push({ put: ref, value: Buffer.from('1') });
    return (await kv.txnOnce(compare, ops, [])).succeeded;
  }

  /** Whether `stream` is still the stream of the name that `read` was read of (its fence and m/ there, m/ created then). */
  async #sameStream(stream: string, read: Start | undefined): Promise<boolean> {
    const { kv, keys } = this.#deps;
    const { results } = await kv.readMany([{ get: keys.fence(stream) }, { get: keys.meta(stream) }], LEDGER_DEADLINE_MS);
    const m = results[1]?.kvs[0];
    return results[0]?.kvs[0] !== undefined && m !== undefined && read !== undefined && (m.createRevision ?? 0) === read.born;
  }

  /** Whether the m/ record of a run's stream changed since its parts were sorted. */
  async #metaMoved(runs: readonly Run[]): Promise<boolean> {
    const { kv, keys } = this.#deps;
    const { results } = await kv.readMany(runs.map((r) => ({ get: keys.meta(r.stream.name) })), LEDGER_DEADLINE_MS);
    return runs.some((r, k) => r.metaRev > 0 && results[k]?.kvs[0]?.modRevision !== r.metaRev);
  }

  /** Of `streams`, those whose fence is still the one this node holds. */
  async #stillOurs(streams: readonly PlacedStream[]): Promise<Set<string>> {
    const { kv, keys } = this.#deps;
    const { results } = await kv.readMany(streams.map((s) => ({ get: keys.fence(s.name) })), LEDGER_DEADLINE_MS);
    const out = new Set<string>();
    streams.forEach((s, k) => {
      if (results[k]!.kvs[0]?.value.toString() === fenceValue(s.fence)) out.add(s.name);
    });
    return out;
  }

  /**
   * Stranded parts into u/ (with a reference to their object), a txn per stream; a deleted
   * stream's are dropped, and so are those its entries hold already (its opener recorded them
   * from the records: a copy in u/ would only wait for the stream's next open to go, its
   * reference keeping the object meanwhile).
   */
  async #strand(parts: readonly RecordedPart[], starts: ReadonlyMap<string, Start>, done: IndexTick): Promise<void> {
    const { kv, keys } = this.#deps;
    for (const [stream, all] of partsByStream(parts)) {
      const list = await this.#notRecorded(stream, all);
      // The stream as #sort read it, still: deleted (and perhaps created again) since, its parts are not the new stream's.
      const meta: LedgerCompare = { key: keys.meta(stream), modRevision: starts.get(stream)?.rev ?? 0 };
      for (let i = 0; i < list.length; i += 60) {
        const ops: LedgerOp[] = [];
        const objects = new Set<string>();
        for (const p of list.slice(i, i + 60)) {
          const value: EntryValue = { o: p.o, off: p.off, len: p.len, from: p.from, to: p.to, ...(p.size !== undefined ? { size: p.size } : {}) };
          ops.push({ put: keys.strandedPart(stream, p.epoch, p.counter), value: json(value) });
          objects.add(p.o);
        }
        for (const o of objects) ops.push({ put: keys.ref(o, stream), value: Buffer.from('1') });
        const r = await kv.txnOnce([{ key: keys.fence(stream), present: true }, meta], ops, []);
        if (r.succeeded) done.stranded += Math.min(60, list.length - i);
        else if (await this.#sameStream(stream, starts.get(stream))) {
          // The stream is the one read, its m/ changed since (a trim, a seal): the records stay, sorted again at the next tick.
          throw new Error(`indexing: stranding the parts of ${stream}: its m/ record changed meanwhile; taken again at the next tick`);
        }
      }
    }
  }

  /** Of a stream's parts, those its entries do not hold (all of them when the entries overlap a part: damage is the opener's to find). */
  async #notRecorded(stream: string, parts: readonly RecordedPart[]): Promise<RecordedPart[]> {
    const { kv, keys } = this.#deps;
    const held: Array<{ from: number; to: number }> = [];
    for await (const page of scanPages(kv, keys.entries(stream), 1000)) {
      for (const e of page) {
        const v = JSON.parse(e.value.toString()) as EntryValue;
        held.push({ from: v.from, to: v.to });
      }
    }
    try {
      return uncovered(parts, held);
    } catch {
      return [...parts];
    }
  }
}

/**
 * The writers with part records under `node` (`g/<nodeId>/<nodeEpoch>/`: one node start's), one
 * read a writer: each read takes the first record key past the writers found (a writer's name
 * ends in `/`, and no worker number has a leading zero, so `<writer without its />0` sorts after
 * every key of that writer and before the next writer's).
 */
export async function ownWriters(kv: LedgerKv, keys: LedgerKeys, node: string): Promise<string[]> {
  const prefix = keys.partRecords(node);
  const out: string[] = [];
  for (let from = prefix; ; ) {
    const page = await kv.rangePage(from, prefix, 1, LEDGER_DEADLINE_MS, { keysOnly: true });
    const key = page.kvs[0]?.key;
    if (key === undefined) return out;
    const m = /^g\/\d+\/\d+\/\d+\//.exec(key.slice(keys.partRecords('').length));
    if (m === null) return out;
    out.push(m[0]);
    from = keys.partRecords(`${m[0].slice(0, -1)}0`);
  }
}
