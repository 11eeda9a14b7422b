/**
 * Named offsets: a reader's position in a stream, kept under a name it chooses (the Svc
 * protocol's `/_offsets/{stream}?group=<name>`, docs/protocol.md "Named offsets"; `svc tail
 * --group`). They live in the metadata store — the node's fsynced command log, or etcd in a
 * cluster — so a commit that was answered survives a crash and every node sees it. Key layout:
 *
 *   svc/offsets/<group>/<stream>   {seq, committedAt}
 *
 * `<group>` is encodeURIComponent of the name, so a `/` in it cannot make one group's keys a
 * prefix of another's; the stream name is kept as it is (it begins with `/`).
 *
 * Why not the Kafka listener's committed offsets (`kafka/offsets/<group>/<topic>`): those are keyed
 * by (topic, partition) and fenced by the group's live membership, which only the coordinating
 * node holds in memory; a commit from HTTP would overwrite a live Kafka group's position unfenced.
 * The two namespaces are separate: a Kafka group and a named offset of the same name do not meet.
 */
import { type MetaStore } from '../meta/meta-store';

/** A committed position: `seq` is the next record to read (the seq after the last one read). */
export interface NamedOffset {
  readonly seq: number;
  /** When the commit was accepted (ms since the epoch). */
  readonly committedAt: number;
}

const PREFIX = 'svc/offsets/';

const key = (group: string, stream: string): string => `${PREFIX}${encodeURIComponent(group)}/${stream}`;

export class NamedOffsets {
  readonly #meta: MetaStore;

  constructor(meta: MetaStore) {
    this.#meta = meta;
  }

  /**
   * The committed offset, or null. In a cluster the store first catches up with every commit
   * made before this call on any node (a reader that moved nodes sees its own last commit).
   */
  async get(group: string, stream: string): Promise<NamedOffset | null> {
    await this.#meta.sync();
    return this.#meta.get<NamedOffset>(key(group, stream))?.value ?? null;
  }

  /** Durably record `seq` for (group, stream); resolves once it is on disk (local) or in etcd. */
  async commit(group: string, stream: string, seq: number, now = Date.now()): Promise<NamedOffset> {
    const value: NamedOffset = { seq, committedAt: now };
    await this.#meta.put(key(group, stream), value);
    return value;
  }

  /** Forget (group, stream); false when nothing was committed. */
  delete(group: string, stream: string): Promise<boolean> {
    return this.#meta.delete(key(group, stream));
  }
}
