/**
 * The etcd MetaStore backend (`--metadata etcd://…/<prefix>`). etcd orders the commands; every
 * node applies them from a watch to its in-memory view.
 *
 *   <prefix>/k/<key>    a record: its JSON value; version = the pair's mod revision
 *   <prefix>/head       rewritten by every write in the same transaction: its mod revision is the
 *                       revision of the last write to this store, which sync() reads
 *   <prefix>/w/<id>     a write's once-marker (short-lived lease): makes retries idempotent
 *
 *   put/delete ──txn: If(expect, marker absent) Then(record, head, marker) Else(get record, head, marker)
 *        │      an attempt that failed (deadline, leader lost) is sent again, to the next member:
 *        │      the marker tells whether an earlier attempt landed, and keeps a late one from landing twice
 *        ▼
 *   watch <prefix>/k/ from appliedIndex + 1 ──▶ view (per revision) ──▶ onChange ──▶ the write resolves
 *
 * `appliedIndex` is the etcd revision the view has applied (revisions of other prefixes leave
 * gaps). `sync()` is a read index: one linearizable read of `head`, shared by the callers of an
 * event-loop turn (all arrived before it was sent), then a wait until the view has applied that revision. Keys deleted
 * by an expiring lease (node liveness records, `live-lease.ts`) do not move `head`; sync() does not wait for them.
 */
import { randomBytes } from 'node:crypto';
import { SvcError } from '../../../errors';
import { type Logger } from '../../../log';
import { type Expect, MetaConflictError, type MetaRecord, type MetaStore } from '../meta-store';
import { MetaView } from '../meta-view';
import { type EtcdCompare, type EtcdEvent, EtcdLink, type EtcdOp, EtcdUnavailableError, type EtcdWatch } from './etcd-link';
import { type EtcdTarget } from './etcd-url';
import { LiveLease } from './live-lease';
import { MarkerLease } from './marker-lease';
import { type BucketCounts } from '../../../shards';
import { ReadIndex } from './read-index';
import { RevisionWaiters } from './revision-waiters';

export interface EtcdMetaStoreOptions {
  log?: Logger;
  /** How long a write or a sync may keep trying before it fails with storage_unavailable. Default 10 s. */
  deadlineMs?: number;
  /** One attempt on one member. Default 1.5 s. */
  attemptMs?: number;
}

export interface EtcdMetaStoreStats {
  /** Write attempts sent again after a failed attempt. */
  writeRetries: number;
  /** Linearizable head reads sent by sync(). */
  headReads: number;
  /** Resyncs from a snapshot after the watch fell behind a compaction. */
  resyncs: number;
  /** Watch breaks resumed. */
  watchBreaks: number;
}

const EMPTY = Buffer.alloc(0);

export class EtcdMetaStore implements MetaStore {
  readonly #link: EtcdLink;
  readonly #view: MetaView;
  readonly #log: Logger | null;
  readonly #deadlineMs: number;
  readonly #records: string;
  readonly #head: string;
  readonly #markers: string;
  readonly #writerId = randomBytes(6).toString('base64url');
  #writeSeq = 0;
  readonly #waiters = new RevisionWaiters();
  readonly #listeners: Array<(key: string, record: MetaRecord | null) => void> = [];
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #lease: MarkerLease;
  #watch: EtcdWatch | null = null;
  /** The lease of this node's liveness record (putLive), or null. */
  #live: LiveLease | null = null;
  readonly #readIndex = new ReadIndex(() => this.#readHead());
  #closed = false;
  /** The transaction in flight: the next one is sent after it is answered. */
  #queue: Promise<void> = Promise.resolve();
  #closing: Promise<void> | null = null;
  readonly stats: EtcdMetaStoreStats = { writeRetries: 0, headReads: 0, resyncs: 0, watchBreaks: 0 };

  private constructor(link: EtcdLink, prefix: string, view: MetaView, options: EtcdMetaStoreOptions) {
    this.#link = link;
    this.#view = view;
    this.#log = options.log ?? null;
    this.#deadlineMs = options.deadlineMs ?? 10_000;
    this.#records = `${prefix}/k/`;
    this.#head = `${prefix}/head`;
    this.#markers = `${prefix}/w/`;
    this.#lease = new MarkerLease(link, this.#deadlineMs);
  }

  /** Connect, read the records (a snapshot at one revision) and watch from the revision after it. */
  static async open(target: EtcdTarget, options: EtcdMetaStoreOptions = {}): Promise<EtcdMetaStore> {
    const link = new EtcdLink(target.endpoints, { attemptMs: options.attemptMs, access: target.access });
    try {
      const store = new EtcdMetaStore(link, target.prefix, new MetaView(0), options);
      // TLS, certificates and the password first: etcd refusing them stops the start at once, saying which.
      await link.check(store.#head, options.deadlineMs ?? 10_000);
      const snap = await link.rangePrefix(store.#records, options.deadlineMs ?? 10_000);
      store.#view.resetTo(snap.revision, snap.kvs.map((kv) => store.#toRecord(kv.key, kv.value, kv.modRevision)));
      store.#startWatch();
      return store;
    } catch (err) {
      link.close();
      throw new Error(`cannot open the etcd metadata store at ${target.access.tls ? 'etcds' : 'etcd'}://${target.endpoints.join(',')}/${target.prefix}: ${(err as Error).message}`, { cause: err });
    }
  }

  /** Index (in the URL's member list) of the member the watch is on (fault tests kill it). */
  get watchMember(): number | null {
    return this.#watch?.member ?? null;
  }

  /** Index of the member the next transaction goes to (fault tests kill it). */
  get requestMember(): number {
    return this.#link.current;
  }

  get appliedIndex(): number {
    return this.#view.appliedIndex;
  }

  get<T = unknown>(key: string): MetaRecord<T> | null {
    return this.#view.get(key) as MetaRecord<T> | null;
  }

  list<T = unknown>(prefix: string): Array<MetaRecord<T>> {
    return this.#view.list(prefix) as Array<MetaRecord<T>>;
  }

  put<T>(key: string, value: T, expect: Expect = null): Promise<MetaRecord<T>> {
    return this.#track(async () => {
      this.#checkOpen(key);
      const json = JSON.stringify(value);
      if (json === undefined) throw new TypeError(`metadata value for ${key} is not JSON`);
      const out = await this.#write(key, expect, [{ put: this.#records + key, value: Buffer.from(json, 'utf8') }]);
      if (out.conflict !== null) throw new MetaConflictError(key, out.conflict);
      return out.record as MetaRecord<T>;
    });
  }

  delete(key: string, expect: Expect = null): Promise<boolean> {
    return this.#track(async () => {
      this.#checkOpen(key);
      if (expect !== null && expect !== undefined && 'absent' in expect) {
        // "Delete it only if it does not exist" deletes nothing: answer from a current view.
        await this.sync();
        if (this.#view.get(key) !== null) throw new MetaConflictError(key, `${key} already exists (version ${this.#view.get(key)!.version})`);
        return false;
      }
      const out = await this.#write(key, expect, [{ delete: this.#records + key }]);
      if (out.conflict === null) return true;
      // Nothing to delete, and nothing was expected of it: not a conflict.
      if (out.absent && (expect === null || 'absent' in expect)) return false;
      throw new MetaConflictError(key, out.conflict);
    });
  }

  /**
   * Write `key` on a lease of `ttlSeconds` that this store keeps alive and revokes on close
   * (live-lease.ts): the record vanishes from every view when the node stops or is cut off for
   * longer than the TTL. One live record per store (the node's `live/<id>`).
   */
  reachable(): boolean {
    return this.#live?.reachable ?? true;
  }

  putLive<T>(key: string, value: T, ttlSeconds: number, onLost?: (lost: boolean) => void): Promise<MetaRecord<T>> {
    return this.#track(async () => {
      this.#checkOpen(key);
      const json = JSON.stringify(value);
      if (json === undefined) throw new TypeError(`metadata value for ${key} is not JSON`);
      if (this.#live !== null) throw new Error('this store already keeps a live record');
      const live = new LiveLease(this.#link, ttlSeconds, this.#deadlineMs, this.#log);
      live.onLost = onLost ?? null;
      this.#live = live;
      const write = async (lease: string): Promise<MetaRecord> => {
        const out = await this.#write(key, null, [{ put: this.#records + key, value: Buffer.from(json, 'utf8'), lease }]);
        return out.record!;
      };
      const lease = await live.id().catch((err: unknown) => {
        throw unavailable(err);
      });
      const record = await write(lease);
      live.start(async (l) => {
        await write(l);
      });
      return record as MetaRecord<T>;
    });
  }

  /** Write `key` on the live record's lease (the maintenance lease): it vanishes when that lease does. */
  putOnLive<T>(key: string, value: T, expect: Expect = null): Promise<MetaRecord<T>> {
    return this.#track(async () => {
      this.#checkOpen(key);
      const live = this.#live;
      if (live === null) throw new Error(`${key}: this store keeps no live record to tie it to`);
      const json = JSON.stringify(value);
      if (json === undefined) throw new TypeError(`metadata value for ${key} is not JSON`);
      const lease = await live.id().catch((err: unknown) => {
        throw unavailable(err);
      });
      const out = await this.#write(key, expect, [{ put: this.#records + key, value: Buffer.from(json, 'utf8'), lease }]);
      if (out.conflict !== null) throw new MetaConflictError(key, out.conflict);
      return out.record as MetaRecord<T>;
    });
  }

  /**
   * A read index (read-index.ts): the head revision, read linearizably by a read sent after this
   * call (shared by the callers of one event-loop turn), then a wait until the view applied it.
   */
  sync(): Promise<void> {
    if (this.#closed) return Promise.reject(new SvcError('shutting_down', 'the metadata store is closed'));
    return this.#readIndex.sync();
  }

  /** sync()'s latency, per read-index cohort (read-index.ts). */
  get syncLatency(): BucketCounts {
    return this.#readIndex.latency;
  }

  /** Other nodes write too: a read must be preceded by sync(). */
  viewIsCurrent(): boolean {
    return false;
  }

  onChange(listener: (key: string, record: MetaRecord | null) => void): void {
    this.#listeners.push(listener);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
      // Leaving: the liveness record goes at once, so other nodes stop sending clients here.
      await this.#live?.stop();
      this.#watch?.cancel();
      this.#waiters.failAll(new SvcError('shutting_down', 'the metadata store is closed'));
      this.#link.close();
    })();
    return this.#closing;
  }

  async #readHead(): Promise<void> {
    this.stats.headReads++;
    const { kv } = await this.#link.get(this.#head, this.#deadlineMs).catch((err: unknown) => {
      throw unavailable(err);
    });
    await this.#waitApplied(kv?.modRevision ?? 0);
  }

  /**
   * Run one write to its end. Resolves with the record written (after the view applied it), or
   * with why the precondition failed (after the view applied every write it lost to).
   *
   * One transaction of this store is in flight at a time, in call order: etcd may order two
   * requests in flight at once either way, and the contract promises that one node's commands
   * apply in the order it made them. Waiting for the view happens outside that queue.
   */
  async #write(key: string, expect: Expect, ops: EtcdOp[]): Promise<{ record: MetaRecord | null; conflict: string | null; absent: boolean }> {
    const sent = this.#queue.then(() => this.#send(key, expect, ops));
    this.#queue = sent.then(
      () => undefined,
      () => undefined,
    );
    const out = await sent;
    if (out.revision !== null) return { record: await this.#recordAt(key, out.revision), conflict: null, absent: false };
    await this.#waitApplied(out.headRevision);
    const version = out.version;
    const why =
      version === null
        ? `${key} does not exist` + (expect !== null && 'version' in expect ? ` (expected version ${expect.version})` : '')
        : expect !== null && 'version' in expect
          ? `${key} is at version ${version}, not ${expect.version}`
          : `${key} already exists (version ${version})`;
    return { record: null, conflict: why, absent: version === null };
  }

  /** Send a write's transaction until etcd has answered it (see the file's diagram). */
  async #send(key: string, expect: Expect, ops: EtcdOp[]): Promise<{ revision: number } | { revision: null; headRevision: number; version: number | null }> {
    const recordKey = this.#records + key;
    const marker = `${this.#markers}${this.#writerId}.${++this.#writeSeq}`;
    const compare: EtcdCompare[] = [{ key: marker, absent: true }];
    if (expect !== null && expect !== undefined) compare.push('absent' in expect ? { key: recordKey, absent: true } : { key: recordKey, modRevision: expect.version });
    // A delete with no expectation writes only when there is something to delete.
    else if (ops.some((o) => 'delete' in o)) compare.push({ key: recordKey, present: true });
    const end = Date.now() + this.#deadlineMs;
    let retry = false;
    let failures = 0;
    for (;;) {
      const lease = await this.#lease.current().catch((err: unknown) => {
        throw unavailable(err);
      });
      const success: EtcdOp[] = [...ops, { put: this.#head, value: EMPTY }, { put: marker, value: EMPTY, lease }];
      // A retry that finds the precondition false poisons the marker, so that an earlier attempt
      // still on its way cannot land after this answer.
      const failure: EtcdOp[] = [{ get: recordKey }, { get: this.#head }, { get: marker }, ...(retry ? [{ put: marker, value: EMPTY, lease }] : [])];
      let res;
      try {
        res = await this.#link.txnOnce(compare, success, failure);
      } catch (err) {
        if (/lease not found/i.test((err as Error).message)) this.#lease.forget(lease);
        if (this.#link.closed || Date.now() >= end) throw unavailable(err);
        // It may or may not have landed: send it again; the marker says which.
        this.stats.writeRetries++;
        if (!retry) this.#log?.warn({ err: (err as Error).message, key }, 'etcd write attempt failed; retrying on the next member');
        retry = true;
        // Every member failed once more: give an election (or a restart) time before the next round.
        if (++failures % this.#link.endpoints === 0) await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      if (res.succeeded) return { revision: res.revision };
      const [rec, head, landed] = res.gets;
      // An earlier attempt wrote it, at the marker's revision.
      if (landed !== null && landed !== undefined) return { revision: landed.modRevision };
      return { revision: null, headRevision: head?.modRevision ?? 0, version: rec?.modRevision ?? null };
    }
  }

  /** The record `key` as written at `revision`, once the view has applied that revision. */
  async #recordAt(key: string, revision: number): Promise<MetaRecord | null> {
    let atRevision: MetaRecord | null = null;
    await this.#waitApplied(revision, () => {
      atRevision = this.#view.get(key);
    });
    const r = atRevision as MetaRecord | null;
    return r !== null && r.version === revision ? r : this.#view.get(key);
  }

  /** Resolves once the view has applied `revision`; `atApply` runs right when it does. */
  #waitApplied(revision: number, atApply?: () => void): Promise<void> {
    if (this.#view.appliedIndex >= revision) {
      atApply?.();
      return Promise.resolve();
    }
    return this.#waiters.wait(revision, atApply);
  }

  #startWatch(): void {
    this.#watch = this.#link.watchPrefix(this.#records, this.#view.appliedIndex + 1, {
      onEvents: (events) => this.#apply(events),
      onCompacted: (rev) => this.#resync(rev),
      onBreak: (err) => {
        this.stats.watchBreaks++;
        this.#log?.warn({ err: err.message, appliedIndex: this.#view.appliedIndex }, 'etcd watch broke; resuming after the last applied revision');
      },
    });
  }

  /** Apply whole revisions in order: view, listeners, then the writes waiting for them. */
  #apply(events: EtcdEvent[]): void {
    let i = 0;
    while (i < events.length) {
      const revision = events[i]!.kv.modRevision;
      const changes: Array<{ key: string; value?: unknown }> = [];
      for (; i < events.length && events[i]!.kv.modRevision === revision; i++) {
        const e = events[i]!;
        const key = e.kv.key.slice(this.#records.length);
        changes.push(e.type === 'delete' ? { key } : { key, value: this.#parse(e.kv.key, e.kv.value) });
      }
      const records = this.#view.applyRevision(revision, changes);
      changes.forEach((c, j) => this.#notify(c.key, records[j]!));
      this.#waiters.release(revision);
    }
  }

  /** The watch fell behind a compaction: replace the view by a snapshot and report what changed. */
  async #resync(compactRevision: number): Promise<number> {
    this.stats.resyncs++;
    this.#log?.warn({ compactRevision, appliedIndex: this.#view.appliedIndex }, 'etcd watch fell behind a compaction; resyncing from a snapshot');
    const snap = await this.#link.rangePrefix(this.#records, this.#deadlineMs);
    const changed = this.#view.resetTo(
      snap.revision,
      snap.kvs.map((kv) => this.#toRecord(kv.key, kv.value, kv.modRevision)),
    );
    for (const [key, record] of changed) this.#notify(key, record);
    this.#waiters.release(snap.revision);
    return snap.revision;
  }

  #toRecord(etcdKey: string, value: Buffer, modRevision: number): MetaRecord {
    return { key: etcdKey.slice(this.#records.length), value: this.#parse(etcdKey, value), version: modRevision };
  }

  #parse(etcdKey: string, value: Buffer): unknown {
    try {
      return JSON.parse(value.toString('utf8'));
    } catch {
      // Written by hand (etcdctl)? Keep it visible as text rather than stopping the view.
      this.#log?.error({ key: etcdKey }, 'etcd metadata value is not JSON; kept as a string');
      return value.toString('utf8');
    }
  }

  #notify(key: string, record: MetaRecord | null): void {
    for (const listener of this.#listeners) {
      try {
        listener(key, record);
      } catch (err) {
        if (this.#log !== null) this.#log.error({ err, key }, 'metadata change listener threw');
        else process.nextTick(() => {
          throw err;
        });
      }
    }
  }

  #track<T>(run: () => Promise<T>): Promise<T> {
    const p = run();
    this.#inFlight.add(p);
    const done = (): void => {
      this.#inFlight.delete(p);
    };
    p.then(done, done);
    return p;
  }

  #checkOpen(key: string): void {
    if (this.#closed) throw new SvcError('shutting_down', 'the metadata store is closed');
    if (typeof key !== 'string' || key.length === 0) throw new TypeError('a metadata key is a non-empty string');
  }

}

function unavailable(err: unknown): Error {
  if (err instanceof SvcError) return err;
  const why = err instanceof EtcdUnavailableError ? err.message : `etcd: ${(err as Error)?.message ?? String(err)}`;
  return new SvcError('storage_unavailable', `the metadata store is unavailable: ${why}`);
}
