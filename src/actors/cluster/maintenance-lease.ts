/**
 * The maintenance lease (docs/cluster.md, "The maintenance lease"): exactly one node of a cluster
 * holds it and runs the cluster-wide background work (failover of dead nodes' streams, the
 * destroyed-object reaper).
 *
 *   maintenance  {nodeId, nodeEpoch}  written create-only on the holder's liveness lease
 *
 *   absent ──▶ every live, registered node tries the create-only write; one wins
 *   holder stops / crashes / is cut off ──▶ its liveness lease ends ──▶ the key vanishes ──▶ again
 *
 * Work the holder does in etcd is fenced by the record's version (`version()`): a transaction that
 * compares `maintenance`'s mod revision with it fails once the holder was deposed, so a paused
 * holder that wakes up changes nothing. `isHolder()` says what this node's view says; a deposed
 * holder may believe it a moment longer, which the fence makes harmless.
 *
 * With the embedded store (one node) that node always holds it.
 */
import { type Logger } from '../../log';
import { type MetaStore, MetaConflictError } from '../meta/meta-store';
import { type Membership } from './membership';

/** The key, in the metadata prefix (etcd: `<prefix>/k/maintenance`). */
export const MAINTENANCE_KEY = 'maintenance';

/** The first pause before a take is tried again (doubling while takes fail, up to the TTL). */
const RETRY_MS = 250;

export interface MaintenanceRecord {
  nodeId: number;
  nodeEpoch: number;
}

export class MaintenanceLease {
  readonly #meta: MetaStore;
  readonly #members: Membership;
  readonly #log: Logger;
  readonly #listeners: Array<(holder: boolean) => void> = [];
  #started = false;
  #stopped = false;
  #trying = false;
  #timer: NodeJS.Timeout | null = null;
  #retry: NodeJS.Timeout | null = null;
  /** Takes in a row that failed with an error other than a conflict: the next try waits longer. */
  #failures = 0;
  /** What listeners were last told. */
  #told = false;

  constructor(meta: MetaStore, members: Membership, log: Logger) {
    this.#meta = meta;
    this.#members = members;
    this.#log = log;
    meta.onChange((key, rec) => {
      if (key !== MAINTENANCE_KEY || !this.#started) return;
      if (rec === null) this.#tryTake();
      this.#tell();
    });
  }

  /** Start competing for the lease (after the node registered its live record). */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    if (!this.#members.clustered) {
      this.#tell();
      return;
    }
    this.#tryTake();
    // A missed chance (a failed write, a lease re-granted after a cut-off) is retried every TTL.
    const tick = (): void => {
      if (this.#stopped) return;
      if (this.#meta.get(MAINTENANCE_KEY) === null) this.#tryTake();
      this.#tell();
      this.#timer = setTimeout(tick, this.#members.leaseTtlS * 1000);
      this.#timer.unref();
    };
    this.#timer = setTimeout(tick, this.#members.leaseTtlS * 1000);
    this.#timer.unref();
  }

  /** True when this node's view says this incarnation holds the lease (single node: always, once started). */
  isHolder(): boolean {
    if (!this.#started || this.#stopped) return false;
    if (!this.#members.clustered) return true;
    if (!this.#members.registered) return false;
    const rec = this.#meta.get<MaintenanceRecord>(MAINTENANCE_KEY);
    return rec !== null && rec.value.nodeId === this.#members.nodeId && rec.value.nodeEpoch === this.#members.nodeEpoch;
  }

  /** `leaseHolder` of GET /admin/cluster: true / false, or null while this node is not registered (its view of the lease says nothing). */
  leaseHolder(): boolean | null {
    if (!this.#members.registered || !this.#started) return null;
    return this.isHolder();
  }

  /**
   * The holder's record version (etcd mod revision of `maintenance`) while this node holds the
   * lease, else null. Fences the holder's etcd writes: compare it in the same transaction.
   */
  version(): number | null {
    if (!this.isHolder() || !this.#members.clustered) return null;
    return this.#meta.get(MAINTENANCE_KEY)?.version ?? null;
  }

  /** The holder as this node's view has it, or null. */
  holder(): MaintenanceRecord | null {
    if (!this.#members.clustered) return { nodeId: this.#members.nodeId, nodeEpoch: this.#members.nodeEpoch };
    return this.#meta.get<MaintenanceRecord>(MAINTENANCE_KEY)?.value ?? null;
  }

  /** Called with true when this node becomes the holder and false when it stops being it. */
  onHolderChange(listener: (holder: boolean) => void): void {
    this.#listeners.push(listener);
  }

  /** Stop competing (the store's close revokes the liveness lease, and the key with it). */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    if (this.#retry !== null) clearTimeout(this.#retry);
    this.#timer = null;
    this.#retry = null;
    this.#tell();
  }

  #tryTake(): void {
    const put = this.#meta.putOnLive;
    if (this.#trying || this.#stopped || put === undefined || !this.#members.registered) return;
    this.#trying = true;
    const rec: MaintenanceRecord = { nodeId: this.#members.nodeId, nodeEpoch: this.#members.nodeEpoch };
    put
      .call(this.#meta, MAINTENANCE_KEY, rec, { absent: true })
      .then(
        () => {
          this.#failures = 0;
          this.#log.info({ nodeId: rec.nodeId, nodeEpoch: rec.nodeEpoch }, 'this node holds the maintenance lease');
        },
        (err: unknown) => {
          if (err instanceof MetaConflictError) {
            this.#failures = 0;
            return;
          }
          if (this.#failures++ === 0) this.#log.warn({ err: (err as Error).message }, 'taking the maintenance lease failed; trying again');
        },
      )
      .finally(() => {
        this.#trying = false;
        this.#tell();
        // The key may have vanished while this take was in flight (its delete event found the take
        // under way and did nothing), or the take failed: try again soon rather than at the next
        // tick, a whole TTL later, which is how long the dead holder's streams would wait for
        // failover. A take that conflicted because the view had not yet seen the holder's record
        // costs one more conflict.
        if (!this.#stopped && this.#meta.get(MAINTENANCE_KEY) === null) this.#retrySoon();
      });
  }

  #retrySoon(): void {
    if (this.#retry !== null) return;
    const ms = Math.min(RETRY_MS * 2 ** Math.max(0, this.#failures - 1), this.#members.leaseTtlS * 1000);
    this.#retry = setTimeout(() => {
      this.#retry = null;
      if (!this.#stopped && this.#meta.get(MAINTENANCE_KEY) === null) this.#tryTake();
    }, ms);
    this.#retry.unref();
  }

  #tell(): void {
    const now = this.isHolder();
    if (now === this.#told) return;
    this.#told = now;
    for (const l of this.#listeners) {
      try {
        l(now);
      } catch (err) {
        this.#log.error({ err }, 'a maintenance lease listener threw');
      }
    }
  }
}
