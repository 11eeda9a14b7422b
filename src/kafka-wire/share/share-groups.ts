/**
 * Share groups' membership on the Kafka listener (KIP-932, ShareGroupHeartbeat and
 * ShareGroupDescribe): members join with epoch 0, heartbeat with their epoch, leave with -1, and
 * are assigned partitions of the topics they subscribe to by the `simple` assignor. A share group
 * has no revocation step (KIP-932): a partition may be assigned to several members at once, since
 * its records are shared out by the share partition's acquisition locks (src/actors/share), so an
 * assignment change takes effect at each member's next heartbeat.
 *
 *   join (epoch 0) ──▶ group epoch + 1, member epoch = group epoch, assignment
 *   heartbeat (epoch e == member's) ──▶ epoch and assignment moved to the group's when they changed
 *   heartbeat (other epoch) ──▶ FENCED_MEMBER_EPOCH; unknown member ──▶ UNKNOWN_MEMBER_ID
 *   leave (-1), or no heartbeat for the session timeout ──▶ removed; `onGone` gives its locks back
 *
 * Membership is in memory on the group's coordinator (a restart empties it; members rejoin on
 * UNKNOWN_MEMBER_ID as Kafka clients do); the share partitions' state is durable (ShareStates).
 */
import { randomUUID } from 'node:crypto';
import { GroupError, type TopicsSnapshot } from '../groups';

/** What a member asks in a heartbeat. */
export interface ShareHeartbeatInput {
  memberId: string;
  memberEpoch: number;
  rackId: string | null;
  /** null: unchanged since the last heartbeat. */
  subscribedTopicNames: string[] | null;
  clientId: string;
  clientHost: string;
}

export interface ShareAssignment {
  topicPartitions: Array<{ topicId: string; partitions: number[] }>;
}

export interface ShareHeartbeatOutput {
  errorCode: number;
  errorMessage: string | null;
  memberId: string | null;
  memberEpoch: number;
  heartbeatIntervalMs: number;
  assignment: ShareAssignment | null;
}

interface ShareMember {
  memberId: string;
  memberEpoch: number;
  rackId: string | null;
  clientId: string;
  clientHost: string;
  subscribed: string[];
  /** topic name → assigned partitions (ascending). */
  assignment: Map<string, number[]>;
  lastSeen: number;
}

interface ShareGroup {
  groupId: string;
  groupEpoch: number;
  assignmentEpoch: number;
  members: Map<string, ShareMember>;
}

/** One described share group (ShareGroupDescribe). */
export interface ShareGroupSummary {
  errorCode: number;
  errorMessage: string | null;
  groupId: string;
  groupState: string;
  groupEpoch: number;
  assignmentEpoch: number;
  assignorName: string;
  members: Array<{
    memberId: string;
    rackId: string | null;
    memberEpoch: number;
    clientId: string;
    clientHost: string;
    subscribedTopicNames: string[];
    assignment: { topicPartitions: Array<{ topicId: string; topicName: string; partitions: number[] }> };
  }>;
}

export interface ShareGroupsOptions {
  /**
   * The group's session timeout (a member that sends no heartbeat for this long is removed) and
   * the interval its members are told to heartbeat at, ms: `share.session.timeout.ms` and
   * `share.heartbeat.interval.ms`, or the node's options.
   */
  timeoutsOf: (groupId: string) => { sessionTimeoutMs: number; heartbeatIntervalMs: number };
  /** Whether this node coordinates the group (a cluster's FindCoordinator answer). */
  coordinates: (groupId: string) => boolean;
  /** Whether the id belongs to a group of another kind (classic or consumer). */
  otherKind: (groupId: string) => boolean;
  /** A member left or expired: its share sessions close and its locks are given back. */
  onGone: (groupId: string, memberId: string) => void;
}

export const SHARE_ASSIGNOR = 'simple';

const sameList = (a: readonly unknown[], b: readonly unknown[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

export class ShareGroups {
  readonly #groups = new Map<string, ShareGroup>();
  readonly #o: ShareGroupsOptions;

  constructor(o: ShareGroupsOptions) {
    this.#o = o;
  }

  /** Whether a share group of this id is held here (with members, or left empty by its last member). */
  has(groupId: string): boolean {
    return this.#groups.has(groupId);
  }

  /** The groups held here and how many members each has now (members past their session timeout removed first). */
  list(now: number): Array<{ groupId: string; members: number }> {
    this.#sweep(now);
    return [...this.#groups.values()].map((g) => ({ groupId: g.groupId, members: g.members.size }));
  }

  /** Members of the group now (0 for a group not held here). */
  memberCount(groupId: string, now: number): number {
    this.#sweep(now);
    return this.#groups.get(groupId)?.members.size ?? 0;
  }

  /**
   * Forget an empty group (DeleteGroups): false while it has members. A member joining later
   * starts a new group at epoch 1.
   */
  forget(groupId: string, now: number): boolean {
    if (this.memberCount(groupId, now) > 0) return false;
    this.#groups.delete(groupId);
    return true;
  }

  heartbeat(groupId: string, req: ShareHeartbeatInput, topics: TopicsSnapshot, now: number): ShareHeartbeatOutput {
    const fail = (errorCode: number, errorMessage: string): ShareHeartbeatOutput => ({ errorCode, errorMessage, memberId: null, memberEpoch: -1, heartbeatIntervalMs: 0, assignment: null });
    if (groupId === '') return fail(GroupError.INVALID_REQUEST, 'GroupId can not be empty');
    if (!this.#o.coordinates(groupId)) return fail(GroupError.NOT_COORDINATOR, `this node does not coordinate group ${groupId}`);
    if (!this.#groups.has(groupId) && this.#o.otherKind(groupId)) return fail(GroupError.GROUP_ID_NOT_FOUND, `group ${groupId} is not a share group`);
    this.#sweep(now);
    let g = this.#groups.get(groupId);
    if (req.memberEpoch === 0) {
      if (req.subscribedTopicNames === null || req.subscribedTopicNames.length === 0) return fail(GroupError.INVALID_REQUEST, 'SubscribedTopicNames must be set on join');
      if (g === undefined) {
        g = { groupId, groupEpoch: 0, assignmentEpoch: 0, members: new Map() };
        this.#groups.set(groupId, g);
      }
      // KIP-1082: the member may bring its own id; an empty one is made up here.
      const memberId = req.memberId === '' ? randomUUID() : req.memberId;
      const m: ShareMember = { memberId, memberEpoch: 0, rackId: req.rackId, clientId: req.clientId, clientHost: req.clientHost, subscribed: [...new Set(req.subscribedTopicNames)].sort(), assignment: new Map(), lastSeen: now };
      g.members.set(memberId, m);
      g.groupEpoch++;
      this.#assign(g, topics);
      m.memberEpoch = g.groupEpoch;
      return this.#answer(g.groupId, m, topics, true);
    }
    if (req.memberId === '') return fail(GroupError.INVALID_REQUEST, 'MemberId can not be empty');
    const m = g?.members.get(req.memberId);
    if (g === undefined || m === undefined) return fail(GroupError.UNKNOWN_MEMBER_ID, `member ${req.memberId} is not in share group ${groupId}`);
    if (req.memberEpoch === -1) {
      this.#remove(g, m.memberId, topics);
      return { errorCode: 0, errorMessage: null, memberId: m.memberId, memberEpoch: -1, heartbeatIntervalMs: 0, assignment: null };
    }
    if (req.memberEpoch !== m.memberEpoch) return fail(GroupError.FENCED_MEMBER_EPOCH, `member epoch ${req.memberEpoch} is not ${m.memberEpoch}`);
    m.lastSeen = now;
    if (req.rackId !== null) m.rackId = req.rackId;
    const full = req.subscribedTopicNames !== null;
    if (full) {
      const subscribed = [...new Set(req.subscribedTopicNames)].sort();
      if (!sameList(subscribed, m.subscribed)) {
        m.subscribed = subscribed;
        g.groupEpoch++;
      }
    }
    // A topic created or grown also changes the assignment (its epoch with it).
    this.#assign(g, topics);
    const moved = m.memberEpoch !== g.groupEpoch;
    m.memberEpoch = g.groupEpoch;
    return this.#answer(g.groupId, m, topics, moved || full);
  }

  describe(groupId: string, topics: TopicsSnapshot, now: number): ShareGroupSummary {
    const none = (errorCode: number, errorMessage: string): ShareGroupSummary => ({ errorCode, errorMessage, groupId, groupState: '', groupEpoch: -1, assignmentEpoch: -1, assignorName: '', members: [] });
    if (!this.#o.coordinates(groupId)) return none(GroupError.NOT_COORDINATOR, `this node does not coordinate group ${groupId}`);
    this.#sweep(now);
    const g = this.#groups.get(groupId);
    if (g === undefined) return none(GroupError.GROUP_ID_NOT_FOUND, this.#o.otherKind(groupId) ? `group ${groupId} is not a share group` : `group ${groupId} is not known`);
    return {
      errorCode: 0,
      errorMessage: null,
      groupId,
      groupState: g.members.size === 0 ? 'Empty' : 'Stable',
      groupEpoch: g.groupEpoch,
      assignmentEpoch: g.assignmentEpoch,
      assignorName: SHARE_ASSIGNOR,
      members: [...g.members.values()].map((m) => ({
        memberId: m.memberId,
        rackId: m.rackId,
        memberEpoch: m.memberEpoch,
        clientId: m.clientId,
        clientHost: m.clientHost,
        subscribedTopicNames: [...m.subscribed],
        assignment: { topicPartitions: [...m.assignment].flatMap(([name, partitions]) => { const t = topics.get(name); return t === undefined ? [] : [{ topicId: t.id, topicName: name, partitions: [...partitions] }]; }) },
      })),
    };
  }

  #answer(groupId: string, m: ShareMember, topics: TopicsSnapshot, withAssignment: boolean): ShareHeartbeatOutput {
    const assignment: ShareAssignment | null = withAssignment
      ? { topicPartitions: [...m.assignment].flatMap(([name, partitions]) => { const t = topics.get(name); return t === undefined ? [] : [{ topicId: t.id, partitions: [...partitions] }]; }) }
      : null;
    return { errorCode: 0, errorMessage: null, memberId: m.memberId, memberEpoch: m.memberEpoch, heartbeatIntervalMs: this.#o.timeoutsOf(groupId).heartbeatIntervalMs, assignment };
  }

  /**
   * The `simple` assignor: per topic, its subscribers sorted by id; with no more members than
   * partitions each partition goes to one member round-robin, with more members each member gets
   * one partition round-robin (a partition then has several members). A change bumps the group
   * epoch once.
   */
  #assign(g: ShareGroup, topics: TopicsSnapshot): void {
    const next = new Map<string, Map<string, number[]>>([...g.members.keys()].map((id) => [id, new Map()]));
    const members = [...g.members.values()].sort((a, b) => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0));
    const names = new Set(members.flatMap((m) => m.subscribed));
    for (const name of names) {
      const t = topics.get(name);
      if (t === undefined || t.partitions === 0) continue;
      const subs = members.filter((m) => m.subscribed.includes(name));
      const give = (m: ShareMember, p: number): void => {
        const own = next.get(m.memberId)!;
        own.set(name, [...(own.get(name) ?? []), p]);
      };
      if (subs.length <= t.partitions) for (let p = 0; p < t.partitions; p++) give(subs[p % subs.length]!, p);
      else subs.forEach((m, j) => give(m, j % t.partitions));
    }
    let changed = false;
    for (const m of g.members.values()) {
      const a = next.get(m.memberId)!;
      const same = a.size === m.assignment.size && [...a].every(([n, ps]) => sameList(ps, m.assignment.get(n) ?? []));
      if (!same) {
        m.assignment = a;
        changed = true;
      }
    }
    if (changed && g.assignmentEpoch === g.groupEpoch) g.groupEpoch++;
    g.assignmentEpoch = g.groupEpoch;
  }

  #remove(g: ShareGroup, memberId: string, topics: TopicsSnapshot | null): void {
    g.members.delete(memberId);
    g.groupEpoch++;
    if (topics !== null) this.#assign(g, topics);
    else g.assignmentEpoch = g.groupEpoch;
    this.#o.onGone(g.groupId, memberId);
  }

  /** Members past their session timeout go; their partitions go to the others at their next heartbeat. */
  #sweep(now: number): void {
    for (const g of this.#groups.values()) {
      const sessionTimeoutMs = g.members.size === 0 ? 0 : this.#o.timeoutsOf(g.groupId).sessionTimeoutMs;
      for (const m of [...g.members.values()]) {
        if (now - m.lastSeen > sessionTimeoutMs) {
          g.members.delete(m.memberId);
          g.groupEpoch++;
          this.#o.onGone(g.groupId, m.memberId);
        }
      }
      // The remaining members' assignments are recomputed at their heartbeats (#assign with fresh topics).
      if (g.members.size === 0 && g.groupEpoch > 0) g.assignmentEpoch = g.groupEpoch;
    }
  }
}
