/**
 * The opener (docs/cluster.md, "Transfers and failover", "Restart"): on every node in objects
 * mode, carries out the placement moves that concern this node.
 *
 *   row {nodeId: me, state: opening, from, epoch e}, e above what this node has open
 *     ──▶ storage.open(name, e): take the fence "<me>:<e>", read the stream's ledger and objects,
 *         import it into the local shard (replacing any stale local copy)
 *     ──▶ CAS the row to placed ──▶ requests waiting for it (owner check) go on
 *   row of a stream this node holds now names another node ──▶ storage.drop(name) (a cache copy)
 *
 *   restart: a local stream whose row names this node ──▶ reopen: CAS {epoch + 1, opening, from: me}
 *            (the same path: fence, import what the ledger has, placed)
 *            a local stream whose row names another node ──▶ dropped
 *
 * An open that fails is tried again while the row still asks for it: after 1 s, then twice as long
 * each time up to 30 s (each try reads the whole stream back, so a stream that cannot be opened
 * must not keep a node busy); once the stream is open here, only the placing is tried again.
 * Its last `data_corrupt` failure (a damaged or missing object) is
 * kept for requests to answer with (`failure`) instead of "being opened". A moved stream that the ledger does not know (a create that never
 * committed before its owner died) is created when its row carries a create intent, else its row
 * is freed: the create failed.
 */
import { SvcError } from '../../errors';
import { type Logger } from '../../log';
import { MetaConflictError, type MetaStore } from '../meta/meta-store';
import { PLACEMENT_PREFIX, type OpenSpec, type Placement, type PlacementRow, isMoving } from './placement';

/** What the opener needs from storage (wired in src/node.ts to the ledger, the object store and the shards). */
export interface MoveStorage {
  /**
   * Take the stream's fence at `epoch` (compare-and-set: only from a lower epoch), then import
   * everything the ledger holds for it into the local shard, replacing any local copy.
   * 'absent': the ledger has no such stream. Rejects when the fence is held at `epoch` or above
   * by another node, or storage fails. `previous`: the fence the stream's last holder is
   * believed to hold (tried first, saving a read). `phases`: gets how long each step took (ms)
   * and what it read, for the log.
   */
  open(name: string, epoch: number, opts?: { previous?: { nodeId: number; epoch: number }; phases?: Record<string, number> }): Promise<'opened' | 'absent'>;
  /** Create a stream that was placed here but never created (a Kafka partition's create intent), at `epoch`. */
  create(name: string, spec: OpenSpec, epoch: number): Promise<void>;
  /**
   * Drop the local copy (no ledger change: the stream lives on elsewhere). Absent is fine.
   * `below`: the epoch of the row that names another node; a copy opened at it or later (the
   * stream came back while the drop waited) is kept.
   */
  drop(name: string, below?: number): Promise<void>;
  /** Names of the streams in the local shards. */
  localStreams(): Promise<string[]>;
}

const RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;

export class StreamOpener {
  readonly #placement: Placement;
  readonly #storage: MoveStorage;
  readonly #log: Logger;
  /** Streams this node holds: name → the epoch it opened (0: from before this start). */
  readonly #held = new Map<string, number>();
  /** Opens in progress, name → epoch. */
  readonly #opening = new Map<string, number>();
  /** The last failure of an open in progress that damage caused (data_corrupt), name → error. */
  readonly #damaged = new Map<string, SvcError>();
  #started = false;
  #stopped = false;
  /** Streams opened here after a move since start (transfers, failovers, a restart's reopens): svc_streams_opened_total. */
  opened = 0;

  constructor(meta: MetaStore, placement: Placement, storage: MoveStorage, log: Logger) {
    this.#placement = placement;
    this.#storage = storage;
    this.#log = log;
    meta.onChange((key, rec) => {
      if (!this.#started || !key.startsWith(PLACEMENT_PREFIX)) return;
      const name = key.slice(PLACEMENT_PREFIX.length);
      if (rec === null) {
        this.#held.delete(name);
        return;
      }
      this.#judge(name, rec.value as PlacementRow);
    });
  }

  /** Note a stream created here (epoch 1 of its fence): a later move elsewhere drops it here. */
  created(name: string): void {
    if (!this.#held.has(name)) this.#held.set(name, 1);
  }

  /** Reopen this node's streams (restart), drop local copies of streams placed elsewhere, then follow the rows. */
  async start(): Promise<void> {
    const mine = this.#placement.nodeId;
    for (const name of await this.#storage.localStreams()) {
      const cur = this.#placement.row(name);
      if (cur === null || cur.row.nodeId === mine) continue;
      await this.#storage.drop(name, cur.row.epoch).catch((err: unknown) => this.#log.warn({ stream: name, err: (err as Error).message }, 'dropping a local copy of a stream placed elsewhere failed'));
    }
    // Every stream placed here, whether or not the data directory still has it (it may have been
    // wiped): a new epoch, so writes the previous start left unfinished can no longer commit, and
    // the local copy is brought up to the ledger's (or made from it).
    for (const { name, row, version } of this.#placement.rows()) {
      if (row.nodeId !== mine || row.state !== 'placed' || row.remove === true) continue;
      try {
        await this.#placement.move(name, { row, version }, mine);
      } catch (err) {
        if (!(err instanceof MetaConflictError)) throw err;
      }
    }
    this.#started = true;
    for (const { name, row } of this.#placement.rows()) this.#judge(name, row);
  }

  stop(): void {
    this.#stopped = true;
  }

  /** Why `name` cannot be opened here, when damage in the object store is why (its open keeps trying, slowly); else null. */
  failure(name: string): SvcError | null {
    return this.#opening.has(name) ? (this.#damaged.get(name) ?? null) : null;
  }

  #judge(name: string, row: PlacementRow): void {
    const mine = this.#placement.nodeId;
    if (row.nodeId === mine) {
      if (isMoving(row) && (this.#held.get(name) ?? 0) < row.epoch && (this.#opening.get(name) ?? 0) < row.epoch) this.#open(name, row.epoch);
      else if (row.state === 'placed' && !this.#held.has(name)) this.#held.set(name, row.epoch);
      return;
    }
    if (this.#held.has(name) && this.#opening.get(name) === undefined) {
      this.#held.delete(name);
      void this.#storage.drop(name, row.epoch).catch((err: unknown) => this.#log.warn({ stream: name, err: (err as Error).message }, 'dropping the local copy of a stream that moved failed'));
    }
  }

  #open(name: string, epoch: number): void {
    this.#opening.set(name, epoch);
    // Held from now on: an import cut short by a later move leaves a copy to drop.
    this.#held.set(name, this.#held.get(name) ?? 0);
    const t0 = Date.now();
    let tries = 0;
    // The stream is open here at this epoch: a try after a failed placement step only places it.
    // Opened again, its copy would be replaced by entries read before the appends it may have
    // taken since (the row can be placed although the step failed: its answer was lost).
    let opened = false;
    const attempt = async (): Promise<void> => {
      const still = (): boolean => {
        const cur = this.#placement.row(name);
        return !this.#stopped && cur !== null && cur.row.nodeId === this.#placement.nodeId && cur.row.epoch === epoch && isMoving(cur.row);
      };
      if (!still()) return;
      const phases: Record<string, number> = {};
      // The node it moves from opened it at the row's previous epoch, and holds the fence at that.
      const from = this.#placement.row(name)?.row.from;
      try {
        if (!opened) {
          const how = await this.#storage.open(name, epoch, { phases, ...(from !== undefined && tries === 0 ? { previous: { nodeId: from, epoch: epoch - 1 } } : {}) });
          if (how === 'absent') {
            const spec = this.#placement.row(name)?.row.create;
            if (spec === undefined) {
              this.#log.warn({ stream: name, epoch }, 'a moved stream is not in the object store (its create never committed): freeing its name');
              await this.#placement.releaseMove(name, epoch);
              return;
            }
            await this.#storage.create(name, spec, epoch);
          }
          opened = true;
        }
        this.#held.set(name, epoch);
        const tMark = Date.now();
        if (await this.#placement.markMoved(name, epoch)) {
          this.opened++;
          phases['placed'] = Date.now() - tMark;
          this.#log.info({ stream: name, epoch, ms: Date.now() - t0, phases }, 'opened a stream moved here');
        }
      } catch (err) {
        if (!still()) return;
        const delayMs = Math.min(MAX_RETRY_MS, RETRY_MS * 2 ** Math.min(tries++, 10));
        const damaged = err instanceof SvcError && err.code === 'data_corrupt';
        if (damaged) this.#damaged.set(name, err);
        else this.#damaged.delete(name);
        const fields = { stream: name, epoch, err: (err as Error).message, retryInMs: delayMs, ...(damaged ? { details: err.details } : {}) };
        if (damaged) this.#log.error(fields, 'a stream moved here cannot be opened: its data in the object store is damaged; trying again');
        else this.#log.warn(fields, 'opening a stream moved here failed; trying again');
        await new Promise((r) => setTimeout(r, delayMs).unref());
        return attempt();
      }
    };
    void attempt().finally(() => {
      this.#damaged.delete(name);
      if (this.#opening.get(name) === epoch) this.#opening.delete(name);
      // The row may have moved on while this open ran: judge it again.
      const cur = this.#placement.row(name);
      if (cur !== null) this.#judge(name, cur.row);
    });
  }
}
