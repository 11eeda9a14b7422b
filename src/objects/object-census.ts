/**
 * `objectCount` and `destroyedObjectBacklog` of GET /admin/cluster and the `svc_objects*` gauges
 * in objects mode (docs/cluster.md): the cluster's real figures, counted in the ledger with two
 * count-only range reads (`o/` records, `d/` records), not summed from what nodes publish.
 * Cached for a moment so that a dashboard polling every node costs etcd two reads per second.
 */
import { type LedgerKeys } from './ledger-keys';
import { LEDGER_DEADLINE_MS, type LedgerKv } from './maintenance-ledger';

export interface ObjectCounts {
  /** Objects the ledger knows (`o/` records): live, or dead and not yet marked. */
  objectCount: number;
  /** Objects marked destroyed whose deletion is pending (`d/` records). */
  destroyedObjectBacklog: number;
}

export class ObjectCensus {
  readonly #kv: LedgerKv;
  readonly #keys: LedgerKeys;
  readonly #ttlMs: number;
  #cached: { at: number; counts: ObjectCounts } | null = null;
  #pending: Promise<ObjectCounts> | null = null;

  constructor(kv: LedgerKv, keys: LedgerKeys, options: { ttlMs?: number } = {}) {
    this.#kv = kv;
    this.#keys = keys;
    this.#ttlMs = options.ttlMs ?? 1_500; // 1.5 s
  }

  /** The counts, at most `ttlMs` old; concurrent callers share one pair of reads. */
  counts(): Promise<ObjectCounts> {
    const c = this.#cached;
    if (c !== null && Date.now() - c.at < this.#ttlMs) return Promise.resolve(c.counts);
    this.#pending ??= (async () => {
      try {
        const [objectCount, destroyedObjectBacklog] = await Promise.all([
          this.#kv.countPrefix(this.#keys.objects, LEDGER_DEADLINE_MS),
          this.#kv.countPrefix(this.#keys.destroyedObjects, LEDGER_DEADLINE_MS),
        ]);
        const counts = { objectCount, destroyedObjectBacklog };
        this.#cached = { at: Date.now(), counts };
        return counts;
      } finally {
        this.#pending = null;
      }
    })();
    return this.#pending;
  }
}
