/**
 * The group coordinator: this node coordinates every group (FindCoordinator answers itself; in a
 * cluster, the groups whose coordinator it is). Two kinds of group, one or the other per group id:
 * classic groups (group.ts: JoinGroup/SyncGroup, the client's assignor) and groups of the consumer
 * group protocol (consumer-group.ts: ConsumerGroupHeartbeat, KIP-848, server-side assignors). A
 * heartbeat for a classic group with members is GROUP_ID_NOT_FOUND and a JoinGroup for a consumer
 * group with members INCONSISTENT_GROUP_PROTOCOL (Kafka with migration disabled); an empty group
 * changes kind at its next join, keeping its committed offsets (the upgrade path).
 * A classic group's membership lives in memory (group.ts) and is lost with the process, as it is
 * when a Kafka coordinator fails over: members get UNKNOWN_MEMBER_ID and rejoin. A consumer
 * group's state is written to the metadata store at each change (consumer-group-store.ts), as
 * Kafka writes it to __consumer_offsets: a restarted coordinator, or the next one in a cluster,
 * reads it back when the group is next used and goes on with the same members and epochs.
 * Committed offsets and each group's protocol type live in the metadata store (offset-store.ts)
 * and survive restarts, so a group known only from the store is an Empty group. Only groups with
 * members are kept in memory.
 */
import { type MetaStore } from '../../actors';
import { type Logger } from '../../log';
import { GroupError } from './errors';
import { Group, type GroupState } from './group';
import { type JoinRequest, type JoinResult, type SyncResult } from './member';
import { type CommittedOffset, type GroupType, OffsetStore, type OffsetToCommit } from './offset-store';
import { ConsumerGroupStore } from './consumer-group-store';
import { ConsumerGroup, type ConsumerGroupRecord, type ConsumerGroupState, type ConsumerGroupTimeouts, type HeartbeatInput, type HeartbeatOutput, type TopicsSnapshot, toTopicPartitions } from './consumer-group';

/** Kafka's group.min.session.timeout.ms and group.max.session.timeout.ms defaults (ms). */
export const MIN_SESSION_TIMEOUT_MS = 6_000;
export const MAX_SESSION_TIMEOUT_MS = 1_800_000; // 30 min
/** Kafka's offset.metadata.max.bytes default (characters of the commit's metadata string). */
export const MAX_OFFSET_METADATA = 4096;

/** group.consumer.session.timeout.ms and group.consumer.heartbeat.interval.ms defaults (ms). */
export const CONSUMER_GROUP_TIMEOUTS: ConsumerGroupTimeouts = { sessionTimeoutMs: 45_000, heartbeatIntervalMs: 5_000 };

/** ConsumerGroupDescribe of one group (its wire shape, with topic names resolved). */
export interface ConsumerGroupSummary {
  errorCode: number;
  errorMessage: string | null;
  groupId: string;
  groupState: ConsumerGroupState | '';
  groupEpoch: number;
  assignmentEpoch: number;
  assignorName: string;
  members: Array<{
    memberId: string;
    instanceId: string | null;
    rackId: string | null;
    memberEpoch: number;
    clientId: string;
    clientHost: string;
    subscribedTopicNames: string[];
    subscribedTopicRegex: string | null;
    assignment: { topicPartitions: Array<{ topicId: string; topicName: string; partitions: number[] }> };
    targetAssignment: { topicPartitions: Array<{ topicId: string; topicName: string; partitions: number[] }> };
  }>;
}

export interface GroupSummary {
  groupId: string;
  state: GroupState;
  protocolType: string;
  /** The chosen protocol while Stable; '' otherwise (what Kafka reports). */
  protocolName: string;
  /** The current generation (0 before the first; not on DescribeGroups' wire). */
  generationId: number;
  members: Array<{ memberId: string; groupInstanceId: string | null; clientId: string; clientHost: string; metadata: Buffer; assignment: Buffer }>;
}

export class GroupCoordinator {
  readonly #groups = new Map<string, Group>();
  /** Groups of the consumer group protocol (KIP-848) with members. */
  readonly #consumerGroups = new Map<string, ConsumerGroup>();
  /** A consumer group's session timeout and heartbeat interval: its configs over the node's options. */
  readonly #consumerTimeouts: (groupId: string) => ConsumerGroupTimeouts;
  readonly #consumerStore: ConsumerGroupStore;
  /** Consumer groups being read back from the store (one read per group at a time). */
  readonly #loading = new Map<string, Promise<void>>();
  readonly #offsets: OffsetStore;
  readonly #log: Logger;
  #closed = false;

  /** In a cluster: whether this node coordinates the group (FindCoordinator's answer); others get NOT_COORDINATOR. */
  readonly #coordinates: (groupId: string) => boolean;

  constructor(meta: MetaStore, log: Logger, coordinates: (groupId: string) => boolean = () => true, consumerTimeouts: (groupId: string) => ConsumerGroupTimeouts = () => CONSUMER_GROUP_TIMEOUTS) {
    this.#offsets = new OffsetStore(meta);
    // A record another coordinator wrote makes this node's copy stale: the next use reads it again.
    this.#consumerStore = new ConsumerGroupStore(meta, (groupId) => this.#dropConsumer(groupId));
    this.#consumerTimeouts = consumerTimeouts;
    this.#log = log;
    this.#coordinates = coordinates;
  }

  /** Not this node's group to coordinate now (shutting down, or another node coordinates it). */
  #notHere(groupId: string): boolean {
    return this.#closed || !this.#coordinates(groupId);
  }

  join(groupId: string, req: JoinRequest): Promise<JoinResult> {
    const fail = (errorCode: number): Promise<JoinResult> =>
      Promise.resolve({ errorCode, generationId: -1, protocolType: null, protocolName: null, leader: '', memberId: req.memberId, members: [] });
    if (this.#notHere(groupId)) return fail(GroupError.NOT_COORDINATOR);
    if (groupId === '') return fail(GroupError.INVALID_GROUP_ID);
    if (req.sessionTimeoutMs < MIN_SESSION_TIMEOUT_MS || req.sessionTimeoutMs > MAX_SESSION_TIMEOUT_MS) return fail(GroupError.INVALID_SESSION_TIMEOUT);
    const cg = this.#consumerGroups.get(groupId);
    if (cg !== undefined && cg.members.size > 0) return fail(GroupError.INCONSISTENT_GROUP_PROTOCOL);
    this.#consumerGroups.delete(groupId);
    let g = this.#groups.get(groupId);
    if (g === undefined) {
      // A member that names itself joins a group this coordinator does not know: it must start over.
      if (req.memberId !== '') return fail(GroupError.UNKNOWN_MEMBER_ID);
      g = new Group(groupId, this.#log, (x) => this.#generation(x), (x) => this.#empty(x));
      this.#groups.set(groupId, g);
    }
    return g.join(req);
  }

  sync(groupId: string, memberId: string, generationId: number, protocolType: string | null, protocolName: string | null, assignments: ReadonlyArray<{ memberId: string; assignment: Buffer }>): Promise<SyncResult> {
    const g = this.#groups.get(groupId);
    if (this.#notHere(groupId) || g === undefined) {
      const errorCode = this.#notHere(groupId) ? GroupError.NOT_COORDINATOR : groupId === '' ? GroupError.INVALID_GROUP_ID : GroupError.UNKNOWN_MEMBER_ID;
      return Promise.resolve({ errorCode, protocolType: null, protocolName: null, assignment: Buffer.alloc(0) });
    }
    return g.sync(memberId, generationId, protocolType, protocolName, assignments);
  }

  heartbeat(groupId: string, memberId: string, generationId: number): number {
    if (this.#notHere(groupId)) return GroupError.NOT_COORDINATOR;
    const g = this.#groups.get(groupId);
    if (g === undefined) return groupId === '' ? GroupError.INVALID_GROUP_ID : GroupError.UNKNOWN_MEMBER_ID;
    return g.heartbeat(memberId, generationId);
  }

  /** LeaveGroup: the group's error code and one per member. */
  leave(groupId: string, memberIds: ReadonlyArray<string>): { errorCode: number; members: number[] } {
    if (this.#notHere(groupId)) return { errorCode: GroupError.NOT_COORDINATOR, members: [] };
    const g = this.#groups.get(groupId);
    if (g === undefined) return { errorCode: groupId === '' ? GroupError.INVALID_GROUP_ID : GroupError.UNKNOWN_MEMBER_ID, members: memberIds.map(() => GroupError.UNKNOWN_MEMBER_ID) };
    return { errorCode: GroupError.NONE, members: memberIds.map((id) => g.leave(id)) };
  }

  /**
   * Read a consumer group this node coordinates back from the store when it is not in memory (a
   * restart, or a new coordinator): the offset and describe APIs call this before asking about
   * the group. Cheap for every other group: a look at this node's view, no store read. `force`:
   * read the store even when the view shows nothing (a heartbeat, which may come before the
   * view has caught up with a dead coordinator's last write).
   */
  loadConsumer(groupId: string, force = false): Promise<void> {
    if (this.#notHere(groupId) || groupId === '' || this.#consumerGroups.has(groupId) || (this.#groups.get(groupId)?.members.size ?? 0) > 0) return Promise.resolve();
    if (!force && this.#offsets.groupType(groupId) !== 'consumer' && !this.#consumerStore.inView(groupId)) return Promise.resolve();
    let p = this.#loading.get(groupId);
    if (p === undefined) {
      p = this.#consumerStore
        .load(groupId)
        .then((rec) => {
          // A join may have started the group while the store was read: the live group stands.
          if (rec === null || rec.members.length === 0 || this.#consumerGroups.has(groupId) || this.#closed) return;
          this.#groups.delete(groupId);
          this.#consumerGroups.set(groupId, this.#consumerGroup(groupId, rec));
          this.#log.info({ group: groupId, members: rec.members.length, groupEpoch: rec.groupEpoch }, 'consumer group read back from the store');
        })
        .finally(() => this.#loading.delete(groupId));
      this.#loading.set(groupId, p);
    }
    return p;
  }

  /** A consumer group object (new, or from its stored record) whose changes outside a heartbeat are stored too. */
  #consumerGroup(groupId: string, rec?: ConsumerGroupRecord): ConsumerGroup {
    const onEmpty = (x: ConsumerGroup): void => {
      x.shutdown();
      if (this.#consumerGroups.get(x.groupId) === x) this.#consumerGroups.delete(x.groupId);
    };
    const onExpired = (memberId: string, why: string): void => {
      this.#log.info({ group: groupId, member: memberId, why }, 'consumer group member removed');
      void this.#saveConsumer(g);
    };
    const timeouts = this.#consumerTimeouts(groupId);
    const g = rec === undefined ? new ConsumerGroup(groupId, timeouts, onEmpty, onExpired) : ConsumerGroup.fromRecord(groupId, rec, timeouts, onEmpty, onExpired);
    return g;
  }

  /** Forget this node's copy of a consumer group (timers stopped): its state is the store's. */
  #dropConsumer(groupId: string): void {
    const g = this.#consumerGroups.get(groupId);
    if (g === undefined) return;
    g.shutdown();
    this.#consumerGroups.delete(groupId);
  }

  /**
   * Store the group's state now (none once it has no members); a failure is logged and the next
   * change writes it again. A node that no longer coordinates the group writes nothing and drops
   * its copy (a timer fired after the group moved on): the next coordinator's state stands.
   */
  #saveConsumer(g: ConsumerGroup): Promise<void> {
    if (this.#notHere(g.groupId)) {
      if (!this.#closed && this.#consumerGroups.get(g.groupId) === g) this.#dropConsumer(g.groupId);
      return Promise.resolve();
    }
    return this.#consumerStore.save(g.groupId, g.members.size === 0 ? null : g.toRecord()).catch((err: unknown) => {
      this.#log.warn({ group: g.groupId, err: (err as Error).message }, 'consumer group state not written');
    });
  }

  /**
   * ConsumerGroupHeartbeat (KIP-848): join, heartbeat, leave. `topics`: the topics as the listener
   * sees them now (names, ids, partition counts), the assignors' input. Answered once the change
   * it made to the group is stored.
   */
  async consumerHeartbeat(groupId: string, req: HeartbeatInput, topics: TopicsSnapshot): Promise<HeartbeatOutput> {
    const fail = (errorCode: number, errorMessage: string): HeartbeatOutput => ({ errorCode, errorMessage, memberId: null, memberEpoch: -1, heartbeatIntervalMs: 0, assignment: null });
    if (this.#notHere(groupId)) {
      // The group moved to another coordinator: a copy kept here would be stale when it comes back.
      if (!this.#closed) this.#dropConsumer(groupId);
      return fail(GroupError.NOT_COORDINATOR, `this node does not coordinate group ${groupId}`);
    }
    if (groupId === '') return fail(GroupError.INVALID_REQUEST, 'GroupId can\'t be empty.');
    await this.loadConsumer(groupId, true);
    if (this.#notHere(groupId)) return fail(GroupError.NOT_COORDINATOR, `this node does not coordinate group ${groupId}`);
    const classic = this.#groups.get(groupId);
    if (classic !== undefined && classic.members.size > 0) return fail(GroupError.GROUP_ID_NOT_FOUND, `Group ${groupId} is not a consumer group.`);
    let g = this.#consumerGroups.get(groupId);
    if (g === undefined) {
      // Only a join starts a group; anything else names a member this coordinator does not know.
      if (req.memberEpoch !== 0) return { ...fail(GroupError.UNKNOWN_MEMBER_ID, `member ${req.memberId} is not in group ${groupId}`), memberId: req.memberId };
      this.#groups.delete(groupId);
      g = this.#consumerGroup(groupId);
      this.#consumerGroups.set(groupId, g);
    }
    // The group's configs may have changed since its last heartbeat (IncrementalAlterConfigs).
    g.setTimeouts(this.#consumerTimeouts(groupId));
    const before = g.mark(req.memberId);
    const res = g.heartbeat(req, topics);
    if (res.errorCode === GroupError.NONE && req.memberEpoch === 0) this.#remember(groupId, 'consumer');
    if (g.members.size === 0 && this.#consumerGroups.get(groupId) === g) this.#consumerGroups.delete(groupId);
    // Most heartbeats change nothing: only a change is stored (and answered once it is).
    if (g.mark(res.memberId ?? req.memberId) !== before) await this.#saveConsumer(g);
    return res;
  }

  /** ConsumerGroupDescribe of one group; a classic or unknown group is GROUP_ID_NOT_FOUND. */
  consumerDescribe(groupId: string): ConsumerGroupSummary {
    const none = (errorCode: number, errorMessage: string | null, groupState: ConsumerGroupState | '' = ''): ConsumerGroupSummary => ({
      errorCode, errorMessage, groupId, groupState, groupEpoch: 0, assignmentEpoch: 0, assignorName: '', members: [],
    });
    if (this.#notHere(groupId)) return none(GroupError.NOT_COORDINATOR, `this node does not coordinate group ${groupId}`);
    if (groupId === '') return none(GroupError.INVALID_GROUP_ID, 'the group id is empty');
    const g = this.#consumerGroups.get(groupId);
    if (g === undefined) {
      if (!this.#groups.has(groupId) && this.#offsets.has(groupId) && this.#offsets.groupType(groupId) === 'consumer') return none(GroupError.NONE, null, 'Empty');
      return none(GroupError.GROUP_ID_NOT_FOUND, this.known(groupId) ? `Group ${groupId} is not a consumer group.` : `Group ${groupId} not found.`);
    }
    const named = (keys: Iterable<string>): Array<{ topicId: string; topicName: string; partitions: number[] }> =>
      toTopicPartitions([...keys].sort()).map((t) => ({ topicId: t.topicId, topicName: g.topicName(t.topicId), partitions: t.partitions }));
    return {
      errorCode: GroupError.NONE,
      errorMessage: null,
      groupId,
      groupState: g.state,
      groupEpoch: g.groupEpoch,
      assignmentEpoch: g.assignmentEpoch,
      assignorName: g.assignorName,
      members: [...g.members.values()].map((m) => ({
        memberId: m.memberId,
        instanceId: m.instanceId,
        rackId: m.rackId,
        memberEpoch: m.memberEpoch,
        clientId: m.clientId,
        clientHost: m.clientHost,
        subscribedTopicNames: m.subscribedTopicNames,
        subscribedTopicRegex: m.subscribedTopicRegex,
        assignment: { topicPartitions: named(m.assigned) },
        targetAssignment: { topicPartitions: named(g.target.get(m.memberId) ?? []) },
      })),
    };
  }

  /** The group's kind: a live group's, else what the store remembers (classic when nothing is known). */
  groupType(groupId: string): GroupType {
    if (this.#consumerGroups.has(groupId)) return 'consumer';
    if (this.#groups.has(groupId)) return 'classic';
    return this.#offsets.groupType(groupId);
  }

  /**
   * OffsetFetch v9+ with a member (KIP-848): a consumer group checks the member and its epoch
   * (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH); a fetch without a member (epoch < 0), or of a classic
   * group, is always answered.
   */
  validateFetch(groupId: string, memberId: string | null, memberEpoch: number): number {
    const g = this.#consumerGroups.get(groupId);
    if (g === undefined || ((memberId === null || memberId === '') && memberEpoch < 0)) return GroupError.NONE;
    return g.validateMemberEpoch(memberId ?? '', memberEpoch);
  }

  /**
   * Whether (memberId, generationId) may commit offsets for the group: an error code. In a consumer
   * group the generation is the member epoch (Kafka's ConsumerGroup.validateOffsetCommit): a commit
   * without a member is accepted only while the group is empty, a member's needs OffsetCommit v9+
   * (`version`; undefined: TxnOffsetCommit, checked the same way) and its current epoch, or an
   * older one for the `partitions` it was given by then (consumer-group.ts, validateCommitEpoch).
   */
  validateCommit(groupId: string, memberId: string, generationId: number, version?: number, partitions?: ReadonlyArray<{ topic: string; partition: number }>): number {
    if (this.#notHere(groupId)) return GroupError.NOT_COORDINATOR;
    if (groupId === '') return GroupError.INVALID_GROUP_ID;
    const cg = this.#consumerGroups.get(groupId);
    if (cg !== undefined) {
      if (generationId < 0 && cg.members.size === 0) return GroupError.NONE;
      if (!cg.members.has(memberId)) return GroupError.UNKNOWN_MEMBER_ID;
      if (version !== undefined && version < 9) return GroupError.UNSUPPORTED_VERSION;
      return cg.validateCommitEpoch(memberId, generationId, partitions);
    }
    const g = this.#groups.get(groupId);
    // No live group: only a commit outside group management (generation -1) makes sense.
    if (g === undefined) return generationId < 0 ? GroupError.NONE : memberId === '' ? GroupError.ILLEGAL_GENERATION : GroupError.UNKNOWN_MEMBER_ID;
    return g.validateCommit(memberId, generationId);
  }

  /** Durably commit offsets already validated; an error code (retriable for clients) when the store fails. */
  async commit(groupId: string, offsets: ReadonlyArray<OffsetToCommit>): Promise<number> {
    try {
      await this.#offsets.commit(groupId, offsets);
      return GroupError.NONE;
    } catch (err) {
      this.#log.warn({ group: groupId, err: (err as Error).message }, 'offset commit failed');
      return GroupError.COORDINATOR_NOT_AVAILABLE;
    }
  }

  committed(groupId: string, topic: string, partition: number): CommittedOffset | undefined {
    return this.#offsets.get(groupId, topic, partition);
  }

  allCommitted(groupId: string): Map<string, Map<number, CommittedOffset>> {
    return this.#offsets.all(groupId);
  }

  /** DescribeGroups of one group; a group nobody knows is Dead (Kafka's answer too). */
  describe(groupId: string): GroupSummary {
    const cg = this.#consumerGroups.get(groupId);
    if (cg !== undefined) return { groupId, state: 'Stable', protocolType: 'consumer', protocolName: '', generationId: 0, members: [] };
    const g = this.#groups.get(groupId);
    if (g === undefined) {
      const known = this.#offsets.has(groupId);
      return { groupId, state: known ? 'Empty' : 'Dead', protocolType: known ? (this.#offsets.protocolType(groupId) ?? '') : '', protocolName: '', generationId: 0, members: [] };
    }
    const stable = g.state === 'Stable';
    return {
      groupId,
      state: g.state,
      protocolType: g.protocolType ?? this.#offsets.protocolType(groupId) ?? '',
      protocolName: stable ? (g.protocolName ?? '') : '',
      generationId: g.generationId,
      members: [...g.members.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        metadata: stable ? m.metadataFor(g.protocolName!) : Buffer.alloc(0),
        assignment: stable ? m.assignment : Buffer.alloc(0),
      })),
    };
  }

  /** Every group: live ones and those known only from the store (Empty). */
  list(): Array<{ groupId: string; protocolType: string; state: GroupState | ConsumerGroupState; groupType: GroupType }> {
    const out = new Map<string, { groupId: string; protocolType: string; state: GroupState | ConsumerGroupState; groupType: GroupType }>();
    for (const id of this.#offsets.groups()) out.set(id, { groupId: id, protocolType: this.#offsets.protocolType(id) ?? '', state: 'Empty', groupType: this.#offsets.groupType(id) });
    for (const g of this.#groups.values()) out.set(g.groupId, { groupId: g.groupId, protocolType: g.protocolType ?? '', state: g.state, groupType: 'classic' });
    for (const g of this.#consumerGroups.values()) out.set(g.groupId, { groupId: g.groupId, protocolType: 'consumer', state: g.state, groupType: 'consumer' });
    return [...out.values()];
  }

  /**
   * DeleteGroups of one group: refused with NON_EMPTY_GROUP (68) while it has members, as Kafka
   * does; GROUP_ID_NOT_FOUND (69) when nothing is known of it.
   */
  async deleteGroup(groupId: string): Promise<number> {
    await this.loadConsumer(groupId);
    const g = this.#groups.get(groupId);
    if ((g !== undefined && g.members.size > 0) || (this.#consumerGroups.get(groupId)?.members.size ?? 0) > 0) return GroupError.NON_EMPTY_GROUP;
    if (g === undefined && !this.#offsets.has(groupId)) return GroupError.GROUP_ID_NOT_FOUND;
    this.#groups.delete(groupId);
    await this.#offsets.deleteGroup(groupId);
    return GroupError.NONE;
  }

  /**
   * OffsetDelete: drop committed offsets of partitions; a group with live members that are
   * subscribed to the topic keeps them (GROUP_SUBSCRIBED_TO_TOPIC, 86). Membership is opaque
   * here (subscriptions live in the members' metadata), so any live member counts as subscribed.
   */
  async deleteOffsets(groupId: string, topic: string, partitions: ReadonlyArray<number>): Promise<number> {
    await this.loadConsumer(groupId);
    const g = this.#groups.get(groupId);
    if (g !== undefined && g.members.size > 0) return GroupError.GROUP_SUBSCRIBED_TO_TOPIC;
    // A consumer group's subscriptions are known: only a topic some member subscribes to is kept.
    if (this.#consumerGroups.get(groupId)?.subscribes(topic) === true) return GroupError.GROUP_SUBSCRIBED_TO_TOPIC;
    await this.#offsets.deletePartitions(groupId, topic, partitions);
    return GroupError.NONE;
  }

  /** Whether anything is known of the group (live, or offsets in the store). */
  known(groupId: string): boolean {
    return this.#groups.has(groupId) || this.#consumerGroups.has(groupId) || this.#offsets.has(groupId);
  }

  /** Stop coordinating: requests waiting in JoinGroup or SyncGroup get NOT_COORDINATOR now. */
  close(): void {
    this.#closed = true;
    for (const g of this.#groups.values()) g.shutdown(GroupError.NOT_COORDINATOR);
    for (const g of this.#consumerGroups.values()) g.shutdown();
  }

  /**
   * A group without members keeps nothing worth memory: its offsets and protocol type are in the
   * store, and a later join starts a new group object (generation 1 again: member ids are never
   * reused, so no old member can pass for a member of the new generations).
   */
  #empty(g: Group): void {
    if (this.#groups.get(g.groupId) === g && g.members.size === 0) this.#groups.delete(g.groupId);
  }

  #generation(g: Group): void {
    if (g.protocolType === null) return;
    this.#remember(g.groupId, 'classic', g.protocolType);
  }

  /** Best effort: the record only names the protocol and kind of an Empty group after a restart. */
  #remember(groupId: string, groupType: GroupType, protocolType = 'consumer'): void {
    this.#offsets.setProtocolType(groupId, protocolType, groupType).catch((err: unknown) => this.#log.warn({ group: groupId, err: (err as Error).message }, 'group record not written'));
  }
}
