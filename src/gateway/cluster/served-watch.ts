/**
 * The main thread's side of served-streams.ts: from the placement view, the streams placed on this
 * node (row `placed`, naming it, not being removed), as changes for the gateway threads.
 *
 * Started once the node's own streams are open (objects mode: reopened at a new epoch), so a thread
 * never serves a stale local copy meanwhile: until then every stream request goes to the main thread.
 */
import { type MetaStore, PLACEMENT_PREFIX, type Placement, type PlacementRow } from '../../actors';
import { listenerAddress, type OwnedListener } from './owner-check';
import { type MovedTo, type ServedChange } from './served-streams';

export class ServedWatch {
  readonly #placement: Placement;
  readonly #listener: OwnedListener;
  readonly #send: (c: ServedChange) => void;
  readonly #served = new Set<string>();
  #started = false;

  constructor(meta: MetaStore, placement: Placement, listener: OwnedListener, send: (c: ServedChange) => void) {
    this.#placement = placement;
    this.#listener = listener;
    this.#send = send;
    meta.onChange((key, rec) => {
      if (!this.#started || !key.startsWith(PLACEMENT_PREFIX)) return;
      const name = key.slice(PLACEMENT_PREFIX.length);
      const here = rec !== null && this.#placedHere(rec.value as PlacementRow);
      if (here === this.#served.has(name)) return;
      if (here) {
        this.#served.add(name);
        this.#send({ add: [name], gone: [] });
      } else {
        this.#served.delete(name);
        this.#send({ add: [], gone: [[name, this.#movedTo(name)]] });
      }
    });
  }

  /** Every stream placed here now, then each change. */
  start(): void {
    for (const { name, row } of this.#placement.rows()) if (this.#placedHere(row)) this.#served.add(name);
    this.#started = true;
    this.#send({ reset: true, add: [...this.#served], gone: [] });
  }

  #placedHere(row: PlacementRow): boolean {
    return row.nodeId === this.#placement.nodeId && row.state === 'placed' && row.remove !== true;
  }

  /** The new owner's listener, when the row names a live node that runs one. */
  #movedTo(name: string): MovedTo | null {
    const owner = this.#placement.ownerNow(name);
    if (owner === null || owner.kind !== 'remote') return null;
    const host = listenerAddress(this.#listener, owner.node);
    return host === null ? null : { host, nodeId: owner.node.nodeId };
  }
}
