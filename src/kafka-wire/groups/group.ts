/**
 * One classic consumer group (Kafka's group protocol before KIP-848) and its state machine:
 *
 *            join (new member)                 every member rejoined,            leader's SyncGroup
 *   Empty ─────────────────────▶ Preparing ──── or rebalance timeout ──▶ Completing ─────────────▶ Stable
 *     ▲                          Rebalance      (stragglers removed)      Rebalance                  │
 *     │  last member gone           ▲  ▲                                      │                      │
 *     └─────────────────────────────┘  └── a member joins, leaves, changes its protocols, or its ────┘
 *                                          session times out (pending SyncGroups: REBALANCE_IN_PROGRESS)
 *
 * Each completed join round is a new generation; SyncGroup, Heartbeat and OffsetCommit from an
 * older generation are fenced with ILLEGAL_GENERATION, from an unknown member with
 * UNKNOWN_MEMBER_ID. Assignors run in the clients: the leader gets every member's metadata in its
 * JoinGroup answer and sends the assignments in its SyncGroup, which this group hands out.
 * A member's session timer restarts with each request of it; a member waiting in JoinGroup is
 * bounded by the rebalance timeout instead (Kafka does the same).
 */
import { randomUUID } from 'node:crypto';
import { type Logger } from '../../log';
import { GroupError } from './errors';
import { type JoinRequest, type JoinResult, Member, type MemberProtocol, type SyncResult } from './member';

export type GroupState = 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable' | 'Dead';

const NO_ASSIGNMENT: Buffer = Buffer.alloc(0);

export class Group {
  readonly groupId: string;
  state: GroupState = 'Empty';
  generationId = 0;
  protocolType: string | null = null;
  protocolName: string | null = null;
  leaderId: string | null = null;
  readonly members = new Map<string, Member>();
  #rebalanceTimer: NodeJS.Timeout | null = null;
  readonly #log: Logger;
  readonly #onGeneration: (g: Group) => void;
  readonly #onEmpty: (g: Group) => void;

  /** `onGeneration` runs when a generation with members starts, `onEmpty` when the last member is gone. */
  constructor(groupId: string, log: Logger, onGeneration: (g: Group) => void, onEmpty: (g: Group) => void) {
    this.groupId = groupId;
    this.#log = log;
    this.#onGeneration = onGeneration;
    this.#onEmpty = onEmpty;
  }

  /** JoinGroup: resolves when the join round this request is part of completes. */
  join(req: JoinRequest): Promise<JoinResult> {
    const fail = (errorCode: number, memberId = req.memberId): Promise<JoinResult> =>
      Promise.resolve({ errorCode, generationId: -1, protocolType: null, protocolName: null, leader: '', memberId, members: [] });
    if (this.state === 'Dead') return fail(GroupError.COORDINATOR_NOT_AVAILABLE);
    if (!this.#supports(req.protocolType, req.protocols)) return fail(GroupError.INCONSISTENT_GROUP_PROTOCOL);
    if (req.memberId === '') {
      // A member id at once, not MEMBER_ID_REQUIRED and a second round trip: all three clients accept it.
      const member = new Member(`${req.clientId || 'member'}-${randomUUID()}`, req);
      if (this.members.size === 0) this.protocolType = req.protocolType;
      this.members.set(member.memberId, member);
      const joined = this.#awaitJoin(member);
      this.#prepareRebalance(`member ${member.memberId} joined`);
      return joined;
    }
    const member = this.members.get(req.memberId);
    if (member === undefined) return fail(GroupError.UNKNOWN_MEMBER_ID);
    const changed = !member.sameProtocols(req.protocols);
    member.update(req);
    if (this.state === 'PreparingRebalance') {
      const joined = this.#awaitJoin(member);
      this.#maybeCompleteJoin();
      return joined;
    }
    // A rejoin without changes in a settled generation (a lost JoinGroup answer): the same answer again.
    if (!changed && (this.state === 'CompletingRebalance' || (this.state === 'Stable' && member.memberId !== this.leaderId))) {
      this.#touch(member);
      return Promise.resolve(this.#joinResult(member));
    }
    const joined = this.#awaitJoin(member);
    this.#prepareRebalance(changed ? `member ${member.memberId} changed its protocols` : `leader ${member.memberId} rejoined`);
    return joined;
  }

  /** SyncGroup: the leader's call distributes the assignments; the others wait for it. */
  sync(memberId: string, generationId: number, protocolType: string | null, protocolName: string | null, assignments: ReadonlyArray<{ memberId: string; assignment: Buffer }>): Promise<SyncResult> {
    const answer = (errorCode: number, assignment = NO_ASSIGNMENT): SyncResult => ({ errorCode, protocolType: this.protocolType, protocolName: this.protocolName, assignment });
    if (this.state === 'Dead') return Promise.resolve(answer(GroupError.COORDINATOR_NOT_AVAILABLE));
    const member = this.members.get(memberId);
    if (member === undefined) return Promise.resolve(answer(GroupError.UNKNOWN_MEMBER_ID));
    if (generationId !== this.generationId) return Promise.resolve(answer(GroupError.ILLEGAL_GENERATION));
    if ((protocolType !== null && protocolType !== this.protocolType) || (protocolName !== null && protocolName !== this.protocolName)) {
      return Promise.resolve(answer(GroupError.INCONSISTENT_GROUP_PROTOCOL));
    }
    this.#touch(member);
    if (this.state === 'PreparingRebalance') return Promise.resolve(answer(GroupError.REBALANCE_IN_PROGRESS));
    if (this.state === 'Stable') return Promise.resolve(answer(GroupError.NONE, member.assignment));
    // CompletingRebalance
    const synced = new Promise<SyncResult>((resolve) => {
      member.awaitingSync?.(answer(GroupError.REBALANCE_IN_PROGRESS));
      member.awaitingSync = resolve;
    });
    if (memberId === this.leaderId) {
      for (const m of this.members.values()) m.assignment = NO_ASSIGNMENT;
      for (const a of assignments) {
        const m = this.members.get(a.memberId);
        if (m !== undefined) m.assignment = Buffer.from(a.assignment);
      }
      this.state = 'Stable';
      for (const m of this.members.values()) {
        const resolve = m.awaitingSync;
        m.awaitingSync = null;
        resolve?.(answer(GroupError.NONE, m.assignment));
      }
    }
    return synced;
  }

  heartbeat(memberId: string, generationId: number): number {
    if (this.state === 'Dead') return GroupError.COORDINATOR_NOT_AVAILABLE;
    const member = this.members.get(memberId);
    if (member === undefined) return GroupError.UNKNOWN_MEMBER_ID;
    if (generationId !== this.generationId) return GroupError.ILLEGAL_GENERATION;
    this.#touch(member);
    return this.state === 'PreparingRebalance' ? GroupError.REBALANCE_IN_PROGRESS : GroupError.NONE;
  }

  /** LeaveGroup of one member: its error code. */
  leave(memberId: string): number {
    if (this.state === 'Dead') return GroupError.COORDINATOR_NOT_AVAILABLE;
    const member = this.members.get(memberId);
    if (member === undefined) return GroupError.UNKNOWN_MEMBER_ID;
    this.#remove(member, 'left the group');
    return GroupError.NONE;
  }

  /** Whether an OffsetCommit from (memberId, generationId) may commit: its error code. */
  validateCommit(memberId: string, generationId: number): number {
    if (this.state === 'Dead') return GroupError.COORDINATOR_NOT_AVAILABLE;
    // Generation -1 and no member id: a client committing outside group management (or an admin tool), allowed while nobody is a member.
    if (generationId < 0 && memberId === '') return this.state === 'Empty' ? GroupError.NONE : GroupError.UNKNOWN_MEMBER_ID;
    const member = this.members.get(memberId);
    if (member === undefined) return GroupError.UNKNOWN_MEMBER_ID;
    if (generationId !== this.generationId) return GroupError.ILLEGAL_GENERATION;
    // The member has its JoinGroup answer but not its assignment yet: it may not commit for partitions it may lose.
    if (this.state === 'CompletingRebalance') return GroupError.REBALANCE_IN_PROGRESS;
    this.#touch(member);
    return GroupError.NONE;
  }

  /** The coordinator is going away: answer every waiting request and stop the timers. */
  shutdown(errorCode: number): void {
    this.state = 'Dead';
    this.#clearRebalanceTimer();
    for (const m of this.members.values()) {
      if (m.sessionTimer !== null) clearTimeout(m.sessionTimer);
      m.awaitingJoin?.({ errorCode, generationId: -1, protocolType: null, protocolName: null, leader: '', memberId: m.memberId, members: [] });
      m.awaitingSync?.({ errorCode, protocolType: null, protocolName: null, assignment: NO_ASSIGNMENT });
      m.awaitingJoin = m.awaitingSync = null;
    }
  }

  #supports(protocolType: string, protocols: ReadonlyArray<MemberProtocol>): boolean {
    if (protocolType === '' || protocols.length === 0) return false;
    if (this.members.size === 0) return true;
    return protocolType === this.protocolType && this.#candidates().some((name) => protocols.some((p) => p.name === name));
  }

  /** Protocols every member supports. */
  #candidates(): string[] {
    let names: string[] | null = null;
    for (const m of this.members.values()) {
      const own = m.protocols.map((p) => p.name);
      names = names === null ? own : names.filter((n) => own.includes(n));
    }
    return names ?? [];
  }

  /** Kafka's choice: each member votes for the first protocol it lists among the common ones; most votes wins. */
  #selectProtocol(): string {
    const common = this.#candidates();
    const votes = new Map<string, number>();
    for (const m of this.members.values()) {
      const pick = m.protocols.find((p) => common.includes(p.name))!.name;
      votes.set(pick, (votes.get(pick) ?? 0) + 1);
    }
    return [...votes.entries()].reduce((a, b) => (b[1] > a[1] ? b : a))[0];
  }

  #awaitJoin(member: Member): Promise<JoinResult> {
    return new Promise<JoinResult>((resolve) => {
      // A second JoinGroup of one member (another connection) supersedes the first.
      member.awaitingJoin?.({ errorCode: GroupError.REBALANCE_IN_PROGRESS, generationId: -1, protocolType: null, protocolName: null, leader: '', memberId: member.memberId, members: [] });
      member.awaitingJoin = resolve;
      this.#touch(member);
    });
  }

  #prepareRebalance(reason: string): void {
    if (this.state === 'CompletingRebalance') {
      for (const m of this.members.values()) {
        const resolve = m.awaitingSync;
        m.awaitingSync = null;
        resolve?.({ errorCode: GroupError.REBALANCE_IN_PROGRESS, protocolType: this.protocolType, protocolName: this.protocolName, assignment: NO_ASSIGNMENT });
      }
    }
    if (this.state !== 'PreparingRebalance') {
      this.#log.info({ group: this.groupId, generation: this.generationId, reason }, 'group rebalance');
      this.state = 'PreparingRebalance';
      this.#clearRebalanceTimer();
      const timeout = Math.max(0, ...[...this.members.values()].map((m) => m.rebalanceTimeoutMs));
      this.#rebalanceTimer = setTimeout(() => this.#completeJoin(), timeout);
    }
    this.#maybeCompleteJoin();
  }

  #maybeCompleteJoin(): void {
    if (this.state !== 'PreparingRebalance') return;
    for (const m of this.members.values()) if (m.awaitingJoin === null) return;
    this.#completeJoin();
  }

  /** End the join round: members that did not rejoin are out; a new generation starts. */
  #completeJoin(): void {
    if (this.state !== 'PreparingRebalance') return;
    this.#clearRebalanceTimer();
    for (const m of [...this.members.values()]) if (m.awaitingJoin === null) this.#drop(m);
    this.generationId++;
    if (this.members.size === 0) {
      this.state = 'Empty';
      this.protocolName = null;
      this.leaderId = null;
      this.#log.info({ group: this.groupId, generation: this.generationId }, 'group empty');
      this.#onEmpty(this);
      return;
    }
    this.protocolName = this.#selectProtocol();
    if (this.leaderId === null || !this.members.has(this.leaderId)) this.leaderId = this.members.keys().next().value!;
    this.state = 'CompletingRebalance';
    this.#log.info({ group: this.groupId, generation: this.generationId, members: this.members.size, protocol: this.protocolName }, 'group generation');
    for (const m of this.members.values()) {
      m.assignment = NO_ASSIGNMENT;
      const resolve = m.awaitingJoin!;
      m.awaitingJoin = null;
      this.#touch(m);
      resolve(this.#joinResult(m));
    }
    this.#onGeneration(this);
  }

  #joinResult(m: Member): JoinResult {
    const leader = this.leaderId ?? '';
    const members = m.memberId === leader ? [...this.members.values()].map((x) => ({ memberId: x.memberId, groupInstanceId: x.groupInstanceId, metadata: x.metadataFor(this.protocolName!) })) : [];
    return { errorCode: GroupError.NONE, generationId: this.generationId, protocolType: this.protocolType, protocolName: this.protocolName, leader, memberId: m.memberId, members };
  }

  /** Restart a member's session timer. */
  #touch(m: Member): void {
    if (m.sessionTimer !== null) clearTimeout(m.sessionTimer);
    m.sessionTimer = setTimeout(() => {
      m.sessionTimer = null;
      // Waiting in JoinGroup: the rebalance timeout bounds it, not the session.
      if (m.awaitingJoin !== null || this.members.get(m.memberId) !== m) return;
      this.#remove(m, `session timed out after ${m.sessionTimeoutMs} ms`);
    }, m.sessionTimeoutMs);
  }

  /** Take a member out and rebalance the others. */
  #remove(m: Member, reason: string): void {
    this.#drop(m);
    if (this.state === 'Stable' || this.state === 'CompletingRebalance') this.#prepareRebalance(`member ${m.memberId} ${reason}`);
    else this.#maybeCompleteJoin();
  }

  #drop(m: Member): void {
    if (m.sessionTimer !== null) clearTimeout(m.sessionTimer);
    m.sessionTimer = null;
    this.members.delete(m.memberId);
    m.awaitingJoin?.({ errorCode: GroupError.UNKNOWN_MEMBER_ID, generationId: -1, protocolType: null, protocolName: null, leader: '', memberId: m.memberId, members: [] });
    m.awaitingSync?.({ errorCode: GroupError.REBALANCE_IN_PROGRESS, protocolType: this.protocolType, protocolName: this.protocolName, assignment: NO_ASSIGNMENT });
    m.awaitingJoin = m.awaitingSync = null;
    if (this.leaderId === m.memberId) this.leaderId = null;
  }

  #clearRebalanceTimer(): void {
    if (this.#rebalanceTimer !== null) clearTimeout(this.#rebalanceTimer);
    this.#rebalanceTimer = null;
  }
}
