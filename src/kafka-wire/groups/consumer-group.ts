/**
 * One group of the consumer group protocol (KIP-848): membership driven by ConsumerGroupHeartbeat,
 * assignment computed here by a server-side assignor (assignors.ts), handed out incrementally.
 *
 *   heartbeat ──▶ member (epoch check, subscription) ──▶ group epoch +1 when membership,
 *                                                        subscriptions or topic metadata change
 *                          target assignment (assignor) ◀─ assignment epoch := group epoch
 *   member reconciles toward its target:
 *     stable ──(target moved)──▶ unrevoked: told to give up partitions, keeps its epoch
 *                                   │ owned partitions in a heartbeat no longer hold them
 *                                   ▼
 *                                unreleased: epoch := assignment epoch, gets the free partitions;
 *                                   │ the rest once their previous owners have revoked them
 *                                   ▼
 *                                stable
 *
 * A partition goes to its new member only after its previous owner revoked it (`#owners`: who
 * holds each partition, assigned or pending revocation), so no two members consume it at once.
 * A member that does not heartbeat within the session timeout, or does not revoke within its
 * rebalance timeout, is removed (fenced) and its partitions freed.
 *
 * The group's state — epochs, members with their subscriptions, assigned and pending partitions,
 * the target assignment — has a durable form (`toRecord`, `fromRecord`) that the coordinator
 * writes to the metadata store at each change before it answers (coordinator.ts), as Kafka writes
 * a consumer group's records to __consumer_offsets: a coordinator that restarts, or the next one
 * after its death, goes on with the same members and epochs; each member's session starts afresh.
 */
import { randomUUID } from 'node:crypto';
import { GroupError } from './errors';
import { ASSIGNORS, DEFAULT_ASSIGNOR, partitionKey, splitKey } from './assignors';

/** Topics by name as the heartbeat saw them: id and partition count. */
export type TopicsSnapshot = ReadonlyMap<string, { readonly id: string; readonly partitions: number }>;

/** Member epochs with a meaning (ConsumerGroupHeartbeatRequest.json). */
export const JOIN_EPOCH = 0;
export const LEAVE_EPOCH = -1;
export const STATIC_LEAVE_EPOCH = -2;

export interface ConsumerGroupTimeouts {
  /** group.consumer.session.timeout.ms: a member silent this long is removed (ms). */
  readonly sessionTimeoutMs: number;
  /** group.consumer.heartbeat.interval.ms: what members are told to heartbeat at (ms). */
  readonly heartbeatIntervalMs: number;
}

export interface HeartbeatInput {
  readonly version: number;
  readonly memberId: string;
  readonly memberEpoch: number;
  readonly instanceId: string | null;
  readonly rackId: string | null;
  readonly rebalanceTimeoutMs: number;
  readonly subscribedTopicNames: ReadonlyArray<string> | null;
  /** v1+; null or undefined: unchanged. */
  readonly subscribedTopicRegex: string | null | undefined;
  readonly serverAssignor: string | null;
  /** The partitions the member owns now; null: unchanged since its last heartbeat. */
  readonly ownedPartitions: ReadonlyArray<{ topicId: string; partitions: number[] }> | null;
  readonly clientId: string;
  readonly clientHost: string;
}

export interface HeartbeatOutput {
  errorCode: number;
  errorMessage: string | null;
  memberId: string | null;
  memberEpoch: number;
  heartbeatIntervalMs: number;
  assignment: { topicPartitions: Array<{ topicId: string; partitions: number[] }> } | null;
}

export type ConsumerGroupState = 'Empty' | 'Assigning' | 'Reconciling' | 'Stable';

type MemberState = 'stable' | 'unrevoked' | 'unreleased';

export class ConsumerMember {
  memberId: string;
  instanceId: string | null = null;
  rackId: string | null = null;
  clientId = '';
  clientHost = '';
  memberEpoch = 0;
  previousMemberEpoch = -1;
  state: MemberState = 'stable';
  subscribedTopicNames: string[] = [];
  subscribedTopicRegex: string | null = null;
  regex: RegExp | null = null;
  serverAssignor: string | null = null;
  rebalanceTimeoutMs = 300_000; // 5 min, Kafka's max.poll.interval.ms default
  /** Partitions the member may consume now (partition keys). */
  assigned = new Set<string>();
  /** Partitions it was told to give up and has not yet confirmed giving up. */
  pendingRevocation = new Set<string>();
  /** The member epoch at which it was given each partition it holds (assigned or pending revocation): KIP-1251's assignment epochs. */
  assignedAt = new Map<string, number>();
  sessionTimer: NodeJS.Timeout | null = null;
  revocationTimer: NodeJS.Timeout | null = null;

  constructor(memberId: string) {
    this.memberId = memberId;
  }
}

/** A member in the group's durable form. */
export interface ConsumerMemberRecord {
  memberId: string;
  instanceId: string | null;
  rackId: string | null;
  clientId: string;
  clientHost: string;
  memberEpoch: number;
  previousMemberEpoch: number;
  state: MemberState;
  subscribedTopicNames: string[];
  subscribedTopicRegex: string | null;
  serverAssignor: string | null;
  rebalanceTimeoutMs: number;
  assigned: string[];
  pendingRevocation: string[];
  /** [partition key, epoch it was given at]. */
  assignedAt: Array<[string, number]>;
}

/** The group's durable form (the metadata store's `kafka/cgroups/<group>`). */
export interface ConsumerGroupRecord {
  v: 1;
  groupEpoch: number;
  assignmentEpoch: number;
  metadataFingerprint: string;
  /** The subscribed topics the target was computed from: [name, id, partitions]. */
  topics: Array<[string, string, number]>;
  target: Array<[string, string[]]>;
  members: ConsumerMemberRecord[];
}

const setEquals = (a: ReadonlySet<string>, b: ReadonlySet<string>): boolean => a.size === b.size && [...a].every((x) => b.has(x));

/** Partition keys grouped by topic id, as the protocol carries them. */
export function toTopicPartitions(keys: Iterable<string>): Array<{ topicId: string; partitions: number[] }> {
  const by = new Map<string, number[]>();
  for (const k of keys) {
    const { topicId, partition } = splitKey(k);
    let ps = by.get(topicId);
    if (ps === undefined) by.set(topicId, (ps = []));
    ps.push(partition);
  }
  return [...by].map(([topicId, partitions]) => ({ topicId, partitions: partitions.sort((a, b) => a - b) }));
}

const fail = (errorCode: number, errorMessage: string, memberId: string | null = null, memberEpoch = -1): HeartbeatOutput => ({
  errorCode,
  errorMessage,
  memberId,
  memberEpoch,
  heartbeatIntervalMs: 0,
  assignment: null,
});

export class ConsumerGroup {
  readonly groupId: string;
  groupEpoch = 0;
  assignmentEpoch = 0;
  readonly members = new Map<string, ConsumerMember>();
  /** Target assignment of each member, as of assignmentEpoch. */
  readonly target = new Map<string, Set<string>>();
  /** Who holds each partition now (assigned or pending revocation): a partition moves only once released. */
  readonly #owners = new Map<string, string>();
  readonly #staticMembers = new Map<string, string>();
  #timeouts: ConsumerGroupTimeouts;
  readonly #onEmpty: (g: ConsumerGroup) => void;
  /** Told of each member the group removes by itself (an operator's first question when a consumer stops getting records). */
  readonly #onExpired: (memberId: string, why: string) => void;
  /** The topics of the last heartbeat (the assignor's input when a timer changes membership). */
  #topics: TopicsSnapshot = new Map();
  /** Fingerprint of the subscribed topics' metadata the target was computed from. */
  #metadataFingerprint = '';

  /**
   * `onExpired` is told of each member the group removes by itself (session or rebalance timeout),
   * after the removal: the group changed with no heartbeat to answer.
   */
  constructor(groupId: string, timeouts: ConsumerGroupTimeouts, onEmpty: (g: ConsumerGroup) => void, onExpired: (memberId: string, why: string) => void = () => undefined) {
    this.groupId = groupId;
    this.#timeouts = timeouts;
    this.#onEmpty = onEmpty;
    this.#onExpired = onExpired;
  }

  /**
   * What a heartbeat of `memberId` can change, in a few characters: the group's epochs and size,
   * and that member's fields. Equal before and after a heartbeat: the group's durable form did not
   * change either (the coordinator then writes nothing, and does not build the form to find out).
   */
  mark(memberId: string): string {
    const m = this.members.get(memberId);
    const group = `${this.groupEpoch}|${this.assignmentEpoch}|${this.members.size}|${this.#metadataFingerprint}`;
    if (m === undefined) return group;
    return `${group}|${m.memberEpoch}|${m.previousMemberEpoch}|${m.state}|${[...m.assigned].join(',')}|${[...m.pendingRevocation].join(',')}|${m.subscribedTopicNames.join(',')}|${m.subscribedTopicRegex}|${m.serverAssignor}|${m.rebalanceTimeoutMs}|${m.rackId}|${m.instanceId}|${m.clientId}|${m.clientHost}`;
  }

  /** The group's timeouts from now on (its configs changed): each member's next heartbeat starts its session with them. */
  setTimeouts(t: ConsumerGroupTimeouts): void {
    this.#timeouts = t;
  }

  /** The durable form of the group now. */
  toRecord(): ConsumerGroupRecord {
    const used = new Set<string>();
    for (const m of this.members.values()) for (const id of this.subscribedTopicIds(m)) used.add(id);
    return {
      v: 1,
      groupEpoch: this.groupEpoch,
      assignmentEpoch: this.assignmentEpoch,
      metadataFingerprint: this.#metadataFingerprint,
      topics: [...this.#topics].filter(([, t]) => used.has(t.id)).map(([name, t]) => [name, t.id, t.partitions]),
      target: [...this.target].map(([id, keys]) => [id, [...keys].sort()]),
      members: [...this.members.values()].map((m) => ({
        memberId: m.memberId,
        instanceId: m.instanceId,
        rackId: m.rackId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        memberEpoch: m.memberEpoch,
        previousMemberEpoch: m.previousMemberEpoch,
        state: m.state,
        subscribedTopicNames: [...m.subscribedTopicNames],
        subscribedTopicRegex: m.subscribedTopicRegex,
        serverAssignor: m.serverAssignor,
        rebalanceTimeoutMs: m.rebalanceTimeoutMs,
        assigned: [...m.assigned].sort(),
        pendingRevocation: [...m.pendingRevocation].sort(),
        assignedAt: [...m.assignedAt].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)),
      })),
    };
  }

  /**
   * A group back from its durable form (a restarted or new coordinator): every member's session
   * starts now, and a member that was revoking partitions gets its rebalance timeout again.
   */
  static fromRecord(groupId: string, r: ConsumerGroupRecord, timeouts: ConsumerGroupTimeouts, onEmpty: (g: ConsumerGroup) => void, onExpired: (memberId: string, why: string) => void = () => undefined): ConsumerGroup {
    const g = new ConsumerGroup(groupId, timeouts, onEmpty, onExpired);
    g.groupEpoch = r.groupEpoch;
    g.assignmentEpoch = r.assignmentEpoch;
    g.#metadataFingerprint = r.metadataFingerprint;
    g.#topics = new Map(r.topics.map(([name, id, partitions]) => [name, { id, partitions }]));
    for (const [id, keys] of r.target) g.target.set(id, new Set(keys));
    for (const x of r.members) {
      const m = new ConsumerMember(x.memberId);
      Object.assign(m, {
        instanceId: x.instanceId,
        rackId: x.rackId,
        clientId: x.clientId,
        clientHost: x.clientHost,
        memberEpoch: x.memberEpoch,
        previousMemberEpoch: x.previousMemberEpoch,
        state: x.state,
        subscribedTopicNames: [...x.subscribedTopicNames],
        subscribedTopicRegex: x.subscribedTopicRegex,
        serverAssignor: x.serverAssignor,
        rebalanceTimeoutMs: x.rebalanceTimeoutMs,
        assigned: new Set(x.assigned),
        pendingRevocation: new Set(x.pendingRevocation),
        assignedAt: new Map(x.assignedAt),
      });
      // The regex was checked when the member sent it.
      m.regex = x.subscribedTopicRegex === null ? null : new RegExp(`^(?:${x.subscribedTopicRegex})$`, 'u');
      g.members.set(m.memberId, m);
      if (m.instanceId !== null) g.#staticMembers.set(m.instanceId, m.memberId);
      for (const k of [...m.assigned, ...m.pendingRevocation]) g.#owners.set(k, m.memberId);
      g.#touch(m);
      if (m.state === 'unrevoked') {
        m.revocationTimer = setTimeout(() => g.#expire(m, 'rebalance timeout'), m.rebalanceTimeoutMs);
        m.revocationTimer.unref();
      }
    }
    return g;
  }

  get state(): ConsumerGroupState {
    if (this.members.size === 0) return 'Empty';
    if (this.groupEpoch !== this.assignmentEpoch) return 'Assigning';
    for (const m of this.members.values()) if (m.memberEpoch !== this.assignmentEpoch || m.state !== 'stable') return 'Reconciling';
    return 'Stable';
  }

  /** The assignor the group uses: the one most members ask for, else the default. */
  get assignorName(): string {
    const votes = new Map<string, number>();
    for (const m of this.members.values()) if (m.serverAssignor !== null) votes.set(m.serverAssignor, (votes.get(m.serverAssignor) ?? 0) + 1);
    let best = DEFAULT_ASSIGNOR;
    let most = 0;
    for (const [name, n] of votes) if (n > most) [best, most] = [name, n];
    return best;
  }

  /** Topic ids a member subscribes to (names, and the regex over every topic). */
  subscribedTopicIds(m: ConsumerMember, topics: TopicsSnapshot = this.#topics): Set<string> {
    const ids = new Set<string>();
    for (const n of m.subscribedTopicNames) {
      const t = topics.get(n);
      if (t !== undefined) ids.add(t.id);
    }
    if (m.regex !== null) for (const [name, t] of topics) if (m.regex.test(name)) ids.add(t.id);
    return ids;
  }

  /** Topic names a member subscribes to, resolved (ConsumerGroupDescribe). */
  topicName(topicId: string): string {
    for (const [name, t] of this.#topics) if (t.id === topicId) return name;
    return '';
  }

  /** Whether some member subscribes to `topic` (OffsetDelete). */
  subscribes(topic: string): boolean {
    const t = this.#topics.get(topic);
    for (const m of this.members.values()) {
      if (m.subscribedTopicNames.includes(topic) || m.regex?.test(topic) === true) return true;
      if (t !== undefined && this.subscribedTopicIds(m).has(t.id)) return true;
    }
    return false;
  }

  heartbeat(req: HeartbeatInput, topics: TopicsSnapshot): HeartbeatOutput {
    this.#topics = topics;
    const invalid = this.#invalid(req);
    if (invalid !== null) return fail(GroupError.INVALID_REQUEST, invalid, req.memberId === '' ? null : req.memberId, req.memberEpoch);
    if (req.serverAssignor !== null && !ASSIGNORS.has(req.serverAssignor)) {
      return fail(GroupError.UNSUPPORTED_ASSIGNOR, `server assignor ${req.serverAssignor} is not one of ${[...ASSIGNORS.keys()].join(', ')}`);
    }
    let regex: RegExp | null | undefined;
    if (req.subscribedTopicRegex !== undefined && req.subscribedTopicRegex !== null && req.subscribedTopicRegex !== '') {
      try {
        // Kafka matches the whole name (RE2/J `matches`); anchor it.
        regex = new RegExp(`^(?:${req.subscribedTopicRegex})$`, 'u');
      } catch (err) {
        return fail(GroupError.INVALID_REGULAR_EXPRESSION, `SubscribedTopicRegex ${req.subscribedTopicRegex}: ${(err as Error).message}`);
      }
    } else if (req.subscribedTopicRegex === '') regex = null;

    if (req.memberEpoch === LEAVE_EPOCH || req.memberEpoch === STATIC_LEAVE_EPOCH) return this.#leave(req);

    let m: ConsumerMember;
    if (req.memberEpoch === JOIN_EPOCH) {
      const joined = this.#join(req);
      if ('errorCode' in joined) return joined;
      m = joined;
    } else {
      const known = this.members.get(req.memberId);
      if (known === undefined || known.memberEpoch === STATIC_LEAVE_EPOCH) return fail(GroupError.UNKNOWN_MEMBER_ID, `member ${req.memberId} is not in group ${this.groupId}`, req.memberId);
      m = known;
      const fenced = this.#fenced(m, req);
      if (fenced !== null) return fail(GroupError.FENCED_MEMBER_EPOCH, fenced, req.memberId, m.memberEpoch);
    }
    const before = { assigned: new Set(m.assigned), epoch: m.memberEpoch };

    // Fields the member sends only when they change.
    let bump = false;
    m.clientId = req.clientId;
    m.clientHost = req.clientHost;
    if (req.rackId !== null) m.rackId = req.rackId;
    if (req.rebalanceTimeoutMs !== -1) m.rebalanceTimeoutMs = req.rebalanceTimeoutMs;
    if (req.subscribedTopicNames !== null) {
      const next = [...new Set(req.subscribedTopicNames)].sort();
      if (next.join('\0') !== m.subscribedTopicNames.join('\0')) bump = true;
      m.subscribedTopicNames = next;
    }
    if (regex !== undefined) {
      const source = regex === null ? null : (req.subscribedTopicRegex ?? null);
      if (source !== m.subscribedTopicRegex) bump = true;
      m.subscribedTopicRegex = source;
      m.regex = regex;
    }
    if (req.serverAssignor !== null && req.serverAssignor !== m.serverAssignor) {
      m.serverAssignor = req.serverAssignor;
      bump = true;
    }
    if (req.memberEpoch === JOIN_EPOCH && !this.#replaced) bump = true;
    this.#replaced = false;
    // Subscribed topics created, deleted or given partitions: the target must follow.
    const fingerprint = this.#fingerprint(topics);
    if (fingerprint !== this.#metadataFingerprint) bump = true;
    if (bump) this.groupEpoch++;
    this.#assignIfNeeded();

    this.#reconcile(m, req.ownedPartitions);
    this.#touch(m);

    // The assignment travels when it changed, or when the member sent its full state (a join, or its owned partitions).
    const full = req.memberEpoch === JOIN_EPOCH || req.ownedPartitions !== null;
    const changed = !setEquals(before.assigned, m.assigned) || before.epoch !== m.memberEpoch;
    return {
      errorCode: GroupError.NONE,
      errorMessage: null,
      memberId: m.memberId,
      memberEpoch: m.memberEpoch,
      heartbeatIntervalMs: this.#timeouts.heartbeatIntervalMs,
      assignment: full || changed ? { topicPartitions: toTopicPartitions([...m.assigned].sort()) } : null,
    };
  }

  /** OffsetFetch v9+ by a member: an error code (Kafka's validateMemberEpoch: the member's current epoch only). */
  validateMemberEpoch(memberId: string, memberEpoch: number): number {
    const m = this.members.get(memberId);
    if (m === undefined || m.memberEpoch === STATIC_LEAVE_EPOCH) return GroupError.UNKNOWN_MEMBER_ID;
    return m.memberEpoch === memberEpoch ? GroupError.NONE : GroupError.STALE_MEMBER_EPOCH;
  }

  /**
   * OffsetCommit v9+ by a member: its current epoch, or an older one for partitions it was given at
   * or before that epoch and still holds (KIP-1251's assignment epochs: a commit sent just before
   * a heartbeat moved the member on is not refused); else STALE_MEMBER_EPOCH.
   */
  validateCommitEpoch(memberId: string, memberEpoch: number, partitions: ReadonlyArray<{ topic: string; partition: number }> | undefined): number {
    const m = this.members.get(memberId);
    if (m === undefined || m.memberEpoch === STATIC_LEAVE_EPOCH) return GroupError.UNKNOWN_MEMBER_ID;
    if (m.memberEpoch === memberEpoch) return GroupError.NONE;
    if (memberEpoch > m.memberEpoch || partitions === undefined) return GroupError.STALE_MEMBER_EPOCH;
    for (const { topic, partition } of partitions) {
      const id = this.#topics.get(topic)?.id;
      const at = id === undefined ? undefined : m.assignedAt.get(partitionKey(id, partition));
      if (at === undefined || at > memberEpoch) return GroupError.STALE_MEMBER_EPOCH;
    }
    return GroupError.NONE;
  }

  /** Stop every timer (the coordinator is closing). */
  shutdown(): void {
    for (const m of this.members.values()) this.#clearTimers(m);
  }

  /** Set when a static member took over a departed one's place: its join does not move the group epoch. */
  #replaced = false;

  #invalid(req: HeartbeatInput): string | null {
    if (req.instanceId !== null && req.instanceId === '') return 'InstanceId can\'t be empty.';
    if (req.rackId !== null && req.rackId === '') return 'RackId can\'t be empty.';
    if (req.memberEpoch < STATIC_LEAVE_EPOCH) return `MemberEpoch ${req.memberEpoch} is invalid.`;
    // v1 (KIP-1082): the member makes up its own id, so every request carries one.
    if (req.memberId === '' && (req.memberEpoch !== JOIN_EPOCH || req.version >= 1)) return 'MemberId can\'t be empty.';
    if (req.memberEpoch === JOIN_EPOCH) {
      if (req.rebalanceTimeoutMs === -1) return 'RebalanceTimeoutMs must be provided in first request.';
      if (req.ownedPartitions !== null && req.ownedPartitions.some((t) => t.partitions.length > 0)) return 'TopicPartitions must be empty when (re-)joining.';
      const regex = req.subscribedTopicRegex;
      if (req.subscribedTopicNames === null && (regex === undefined || regex === null)) return 'SubscribedTopicNames or SubscribedTopicRegex must be set in first request.';
    }
    if (req.memberEpoch === STATIC_LEAVE_EPOCH && req.instanceId === null) return 'InstanceId can\'t be null.';
    return null;
  }

  #join(req: HeartbeatInput): ConsumerMember | HeartbeatOutput {
    const memberId = req.memberId === '' ? randomUUID() : req.memberId;
    const existing = this.members.get(memberId);
    if (req.instanceId !== null) {
      const holderId = this.#staticMembers.get(req.instanceId);
      const holder = holderId === undefined ? undefined : this.members.get(holderId);
      if (holder !== undefined && holder.memberId !== memberId) {
        // Kafka's throwIfInstanceIdIsUnreleased: only a member that left with epoch -2 can be replaced.
        if (holder.memberEpoch !== STATIC_LEAVE_EPOCH) return fail(GroupError.UNRELEASED_INSTANCE_ID, `static member ${req.instanceId} is held by member ${holder.memberId}`, memberId);
        return this.#replace(holder, memberId, req.instanceId);
      }
    }
    if (existing !== undefined) {
      // A member rejoining under its own id (after a fence, or a lost response) starts over.
      this.#remove(existing, false);
    }
    const m = new ConsumerMember(memberId);
    m.instanceId = req.instanceId;
    if (req.instanceId !== null) this.#staticMembers.set(req.instanceId, memberId);
    this.members.set(memberId, m);
    return m;
  }

  /** A static member back under a new member id: it takes the departed member's place and partitions. */
  #replace(old: ConsumerMember, memberId: string, instanceId: string): ConsumerMember {
    this.#clearTimers(old);
    this.members.delete(old.memberId);
    const m = new ConsumerMember(memberId);
    m.instanceId = instanceId;
    m.subscribedTopicNames = old.subscribedTopicNames;
    m.subscribedTopicRegex = old.subscribedTopicRegex;
    m.regex = old.regex;
    m.serverAssignor = old.serverAssignor;
    m.rebalanceTimeoutMs = old.rebalanceTimeoutMs;
    m.assigned = old.assigned;
    m.pendingRevocation = old.pendingRevocation;
    m.assignedAt = old.assignedAt;
    m.state = old.state;
    m.memberEpoch = 0;
    for (const k of [...m.assigned, ...m.pendingRevocation]) this.#owners.set(k, memberId);
    const t = this.target.get(old.memberId);
    this.target.delete(old.memberId);
    if (t !== undefined) this.target.set(memberId, t);
    this.members.set(memberId, m);
    this.#staticMembers.set(instanceId, memberId);
    this.#replaced = true;
    return m;
  }

  #leave(req: HeartbeatInput): HeartbeatOutput {
    let m = this.members.get(req.memberId);
    if (m === undefined && req.instanceId !== null) {
      const id = this.#staticMembers.get(req.instanceId);
      m = id === undefined ? undefined : this.members.get(id);
    }
    if (m === undefined) return fail(GroupError.UNKNOWN_MEMBER_ID, `member ${req.memberId} is not in group ${this.groupId}`, req.memberId, req.memberEpoch);
    if (req.memberEpoch === STATIC_LEAVE_EPOCH) {
      // A static member leaving for a while: it keeps its partitions until its session expires.
      if (m.instanceId !== req.instanceId) return fail(GroupError.UNKNOWN_MEMBER_ID, `member ${req.memberId} is not static member ${req.instanceId}`, req.memberId, req.memberEpoch);
      m.memberEpoch = STATIC_LEAVE_EPOCH;
      if (m.revocationTimer !== null) clearTimeout(m.revocationTimer);
      this.#touch(m);
      return { errorCode: GroupError.NONE, errorMessage: null, memberId: m.memberId, memberEpoch: STATIC_LEAVE_EPOCH, heartbeatIntervalMs: 0, assignment: null };
    }
    this.#remove(m, true);
    return { errorCode: GroupError.NONE, errorMessage: null, memberId: req.memberId, memberEpoch: LEAVE_EPOCH, heartbeatIntervalMs: 0, assignment: null };
  }

  /**
   * Kafka's throwIfMemberEpochIsInvalid: the member's epoch, or its previous one when the answer
   * that moved it on was lost (and it owns no partition outside its assignment); else fenced.
   */
  #fenced(m: ConsumerMember, req: HeartbeatInput): string | null {
    if (req.memberEpoch === m.memberEpoch) return null;
    if (req.memberEpoch < m.memberEpoch && req.memberEpoch === m.previousMemberEpoch && req.ownedPartitions !== null) {
      const owned = req.ownedPartitions.flatMap((t) => t.partitions.map((p) => partitionKey(t.topicId, p)));
      if (owned.every((k) => m.assigned.has(k))) return null;
    }
    return `member ${m.memberId} sent epoch ${req.memberEpoch}; its epoch is ${m.memberEpoch}`;
  }

  #fingerprint(topics: TopicsSnapshot): string {
    const ids = new Set<string>();
    for (const m of this.members.values()) for (const id of this.subscribedTopicIds(m, topics)) ids.add(id);
    const parts: string[] = [];
    for (const t of topics.values()) if (ids.has(t.id)) parts.push(`${t.id}=${t.partitions}`);
    return parts.sort().join(',');
  }

  /** A new target when the group epoch moved past the assignment epoch. */
  #assignIfNeeded(): void {
    if (this.groupEpoch === this.assignmentEpoch) return;
    const partitions = new Map<string, number>();
    for (const t of this.#topics.values()) partitions.set(t.id, t.partitions);
    const members = [...this.members.values()].map((m) => ({ memberId: m.memberId, topics: this.subscribedTopicIds(m), current: this.target.get(m.memberId) ?? m.assigned }));
    const used = new Set<string>();
    for (const m of members) for (const id of m.topics) used.add(id);
    for (const id of [...partitions.keys()]) if (!used.has(id)) partitions.delete(id);
    const target = ASSIGNORS.get(this.assignorName)!({ members, partitions });
    this.target.clear();
    for (const [id, keys] of target) this.target.set(id, keys);
    this.assignmentEpoch = this.groupEpoch;
    this.#metadataFingerprint = this.#fingerprint(this.#topics);
  }

  /** Kafka's CurrentAssignmentBuilder: one step of a member toward its target. */
  #reconcile(m: ConsumerMember, owned: HeartbeatInput['ownedPartitions']): void {
    if (m.state === 'unrevoked') {
      if (owned === null) return;
      const ownedKeys = new Set(owned.flatMap((t) => t.partitions.map((p) => partitionKey(t.topicId, p))));
      if ([...m.pendingRevocation].some((k) => ownedKeys.has(k))) return;
      // Revoked: the partitions are free for their next owners.
      for (const k of m.pendingRevocation) {
        if (this.#owners.get(k) === m.memberId) this.#owners.delete(k);
        m.assignedAt.delete(k);
      }
      m.pendingRevocation.clear();
      if (m.revocationTimer !== null) clearTimeout(m.revocationTimer);
      m.revocationTimer = null;
      this.#next(m);
      return;
    }
    if (m.state === 'unreleased' || m.memberEpoch !== this.assignmentEpoch) this.#next(m);
  }

  #next(m: ConsumerMember): void {
    const target = this.target.get(m.memberId) ?? new Set<string>();
    const revoking = [...m.assigned].filter((k) => !target.has(k));
    if (revoking.length > 0) {
      for (const k of revoking) {
        m.assigned.delete(k);
        m.pendingRevocation.add(k);
      }
      m.state = 'unrevoked';
      if (m.revocationTimer !== null) clearTimeout(m.revocationTimer);
      m.revocationTimer = setTimeout(() => this.#expire(m, 'rebalance timeout'), m.rebalanceTimeoutMs);
      m.revocationTimer.unref();
      return;
    }
    let unreleased = false;
    for (const k of target) {
      if (m.assigned.has(k)) continue;
      const owner = this.#owners.get(k);
      if (owner === undefined || owner === m.memberId || !this.members.has(owner)) {
        this.#owners.set(k, m.memberId);
        m.assigned.add(k);
        m.assignedAt.set(k, this.assignmentEpoch);
      } else unreleased = true;
    }
    if (m.memberEpoch !== this.assignmentEpoch) {
      m.previousMemberEpoch = m.memberEpoch;
      m.memberEpoch = this.assignmentEpoch;
    }
    m.state = unreleased ? 'unreleased' : 'stable';
  }

  #touch(m: ConsumerMember): void {
    if (m.sessionTimer !== null) clearTimeout(m.sessionTimer);
    m.sessionTimer = setTimeout(() => this.#expire(m, 'session timeout'), this.#timeouts.sessionTimeoutMs);
    m.sessionTimer.unref();
  }

  #expire(m: ConsumerMember, why: string): void {
    if (this.members.get(m.memberId) !== m) return;
    this.#remove(m, true);
    this.#onExpired(m.memberId, why);
  }

  #clearTimers(m: ConsumerMember): void {
    if (m.sessionTimer !== null) clearTimeout(m.sessionTimer);
    if (m.revocationTimer !== null) clearTimeout(m.revocationTimer);
    m.sessionTimer = m.revocationTimer = null;
  }

  /** A member gone (left, fenced, expired): its partitions are free, the target is recomputed. */
  #remove(m: ConsumerMember, mayEmpty: boolean): void {
    this.#clearTimers(m);
    this.members.delete(m.memberId);
    this.target.delete(m.memberId);
    if (m.instanceId !== null && this.#staticMembers.get(m.instanceId) === m.memberId) this.#staticMembers.delete(m.instanceId);
    for (const [k, owner] of this.#owners) if (owner === m.memberId) this.#owners.delete(k);
    this.groupEpoch++;
    this.#assignIfNeeded();
    if (mayEmpty && this.members.size === 0) this.#onEmpty(this);
  }
}
