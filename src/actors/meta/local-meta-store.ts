/**
 * The embedded MetaStore backend: a command log with snapshots in one directory.
 *
 *   put / delete ──▶ check `expect` against the accepted state (the view plus commands accepted
 *        │           but not yet durable), assign the next index
 *        ▼
 *   pending group ──setImmediate──▶ meta.log: one write + one fdatasync (command-log.ts)
 *                                        │
 *                    apply to the view ◀─┤ in index order, then onChange listeners,
 *                    resolve the calls ◀─┘ then the callers
 *                                        │ every `snapshotEvery` commands:
 *                                        ▼
 *                    meta.snapshot (atomic replace) ──▶ meta.log emptied
 *
 * Calls made in one event-loop turn share a group, and so do calls made while the previous
 * group is being written: one group is in flight at a time. Because preconditions are checked
 * when a call is accepted, in command order, two compare-and-set writes on one key never both
 * win, even within one group.
 *
 * Calls that write nothing (a conflict, a delete of nothing) are answered in order too, after
 * everything accepted before them is applied: a caller that re-reads and retries on conflict
 * then sees the write it lost to instead of spinning against a view that has not caught up.
 */
import * as fsp from 'node:fs/promises';
import { SvcError } from '../../errors';
import { type Logger } from '../../log';
import { type MetaCommand, encodeDelete, encodePut } from './command';
import { CommandLog } from './command-log';
import { type Expect, MetaConflictError, type MetaRecord, type MetaStore } from './meta-store';
import { MetaView } from './meta-view';
import { readSnapshot, writeSnapshot } from './snapshot';

export interface LocalMetaStoreOptions {
  /** Write a snapshot and empty the log once it holds this many commands. Default 10,000. */
  snapshotEvery?: number;
  /** Receives a cut torn tail, a failed snapshot and a listener that threw. */
  log?: Logger;
}

export interface LocalMetaStoreStats {
  /** Groups written to the log, each with one fdatasync. */
  logSyncs: number;
  /** Snapshots written since open. */
  snapshots: number;
}

const DEFAULT_SNAPSHOT_EVERY = 10_000;

/** A call waiting for its group: a command to write, or only an answer to give in order. */
interface Waiter {
  cmd: MetaCommand | null;
  frame: Buffer | null;
  /** Runs once the group is durable and applied, with the record the command wrote (or null). */
  settle(record: MetaRecord | null): void;
  fail(err: Error): void;
}

/** A key's state as of the last accepted command on it (version null: deleted). */
interface Accepted {
  index: number;
  version: number | null;
}

export class LocalMetaStore implements MetaStore {
  readonly #dir: string;
  readonly #log: CommandLog;
  readonly #view: MetaView;
  readonly #logger: Logger | null;
  readonly #snapshotEvery: number;
  /** Log length (in commands) at which the next snapshot is due. */
  #snapshotAt: number;
  #snapshots = 0;
  #nextIndex: number;
  /** Keys written by accepted commands that are not applied yet. */
  readonly #accepted = new Map<string, Accepted>();
  #pending: Waiter[] = [];
  #flushScheduled = false;
  /** A group is being written and applied. */
  #writing = false;
  #snapshotting = false;
  #idleWaiters: Array<() => void> = [];
  readonly #listeners: Array<(key: string, record: MetaRecord | null) => void> = [];
  #closed = false;
  #closing: Promise<void> | null = null;
  #failed: SvcError | null = null;

  private constructor(dir: string, log: CommandLog, view: MetaView, options: LocalMetaStoreOptions) {
    this.#dir = dir;
    this.#log = log;
    this.#view = view;
    this.#logger = options.log ?? null;
    this.#snapshotEvery = options.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY;
    this.#snapshotAt = this.#snapshotEvery;
    this.#nextIndex = view.appliedIndex + 1;
  }

  /**
   * Open (or create) the store in `dir`: load the snapshot, replay the log after it, cut a torn
   * tail. Throws on a corrupt snapshot or a log that does not follow it.
   */
  static async open(dir: string, options: LocalMetaStoreOptions = {}): Promise<LocalMetaStore> {
    const every = options.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY;
    if (!Number.isSafeInteger(every) || every < 1) throw new RangeError(`snapshotEvery must be a positive integer, not ${every}`);
    await fsp.mkdir(dir, { recursive: true });
    const snapshot = await readSnapshot(dir);
    const view = new MetaView(snapshot?.appliedIndex ?? 0, snapshot?.records ?? []);
    const { log, commands, cutBytes } = await CommandLog.open(dir);
    try {
      for (const cmd of commands) {
        // Commands the snapshot already holds: a crash came between the snapshot and emptying the log.
        if (cmd.index <= view.appliedIndex) continue;
        if (cmd.index !== view.appliedIndex + 1) {
          throw new Error(
            `metadata log in ${dir} continues at command ${cmd.index} but the state ends at ${view.appliedIndex}` +
              (snapshot === null ? ' and there is no snapshot (was meta.snapshot removed?)' : '') +
              '; refusing to open the metadata store',
          );
        }
        view.apply(cmd);
      }
    } catch (e) {
      await log.close();
      throw e;
    }
    if (cutBytes > 0) options.log?.warn({ dir, cutBytes, appliedIndex: view.appliedIndex }, 'metadata log: cut a torn tail');
    return new LocalMetaStore(dir, log, view, options);
  }

  get appliedIndex(): number {
    return this.#view.appliedIndex;
  }

  get stats(): LocalMetaStoreStats {
    return { logSyncs: this.#log.syncs, snapshots: this.#snapshots };
  }

  get<T = unknown>(key: string): MetaRecord<T> | null {
    return this.#view.get(key) as MetaRecord<T> | null;
  }

  list<T = unknown>(prefix: string): Array<MetaRecord<T>> {
    return this.#view.list(prefix) as Array<MetaRecord<T>>;
  }

  put<T>(key: string, value: T, expect: Expect = null): Promise<MetaRecord<T>> {
    return new Promise((resolve, reject) => {
      this.#checkOpen(key);
      const json = JSON.stringify(value);
      if (json === undefined) throw new TypeError(`metadata value for ${key} is not JSON`);
      if (this.#conflict(key, expect, reject)) return;
      const index = this.#nextIndex++;
      this.#accepted.set(key, { index, version: index });
      // The view holds the value as it will read back from the log, not the caller's object.
      const cmd: MetaCommand = { index, op: 'put', key, value: JSON.parse(json) };
      this.#enqueue({ cmd, frame: encodePut(index, key, json), settle: (r) => resolve(r as MetaRecord<T>), fail: reject });
    });
  }

  delete(key: string, expect: Expect = null): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.#checkOpen(key);
      if (this.#conflict(key, expect, reject)) return;
      if (this.#acceptedVersion(key) === null) return this.#answer(() => resolve(false), reject);
      const index = this.#nextIndex++;
      this.#accepted.set(key, { index, version: null });
      this.#enqueue({ cmd: { index, op: 'delete', key }, frame: encodeDelete(index, key), settle: () => resolve(true), fail: reject });
    });
  }

  /** A single node has nothing to catch up with: every committed command is applied already. */
  sync(): Promise<void> {
    return Promise.resolve();
  }

  /** One process writes this store: what it has applied is everything there is. */
  viewIsCurrent(): boolean {
    return true;
  }

  onChange(listener: (key: string, record: MetaRecord | null) => void): void {
    this.#listeners.push(listener);
  }

  /** Stop taking writes, wait until everything accepted is durable and applied, close the log. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      await new Promise<void>((resolve) => {
        this.#idleWaiters.push(resolve);
        this.#checkIdle();
      });
      await this.#log.close();
    })();
    return this.#closing;
  }

  /** Throws (so the promise rejects) when the call cannot be accepted. */
  #checkOpen(key: string): void {
    if (this.#failed !== null) throw this.#failed;
    if (this.#closed) throw new SvcError('shutting_down', 'the metadata store is closed');
    if (typeof key !== 'string' || key.length === 0) throw new TypeError('a metadata key is a non-empty string');
  }

  /** The key's version after every accepted command, or null when it will not exist. */
  #acceptedVersion(key: string): number | null {
    const a = this.#accepted.get(key);
    return a !== undefined ? a.version : (this.#view.get(key)?.version ?? null);
  }

  /** When `expect` does not hold, answer with a MetaConflictError (in order) and return true. */
  #conflict(key: string, expect: Expect, reject: (err: Error) => void): boolean {
    if (expect === null || expect === undefined) return false;
    const version = this.#acceptedVersion(key);
    let why: string | null = null;
    if ('absent' in expect) {
      if (version !== null) why = `${key} already exists (version ${version})`;
    } else if (version === null) {
      why = `${key} does not exist (expected version ${expect.version})`;
    } else if (version !== expect.version) {
      why = `${key} is at version ${version}, not ${expect.version}`;
    }
    if (why === null) return false;
    const err = new MetaConflictError(key, why);
    this.#answer(() => reject(err), reject);
    return true;
  }

  /** Answer a call that writes nothing: now if everything accepted is applied, else after it. */
  #answer(settle: () => void, fail: (err: Error) => void): void {
    if (this.#pending.length === 0 && !this.#writing) settle();
    else this.#enqueue({ cmd: null, frame: null, settle, fail });
  }

  #enqueue(w: Waiter): void {
    this.#pending.push(w);
    if (this.#flushScheduled || this.#writing || this.#snapshotting) return;
    this.#flushScheduled = true;
    // setImmediate, not a microtask: every call made in this event-loop turn joins the group.
    setImmediate(() => {
      this.#flushScheduled = false;
      void this.#flush();
    });
  }

  /** Write, apply and answer the pending group; then the next one, if calls came in meanwhile. Never rejects. */
  async #flush(): Promise<void> {
    if (this.#writing || this.#snapshotting || this.#pending.length === 0) return this.#checkIdle();
    const group = this.#pending;
    this.#pending = [];
    this.#writing = true;
    const frames: Buffer[] = [];
    for (const w of group) if (w.frame !== null) frames.push(w.frame);
    try {
      if (frames.length > 0) await this.#log.append(frames);
    } catch (e) {
      this.#writing = false;
      this.#fail(e as Error, group);
      return;
    }
    for (const w of group) {
      if (w.cmd === null) {
        w.settle(null);
        continue;
      }
      const record = this.#view.apply(w.cmd);
      if (this.#accepted.get(w.cmd.key)?.index === w.cmd.index) this.#accepted.delete(w.cmd.key);
      this.#notify(w.cmd.key, record);
      w.settle(record);
    }
    this.#writing = false;
    if (this.#log.commands >= this.#snapshotAt) await this.#snapshot();
    if (this.#pending.length > 0) return this.#flush();
    this.#checkIdle();
  }

  async #snapshot(): Promise<void> {
    this.#snapshotting = true;
    try {
      try {
        await writeSnapshot(this.#dir, { appliedIndex: this.#view.appliedIndex, records: this.#view.records() });
      } catch (e) {
        // The log still holds everything: carry on with it and try again after as many commands.
        this.#logger?.error({ err: e, dir: this.#dir }, 'metadata snapshot failed; the log keeps growing');
        this.#snapshotAt = this.#log.commands + this.#snapshotEvery;
        return;
      }
      this.#snapshots++;
      try {
        await this.#log.reset();
        this.#snapshotAt = this.#snapshotEvery;
      } catch (e) {
        this.#fail(e as Error, []);
      }
    } finally {
      this.#snapshotting = false;
    }
  }

  /** The log's tail on disk is unknown after a failed write: refuse everything from now on. */
  #fail(err: Error, group: Waiter[]): void {
    this.#failed ??= new SvcError('storage_unavailable', `the metadata log could not be written: ${err.message}`);
    this.#logger?.error({ err, dir: this.#dir }, 'metadata log write failed; the store takes no more writes');
    const waiting = [...group, ...this.#pending];
    this.#pending = [];
    this.#accepted.clear();
    for (const w of waiting) w.fail(this.#failed);
    this.#checkIdle();
  }

  #notify(key: string, record: MetaRecord | null): void {
    for (const listener of this.#listeners) {
      try {
        listener(key, record);
      } catch (err) {
        // A listener's bug must not stop the view or the other listeners.
        if (this.#logger !== null) this.#logger.error({ err, key }, 'metadata change listener threw');
        else process.nextTick(() => {
          throw err;
        });
      }
    }
  }

  #checkIdle(): void {
    if (this.#pending.length > 0 || this.#writing || this.#snapshotting) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const w of waiters) w();
  }
}
