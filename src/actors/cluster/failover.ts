/**
 * Failover (docs/cluster.md, "Failover"): on the maintenance lease holder only, every placement
 * row whose node has no live lease moves to a live node.
 *
 *   live/<A> vanishes (lease expired: crash, cut off; or a clean stop) ──▶ scan the rows
 *     row.nodeId = A, A not live ──▶ target = the live node with the fewest streams (of its topic, then
 *                                    in all) per slot, as for a new stream (balance.ts)
 *                                ──▶ CAS {nodeId: B, epoch: e + 1, state: opening, from: A}
 *                                ──▶ B opens it (moves.ts), A's late writes are fenced
 *
 * One CAS per row; a row that changed meanwhile is judged again at the next scan. The holder also
 * scans every second while it holds the lease (a missed event, a failed CAS, a target that died
 * before opening). A node with no slots takes no failed-over streams unless no live node has any.
 * Only in objects mode: without an object store a dead node's streams wait for it (part 1).
 */
import { type Logger } from '../../log';
import { MetaConflictError, type MetaStore } from '../meta/meta-store';
import { type MaintenanceLease } from './maintenance-lease';
import { type Membership } from './membership';
import { LIVE_PREFIX } from './node-record';
import { PLACEMENT_PREFIX, type Placement } from './placement';

const SCAN_MS = 1_000;

export class FailoverDriver {
  readonly #placement: Placement;
  readonly #members: Membership;
  readonly #lease: MaintenanceLease;
  readonly #log: Logger;
  #timer: NodeJS.Timeout | null = null;
  #scanning = false;
  #again = false;
  #stopped = false;

  constructor(meta: MetaStore, placement: Placement, members: Membership, lease: MaintenanceLease, log: Logger) {
    this.#placement = placement;
    this.#members = members;
    this.#lease = lease;
    this.#log = log;
    meta.onChange((key, rec) => {
      // A node left, or a row was written naming a node that is not live (a transfer to a node that died).
      if ((key.startsWith(LIVE_PREFIX) && rec === null) || key.startsWith(PLACEMENT_PREFIX)) this.#kick();
    });
    lease.onHolderChange((holder) => {
      if (holder) this.#kick();
    });
  }

  start(): void {
    const tick = (): void => {
      if (this.#stopped) return;
      this.#kick();
      this.#timer = setTimeout(tick, SCAN_MS);
      this.#timer.unref();
    };
    tick();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
  }

  #kick(): void {
    if (this.#stopped || !this.#lease.isHolder()) return;
    if (this.#scanning) {
      this.#again = true;
      return;
    }
    this.#scanning = true;
    void this.#scan()
      .catch((err: unknown) => this.#log.warn({ err: (err as Error).message }, 'failover scan failed; trying again'))
      .finally(() => {
        this.#scanning = false;
        if (this.#again) {
          this.#again = false;
          this.#kick();
        }
      });
  }

  async #scan(): Promise<void> {
    // Every placement row's change kicks a scan (a stream created, moved, deleted), and so does
    // every second: reading the rows only when a node that owns some is not live keeps a scan
    // O(nodes). Listing them each time cost O(streams) per change, O(streams²) for a load that
    // creates its streams (0.6 s of the main thread's CPU while 1,000 were created).
    if (this.#placement.owners().every((id) => this.#members.isLive(id))) return;
    const live = this.#members.placeableNodes();
    if (live.length === 0) return;
    const dead = this.#placement.rows().filter((r) => !this.#members.isLive(r.row.nodeId) && r.row.remove !== true);
    if (dead.length === 0) return;
    const withSlots = live.some((n) => n.slots > 0) ? live : live.map((n) => ({ ...n, slots: 1 }));
    let moved = 0;
    await Promise.all(
      dead.map(async ({ name, row, version }) => {
        if (!this.#lease.isHolder()) return;
        const to = this.#placement.chooseAmong(name, withSlots, row.kafkaTopic ?? row.create?.kafkaTopic ?? null);
        if (to === null) return;
        try {
          await this.#placement.reserve(to, null, () => this.#placement.move(name, { row, version }, to));
          moved++;
        } catch (err) {
          if (!(err instanceof MetaConflictError)) throw err;
        }
      }),
    );
    if (moved > 0) this.#log.info({ moved, from: [...new Set(dead.map((d) => d.row.nodeId))] }, 'moved the streams of nodes without a live lease to live nodes');
  }
}
