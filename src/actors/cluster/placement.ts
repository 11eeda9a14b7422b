/**
 * Stream placement (docs/cluster.md, "Placement"): one row per stream in the metadata,
 *
 *   placement/<name>  {streamId, nodeId, epoch, state: 'opening' | 'placed'}
 *
 *   PUT /x on any node ──▶ row? ──no──▶ choose a live node by weighted rendezvous over slots
 *                           │            (a Kafka topic's partitions: fewest of the topic, then in all, per slot: balance.ts)
 *                           │            └─▶ create-only write of {nodeId, state: opening}
 *                           │                 (two nodes creating /x at once: one write wins, both follow it)
 *                           ▼
 *                  owner = row.nodeId ──▶ this node: serve (a create marks the row placed)
 *                                     ──▶ another live node: 307 to its advertised address
 *                                     ──▶ a node without a live lease: unavailable (objects mode: until the
 *                                         maintenance lease holder moves the row to a live node, failover.ts)
 *
 * Rows are read from the in-memory view (a Map lookup per request); a miss is looked up again
 * after one sync() (the create may have happened on another node a moment ago). With the
 * embedded store there are no rows: the one node owns every stream (`clustered` false), and
 * nothing here runs on its request path.
 */
import { type MetaStore, MetaConflictError } from '../meta/meta-store';
import { withinRequestDeadline } from '../meta/request-deadline';
import { type Membership } from './membership';
import { type NodeRecord } from './node-record';
import { leastLoaded } from './balance';
import { rendezvous } from './rendezvous';

export interface PlacementRow {
  /** Cluster-wide stream id: the metadata revision that created the row (unique, never reused). */
  streamId: number;
  nodeId: number;
  /** Placement epoch: 1 when placed; grows by one with every open elsewhere (transfer, failover, restart in objects mode). */
  epoch: number;
  state: 'opening' | 'placed';
  /**
   * Set by a move (transfer, failover, a restart's reopen: docs/cluster.md "Transfers and
   * failover"): the node the stream moves from. While the row is `opening` with `from`, the move is
   * pending; the new owner imports the stream from the object store and marks it placed.
   */
  from?: number;
  /** The Kafka topic of a partition stream created over Kafka (`/T/1` is partition 1 of T), else absent. */
  kafkaTopic?: string | null;
  /** Set while opening when another node placed it without a request to redirect (a Kafka partition): the owner creates it. */
  create?: OpenSpec;
  /** Set when another node asked the owner to delete the stream (a Kafka topic's partitions): the owner deletes it and the row. */
  remove?: true;
}

/** What the owner needs to create a stream placed by another node (a Kafka topic's partitions). */
export interface OpenSpec {
  contentType: string;
  ttlSeconds: number | null;
  kafkaTopic: string | null;
}


/** Where a request for a stream goes. */
export type Owner =
  | { kind: 'local'; row: PlacementRow | null; version: number | null }
  | { kind: 'remote'; node: NodeRecord; row: PlacementRow }
  | { kind: 'down'; nodeId: number; row: PlacementRow };

export const PLACEMENT_PREFIX = 'placement/';
/** A row of a pending move: the new owner is opening it (docs/cluster.md, "Transfers and failover"). */
export const isMoving = (row: PlacementRow): boolean => row.state === 'opening' && row.from !== undefined;
export const placementKey = (name: string): string => PLACEMENT_PREFIX + name;

export class Placement {
  readonly #meta: MetaStore;
  readonly #members: Membership;
  /** Rows per owner node and state, kept from the change feed (GET /admin/nodes counts). */
  readonly #counts = new Map<number, { opening: number; placed: number }>();
  /** Rows per Kafka topic and owner node, kept from the change feed (a topic's partitions spread evenly). */
  readonly #topicCounts = new Map<string, Map<number, number>>();
  /** Placements chosen here whose row write has not come back yet, per node (and per topic and node): concurrent creates spread too. */
  readonly #choosing = new Map<number, number>();
  readonly #choosingTopic = new Map<string, Map<number, number>>();
  /** Requests waiting for a moving stream's row to leave `opening` (waitSettled). */
  readonly #settling = new Map<string, Array<() => void>>();

  #rowChanges = 0;

  constructor(meta: MetaStore, members: Membership) {
    this.#meta = meta;
    this.#members = members;
    const rows = new Map(meta.list<PlacementRow>(PLACEMENT_PREFIX).map((r) => [r.key, r.value]));
    for (const row of rows.values()) this.#count(row, 1);
    meta.onChange((key, rec) => {
      if (!key.startsWith(PLACEMENT_PREFIX)) return;
      this.#rowChanges++;
      const before = rows.get(key);
      if (before !== undefined) this.#count(before, -1);
      if (rec === null) rows.delete(key);
      else {
        rows.set(key, rec.value as PlacementRow);
        this.#count(rec.value as PlacementRow, 1);
      }
      const name = key.slice(PLACEMENT_PREFIX.length);
      const waiting = this.#settling.get(name);
      if (waiting !== undefined && (rec === null || !isMoving(rec.value as PlacementRow))) {
        this.#settling.delete(name);
        for (const w of waiting) w();
      }
    });
  }

  /**
   * Wait until `name`'s row is no longer a pending move (placed, moved on, or gone), at most `ms`;
   * true when it settled. Requests reaching the new owner of a moving stream wait here rather than fail.
   */
  waitSettled(name: string, ms: number): Promise<boolean> {
    const cur = this.row(name);
    if (cur === null || !isMoving(cur.row)) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const list = this.#settling.get(name) ?? [];
      const timer = setTimeout(() => {
        const i = list.indexOf(done);
        if (i >= 0) list.splice(i, 1);
        if (list.length === 0 && this.#settling.get(name) === list) this.#settling.delete(name);
        resolve(false);
      }, ms);
      const done = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      list.push(done);
      this.#settling.set(name, list);
    });
  }

  /** Rows of pending moves (`opening` with a `from`): the spec's pendingTransfers. */
  pendingMoves(): Array<{ name: string; row: PlacementRow }> {
    return this.#meta
      .list<PlacementRow>(PLACEMENT_PREFIX)
      .filter((r) => isMoving(r.value))
      .map((r) => ({ name: r.key.slice(PLACEMENT_PREFIX.length), row: r.value }));
  }

  /** Every row with its version (the failover driver's scan). */
  rows(): Array<{ name: string; row: PlacementRow; version: number }> {
    return this.#meta.list<PlacementRow>(PLACEMENT_PREFIX).map((r) => ({ name: r.key.slice(PLACEMENT_PREFIX.length), row: r.value, version: r.version }));
  }

  get clustered(): boolean {
    return this.#members.clustered;
  }

  /** The row of `name` in the view, with its version, or null. */
  row(name: string): { row: PlacementRow; version: number } | null {
    const r = this.#meta.get<PlacementRow>(placementKey(name));
    return r === null ? null : { row: r.value, version: r.version };
  }

  /** Every row, in name order (the cluster-wide stream count; list). */
  count(): number {
    let n = 0;
    for (const c of this.#counts.values()) n += c.opening + c.placed;
    return n;
  }

  /** The nodes that own at least one row, in any state (the failover driver's check, O(nodes)). */
  owners(): number[] {
    const out: number[] = [];
    for (const [nodeId, c] of this.#counts) if (c.opening + c.placed > 0) out.push(nodeId);
    return out;
  }

  /** Rows owned by `nodeId`, by state. */
  countsOf(nodeId: number): { opening: number; placed: number } {
    return this.#counts.get(nodeId) ?? { opening: 0, placed: 0 };
  }

  /**
   * Who serves a request for `name`. `create`: the request creates it, so a stream without a row
   * is placed now. Rejects with storage_unavailable when the store does not answer within
   * REQUEST_METADATA_MS (the row may still be written after: a retry finds it). Without a row (not created anywhere, or created before the node joined a
   * cluster), the request is served here: the shard answers it (404 when absent).
   */
  async owner(name: string, create: boolean): Promise<Owner> {
    let found = this.row(name);
    // Bounded (request-deadline.ts): without etcd's quorum these never answer, and the client
    // gets a retriable storage_unavailable within its own deadline instead.
    if (found === null && !create) {
      await withinRequestDeadline(this.#meta.sync(), `the lookup of ${name}`);
      found = this.row(name);
    }
    if (found === null && create) found = await withinRequestDeadline(this.#place(name), `the placement of ${name}`);
    if (found === null) return { kind: 'local', row: null, version: null };
    return this.#ownerOf(found.row, found.version);
  }

  /** The owner when the view has a row for `name` (no waiting: the request path's common case), else null. */
  ownerNow(name: string): Owner | null {
    const found = this.row(name);
    return found === null ? null : this.#ownerOf(found.row, found.version);
  }

  #ownerOf(row: PlacementRow, version: number): Owner {
    if (row.nodeId === this.#members.nodeId) return { kind: 'local', row, version };
    const node = this.#members.node(row.nodeId);
    if (node === null || !this.#members.isLive(row.nodeId)) return { kind: 'down', nodeId: row.nodeId, row };
    return { kind: 'remote', node, row };
  }

  /** This node's id. */
  get nodeId(): number {
    return this.#members.nodeId;
  }

  /**
   * The node a new stream `name` goes to (this node when no live node has slots). A plain stream:
   * weighted rendezvous over the live nodes' slots, the same choice on every node without
   * counting anything (its skew over a handful of streams is rebalance's to even out). A Kafka
   * topic's partition (`topic`): the live node with the fewest partitions of the topic per slot,
   * then the fewest streams per slot, then the highest rendezvous score (balance.ts), counting
   * placements chosen here and still being written (`reserve`), as Kafka spreads a topic's
   * partitions over its brokers.
   */
  choose(name: string, topic: string | null = null): number {
    const live = this.#members.placeableNodes();
    return (topic === null ? rendezvous(name, live) : this.chooseAmong(name, live, topic)) ?? this.#members.nodeId;
  }

  /** As choose(), among `nodes` (failover: the live nodes, weighed equally when none has slots); null when none has slots. */
  chooseAmong(name: string, nodes: ReadonlyArray<{ nodeId: number; slots: number }>, topic: string | null = null): number | null {
    const t = topic === null ? null : this.#topicCounts.get(topic);
    const tc = topic === null ? null : this.#choosingTopic.get(topic);
    return leastLoaded(
      name,
      nodes.map((n) => {
        const c = this.countsOf(n.nodeId);
        return { nodeId: n.nodeId, slots: n.slots, streams: c.opening + c.placed + (this.#choosing.get(n.nodeId) ?? 0), group: (t?.get(n.nodeId) ?? 0) + (tc?.get(n.nodeId) ?? 0) };
      }),
    );
  }

  /**
   * Count a placement on `nodeId` until `write` settles (by then the view holds its row, or the
   * write lost a race), so creates running at once see each other's choices.
   */
  async reserve<T>(nodeId: number, topic: string | null, write: () => Promise<T>): Promise<T> {
    const bump = (m: Map<number, number>, d: number): void => {
      const v = (m.get(nodeId) ?? 0) + d;
      if (v === 0) m.delete(nodeId);
      else m.set(nodeId, v);
    };
    const tm = topic === null ? null : (this.#choosingTopic.get(topic) ?? new Map<number, number>());
    if (topic !== null) this.#choosingTopic.set(topic, tm!);
    bump(this.#choosing, 1);
    if (tm !== null) bump(tm, 1);
    try {
      return await write();
    } finally {
      bump(this.#choosing, -1);
      if (tm !== null) {
        bump(tm, -1);
        if (tm.size === 0) this.#choosingTopic.delete(topic!);
      }
    }
  }

  /** Place `name` on a live node chosen by load and slots (create-only write); the row that won. */
  async #place(name: string): Promise<{ row: PlacementRow; version: number } | null> {
    const nodeId = this.choose(name);
    try {
      const rec = await this.reserve(nodeId, null, () => this.#meta.put<PlacementRow>(placementKey(name), { streamId: 0, nodeId, epoch: 1, state: 'opening' }, { absent: true }));
      return { row: rec.value, version: rec.version };
    } catch (err) {
      if (!(err instanceof MetaConflictError)) throw err;
      // Another node placed it first: its row stands (the view has applied it when the conflict is answered).
      return this.row(name);
    }
  }

  /**
   * The owner created the stream: the row says so, and takes its cluster-wide id (and the stream's
   * explicit Kafka topic, for the cluster's topic index).
   */
  async markPlaced(name: string, kafkaTopic?: string | null): Promise<void> {
    const cur = this.row(name);
    // A pending move is marked placed by the opener once the stream is imported (moves.ts), not by a request.
    if (cur === null || cur.row.state === 'placed' || cur.row.nodeId !== this.#members.nodeId || isMoving(cur.row)) return;
    const { create: _done, ...row } = cur.row;
    const topic = kafkaTopic !== undefined && kafkaTopic !== null ? { kafkaTopic } : {};
    await this.#meta
      .put<PlacementRow>(placementKey(name), { ...row, ...topic, streamId: cur.version, state: 'placed' }, { version: cur.version })
      .catch((err: unknown) => {
        if (!(err instanceof MetaConflictError)) throw err;
      });
  }

  /** The stream was deleted here (or its create failed): the name is free for any node again. */
  async release(name: string): Promise<void> {
    const cur = this.row(name);
    if (cur === null || cur.row.nodeId !== this.#members.nodeId) return;
    await this.#meta.delete(placementKey(name), { version: cur.version }).catch((err: unknown) => {
      if (!(err instanceof MetaConflictError)) throw err;
    });
  }

  /** A stream this node already holds gets a row naming this node; false when another row exists. */
  async adopt(name: string): Promise<boolean> {
    try {
      await this.#meta.put<PlacementRow>(placementKey(name), { streamId: 0, nodeId: this.#members.nodeId, epoch: 1, state: 'opening' }, { absent: true });
    } catch (err) {
      if (!(err instanceof MetaConflictError)) throw err;
      return this.row(name)?.row.nodeId === this.#members.nodeId;
    }
    await this.markPlaced(name);
    return true;
  }

  /** A create here failed before the stream existed: free the name it had been placed under. */
  async releaseOpening(name: string): Promise<void> {
    const cur = this.row(name);
    if (cur === null || cur.row.state !== 'opening' || isMoving(cur.row)) return;
    await this.release(name);
  }

  /**
   * The opener imported a moving stream (its row names this node, `opening`, at `epoch`): the row
   * says `placed`, keeping its stream id; false when the row changed meanwhile (moved on, deleted).
   */
  async markMoved(name: string, epoch: number): Promise<boolean> {
    const cur = this.row(name);
    if (cur === null || cur.row.nodeId !== this.#members.nodeId || cur.row.epoch !== epoch || !isMoving(cur.row)) return false;
    const { from: _from, create: _create, ...row } = cur.row;
    try {
      await this.#meta.put<PlacementRow>(placementKey(name), { ...row, streamId: row.streamId !== 0 ? row.streamId : cur.version, state: 'placed' }, { version: cur.version });
      return true;
    } catch (err) {
      if (!(err instanceof MetaConflictError)) throw err;
      return false;
    }
  }

  /** A moved stream the object store does not know (its create never committed): free its name. */
  async releaseMove(name: string, epoch: number): Promise<void> {
    const cur = this.row(name);
    if (cur === null || cur.row.nodeId !== this.#members.nodeId || cur.row.epoch !== epoch || !isMoving(cur.row)) return;
    await this.#meta.delete(placementKey(name), { version: cur.version }).catch((err: unknown) => {
      if (!(err instanceof MetaConflictError)) throw err;
    });
  }

  /**
   * Move `name` to node `to` (transfer, failover, a restart's reopen): compare-and-set of the row
   * read at `version` to `{nodeId: to, epoch: epoch + 1, state: opening, from}`. Throws
   * MetaConflictError when the row changed since.
   */
  async move(name: string, cur: { row: PlacementRow; version: number }, to: number): Promise<PlacementRow> {
    const { create, remove: _remove, ...row } = cur.row;
    // A Kafka partition whose create never ran keeps its intent: the new owner creates it when the object store has no such stream.
    const next: PlacementRow = { ...row, ...(create !== undefined ? { create } : {}), nodeId: to, epoch: cur.row.epoch + 1, state: 'opening', from: cur.row.nodeId };
    return (await this.#meta.put<PlacementRow>(placementKey(name), next, { version: cur.version })).value;
  }

  /**
   * A stream's explicit Kafka topic changed (`PATCH /_streams/{name}` on its owner): the row takes
   * it, so every node's topic index does (null: derived from the name again). Resolves once written.
   */
  async setKafkaTopic(name: string, kafkaTopic: string | null): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const cur = this.row(name);
      if (cur === null || (cur.row.kafkaTopic ?? null) === kafkaTopic) return;
      const { kafkaTopic: _old, ...rest } = cur.row;
      try {
        await this.#meta.put<PlacementRow>(placementKey(name), kafkaTopic === null ? rest : { ...rest, kafkaTopic }, { version: cur.version });
        return;
      } catch (err) {
        if (!(err instanceof MetaConflictError)) throw err;
      }
    }
  }

  /** How many changes of placement rows this view has applied: what a cache built from the rows compares. */
  rowChanges(): number {
    return this.#rowChanges;
  }

  /** Wait until this node's view holds every metadata write made before the call (etcd: one quorum read). */
  sync(): Promise<void> {
    return this.#meta.sync();
  }

  /** Every placed stream (and every moving one: it was placed), in name order (the Kafka topic index of a cluster). */
  placedStreams(): Array<{ name: string; kafkaTopic: string | null; streamId: number }> {
    return this.#meta
      .list<PlacementRow>(PLACEMENT_PREFIX)
      .filter((r) => r.value.state === 'placed' || isMoving(r.value))
      .map((r) => ({ name: r.key.slice(PLACEMENT_PREFIX.length), kafkaTopic: r.value.kafkaTopic ?? null, streamId: r.value.streamId }));
  }

  #count(row: PlacementRow, d: number): void {
    const c = this.#counts.get(row.nodeId) ?? { opening: 0, placed: 0 };
    c[row.state] += d;
    this.#counts.set(row.nodeId, c);
    const topic = row.kafkaTopic ?? row.create?.kafkaTopic ?? null;
    if (topic === null) return;
    const t = this.#topicCounts.get(topic) ?? new Map<number, number>();
    const v = (t.get(row.nodeId) ?? 0) + d;
    if (v === 0) t.delete(row.nodeId);
    else t.set(row.nodeId, v);
    if (t.size === 0) this.#topicCounts.delete(topic);
    else this.#topicCounts.set(topic, t);
  }
}
