/**
 * Streams placed on another node without a request to redirect there (a Kafka topic's partitions,
 * docs/cluster.md "Kafka"): the placing node writes an intent into the stream's placement row and
 * waits; the owner carries it out and says so in the row.
 *
 *   create: row {nodeId: owner, state: opening, create: spec} ──▶ owner creates it, marks it placed ──▶ waiter wakes
 *   remove: row {..., remove: true}                            ──▶ owner deletes it and the row     ──▶ waiter wakes
 *
 * The owner also carries out the intents written while it was away (start()). A waiter gives up
 * after OPEN_TIMEOUT_MS with storage_unavailable (the owner is down or failing).
 */
import { SvcError } from '../../errors';
import { type MetaStore, MetaConflictError } from '../meta/meta-store';
import { withinRequestDeadline } from '../meta/request-deadline';
import { type OpenSpec, PLACEMENT_PREFIX, type Placement, type PlacementRow, isMoving, placementKey } from './placement';

/** How long a node waits for the owner to carry out an intent (ms). */
const OPEN_TIMEOUT_MS = 10_000;

export class PlacementIntents {
  readonly #meta: MetaStore;
  readonly #placement: Placement;
  /** Creates a stream placed here by another node (set by the node: it holds the shards). */
  #opener: ((name: string, spec: OpenSpec) => Promise<void>) | null = null;
  /** Deletes a stream of this node that another node asked to remove. */
  #remover: ((name: string) => Promise<void>) | null = null;
  /** Intents being carried out here. */
  readonly #busy = new Set<string>();
  /** Callers waiting for a row to be placed or gone. */
  readonly #waiting = new Map<string, Array<() => void>>();

  constructor(meta: MetaStore, placement: Placement) {
    this.#meta = meta;
    this.#placement = placement;
    meta.onChange((key, rec) => {
      if (!key.startsWith(PLACEMENT_PREFIX)) return;
      const name = key.slice(PLACEMENT_PREFIX.length);
      if (rec === null) return this.#wake(name);
      const row = rec.value as PlacementRow;
      if (row.remove === true) {
        if (row.nodeId === placement.nodeId) this.#removeHere(name);
      } else if (row.state === 'placed') this.#wake(name);
      else if (row.create !== undefined && row.nodeId === placement.nodeId && !isMoving(row)) this.#open(name, row.create);
    });
  }

  /**
   * Place `name` (if no row exists yet) with a create intent, and wait until its owner has created
   * it: a stream created without a request to redirect (a Kafka topic's partitions).
   */
  async placeAndOpen(name: string, spec: OpenSpec): Promise<{ streamId: number }> {
    if (this.#placement.row(name) === null) {
      const nodeId = this.#placement.choose(name, spec.kafkaTopic);
      // Bounded like a request's placement (request-deadline.ts): a row written after the answer
      // is carried out by its owner, and the client's retry finds the topic.
      await this.#placement
        .reserve(nodeId, spec.kafkaTopic, () =>
          withinRequestDeadline(
            this.#meta.put<PlacementRow>(placementKey(name), { streamId: 0, nodeId, epoch: 1, state: 'opening', kafkaTopic: spec.kafkaTopic, create: spec }, { absent: true }),
            `the placement of ${name}`,
          ),
        )
        .catch((err: unknown) => {
          if (!(err instanceof MetaConflictError)) throw err;
        });
    }
    const placed = this.#placement.row(name)?.row.state === 'placed' || (await this.#waitForChange(name));
    const found = this.#placement.row(name);
    if (!placed || found === null) throw new SvcError('storage_unavailable', `stream ${name} was placed on node ${found?.row.nodeId ?? '?'}, which did not open it in ${OPEN_TIMEOUT_MS} ms`);
    return { streamId: found.row.streamId };
  }

  /** Resolves true when `name`'s row changes (the watch wakes its waiters), false after OPEN_TIMEOUT_MS. */
  #waitForChange(name: string): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), OPEN_TIMEOUT_MS);
      const list = this.#waiting.get(name) ?? [];
      list.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
      this.#waiting.set(name, list);
    });
  }

  /**
   * Start creating the streams other nodes place here, and deleting those they ask to remove
   * (and those asked for while this node was away).
   */
  start(opener: (name: string, spec: OpenSpec) => Promise<void>, remover: (name: string) => Promise<void>): void {
    this.#opener = opener;
    this.#remover = remover;
    for (const r of this.#meta.list<PlacementRow>(PLACEMENT_PREFIX)) {
      if (r.value.nodeId !== this.#placement.nodeId) continue;
      const name = r.key.slice(PLACEMENT_PREFIX.length);
      if (r.value.remove === true) this.#removeHere(name);
      else if (r.value.state === 'opening' && r.value.create !== undefined && !isMoving(r.value)) this.#open(name, r.value.create);
    }
  }

  /** Ask the owner of `name` to delete it (the row says so) and wait until its row is gone. */
  async removeAndWait(name: string): Promise<void> {
    for (;;) {
      const cur = this.#placement.row(name);
      if (cur === null) return;
      const gone = this.#waitForChange(name);
      if (cur.row.remove !== true) {
        try {
          await this.#meta.put<PlacementRow>(placementKey(name), { ...cur.row, remove: true }, { version: cur.version });
        } catch (err) {
          if (!(err instanceof MetaConflictError)) throw err;
          continue;
        }
      }
      if (!(await gone) && this.#placement.row(name) !== null) throw new SvcError('storage_unavailable', `stream ${name} is owned by node ${cur.row.nodeId}, which did not delete it in ${OPEN_TIMEOUT_MS} ms`);
      if (this.#placement.row(name) === null) return;
    }
  }

  #removeHere(name: string): void {
    if (this.#remover === null || this.#busy.has(name)) return;
    this.#busy.add(name);
    const remover = this.#remover;
    void (async () => {
      try {
        await remover(name);
        const cur = this.#placement.row(name);
        if (cur !== null) await this.#meta.delete(placementKey(name), { version: cur.version });
      } catch {
        // The asking node's wait times out with the reason; a restart tries again.
      } finally {
        this.#busy.delete(name);
      }
    })();
  }

  #open(name: string, spec: OpenSpec): void {
    if (this.#opener === null || this.#busy.has(name)) return;
    this.#busy.add(name);
    const opener = this.#opener;
    void (async () => {
      try {
        await opener(name, spec);
        await this.#placement.markPlaced(name);
      } catch {
        // The creating node's wait times out with the reason; a restart tries again.
      } finally {
        this.#busy.delete(name);
      }
    })();
  }

  #wake(name: string): void {
    const list = this.#waiting.get(name);
    if (list === undefined) return;
    this.#waiting.delete(name);
    for (const w of list) w();
  }
}
