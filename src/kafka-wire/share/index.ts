/**
 * Share groups on the Kafka listener (KIP-932): membership (share-groups.ts), share sessions
 * (share-sessions.ts) and the records of share partitions (share-partitions.ts, over the
 * control plane's ShareStates that the Svc listener's `/_share/{stream}` also uses), and the share
 * groups as the classic group admin APIs see them (ListGroups, DescribeGroups, DeleteGroups).
 * docs/kafka.md, "Share groups".
 */
import { type ShareGroupConfig, type SharePartitionView, type ShareStates, membershipTimeouts, sharePartitionViews } from '../../actors';
import { type Logger } from '../../log';
import { type ShardClient } from '../../shards';
import { GroupError, type TopicsSnapshot } from '../groups';
import { KafkaSharePartitions } from './share-partitions';
import { SHARE_ASSIGNOR, type ShareGroupSummary, ShareGroups } from './share-groups';
import { ShareSessions } from './share-sessions';

export { type AckBatch, type AcquiredSet, KafkaSharePartitions, MAX_ACK_SPAN, parseAckBatches } from './share-partitions';
export { SHARE_ASSIGNOR, ShareGroups, type ShareGroupSummary, type ShareHeartbeatInput, type ShareHeartbeatOutput } from './share-groups';
export { type SessionPartition, type ShareSession, ShareSessions, partitionKey } from './share-sessions';

export interface KafkaShareOptions {
  shards: ShardClient;
  states: ShareStates;
  log: Logger;
  /** Bytes of one read when finding records by seq. */
  pageBytes: number;
  /** The node's session timeout and heartbeat interval: a group without its own `share.*` configs uses them. */
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  coordinates: (groupId: string) => boolean;
  /** Whether the id belongs to a classic or consumer group. */
  otherKind: (groupId: string) => boolean;
}

/** A share group's state in ListGroups (Kafka's ShareGroupState; Dead is never listed). */
export type ShareGroupState = 'Empty' | 'Stable';

/** What the share-group APIs see: the groups, the sessions and the partitions. */
export class KafkaShare {
  readonly groups: ShareGroups;
  readonly sessions = new ShareSessions();
  readonly partitions: KafkaSharePartitions;
  /** The node's membership timeouts (the defaults of every group's). */
  readonly nodeTimeouts: { sessionTimeoutMs: number; heartbeatIntervalMs: number };
  readonly #log: Logger;
  readonly #shards: ShardClient;
  readonly #states: ShareStates;
  readonly #coordinates: (groupId: string) => boolean;
  readonly #otherKind: (groupId: string) => boolean;
  /** Closing sessions of members gone, per group: their locks are given back before a DeleteGroups forgets the state. */
  readonly #closing = new Map<string, Set<Promise<void>>>();

  constructor(o: KafkaShareOptions) {
    this.#log = o.log;
    this.#shards = o.shards;
    this.#states = o.states;
    this.#coordinates = o.coordinates;
    this.#otherKind = o.otherKind;
    this.partitions = new KafkaSharePartitions(o.shards, o.states, o.pageBytes);
    const node = (this.nodeTimeouts = { sessionTimeoutMs: o.sessionTimeoutMs, heartbeatIntervalMs: o.heartbeatIntervalMs });
    this.groups = new ShareGroups({
      // The group's `share.*` configs over the node's options, read from the store's view at each use.
      timeoutsOf: (groupId) => membershipTimeouts(o.states.config(groupId), 'share', node),
      coordinates: o.coordinates,
      otherKind: o.otherKind,
      onGone: (groupId, memberId) => this.#track(groupId, this.closeSession(groupId, memberId)),
    });
  }

  /**
   * The group's state as the classic group APIs see it: Stable with members; Empty without, when
   * it is held here or has stored partition state (HTTP leases make one too) and the id is not a
   * classic or consumer group's; else null (not a share group).
   */
  state(groupId: string, now: number): ShareGroupState | null {
    if (this.groups.memberCount(groupId, now) > 0) return 'Stable';
    if (this.#otherKind(groupId)) return null;
    return this.groups.has(groupId) || this.#states.hasGroup(groupId) ? 'Empty' : null;
  }

  /** ShareGroupDescribe of one group: one known only from its stored partition state is Empty (epoch 0), as ListGroups lists it. */
  describe(groupId: string, topics: TopicsSnapshot, now: number): ShareGroupSummary {
    const d = this.groups.describe(groupId, topics, now);
    if (d.errorCode !== GroupError.GROUP_ID_NOT_FOUND || this.state(groupId, now) !== 'Empty') return d;
    return { errorCode: GroupError.NONE, errorMessage: null, groupId, groupState: 'Empty', groupEpoch: 0, assignmentEpoch: 0, assignorName: SHARE_ASSIGNOR, members: [] };
  }

  /**
   * The group's configs (IncrementalAlterConfigs and DescribeConfigs of a GROUP resource): the
   * metadata store's record as of now (in a cluster a quorum read first), so any node answers.
   */
  async config(groupId: string): Promise<ShareGroupConfig> {
    await this.#states.sync();
    return this.#states.config(groupId);
  }

  /** The names of the configs stored for the group (the others are at their defaults). */
  storedConfigNames(groupId: string): ReadonlyArray<keyof ShareGroupConfig> {
    return this.#states.storedConfigNames(groupId);
  }

  /** Store `changes` over the group's config (null: back to its default); the config after. */
  alterConfig(groupId: string, changes: Partial<Record<keyof ShareGroupConfig, unknown>>): Promise<ShareGroupConfig> {
    return this.#states.alterConfig(groupId, changes);
  }

  /** The share groups this node coordinates (ListGroups), each once. */
  list(now: number): Array<{ groupId: string; state: ShareGroupState }> {
    const ids = new Set([...this.groups.list(now).map((g) => g.groupId), ...this.#states.groups()]);
    const out: Array<{ groupId: string; state: ShareGroupState }> = [];
    for (const id of ids) {
      const state = this.#coordinates(id) ? this.state(id, now) : null;
      if (state !== null) out.push({ groupId: id, state });
    }
    return out;
  }

  /** Every share group, whoever coordinates it (the admin view): with members here, or with stored partition state. */
  allIds(now: number): string[] {
    const ids = new Set([...this.groups.list(now).map((g) => g.groupId), ...this.#states.groups()]);
    return [...ids].filter((id) => this.groups.memberCount(id, now) > 0 || !this.#otherKind(id));
  }

  /** The group's partitions as stored now, by stream (the admin view). */
  partitionViews(groupId: string, now: number): Promise<SharePartitionView[]> {
    return sharePartitionViews(this.#states, this.#shards, groupId, now);
  }

  /**
   * DeleteGroups of a share group (state() not null): with members NON_EMPTY_GROUP, as Kafka;
   * else the group and every partition state are forgotten (its config stays), so a member that
   * joins later starts afresh at the config's `share.auto.offset.reset`. HTTP leases of the group
   * are forgotten with it (their acknowledgements are then refused).
   */
  async deleteGroup(groupId: string, now: number): Promise<number> {
    if (!this.#coordinates(groupId)) return GroupError.NOT_COORDINATOR;
    if (!this.groups.forget(groupId, now)) return GroupError.NON_EMPTY_GROUP;
    // Members that left just before give their locks back first: a release after the delete would write the state again.
    await Promise.all([...(this.#closing.get(groupId) ?? [])]);
    await this.#states.deleteGroup(groupId);
    return GroupError.NONE;
  }

  #track(groupId: string, p: Promise<void>): void {
    let set = this.#closing.get(groupId);
    if (set === undefined) this.#closing.set(groupId, (set = new Set()));
    set.add(p);
    void p.finally(() => {
      set.delete(p);
      if (set.size === 0 && this.#closing.get(groupId) === set) this.#closing.delete(groupId);
    });
  }

  /** Close the member's share session (if open here) and give back the locks it holds. */
  async closeSession(groupId: string, memberId: string): Promise<void> {
    const streams = this.sessions.close(groupId, memberId);
    try {
      await this.partitions.releaseAll(groupId, memberId, streams);
    } catch (err) {
      // Its locks then end at their deadline.
      this.#log.warn({ err, groupId, memberId }, 'share group: giving back a closed session\'s locks failed');
    }
  }
}
