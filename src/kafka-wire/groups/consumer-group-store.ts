/**
 * The durable state of consumer-protocol groups (KIP-848; consumer-group.ts `toRecord`) in the
 * metadata store, one record per group with members:
 *
 *   kafka/cgroups/<group>   ConsumerGroupRecord (epochs, members, assignments, target)
 *
 * Written at every change of the group before the heartbeat that made it is answered, in the
 * order of the changes (one chain of writes per group); deleted when the last member is gone. A
 * coordinator that does not hold a group in memory reads it from here (after a quorum read in a
 * cluster, so it sees the last write of a coordinator that died), which is what makes the group
 * survive a restart, a failover or a change of coordinator. Heartbeats that change nothing write
 * nothing: the cost is one write per join, leave, assignment step or subscription change.
 */
import { randomUUID } from 'node:crypto';
import { type MetaStore } from '../../actors';
import { type ConsumerGroupRecord } from './consumer-group';

/** A stored group, stamped with the coordinator instance that wrote it. */
type Stored = ConsumerGroupRecord & { writer?: string };

const PREFIX = 'kafka/cgroups/';
const keyOf = (group: string): string => `${PREFIX}${encodeURIComponent(group)}`;

export class ConsumerGroupStore {
  readonly #meta: MetaStore;
  /** Per group: the last write issued (its JSON, null for a delete) and the chain it is on. */
  readonly #last = new Map<string, { json: string | null; done: Promise<void> }>();
  /** This coordinator instance: what it writes carries it, so a write of another one is told apart. */
  readonly #writer = randomUUID();

  /**
   * `onOtherWrite`: another coordinator (a node that took the group over, or gave it back)
   * changed or deleted the group's record, so a copy held in memory here is stale.
   */
  constructor(meta: MetaStore, onOtherWrite: (group: string) => void = () => undefined) {
    this.#meta = meta;
    meta.onChange((key, rec) => {
      if (!key.startsWith(PREFIX)) return;
      const group = decodeURIComponent(key.slice(PREFIX.length));
      if (rec === null ? !this.#last.has(group) : (rec.value as Stored).writer !== this.#writer) onOtherWrite(group);
    });
  }

  /** Whether this node's view holds a stored state of the group (no quorum read: a cheap first check). */
  inView(group: string): boolean {
    return this.#meta.get(keyOf(group)) !== null;
  }

  /** The group's stored state, as of a quorum read; null when none is stored. */
  async load(group: string): Promise<ConsumerGroupRecord | null> {
    await this.#meta.sync();
    const r = this.#meta.get<Stored>(keyOf(group))?.value;
    if (r === undefined || r.v !== 1) return null;
    const { writer: _, ...rec } = r;
    return rec;
  }

  /**
   * Store the group's state (`rec`; null: it has no members, forget it) after every earlier
   * write of the group; a write equal to the last one issued is skipped. Resolves once written.
   */
  save(group: string, rec: ConsumerGroupRecord | null): Promise<void> {
    const json = rec === null ? null : JSON.stringify(rec);
    const last = this.#last.get(group);
    if (last !== undefined && last.json === json) return last.done;
    const prev = last?.done ?? Promise.resolve();
    const key = keyOf(group);
    const done = prev
      .catch(() => undefined)
      .then(async () => {
        if (rec === null) await this.#meta.delete(key);
        else await this.#meta.put<Stored>(key, { ...rec, writer: this.#writer });
      });
    const entry = { json, done };
    this.#last.set(group, entry);
    // A failed write is not remembered as written: the next change writes the whole state again.
    done.then(
      () => {
        if (json === null && this.#last.get(group) === entry) this.#last.delete(group);
      },
      () => {
        if (this.#last.get(group) === entry) this.#last.set(group, { json: '', done: Promise.resolve() });
      },
    );
    return done;
  }
}
