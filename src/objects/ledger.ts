/**
 * The object ledger (docs/cluster.md, "Objects mode: where data lives"): which object holds which
 * of a stream's frames, in etcd under `<metadata prefix>.objects/` (layout: ledger-keys.ts).
 *
 *   group object PUTs (durable) ──▶ commitObjects(): ≤ 32 objects, one txn per ≤ 40 streams
 *                                    compare value(f/<stream>) == "<me>:<epoch>"   (fencing)
 *                                    put o/<object> per object, and per stream and object:
 *                                    i/<stream>/<epoch>.<counter>, r/<object>/<stream>; m/<stream> once
 *                                    (`markers`, the writer's own commits: one r/<object>/ per group
 *                                    object naming all its entries, instead of an r/ per stream)
 *                                  ──▶ the streams whose compare failed are `fenced`: never acknowledged
 *
 * Writes here are idempotent (the same keys with the same values), so a transaction whose answer
 * was lost is sent again until the deadline; a fence compare that fails on a retry because the
 * first attempt already wrote is told apart by reading the fence back. The writer's own commits
 * also carry its commit token (`k/<writer>`, CommitToken): a txn that landed unanswered is found
 * landed when sent again, and puts nothing a second time over what changed since.
 */
import { type EtcdCompare, type EtcdCredentials, EtcdLink, type EtcdOp, type EtcdTxnResult, EtcdUnavailableError, parseEtcdUrl } from '../actors';
import { type Fence, LedgerKeys, entryName, fenceValue, parseEntryName, parseFence, parseGroupObjectKey } from './ledger-keys';
import { type RecordedPart, decodeCursor, decodePartRecord, encodePartRecord, recordName, uncovered } from './part-records';
import { markOfRun, parseMarks } from './run-tails';
import { PartRecordCache } from './record-cache';
import { PLAN_ENTRIES_PER_TXN, PLAN_TXNS_IN_FLIGHT, type RecoveryPlan, encodeRecoveryPlan, planOfKey } from './recovery-plan';
import { eachLimited } from './maintenance-ledger';
import { type LedgerFormat, clusterLedgerFormat } from './ledger-format';

/** `m/<stream>`: the stream's stored meta (as in CREATE/CONFIG frames), trim point and seal. */
export interface LedgerMeta {
  meta: Record<string, unknown>;
  startSeq: number;
  sealed: boolean;
}

/** `i/<stream>/…`: bytes off..off+len of object `o` hold the stream's frames of one group; data seqs [from, to). */
export interface EntryValue {
  o: string;
  off: number;
  len: number;
  from: number;
  to: number;
  /**
   * Bytes of the whole object `o`, on the entries a group commit records and on compacted ones
   * in an object of at most 256 KiB (absent on records of builds before them): compaction reads
   * a small object once, whole, for every stream whose part it holds (compaction.ts,
   * GROUP_OBJECT_WHOLE_MAX).
   */
  size?: number;
  /**
   * 1: the entry is one of those its group object's reference marker names (`r/<o>/`, written by
   * the commit that wrote the entry): it has no `r/<o>/<stream>` key of its own to remove. Absent:
   * it has one (entries of compacted objects, of tail recoveries, of builds before the markers).
   */
  m?: 1;
}

export interface LedgerEntry extends EntryValue {
  /** The full etcd key. */
  key: string;
  epoch: number;
  counter: number;
}

/** One stream's part of a group commit. */
export interface StreamCommit extends Omit<EntryValue, 'o'> {
  stream: string;
  /** The fence this node holds for the stream; its epoch names the entry. */
  fence: Fence;
  /** The entry's counter within the epoch (from 0 at each open). */
  counter: number;
  /** A new `m/` record, when the group created, configured, sealed or trimmed the stream. */
  meta?: LedgerMeta;
  /** The group created the stream: the fence is taken create-only in the same txn (absent → fence). */
  create?: boolean;
}

/**
 * One stream's part of a ledger commit that records several group objects at once (the groups
 * whose objects became durable while the previous commit was in flight): its entries in group
 * order, all in one txn under one fence compare, so a stream's entries never have a gap.
 */
export interface StreamRecord {
  stream: string;
  /** The fence this node holds for the stream; its epoch names the entries. */
  fence: Fence;
  /** The first entry created the stream: the fence is taken create-only in the same txn. */
  create?: boolean;
  /** The `m/` record after the last entry, when one of the groups changed it. */
  meta?: LedgerMeta;
  /** One per group object holding frames of the stream, in group order, each with its counter. */
  entries: ReadonlyArray<EntryValue & { counter: number }>;
  /** `w/<stream>` takes this group object key: the writer's groups after it may be acknowledged before they are recorded. */
  position?: string;
}

/**
 * `h/<writer>/<from>`: the writer's run whose numbers start at `from` (a shard worker's run: a
 * worker started again, or a writer that saw a stream fenced, begins a new one above a gap)
 * recorded every group it acknowledged up to `n`.
 */
export interface RecordedThrough {
  writer: string;
  from: number;
  n: number;
}

/**
 * `t/<stream>/<epoch>`: what the tail recovery under the fence of `epoch` walked — the writer `w`
 * from number
 * `after + 1` up to the fence marker at `end`, taking every early part of the stream in between.
 * Written before any entry it found is recorded, so an old owner that finds it knows exactly which
 * of its group objects the stream's new owner takes (object-commit.ts).
 */
export interface TailWalk {
  epoch: number;
  w: string;
  after: number;
  end: number;
  /** When it was written (ms): walks older than TAIL_WALK_KEEP_MS are dropped by the next one. */
  at: number;
}

/**
 * `p/<stream>`: the stream's idempotent producers as of `seq` (every batch below it applied, none
 * at or above), in the catalog's stored form (`encodeProducers`): `producers` inline when small,
 * else in object `o` of `bytes` bytes (a JSON snapshot: producer-snapshot.ts).
 */
export interface ProducerSnapshotRecord {
  seq: number;
  producers?: unknown[];
  o?: string;
  bytes?: number;
}

/** How long a tail walk record is kept: an old owner asks about it within seconds of the move. */
const TAIL_WALK_KEEP_MS = 3_600_000; // 1 h

/** Streams per commit txn (design: ≤ 40): i/ (+ r/) per entry (+ m/, + f/ on create), o/ (+ its marker) once per object. */
export const STREAMS_PER_TXN = 40;
/** Streams per commit txn in the records format: a fence compare each (and the token's) within etcd's 128 compares, no entry to put. */
const RECORD_STREAMS_PER_TXN = 120;
/**
 * Group objects one commit may record: a stream's entries go in one txn, 2 operations each plus
 * the objects' `o/` (and marker), which must stay within OPS_PER_TXN (32 × 3 + m/, f/, w/, h/ and the commit token k/: 101).
 */
export const OBJECTS_PER_COMMIT = 32;
/** Operations per txn branch: etcd's default --max-txn-ops is 128. */
const OPS_PER_TXN = 128;
/** Entries removed per txn by delete and trim (i/, and r/ for an entry without a marker). */
const ENTRIES_PER_TXN = 60;
/** How long one ledger call retries before it reports etcd unavailable. */
export const DEFAULT_LEDGER_DEADLINE_MS = 3000; // 3 s

const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** How a commit records its group objects' references (Ledger.commitObjects). */
export interface CommitOptions {
  /** One reference marker per group object (the writer's own commits), not an `r/<o>/<stream>` per entry. */
  markers?: boolean;
  /** The writer's commit token: a txn whose answer was lost is found landed, never written twice (CommitToken). */
  token?: CommitToken;
  /**
   * The `records` format (part-records.ts): each txn puts one part record `q/<writer><record>`
   * naming its streams' parts, instead of an entry and a reference per stream and object. Only
   * for a writer's own commits, with its token. `firstObject`: the number of the commit's first
   * group object, which names its records.
   */
  records?: { writer: string; firstObject: number };
  /**
   * The objects are group objects of the records format that their writer's pending records may
   * still name (a tail recovery's, in that format): their `o/` keeps `q: 1`, so the reaper waits
   * for the writer's index cursor as well as for their references.
   */
  pendingObjects?: boolean;
}

/**
 * A writer's commit token, `k/<writer>`: every txn of the writer's commits compares the key's
 * revision with the one the writer last saw and writes `<commit>#<txn>` into it. A txn whose
 * answer was lost (a timeout after etcd applied it) and which is sent again then fails that
 * compare, and the token read back says it landed: its entries are not put a second time, over
 * what happened to them since (compaction may have replaced them, a trim or the stream's new
 * owner removed them; the object they point into may be gone), and a stream fenced since is still
 * told apart from one the txn recorded. Only the writer (one shard worker of one node start)
 * writes its token, one commit at a time.
 */
export interface CommitToken {
  readonly key: string;
  /** The token's revision as the writer last saw it; 0: the key does not exist. */
  rev: number;
  /**
   * A commit of several txns that gave up (etcd did not answer in time) after some were answered:
   * called again, it goes on after them, with the streams they left out, rather than send them
   * again (the token would let them through: it is where they left it). Absent between commits.
   */
  progress?: { id: string; through: number; fenced: string[]; unknown: string[] } | null;
}

/** What a commit of the writer's did not record: streams `fenced` (never recorded), and streams whose outcome is `unknown` (CommitToken). */
export interface CommitResult {
  fenced: string[];
  /** Fenced by now, recorded or not by a txn whose answer was lost: absent when none. */
  unknown?: string[];
}

/** The etcd credentials a ledger's own link uses (`Ledger.open`). */
export type LedgerCredentials = EtcdCredentials;

export class Ledger {
  readonly keys: LedgerKeys;
  readonly #link: EtcdLink;
  readonly #ownsLink: boolean;
  readonly #deadlineMs: number;
  /** Part records read by pendingOf, by key (record-cache.ts). */
  readonly #records = new PartRecordCache();

  constructor(link: EtcdLink, metadataPrefix: string, options: { deadlineMs?: number; ownsLink?: boolean } = {}) {
    this.#link = link;
    this.keys = new LedgerKeys(metadataPrefix);
    this.#deadlineMs = options.deadlineMs ?? DEFAULT_LEDGER_DEADLINE_MS;
    this.#ownsLink = options.ownsLink ?? false;
  }

  /** A ledger with its own etcd connection, from `--metadata etcd[s]://…/<prefix>` and its credentials. */
  static open(metadataUrl: string, options: { deadlineMs?: number; attemptMs?: number; credentials?: EtcdCredentials } = {}): Ledger {
    const t = parseEtcdUrl(metadataUrl, options.credentials);
    return new Ledger(new EtcdLink(t.endpoints, { attemptMs: options.attemptMs, access: t.access }), t.prefix, { deadlineMs: options.deadlineMs, ownsLink: true });
  }

  close(): void {
    if (this.#ownsLink) this.#link.close();
  }

  /**
   * Move a stream's fence to `to`: from exactly `from` (compare by value), or create-only when
   * `create` (absent → `to`; epoch 1 of a new stream). Both: either is accepted. Returns whether
   * the fence is now `to`, and the fence found otherwise.
   */
  async takeFence(stream: string, to: Fence, opts: { from?: Fence | null; create?: boolean }): Promise<{ ok: boolean; current: Fence | null }> {
    const key = this.keys.fence(stream);
    const want = fenceValue(to);
    const tries: EtcdCompare[] = [];
    if (opts.from !== undefined && opts.from !== null) tries.push({ key, value: Buffer.from(fenceValue(opts.from)) });
    if (opts.create === true || opts.from === null) tries.push({ key, absent: true });
    if (tries.length === 0) throw new Error('takeFence: give `from` or `create`');
    let current: Fence | null = null;
    for (const c of tries) {
      const r = await this.#txn([c], [{ put: key, value: Buffer.from(want) }], [{ get: key }]);
      if (r.succeeded) return { ok: true, current: to };
      const v = r.gets[0]?.value.toString() ?? null;
      // A retried attempt whose first try already wrote finds its own value.
      if (v === want) return { ok: true, current: to };
      current = v === null ? null : parseFence(v);
    }
    return { ok: false, current };
  }

  /** The stream's fence now (linearizable), or null when it has none. */
  async fence(stream: string): Promise<Fence | null> {
    const r = await this.#link.get(this.keys.fence(stream), this.#deadlineMs);
    return r.kv === null ? null : parseFence(r.kv.value.toString());
  }

  /**
   * Record one group object: its `o/` record and, per stream, the entry, the reference and the
   * new `m/`, under the stream's fence (commitObjects with one object).
   */
  commit(objectKey: string, bytes: number, commits: readonly StreamCommit[], options: CommitOptions = {}): Promise<{ fenced: string[] }> {
    return this.commitObjects(
      new Map([[objectKey, bytes]]),
      commits.map((c) => ({
        stream: c.stream,
        fence: c.fence,
        ...(c.create === true ? { create: true } : {}),
        ...(c.meta !== undefined ? { meta: c.meta } : {}),
        entries: [{ o: objectKey, counter: c.counter, off: c.off, len: c.len, from: c.from, to: c.to }],
      })),
      undefined,
      options,
    );
  }

  /**
   * Record group objects (key → bytes, at most OBJECTS_PER_COMMIT): their `o/` records and, per
   * stream, its entries, their references and the new `m/`, under the stream's fence; ≤ 40 streams
   * per txn, each stream's entries in one. Returns the streams whose fence did not match (they
   * were moved away: nothing of theirs was recorded). Rejects with EtcdUnavailableError when etcd
   * did not answer within the deadline (then the outcome is unknown; sending the same commit
   * again is safe).
   *
   * `markers` (the writer's own commits of its group objects): each group object of two streams
   * or more gets one reference marker `r/<o>/` naming every entry this commit records for it, in
   * whichever txn, instead of an `r/<o>/<stream>` per entry: under appends spread over many streams a group
   * object holds parts of several, and each reference was a put when recorded and a delete when
   * compacted. Every txn that names the object writes the same marker, so no txn's write loses
   * another's entries; a fenced stream's entry is named and never written, which only means one
   * key fewer to find. Only the object's writer may do this, and only in one commit: another
   * commit of entries into the same object (a tail recovery's) takes `r/<o>/<stream>` keys.
   */
  async commitObjects(objects: ReadonlyMap<string, number>, streams: readonly StreamRecord[], recorded?: RecordedThrough, options: CommitOptions = {}): Promise<CommitResult> {
    if (objects.size > OBJECTS_PER_COMMIT) throw new Error(`ledger commit: ${objects.size} objects in one commit (at most ${OBJECTS_PER_COMMIT})`);
    const records = options.records ?? null;
    if (records !== null && options.token === undefined) throw new Error('ledger commit: the records format needs the writer\'s commit token');
    const at = Date.now();
    const markers = options.markers === true && records === null ? this.#markers(streams) : null;
    const parts = txnParts(streams, markers, records !== null);
    // h/ moves only with every stream of the commit recorded: in the one txn when there is one
    // (a fenced stream's retry leaves it out), else after all of them.
    const watermark: EtcdOp[] = recorded === undefined ? [] : [{ put: this.keys.recorded(recorded.writer, recorded.from), value: Buffer.from(String(recorded.n)) }];
    const token = options.token;
    // The commit's name in its token: its first entry's, the same when the commit is sent again.
    const id = token === undefined || streams.length === 0 ? '' : `${streams[0]!.stream}/${entryName(streams[0]!.fence.epoch, streams[0]!.entries[0]!.counter)}`;
    const resume = id !== '' && token?.progress?.id === id ? token.progress : null;
    const fenced: string[] = resume === null ? [] : [...resume.fenced];
    const unknown: string[] = resume === null ? [] : [...resume.unknown];
    for (let i = resume === null ? 0 : resume.through + 1; i < parts.length; i++) {
      let part = parts[i]!;
      const whole = part.length;
      const record = records === null ? null : this.keys.partRecord(records.writer, recordName(records.firstObject, i));
      while (part.length > 0) {
        const failure = this.#judgeReads(part, record);
        // Loops, not callbacks made per commit (V8 compiled those again after every full collection: perf/README.md).
        const compare: EtcdCompare[] = [];
        for (const c of part) compare.push(this.#fenceCompare(c));
        const ops = record === null ? this.#recordOps(part, objects, at, markers, options.pendingObjects === true) : this.#partRecordOps(part, objects, at, record);
        if (parts.length === 1 && part.length === whole) for (const op of watermark) ops.push(op);
        if (token !== undefined) {
          compare.push(token.rev === 0 ? { key: token.key, absent: true } : { key: token.key, modRevision: token.rev });
          ops.push({ put: token.key, value: Buffer.from(`${id}#${i}`) });
          failure.push({ get: token.key });
        }
        const r = await this.#txn(compare, ops, failure);
        if (r.succeeded) {
          if (token !== undefined) token.rev = r.revision;
          break;
        }
        let resynced = false;
        if (token !== undefined) {
          const kv = r.gets[failure.length - 1] ?? null;
          const last = landedThrough(kv?.value.toString() ?? null, id);
          if (last >= i) {
            // This txn landed before (its answer was lost), and so did the commit's txns up to `last`.
            token.rev = kv!.modRevision;
            this.#settleLanded(part, r.gets, record, fenced, unknown);
            for (let k = i + 1; k <= last; k++) await this.#settleLandedAgain(parts[k]!, records === null ? null : this.keys.partRecord(records.writer, recordName(records.firstObject, k)), fenced, unknown);
            i = last;
            break;
          }
          // Not this commit's: a txn of the writer's thread before this one landed after it was
          // read (the token alone failed the compare). Sent again with the revision now known.
          const rev = kv?.modRevision ?? 0;
          resynced = rev !== token.rev;
          token.rev = rev;
        }
        // Retry without the fenced streams. A create whose fence is already ours (an earlier
        // attempt of this commit took it) goes on as a plain fenced write. A stream whose first
        // entry is there already was recorded by an earlier attempt whose answer was lost (the
        // fence may have moved since, e.g. the node was paused): it is committed, not fenced.
        const next: StreamRecord[] = [];
        const landed = new Set<string>();
        // (In the records format no attempt of this txn landed: it would have moved the token.)
        part.forEach((c, k) => {
          const v = judgedFence(r.gets, k, record);
          if (record === null && holdsFirstEntry(c, r.gets[2 * k + 1]?.value.toString() ?? null)) landed.add(c.stream);
          else if (v !== fenceValue(c.fence)) fenced.push(c.stream);
          else next.push(c.create === true ? { ...c, create: false } : c);
        });
        if (landed.size === part.length) break;
        if (!resynced && landed.size === 0 && next.length === part.length && next.every((c, k) => c.create === part[k]!.create)) throw new Error('ledger commit: the compare failed but every fence matches');
        part = next;
      }
      if (token !== undefined && parts.length > 1) token.progress = { id, through: i, fenced: [...fenced], unknown: [...unknown] };
    }
    if (parts.length > 1 && watermark.length > 0 && fenced.length === 0 && unknown.length === 0) await this.#txn([], watermark, []);
    if (token !== undefined) token.progress = null;
    return unknown.length === 0 ? { fenced } : { fenced, unknown };
  }

  /**
   * The streams of a txn of the writer's that landed although its answer was lost, from the fence
   * and first entry of each as read back (`gets`: fence, entry, per stream). The attempt that
   * landed left out only streams fenced by then, and a fence that is not this node's never comes
   * back: a stream whose fence is still ours was recorded. Of the others, one whose first entry
   * is there, pointing into our object, was recorded and fenced since; one without it was either
   * left out or recorded and its entry since removed by its new owner: its outcome is unknown.
   */
  #settleLanded(part: readonly StreamRecord[], gets: ReadonlyArray<{ value: Buffer } | null>, record: string | null, fenced: string[], unknown: string[]): void {
    // The records format: the record as it landed names exactly the streams it recorded (unless
    // the indexer has taken it since, which it does only once it has settled: then unknown).
    const named = record === null ? null : recordedStreams(gets[part.length] ?? null);
    part.forEach((c, k) => {
      if (judgedFence(gets, k, record) === fenceValue(c.fence)) return;
      if (record === null ? holdsFirstEntry(c, gets[2 * k + 1]?.value.toString() ?? null) : named?.has(c.stream) === true) return;
      if (named !== null && !fenced.includes(c.stream)) fenced.push(c.stream);
      else if (!fenced.includes(c.stream)) unknown.push(c.stream);
    });
  }

  /** The same for a later txn of the commit found landed (by the token): its streams' fences and first entries (or its record) read now. */
  async #settleLandedAgain(part: readonly StreamRecord[], record: string | null, fenced: string[], unknown: string[]): Promise<void> {
    const r = await this.#txn([], this.#judgeReads(part, record), []);
    this.#settleLanded(part, r.gets, record, fenced, unknown);
  }

  /**
   * What a failed or unanswered commit txn is judged by: each stream's fence and the first entry
   * its commit writes (entries), or each stream's fence and then the txn's part record (records);
   * then the writer's token, when there is one (read by the caller as the last).
   */
  #judgeReads(part: readonly StreamRecord[], record: string | null): EtcdOp[] {
    const out: EtcdOp[] = [];
    if (record === null) for (const c of part) out.push({ get: this.keys.fence(c.stream) }, { get: this.keys.entry(c.stream, c.fence.epoch, c.entries[0]!.counter) });
    else {
      for (const c of part) out.push({ get: this.keys.fence(c.stream) });
      out.push({ get: record });
    }
    return out;
  }

  /** The writer's commit token as etcd holds it now (CommitToken): read once, before the writer's first commit. */
  async commitToken(writer: string): Promise<CommitToken> {
    return this.#token(this.keys.commitToken(writer));
  }

  /** The commit token of the stream's tail recovery under `fence` (a recovery tried again under the same fence finds its own). */
  async recoveryToken(stream: string, fence: Fence): Promise<CommitToken> {
    return this.#token(this.keys.recoveryToken(stream, fence.epoch));
  }

  /** A tail recovery is done: its token goes (what is left of a recovery cut short goes with the stream). */
  async dropToken(token: CommitToken): Promise<void> {
    await this.#txn([], [{ delete: token.key }], []);
  }

  async #token(key: string): Promise<CommitToken> {
    const r = await this.#link.get(key, this.#deadlineMs);
    return { key, rev: r.kv?.modRevision ?? 0 };
  }

  /** The recovery plans of the stream's earlier openers that did not finish them (recovery-plan.ts), in epoch order. */
  async recoveryPlans(stream: string): Promise<RecoveryPlan[]> {
    const prefix = this.keys.recoveryTokens(stream);
    const r = await this.#link.rangePrefix(prefix, this.#deadlineMs);
    const out: RecoveryPlan[] = [];
    for (const kv of r.kvs) {
      let plan: RecoveryPlan | null;
      try {
        plan = planOfKey(kv.key.slice(prefix.length), kv.value);
      } catch (err) {
        throw new Error(`recovery plan ${kv.key}: ${(err as Error).message}`, { cause: err });
      }
      if (plan !== null) out.push(plan);
    }
    return out.sort((a, b) => a.epoch - b.epoch);
  }

  /** Write the plan of the recovery under `fence` (its epoch names the entries), under that fence. Returns false when the fence is not `fence`. */
  async writeRecoveryPlan(stream: string, fence: Fence, plan: Omit<RecoveryPlan, 'epoch'>): Promise<boolean> {
    const compare: EtcdCompare = { key: this.keys.fence(stream), value: Buffer.from(fenceValue(fence)) };
    return (await this.#txn([compare], [{ put: this.keys.recoveryPlan(stream, fence.epoch), value: encodeRecoveryPlan(plan) }], [])).succeeded;
  }

  /**
   * Record a plan's entries (named under the plan's epoch) under `fence`, which the caller holds,
   * PLAN_TXNS_IN_FLIGHT txns at once; then its stranded parts go, then the plan. `pending`: the
   * objects are group objects of the records format whose writer's records may still name them
   * (their `o/` keeps `q: 1`). Returns false when the fence is not `fence` (the plan stays, for
   * the stream's next opener).
   */
  async finishRecoveryPlan(stream: string, fence: Fence, plan: RecoveryPlan, pending: boolean): Promise<boolean> {
    const compare: EtcdCompare = { key: this.keys.fence(stream), value: Buffer.from(fenceValue(fence)) };
    const at = Date.now();
    const recorded = await this.#allUnderFence(compare, chunksOf(plan.entries, PLAN_ENTRIES_PER_TXN), (chunk) => {
      const ops: EtcdOp[] = [];
      const named = new Map<string, number>();
      for (const e of chunk) named.set(e.o, e.size ?? 0);
      for (const [o, bytes] of named) ops.push({ put: this.keys.object(o), value: objectRecord(o, bytes, at, pending) });
      for (const e of chunk) this.#entryOps(ops, stream, plan.epoch, e.counter, { o: e.o, off: e.off, len: e.len, from: e.from, to: e.to, size: e.size });
      return ops;
    });
    if (!recorded || !(await this.dropStranded(stream, fence, plan.stranded))) return false;
    return (await this.#txn([compare], [{ delete: this.keys.recoveryPlan(stream, plan.epoch) }], [])).succeeded;
  }

  /** One txn per item under `compare` (idempotent writes), PLAN_TXNS_IN_FLIGHT at once; false once one fails its compare (the rest are not sent). */
  async #allUnderFence<T>(compare: EtcdCompare, items: readonly T[], ops: (item: T) => EtcdOp[]): Promise<boolean> {
    let ok = true;
    await eachLimited(items, PLAN_TXNS_IN_FLIGHT, async (item) => {
      if (ok && !(await this.#txn([compare], ops(item), [])).succeeded) ok = false;
    });
    return ok;
  }

  /**
   * Record the tail walk of the recovery that holds `fence` (`t/<stream>/<epoch>`), under that
   * fence, unless one for this epoch is there already (a recovery tried again keeps the first
   * walk's start: the entries it recorded before are part of it). Walks older than an hour go.
   * Returns false when the fence is not `fence`.
   */
  async recordTailWalk(stream: string, fence: Fence, walk: Omit<TailWalk, 'epoch' | 'at'>, known?: readonly TailWalk[]): Promise<boolean> {
    // `known`: the walks as read under this fence (nobody else writes them meanwhile), saving a round trip.
    const all = known ?? (await this.tailWalks(stream));
    const compare: EtcdCompare = { key: this.keys.fence(stream), value: Buffer.from(fenceValue(fence)) };
    if (all.some((x) => x.epoch === fence.epoch)) return (await this.#txn([compare], [], [])).succeeded;
    const now = Date.now();
    const ops: EtcdOp[] = [
      { put: this.keys.tailWalk(stream, fence.epoch), value: json({ w: walk.w, after: walk.after, end: walk.end, at: now }) },
      ...all.filter((x) => x.at < now - TAIL_WALK_KEEP_MS).map((x): EtcdOp => ({ delete: this.keys.tailWalk(stream, x.epoch) })),
    ];
    return (await this.#txn([compare], ops, [])).succeeded;
  }

  /** The stream's tail walks (`t/<stream>/`), in epoch order. */
  async tailWalks(stream: string): Promise<TailWalk[]> {
    const prefix = this.keys.tailWalks(stream);
    const r = await this.#link.rangePrefix(prefix, this.#deadlineMs);
    const out: TailWalk[] = [];
    for (const kv of r.kvs) {
      const epoch = Number(kv.key.slice(prefix.length));
      if (!Number.isSafeInteger(epoch)) continue;
      out.push({ epoch, ...(JSON.parse(kv.value.toString()) as Omit<TailWalk, 'epoch'>) });
    }
    return out.sort((a, b) => a.epoch - b.epoch);
  }

  /** `w/<stream>`: the group object key where the stream's writer took its place, or null. */
  async position(stream: string): Promise<string | null> {
    const r = await this.#link.get(this.keys.position(stream), this.#deadlineMs);
    return r.kv === null ? null : r.kv.value.toString();
  }

  /** The `h/` mark of the writer's run that number `at` belongs to (the newest run starting at or below it), or null. */
  async recordedThrough(writer: string, at: number): Promise<RecordedThrough | null> {
    const prefix = this.keys.recordedRuns(writer);
    const r = await this.#link.rangePrefix(prefix, this.#deadlineMs);
    const m = markOfRun(parseMarks(prefix, r.kvs), at);
    return m === null ? null : { writer, ...m };
  }

  /** The stream's newest producer snapshot (`p/<stream>`), or null. */
  async producerSnapshot(stream: string): Promise<ProducerSnapshotRecord | null> {
    const r = await this.#link.get(this.keys.producers(stream), this.#deadlineMs);
    return r.kv === null ? null : (JSON.parse(r.kv.value.toString()) as ProducerSnapshotRecord);
  }

  /**
   * Name `rec` the stream's producer snapshot under its fence, unless the one named is as new: an
   * object snapshot gets its `o/` record and the stream's reference in the same txn, and the
   * reference to the object of the one it replaces goes (the reaper then deletes that object).
   * Returns false when the fence is not `fence`: nothing was recorded.
   */
  async recordProducerSnapshot(stream: string, fence: Fence, rec: ProducerSnapshotRecord): Promise<boolean> {
    const key = this.keys.producers(stream);
    const fenceCompare: EtcdCompare = { key: this.keys.fence(stream), value: Buffer.from(fenceValue(fence)) };
    for (;;) {
      const cur = await this.#link.get(key, this.#deadlineMs);
      const old = cur.kv === null ? null : (JSON.parse(cur.kv.value.toString()) as ProducerSnapshotRecord);
      // As new already (this call's earlier attempt landed, or a newer one did): nothing to write.
      // An object of this call not named is an orphan for the reaper.
      if (old !== null && old.seq >= rec.seq) return (await this.#txn([fenceCompare], [], [])).succeeded;
      const ops: EtcdOp[] = [{ put: key, value: json(rec) }];
      if (rec.o !== undefined) ops.push({ put: this.keys.object(rec.o), value: json({ bytes: rec.bytes ?? 0, at: Date.now() }) }, { put: this.keys.ref(rec.o, stream), value: Buffer.from('1') });
      if (old?.o !== undefined && old.o !== rec.o) ops.push({ delete: this.keys.ref(old.o, stream) });
      const same: EtcdCompare = cur.kv === null ? { key, absent: true } : { key, modRevision: cur.kv.modRevision };
      const r = await this.#txn([fenceCompare, same], ops, [{ get: this.keys.fence(stream) }]);
      if (r.succeeded) return true;
      if (r.gets[0]?.value.toString() !== fenceValue(fence)) return false;
      // p/ changed between the read and the txn (an earlier attempt of this call landed): read again.
    }
  }

  /** The stream's `m/` record, or null. */
  async meta(stream: string): Promise<LedgerMeta | null> {
    const r = await this.#link.get(this.keys.meta(stream), this.#deadlineMs);
    return r.kv === null ? null : (JSON.parse(r.kv.value.toString()) as LedgerMeta);
  }

  /** Every entry of the stream, in epoch and counter order (= the order its frames were written). */
  async entries(stream: string): Promise<LedgerEntry[]> {
    const prefix = this.keys.entries(stream);
    const r = await this.#link.rangePrefix(prefix, this.#deadlineMs);
    const out: LedgerEntry[] = [];
    for (const kv of r.kvs) {
      const name = parseEntryName(kv.key.slice(prefix.length));
      if (name === null) continue;
      out.push({ key: kv.key, ...name, ...(JSON.parse(kv.value.toString()) as EntryValue) });
    }
    return out;
  }

  /**
   * A stream's entries and the parts of it recorded and not yet indexed (the records format:
   * part-records.ts), read at one revision: the writer's part records after its index cursor
   * (`x/`) and the stream's stranded parts (`u/`), less what the entries hold (`recorded`: the
   * writer's pending parts of the stream, held or not). For the stream's opener, which holds its
   * fence: nothing of the stream is indexed or stranded after this read.
   */
  async pendingOf(stream: string, writer: string): Promise<{ entries: LedgerEntry[]; pending: RecordedPart[]; stranded: string[]; recorded: RecordedPart[] }> {
    const entriesPrefix = this.keys.entries(stream);
    const strandedPrefix = this.keys.strandedParts(stream);
    const recordsPrefix = this.keys.partRecords(writer);
    const { revision, results } = await this.#link.readMany(
      [
        { from: entriesPrefix, prefix: entriesPrefix, limit: 0 },
        { from: strandedPrefix, prefix: strandedPrefix, limit: 0 },
        { get: this.keys.indexCursor(writer) },
        // Keys only: the values of records read before are held (record-cache.ts).
        { from: recordsPrefix, prefix: recordsPrefix, limit: 0, keysOnly: true },
        { get: this.keys.meta(stream) },
      ],
      this.#deadlineMs,
    );
    const entries: LedgerEntry[] = [];
    for (const kv of results[0]!.kvs) {
      const name = parseEntryName(kv.key.slice(entriesPrefix.length));
      if (name !== null) entries.push({ key: kv.key, ...name, ...(JSON.parse(kv.value.toString()) as EntryValue) });
    }
    const parts: RecordedPart[] = [];
    const stranded: string[] = [];
    for (const kv of results[1]!.kvs) {
      const name = parseEntryName(kv.key.slice(strandedPrefix.length));
      if (name === null) continue;
      parts.push({ stream, ...name, ...(JSON.parse(kv.value.toString()) as EntryValue) });
      stranded.push(kv.key);
    }
    const cursor = decodeCursor(results[2]!.kvs[0]?.value ?? null);
    // A record older than the stream's m/ names an earlier stream of the name (deleted, and this
    // one created since): its parts are not this stream's.
    const born = results[4]!.kvs[0]?.createRevision ?? 0;
    const listed = results[3]!.kvs.filter((kv) => kv.key.slice(recordsPrefix.length) > cursor.q && kv.modRevision >= born);
    this.#records.retain(recordsPrefix, new Set(results[3]!.kvs.map((kv) => kv.key)));
    // The values not held yet, read at the same revision (they are usually the newest: one range from the first).
    const unread = listed.find((kv) => this.#records.partsOf(kv.key, stream) === undefined);
    if (unread !== undefined) {
      const r = await this.#link.rangePrefix(recordsPrefix, this.#deadlineMs, { from: unread.key, revision });
      for (const kv of r.kvs) this.#records.add(kv.key, kv.value);
    }
    const recorded: RecordedPart[] = [];
    for (const kv of listed) {
      const parts = this.#records.partsOf(kv.key, stream);
      if (parts === undefined) throw new Error(`ledger: part record ${kv.key} was listed at revision ${revision} and not read at it`);
      for (const p of parts) recorded.push(p);
    }
    for (const p of recorded) parts.push(p);
    return { entries, pending: uncovered(parts, entries), stranded, recorded };
  }

  /**
   * The stranded parts `keys` (u/, as pendingOf read them) are gone once their opener recorded
   * them, under its fence; their references stay (its entries point into the same objects).
   * Returns false when the fence is not `fence`.
   */
  async dropStranded(stream: string, fence: Fence, keys: readonly string[]): Promise<boolean> {
    const compare: EtcdCompare = { key: this.keys.fence(stream), value: Buffer.from(fenceValue(fence)) };
    return this.#allUnderFence(compare, chunksOf(keys, ENTRIES_PER_TXN), (batch) => batch.map((k): EtcdOp => ({ delete: k })));
  }

  /**
   * Delete the stream from the ledger under its fence: its entries and their references, then
   * `m/`, `w/`, its tail walks, its producer snapshot and `f/` (the name is free). Returns false when the fence is not `fence` (nothing more deleted).
   */
  async deleteStream(stream: string, fence: Fence): Promise<boolean> {
    const [entries, snapshot] = await Promise.all([this.entries(stream), this.producerSnapshot(stream)]);
    const compare: EtcdCompare = { key: this.keys.fence(stream), value: Buffer.from(fenceValue(fence)) };
    for (let i = 0; i < entries.length; i += ENTRIES_PER_TXN) {
      const ops = entries.slice(i, i + ENTRIES_PER_TXN).flatMap((e): EtcdOp[] => (e.m === 1 ? [{ delete: e.key }] : [{ delete: e.key }, { delete: this.keys.ref(e.o, stream) }]));
      if (!(await this.#txn([compare], ops, [])).succeeded) return false;
    }
    const ops: EtcdOp[] = [{ deletePrefix: this.keys.entries(stream) }, { deletePrefix: this.keys.strandedParts(stream) }, { deletePrefix: this.keys.tailWalks(stream) }, { deletePrefix: this.keys.recoveryTokens(stream) }, { delete: this.keys.meta(stream) }, { delete: this.keys.position(stream) }, { delete: this.keys.producers(stream) }, { delete: this.keys.fence(stream) }];
    if (snapshot?.o !== undefined) ops.push({ delete: this.keys.ref(snapshot.o, stream) });
    const r = await this.#txn([compare], ops, [{ get: this.keys.fence(stream) }]);
    // A retried attempt whose first try already deleted finds no fence at all.
    return r.succeeded || r.gets[0] === null;
  }

  /**
   * Trim under the fence: `m/` gets `startSeq` (when above its own) and entries wholly below it
   * (`to` ≤ startSeq) go, but the newest (unless `keepNewest` is false), with the references no
   * remaining entry of the stream shares. Returns false when the fence is not `fence`.
   */
  async trim(stream: string, fence: Fence, startSeq: number, options: { keepNewest?: boolean } = {}): Promise<boolean> {
    const entries = await this.entries(stream);
    const compare: EtcdCompare = { key: this.keys.fence(stream), value: Buffer.from(fenceValue(fence)) };
    // The newest entry stays whatever its seqs: it marks where the stream's writer was, which tail
    // recovery starts from (tail-recovery.ts); readers skip an entry below the start. Not in the
    // records format: its entries are indexed behind (an entry kept below the start would not be
    // the newest for long, and then nothing would remove it), and its writer's h/ mark and pending
    // records say where the writer was.
    const newest = options.keepNewest === false ? undefined : entries[entries.length - 1];
    const dead = entries.filter((e) => e.to <= startSeq && e !== newest);
    const kept = new Set(entries.filter((e) => e.to > startSeq || e === newest).map((e) => e.o));
    for (let i = 0; i === 0 || i < dead.length; i += ENTRIES_PER_TXN) {
      const ops = dead.slice(i, i + ENTRIES_PER_TXN).flatMap((e): EtcdOp[] => (kept.has(e.o) || e.m === 1 ? [{ delete: e.key }] : [{ delete: e.key }, { delete: this.keys.ref(e.o, stream) }]));
      if (i > 0) {
        if (!(await this.#txn([compare], ops, [])).succeeded) return false;
        continue;
      }
      // m/ is read, changed and written back only if no group commit wrote it in between (a
      // seal or config change committed meanwhile already carries this start, and is kept).
      for (;;) {
        const m = await this.#link.get(this.keys.meta(stream), this.#deadlineMs);
        const meta = m.kv === null ? null : (JSON.parse(m.kv.value.toString()) as LedgerMeta);
        const write = meta !== null && meta.startSeq < startSeq;
        const compares: EtcdCompare[] = write ? [compare, { key: this.keys.meta(stream), modRevision: m.kv!.modRevision }] : [compare];
        const first: EtcdOp[] = write ? [{ put: this.keys.meta(stream), value: json({ ...meta, startSeq }) }] : [];
        const r = await this.#txn(compares, [...first, ...ops], [{ get: this.keys.fence(stream) }]);
        if (r.succeeded) break;
        if (r.gets[0]?.value.toString() !== fenceValue(fence)) return false;
      }
    }
    return true;
  }

  /** The cluster's ledger format, written first when the ledger has none (ledger-format.ts). */
  clusterFormat(wanted: LedgerFormat | 'cluster'): Promise<{ format: LedgerFormat; written: boolean }> {
    return clusterLedgerFormat(this.#link, this.keys, wanted);
  }

  /** `o/` keys: objects that hold live data or wait for the reaper (a count-only read). */
  objectCount(): Promise<number> {
    return this.#link.countPrefix(this.keys.objects, this.#deadlineMs);
  }

  /** `d/` keys: objects marked destroyed and not yet deleted. */
  destroyedObjectBacklog(): Promise<number> {
    return this.#link.countPrefix(this.keys.destroyedObjects, this.#deadlineMs);
  }

  #fenceCompare(c: StreamRecord): EtcdCompare {
    const key = this.keys.fence(c.stream);
    return c.create === true ? { key, absent: true } : { key, value: Buffer.from(fenceValue(c.fence)) };
  }

  /**
   * A commit's reference markers: per group object its entries name, the entries (as markers name
   * them) of every stream of the commit, across all its txns. Only for objects of two streams or
   * more: for one stream's object a marker saves no write (one put for one r/ key) and costs the
   * reaper a read of the entry it names (under W1's load, etcd's CPU per append rose by a sixth).
   */
  #markers(streams: readonly StreamRecord[]): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const c of streams) {
      for (const e of c.entries) {
        if (parseGroupObjectKey(e.o) === null) continue;
        let list = out.get(e.o);
        if (list === undefined) out.set(e.o, (list = []));
        list.push(this.keys.markedEntry(c.stream, c.fence.epoch, e.counter));
      }
    }
    for (const [o, list] of out) if (list.length < 2) out.delete(o);
    return out;
  }

  /** One txn's writes: the `o/` (and marker) of each object its streams' entries name, then each stream's entries, references, `f/` and `m/`. */
  #recordOps(part: readonly StreamRecord[], objects: ReadonlyMap<string, number>, at: number, markers: ReadonlyMap<string, readonly string[]> | null, pending: boolean): EtcdOp[] {
    const named = new Set<string>();
    for (const c of part) for (const e of c.entries) named.add(e.o);
    const ops: EtcdOp[] = [];
    for (const o of named) {
      ops.push({ put: this.keys.object(o), value: objectRecord(o, objects.get(o) ?? 0, at, pending) });
      const marker = markers?.get(o);
      if (marker !== undefined) ops.push({ put: this.keys.referenceMarker(o), value: json(marker) });
    }
    for (const c of part) {
      if (c.create === true) ops.push({ put: this.keys.fence(c.stream), value: Buffer.from(fenceValue(c.fence)) });
      for (const e of c.entries) {
        const value: EntryValue = { o: e.o, off: e.off, len: e.len, from: e.from, to: e.to, size: objects.get(e.o) };
        if (markers?.has(e.o) === true) ops.push({ put: this.keys.entry(c.stream, c.fence.epoch, e.counter), value: json({ ...value, m: 1 }) });
        else this.#entryOps(ops, c.stream, c.fence.epoch, e.counter, value);
      }
      if (c.meta !== undefined) ops.push({ put: this.keys.meta(c.stream), value: json(c.meta) });
      if (c.position !== undefined) ops.push({ put: this.keys.position(c.stream), value: Buffer.from(c.position) });
    }
    return ops;
  }

  /** An entry and its reference (`r/<o>/<stream>`). */
  #entryOps(ops: EtcdOp[], stream: string, epoch: number, counter: number, value: EntryValue): void {
    ops.push({ put: this.keys.entry(stream, epoch, counter), value: json(value) }, { put: this.keys.ref(value.o, stream), value: Buffer.from('1') });
  }

  /**
   * One txn's writes in the records format: the `o/` of each object its streams' parts name, one
   * part record naming every part, and each stream's `f/` (create), `m/` and `w/`.
   */
  #partRecordOps(part: readonly StreamRecord[], objects: ReadonlyMap<string, number>, at: number, record: string): EtcdOp[] {
    const named = new Set<string>();
    const rows: RecordedPart[] = [];
    for (const c of part) {
      for (const e of c.entries) {
        named.add(e.o);
        rows.push({ stream: c.stream, epoch: c.fence.epoch, counter: e.counter, o: e.o, off: e.off, len: e.len, from: e.from, to: e.to, size: objects.get(e.o) });
      }
    }
    const ops: EtcdOp[] = [];
    // `q: 1`: a group object of the records format, kept by its writer's index cursor (x/) while a pending record may name it.
    for (const o of named) ops.push({ put: this.keys.object(o), value: objectRecord(o, objects.get(o) ?? 0, at, true) });
    ops.push({ put: record, value: encodePartRecord(rows) });
    for (const c of part) {
      if (c.create === true) ops.push({ put: this.keys.fence(c.stream), value: Buffer.from(fenceValue(c.fence)) });
      if (c.meta !== undefined) ops.push({ put: this.keys.meta(c.stream), value: json(c.meta) });
      if (c.position !== undefined) ops.push({ put: this.keys.position(c.stream), value: Buffer.from(c.position) });
    }
    return ops;
  }

  /** One transaction, sent again (it is idempotent) until it gets an answer or the deadline passes. */
  async #txn(compare: EtcdCompare[], success: EtcdOp[], failure: EtcdOp[]): Promise<EtcdTxnResult> {
    const end = Date.now() + this.#deadlineMs;
    let last: unknown;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#link.txnOnce(compare, success, failure);
      } catch (err) {
        last = err;
      }
      if (this.#link.closed || Date.now() >= end) break;
      await sleep(Math.min(50 * 2 ** attempt, 500, Math.max(0, end - Date.now())));
    }
    throw new EtcdUnavailableError(`object ledger: etcd did not answer for ${this.#deadlineMs} ms: ${(last as Error)?.message}`, { cause: last });
  }
}

/**
 * An `o/` value. `pending`: a group object of the records format that its writer's pending
 * records may name (`q: 1`: the reaper waits for the writer's index cursor to pass it).
 */
function objectRecord(o: string, bytes: number, at: number, pending: boolean): Buffer {
  return json(pending && parseGroupObjectKey(o) !== null ? { bytes, at, q: 1 } : { bytes, at });
}

/** `items` cut into slices of `n`. */
function chunksOf<T>(items: readonly T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += n) out.push(items.slice(i, i + n));
  return out;
}

/** The stream's first entry of this commit is in etcd (`value`, as read back): it points into the commit's object. */
function holdsFirstEntry(c: StreamRecord, value: string | null): boolean {
  return value !== null && (JSON.parse(value) as EntryValue).o === c.entries[0]!.o;
}

/** A stream's fence as a judging read found it (#judgeReads: two reads a stream with entries, one with records). */
function judgedFence(gets: ReadonlyArray<{ value: Buffer } | null>, k: number, record: string | null): string | null {
  return gets[record === null ? 2 * k : k]?.value.toString() ?? null;
}

/** The streams a part record names, or null when it is gone. */
function recordedStreams(kv: { value: Buffer } | null): Set<string> | null {
  if (kv === null) return null;
  return new Set(decodePartRecord(kv.value).map((p) => p.stream));
}

/** The index of the last txn of commit `id` that a token value says landed, or -1 when it names another commit (or none). */
function landedThrough(value: string | null, id: string): number {
  if (value === null || id === '') return -1;
  const at = value.lastIndexOf('#');
  if (at < 0 || value.slice(0, at) !== id) return -1;
  const n = Number(value.slice(at + 1));
  return Number.isSafeInteger(n) ? n : -1;
}

/** Streams cut into txns of at most STREAMS_PER_TXN streams and OPS_PER_TXN operations per branch. */
function txnParts(streams: readonly StreamRecord[], markers: ReadonlyMap<string, unknown> | null, records: boolean): StreamRecord[][] {
  const parts: StreamRecord[][] = [];
  let part: StreamRecord[] = [];
  let objects = new Set<string>();
  // h/ and the writer's commit token (CommitToken), reserved in every txn, and the part record in the records format.
  const reserved = records ? 3 : 2;
  let ops = reserved;
  // An object's writes: o/, and its marker when it has one.
  const objectOps = (fresh: ReadonlySet<string>): number => {
    let n = 0;
    for (const o of fresh) n += markers?.has(o) === true ? 2 : 1;
    return n;
  };
  for (const c of streams) {
    // i/ (+ r/ without a marker) per entry (+ m/, + f/, + w/), and the o/ (+ marker) of each object not yet named in the part.
    let own = (c.meta !== undefined ? 1 : 0) + (c.create === true ? 1 : 0) + (c.position !== undefined ? 1 : 0);
    if (!records) for (const e of c.entries) own += markers?.has(e.o) === true ? 1 : 2;
    let fresh = new Set(c.entries.map((e) => e.o).filter((o) => !objects.has(o)));
    if (part.length > 0 && (part.length === (records ? RECORD_STREAMS_PER_TXN : STREAMS_PER_TXN) || ops + own + objectOps(fresh) > OPS_PER_TXN)) {
      parts.push(part);
      part = [];
      objects = new Set();
      ops = reserved;
      fresh = new Set(c.entries.map((e) => e.o));
    }
    part.push(c);
    for (const o of fresh) objects.add(o);
    ops += own + objectOps(fresh);
  }
  if (part.length > 0) parts.push(part);
  return parts;
}
