/**
 * Rebalance (docs/cluster.md, "Rebalance"): moves streams so that every live node with slots holds
 * its share (balance.ts), one transfer at a time.
 *
 *   POST /admin/rebalance {dryRun: true} ──▶ plan() ──▶ the moves, nothing done
 *   POST /admin/rebalance {}             ──▶ plan() ──▶ run in the background on this node:
 *        for each move: still placed on fromNode? ──▶ Transfers.transfer ──▶ wait until placed
 *                       ──▶ pause (gapMs) ──▶ next
 *   auto (on the maintenance lease holder, unless --rebalance off): every checkMs, when no move is
 *        pending and no stream waits for failover, run the plan if it has moves
 *
 * One move at a time keeps the cost to clients at one stream's handoff at a time; the pause
 * bounds the rate (the node that joined takes its share over seconds to minutes, not at once).
 * A move whose row changed meanwhile (deleted, moved by someone else) is skipped. Only in objects
 * mode, where a transfer moves no data between disks.
 */
import { type Logger } from '../../log';
import { type PlannedMove, planRebalance } from './balance';
import { type MaintenanceLease } from './maintenance-lease';
import { type Membership } from './membership';
import { type Placement, isMoving } from './placement';
import { type Transfers } from './transfers';

export interface RebalanceOptions {
  /** Run the plan by itself on the maintenance lease holder. */
  auto: boolean;
  /** How often the lease holder looks (ms). */
  checkMs?: number;
  /** Pause between two moves (ms). */
  gapMs?: number;
  /** How long one move may take to be placed before the run goes on (ms). */
  moveTimeoutMs?: number;
}

/** What a run is doing (the cluster overview's `rebalance`). */
export interface RebalanceStatus {
  auto: boolean;
  running: boolean;
  /** Moves of the current (or last) run, and how many are done or skipped. */
  planned: number;
  done: number;
  skipped: number;
  current: PlannedMove | null;
}

const DEFAULT_CHECK_MS = 10_000;
const DEFAULT_GAP_MS = 250;
const DEFAULT_MOVE_TIMEOUT_MS = 30_000;

export class Rebalancer {
  readonly #placement: Placement;
  readonly #members: Membership;
  readonly #transfers: Transfers;
  readonly #lease: MaintenanceLease | null;
  readonly #log: Logger;
  readonly #opts: Required<RebalanceOptions>;
  #status: RebalanceStatus;
  #timer: NodeJS.Timeout | null = null;
  #stopped = false;

  constructor(placement: Placement, members: Membership, transfers: Transfers, lease: MaintenanceLease | null, log: Logger, opts: RebalanceOptions) {
    this.#placement = placement;
    this.#members = members;
    this.#transfers = transfers;
    this.#lease = lease;
    this.#log = log;
    this.#opts = { checkMs: DEFAULT_CHECK_MS, gapMs: DEFAULT_GAP_MS, moveTimeoutMs: DEFAULT_MOVE_TIMEOUT_MS, ...opts };
    this.#status = { auto: opts.auto, running: false, planned: 0, done: 0, skipped: 0, current: null };
  }

  /** The moves that would even the live nodes out now. */
  plan(): PlannedMove[] {
    const streams = this.#placement
      .rows()
      .filter(({ row }) => row.state === 'placed' && row.remove !== true && !isMoving(row))
      .map(({ name, row }) => ({ name, nodeId: row.nodeId, group: row.kafkaTopic ?? null }));
    return planRebalance(streams, this.#members.placeableNodes());
  }

  status(): RebalanceStatus {
    return { ...this.#status, ...(this.#status.current !== null ? { current: { ...this.#status.current } } : {}) };
  }

  /** Plan and, unless `dryRun`, start the moves in the background; what was planned, and whether a run started (false: one is running). */
  request(dryRun: boolean): { moves: PlannedMove[]; started: boolean } {
    const moves = this.plan();
    if (dryRun || moves.length === 0 || this.#status.running) return { moves, started: false };
    void this.#run(moves);
    return { moves, started: true };
  }

  /** Start the automatic checks (they act only while this node holds the maintenance lease). */
  start(): void {
    if (!this.#opts.auto) return;
    const tick = (): void => {
      if (this.#stopped) return;
      this.#autoCheck();
      this.#timer = setTimeout(tick, this.#opts.checkMs);
      this.#timer.unref();
    };
    this.#timer = setTimeout(tick, this.#opts.checkMs);
    this.#timer.unref();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
  }

  #autoCheck(): void {
    if (this.#status.running || this.#lease === null || !this.#lease.isHolder()) return;
    // Moves in flight, or streams of a dead node that failover has yet to move: wait for them to settle.
    if (this.#placement.pendingMoves().length > 0) return;
    if (this.#placement.owners().some((id) => !this.#members.isLive(id))) return;
    const moves = this.plan();
    if (moves.length === 0) return;
    this.#log.info({ moves: moves.length }, 'rebalancing: moving streams to even out the live nodes');
    void this.#run(moves);
  }

  async #run(moves: PlannedMove[]): Promise<void> {
    this.#status = { auto: this.#opts.auto, running: true, planned: moves.length, done: 0, skipped: 0, current: null };
    try {
      for (const m of moves) {
        if (this.#stopped) break;
        this.#status.current = m;
        const cur = this.#placement.row(m.stream);
        if (cur === null || cur.row.nodeId !== m.fromNode || cur.row.state !== 'placed' || isMoving(cur.row) || !this.#members.isLive(m.toNode)) {
          this.#status.skipped++;
          continue;
        }
        try {
          await this.#transfers.transfer(m.stream, m.toNode);
          await this.#placement.waitSettled(m.stream, this.#opts.moveTimeoutMs);
          this.#status.done++;
        } catch (err) {
          this.#status.skipped++;
          this.#log.warn({ stream: m.stream, toNode: m.toNode, err: (err as Error).message }, 'rebalancing: a move failed; going on with the next');
        }
        if (this.#opts.gapMs > 0) await new Promise((r) => setTimeout(r, this.#opts.gapMs).unref());
      }
    } finally {
      this.#status.running = false;
      this.#status.current = null;
      this.#log.info({ done: this.#status.done, skipped: this.#status.skipped }, 'rebalancing finished');
    }
  }
}
