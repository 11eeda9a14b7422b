/**
 * The metadata store: one ordered sequence of commands that every node applies to an in-memory
 * view. Two backends implement it: the embedded local backend (a fsynced command log with
 * snapshots, the default) and etcd (for clusters, later). Both pass the same contract tests
 * (test/actors/meta-store.contract.ts).
 *
 * Keys are strings (`tokens/<id>`, `nodes/<id>`, `cluster/id`); values are JSON. A record's
 * `version` is the index of the command that last wrote it; `appliedIndex` is the index of the
 * last command the view applied and never goes backwards (the etcd revision with etcd).
 */
import { type BucketCounts } from '../../shards';

/** Records handed out by `get`, `list`, `put` and `onChange` are the view's own objects: read-only. */
export interface MetaRecord<T = unknown> {
  key: string;
  value: T;
  /** Index of the command that last wrote this record (etcd: mod revision). */
  version: number;
}

/** A write's precondition: `absent` (create only), a version (compare-and-set), or none. */
export type Expect = { absent: true } | { version: number } | null;

export class MetaConflictError extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(message);
    this.name = 'MetaConflictError';
  }
}

export interface MetaStore {
  /** Index of the last command applied to the view (0 for a new store). Monotonic. */
  readonly appliedIndex: number;
  /** A record from the view, or null. */
  get<T = unknown>(key: string): MetaRecord<T> | null;
  /** Records whose key starts with `prefix`, in key order. */
  list<T = unknown>(prefix: string): Array<MetaRecord<T>>;
  /**
   * Write `value` under `key` if `expect` holds; resolves once the command is durable and applied
   * to the view (so a read right after sees it). Rejects with MetaConflictError when it does not hold.
   */
  put<T>(key: string, value: T, expect?: Expect): Promise<MetaRecord<T>>;
  /**
   * Write `key` tied to this process's liveness (a node's `live/<id>`, docs/cluster.md): etcd puts
   * it on a lease of `ttlSeconds` the store keeps alive and revokes on close, so it vanishes from
   * every view when the node stops or is cut off for longer than that. Absent on backends that
   * hold one node only (local): there, the running node is the live one.
   */
  putLive?<T>(key: string, value: T, ttlSeconds: number, onLost?: (lost: boolean) => void): Promise<MetaRecord<T>>;
  /**
   * Write `key` if `expect` holds, on the same lease as this store's live record (putLive), so it
   * vanishes with it: the maintenance lease (`maintenance`, docs/cluster.md) is such a key. Absent
   * where putLive is; rejects when no live record was written yet.
   */
  putOnLive?<T>(key: string, value: T, expect?: Expect): Promise<MetaRecord<T>>;
  /**
   * False while the store cannot take writes: the live record's lease (putLive) failed its last
   * two renewals (etcd unreachable or without quorum). The node is then not ready (`/ready` 503).
   * Absent where putLive is (local: the store is the node's own disk).
   */
  reachable?(): boolean;
  /** Delete `key` if `expect` holds; resolves false when there was nothing to delete (and no version was expected). */
  delete(key: string, expect?: Expect): Promise<boolean>;
  /**
   * Wait until the view has applied every command committed before this call, cluster-wide
   * (etcd: one quorum read of the head revision, shared by concurrent callers). Local: at once.
   */
  sync(): Promise<void>;
  /** sync()'s latency histogram (docs/metrics.md); absent where sync() waits for nothing (local). */
  readonly syncLatency?: BucketCounts;
  /**
   * True when the view already holds every command committed anywhere, so reads need no `sync()`
   * first (local: always, there is one writer; etcd: false, a quorum read must come first). Lets
   * the per-request token check stay synchronous where it can.
   */
  viewIsCurrent(): boolean;
  /**
   * Called after each applied command (key, record or null when deleted), synchronously and in
   * command order, before the write's promise resolves. Refused writes notify nothing.
   */
  onChange(listener: (key: string, record: MetaRecord | null) => void): void;
  /** Stop taking writes; resolves once every write accepted before it is durable and applied. */
  close(): Promise<void>;
}
