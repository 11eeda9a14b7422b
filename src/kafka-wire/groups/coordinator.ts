/**
 * The group coordinator: this node coordinates every group (FindCoordinator answers itself).
 * Membership lives in memory (group.ts) and is lost with the process, as it is when a Kafka
 * coordinator fails over: members get UNKNOWN_MEMBER_ID and rejoin. Committed offsets and each
 * group's protocol type live in the metadata store (offset-store.ts) and survive restarts, so a
 * group known only from the store is an Empty group. Only groups with members are kept in memory.
 */
import { type MetaStore } from '../../actors';
import { type Logger } from '../../log';
import { GroupError } from './errors';
import { Group, type GroupState } from './group';
import { type JoinRequest, type JoinResult, type SyncResult } from './member';
import { type CommittedOffset, OffsetStore, type OffsetToCommit } from './offset-store';

/** Kafka's group.min.session.timeout.ms and group.max.session.timeout.ms defaults (ms). */
export const MIN_SESSION_TIMEOUT_MS = 6_000;
export const MAX_SESSION_TIMEOUT_MS = 1_800_000; // 30 min
/** Kafka's offset.metadata.max.bytes default (characters of the commit's metadata string). */
export const MAX_OFFSET_METADATA = 4096;

export interface GroupSummary {
  groupId: string;
  state: GroupState;
  protocolType: string;
  /** The chosen protocol while Stable; '' otherwise (what Kafka reports). */
  protocolName: string;
  members: Array<{ memberId: string; groupInstanceId: string | null; clientId: string; clientHost: string; metadata: Buffer; assignment: Buffer }>;
}

export class GroupCoordinator {
  readonly #groups = new Map<string, Group>();
  readonly #offsets: OffsetStore;
  readonly #log: Logger;
  #closed = false;

  /** In a cluster: whether this node coordinates the group (FindCoordinator's answer); others get NOT_COORDINATOR. */
  readonly #coordinates: (groupId: string) => boolean;

  constructor(meta: MetaStore, log: Logger, coordinates: (groupId: string) => boolean = () => true) {
    this.#offsets = new OffsetStore(meta);
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

  /** Whether (memberId, generationId) may commit offsets for the group: an error code. */
  validateCommit(groupId: string, memberId: string, generationId: number): number {
    if (this.#notHere(groupId)) return GroupError.NOT_COORDINATOR;
    if (groupId === '') return GroupError.INVALID_GROUP_ID;
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
    const g = this.#groups.get(groupId);
    if (g === undefined) {
      const known = this.#offsets.has(groupId);
      return { groupId, state: known ? 'Empty' : 'Dead', protocolType: known ? (this.#offsets.protocolType(groupId) ?? '') : '', protocolName: '', members: [] };
    }
    const stable = g.state === 'Stable';
    return {
      groupId,
      state: g.state,
      protocolType: g.protocolType ?? this.#offsets.protocolType(groupId) ?? '',
      protocolName: stable ? (g.protocolName ?? '') : '',
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
  list(): Array<{ groupId: string; protocolType: string; state: GroupState }> {
    const out = new Map<string, { groupId: string; protocolType: string; state: GroupState }>();
    for (const id of this.#offsets.groups()) out.set(id, { groupId: id, protocolType: this.#offsets.protocolType(id) ?? '', state: 'Empty' });
    for (const g of this.#groups.values()) out.set(g.groupId, { groupId: g.groupId, protocolType: g.protocolType ?? '', state: g.state });
    return [...out.values()];
  }

  /**
   * DeleteGroups of one group: refused with NON_EMPTY_GROUP (68) while it has members, as Kafka
   * does; GROUP_ID_NOT_FOUND (69) when nothing is known of it.
   */
  async deleteGroup(groupId: string): Promise<number> {
    const g = this.#groups.get(groupId);
    if (g !== undefined && g.members.size > 0) return GroupError.NON_EMPTY_GROUP;
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
    const g = this.#groups.get(groupId);
    if (g !== undefined && g.members.size > 0) return GroupError.GROUP_SUBSCRIBED_TO_TOPIC;
    await this.#offsets.deletePartitions(groupId, topic, partitions);
    return GroupError.NONE;
  }

  /** Whether anything is known of the group (live, or offsets in the store). */
  known(groupId: string): boolean {
    return this.#groups.has(groupId) || this.#offsets.has(groupId);
  }

  /** Stop coordinating: requests waiting in JoinGroup or SyncGroup get NOT_COORDINATOR now. */
  close(): void {
    this.#closed = true;
    for (const g of this.#groups.values()) g.shutdown(GroupError.NOT_COORDINATOR);
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
    // Best effort: the record only names the protocol type of an Empty group after a restart.
    this.#offsets.setProtocolType(g.groupId, g.protocolType).catch((err: unknown) => this.#log.warn({ group: g.groupId, err: (err as Error).message }, 'group record not written'));
  }
}
