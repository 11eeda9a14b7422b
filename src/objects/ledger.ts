/**
 * The object ledger (docs/cluster.md, "Objects mode: where data lives"): which object holds which
 * of a stream's frames, in etcd under `<metadata prefix>.objects/` (layout: ledger-keys.ts).
 *
 *   group object PUT (durable) ──▶ commit(): one txn per ≤ 40 streams
 *                                    compare value(f/<stream>) == "<me>:<epoch>"   (fencing)
 *                                    put o/<object>, i/<stream>/<epoch>.<counter>, r/<object>/<stream>, m/<stream>
 *                                    (+ the carried entries of earlier groups still unanswered, same streams)
 *                                  ──▶ the streams whose compare failed are `fenced`: never acknowledged
 *
 * Writes here are idempotent (the same keys with the same values), so a transaction whose answer
 * was lost is sent again until the deadline; a fence compare that fails on a retry because the
 * first attempt already wrote is told apart by reading the fence back.
 */
import { type EtcdCompare, EtcdLink, type EtcdOp, type EtcdTxnResult, EtcdUnavailableError, parseEtcdUrl } from '../actors';
import { type Fence, LedgerKeys, fenceValue, parseEntryName, parseFence } from './ledger-keys';

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
 * An entry of an earlier group whose commit was sent but not answered yet, carried in a later
 * group's commit of the same stream (pipelined commits): whichever of the two txns etcd applies
 * first records both, so a stream's entries never have a gap whatever order they arrive in.
 * Carried entries hold no create and no `m/` (a group that has either is answered before the
 * next group's commit is sent), so the keys of one txn never repeat.
 */
export interface CarriedEntry {
  objectKey: string;
  bytes: number;
  commit: StreamCommit;
}

/** Streams per commit txn (design: ≤ 40): i/ + r/ each (+ m/, + f/ on create), o/ once. */
export const STREAMS_PER_TXN = 40;
/** Operations per txn branch: etcd's default --max-txn-ops is 128. */
const OPS_PER_TXN = 128;
/** Entries removed per txn by delete and trim (i/ + r/ each). */
const ENTRIES_PER_TXN = 60;
/** How long one ledger call retries before it reports etcd unavailable. */
export const DEFAULT_LEDGER_DEADLINE_MS = 3000; // 3 s

const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class Ledger {
  readonly keys: LedgerKeys;
  readonly #link: EtcdLink;
  readonly #ownsLink: boolean;
  readonly #deadlineMs: number;

  constructor(link: EtcdLink, metadataPrefix: string, options: { deadlineMs?: number; ownsLink?: boolean } = {}) {
    this.#link = link;
    this.keys = new LedgerKeys(metadataPrefix);
    this.#deadlineMs = options.deadlineMs ?? DEFAULT_LEDGER_DEADLINE_MS;
    this.#ownsLink = options.ownsLink ?? false;
  }

  /** A ledger with its own etcd connection, from `--metadata etcd://…/<prefix>`. */
  static open(metadataUrl: string, options: { deadlineMs?: number; attemptMs?: number } = {}): Ledger {
    const t = parseEtcdUrl(metadataUrl);
    return new Ledger(new EtcdLink(t.endpoints, { attemptMs: options.attemptMs }), t.prefix, { deadlineMs: options.deadlineMs, ownsLink: true });
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
   * new `m/`, under the stream's fence. Returns the streams whose fence did not match (they were
   * moved away: nothing of theirs was recorded). Rejects with EtcdUnavailableError when etcd did
   * not answer within the deadline (then the outcome is unknown; sending the same commit again
   * is safe). `carried`: entries of earlier unanswered groups, recorded in the same txn as this
   * group's entry of their stream (those of other streams are left to their own groups).
   */
  async commit(objectKey: string, bytes: number, commits: readonly StreamCommit[], carried: readonly CarriedEntry[] = []): Promise<{ fenced: string[] }> {
    const fenced: string[] = [];
    const object: EtcdOp = { put: this.keys.object(objectKey), value: json({ bytes, at: Date.now() }) };
    const carriedOf = new Map<string, CarriedEntry[]>();
    for (const e of carried) carriedOf.set(e.commit.stream, [...(carriedOf.get(e.commit.stream) ?? []), e]);
    for (let part of txnParts(commits, carriedOf)) {
      while (part.length > 0) {
        const failure: EtcdOp[] = part.flatMap((c): EtcdOp[] => [{ get: this.keys.fence(c.stream) }, { get: this.keys.entry(c.stream, c.fence.epoch, c.counter) }]);
        const r = await this.#txn(part.map((c) => this.#fenceCompare(c)), [object, ...this.#carriedOps(part, carriedOf), ...part.flatMap((c) => this.#commitOps(objectKey, c))], failure);
        if (r.succeeded) break;
        // Retry without the fenced streams. A create whose fence is already ours (an earlier
        // attempt of this commit took it) goes on as a plain fenced write. A stream whose entry
        // is there already was recorded by an earlier attempt whose answer was lost (the fence may
        // have moved since, e.g. the node was paused): it is committed, not fenced.
        const next: StreamCommit[] = [];
        const landed = new Set<string>();
        part.forEach((c, k) => {
          const v = r.gets[2 * k]?.value.toString() ?? null;
          const entry = r.gets[2 * k + 1]?.value.toString() ?? null;
          if (entry !== null && (JSON.parse(entry) as EntryValue).o === objectKey) landed.add(c.stream);
          else if (v !== fenceValue(c.fence)) fenced.push(c.stream);
          else next.push(c.create === true ? { ...c, create: false } : c);
        });
        if (landed.size === part.length) break;
        if (landed.size === 0 && next.length === part.length && next.every((c, k) => c.create === part[k]!.create)) throw new Error('ledger commit: the compare failed but every fence matches');
        part = next;
      }
    }
    return { fenced };
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
   * Delete the stream from the ledger under its fence: its entries and their references, then
   * `m/` and `f/` (the name is free). Returns false when the fence is not `fence` (nothing more deleted).
   */
  async deleteStream(stream: string, fence: Fence): Promise<boolean> {
    const entries = await this.entries(stream);
    const compare: EtcdCompare = { key: this.keys.fence(stream), value: Buffer.from(fenceValue(fence)) };
    for (let i = 0; i < entries.length; i += ENTRIES_PER_TXN) {
      const ops = entries.slice(i, i + ENTRIES_PER_TXN).flatMap((e): EtcdOp[] => [{ delete: e.key }, { delete: this.keys.ref(e.o, stream) }]);
      if (!(await this.#txn([compare], ops, [])).succeeded) return false;
    }
    const ops: EtcdOp[] = [{ deletePrefix: this.keys.entries(stream) }, { delete: this.keys.meta(stream) }, { delete: this.keys.fence(stream) }];
    const r = await this.#txn([compare], ops, [{ get: this.keys.fence(stream) }]);
    // A retried attempt whose first try already deleted finds no fence at all.
    return r.succeeded || r.gets[0] === null;
  }

  /**
   * Trim under the fence: `m/` gets `startSeq` (when above its own) and entries wholly below it
   * (`to` ≤ startSeq) go, with the references no remaining entry of the stream shares.
   * Returns false when the fence is not `fence`.
   */
  async trim(stream: string, fence: Fence, startSeq: number): Promise<boolean> {
    const entries = await this.entries(stream);
    const compare: EtcdCompare = { key: this.keys.fence(stream), value: Buffer.from(fenceValue(fence)) };
    const dead = entries.filter((e) => e.to <= startSeq);
    const kept = new Set(entries.filter((e) => e.to > startSeq).map((e) => e.o));
    for (let i = 0; i === 0 || i < dead.length; i += ENTRIES_PER_TXN) {
      const ops = dead.slice(i, i + ENTRIES_PER_TXN).flatMap((e): EtcdOp[] => (kept.has(e.o) ? [{ delete: e.key }] : [{ delete: e.key }, { delete: this.keys.ref(e.o, stream) }]));
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

  /** `o/` keys: objects that hold live data or wait for the reaper (a count-only read). */
  objectCount(): Promise<number> {
    return this.#link.countPrefix(this.keys.objects, this.#deadlineMs);
  }

  /** `d/` keys: objects marked destroyed and not yet deleted. */
  destroyedObjectBacklog(): Promise<number> {
    return this.#link.countPrefix(this.keys.destroyedObjects, this.#deadlineMs);
  }

  #fenceCompare(c: StreamCommit): EtcdCompare {
    const key = this.keys.fence(c.stream);
    return c.create === true ? { key, absent: true } : { key, value: Buffer.from(fenceValue(c.fence)) };
  }

  /** The carried entries of a part's streams, each earlier object's `o/` once. */
  #carriedOps(part: readonly StreamCommit[], carriedOf: ReadonlyMap<string, CarriedEntry[]>): EtcdOp[] {
    const ops: EtcdOp[] = [];
    const objects = new Set<string>();
    for (const c of part) {
      for (const e of carriedOf.get(c.stream) ?? []) {
        if (!objects.has(e.objectKey)) {
          objects.add(e.objectKey);
          ops.push({ put: this.keys.object(e.objectKey), value: json({ bytes: e.bytes, at: Date.now() }) });
        }
        ops.push(...this.#commitOps(e.objectKey, e.commit));
      }
    }
    return ops;
  }

  #commitOps(objectKey: string, c: StreamCommit): EtcdOp[] {
    const ops: EtcdOp[] = [];
    if (c.create === true) ops.push({ put: this.keys.fence(c.stream), value: Buffer.from(fenceValue(c.fence)) });
    ops.push(
      { put: this.keys.entry(c.stream, c.fence.epoch, c.counter), value: json({ o: objectKey, off: c.off, len: c.len, from: c.from, to: c.to } satisfies EntryValue) },
      { put: this.keys.ref(objectKey, c.stream), value: Buffer.from('1') },
    );
    if (c.meta !== undefined) ops.push({ put: this.keys.meta(c.stream), value: json(c.meta) });
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

/** Commits cut into txns of at most STREAMS_PER_TXN streams and OPS_PER_TXN operations per branch (carried entries included). */
function txnParts(commits: readonly StreamCommit[], carriedOf: ReadonlyMap<string, readonly CarriedEntry[]>): StreamCommit[][] {
  const parts: StreamCommit[][] = [];
  let part: StreamCommit[] = [];
  let ops = 1; // o/
  for (const c of commits) {
    // i/ + r/ (+ m/, + f/), and i/ + r/ + an o/ per carried entry (counted as if none shared an object).
    const n = 2 + (c.meta !== undefined ? 1 : 0) + (c.create === true ? 1 : 0) + 3 * (carriedOf.get(c.stream)?.length ?? 0);
    if (part.length === STREAMS_PER_TXN || ops + n > OPS_PER_TXN) {
      parts.push(part);
      part = [];
      ops = 1;
    }
    part.push(c);
    ops += n;
  }
  if (part.length > 0) parts.push(part);
  return parts;
}
