/**
 * Share sessions (KIP-932, ShareFetch and ShareAcknowledge): per (group, member) on the node the
 * member fetches from, the partitions it fetches and the epoch its next request must carry.
 *
 *   ShareSessionEpoch 0   open a session (one already open for the member is replaced)
 *   ShareSessionEpoch n   the session's next epoch, else INVALID_SHARE_SESSION_EPOCH; then n + 1
 *   ShareSessionEpoch -1  the last request: acknowledgements only; the session closes after it
 *   no session open       SHARE_SESSION_NOT_FOUND (for any epoch but 0)
 *
 * Closing a session (epoch -1, the member leaving its group or expiring) gives back every lock
 * the member still holds on the partitions it fetched, as a release of each (the owner does it:
 * share-partitions.ts). Sessions are in memory: after a restart a member gets
 * SHARE_SESSION_NOT_FOUND and opens a new one; its locks end at their deadline.
 */
import { KafkaError } from '../error-codes';

/** A partition a session fetches: the topic id and index the client names, and its stream. */
export interface SessionPartition {
  topicId: string;
  partition: number;
  /** The partition's bytes budget of the request that added it (0: acknowledge only). */
  maxBytes: number;
}

export interface ShareSession {
  readonly groupId: string;
  readonly memberId: string;
  /** The epoch the next request must carry. */
  nextEpoch: number;
  /** `topicId:partition` → the partition. */
  readonly partitions: Map<string, SessionPartition>;
  /** Streams this member acquired records from through the session (whose locks a close gives back). */
  readonly streams: Set<string>;
}

export type SessionCheck = { session: ShareSession; closing: boolean } | { error: number; message: string };

export const partitionKey = (topicId: string, partition: number): string => `${topicId}:${partition}`;
const sessionKey = (groupId: string, memberId: string): string => `${groupId}\u0000${memberId}`;

/** The epoch after `e`: wraps from 2^31-1 to 1 (0 and -1 are reserved). */
const after = (e: number): number => (e >= 0x7fff_ffff ? 1 : e + 1);

/** Most sessions open at once on a node; opening one more refuses the request. */
export const MAX_SHARE_SESSIONS = 10_000;

export class ShareSessions {
  readonly #sessions = new Map<string, ShareSession>();

  get size(): number {
    return this.#sessions.size;
  }

  /**
   * Check a request's epoch against the member's session (opening one at 0) and move the session
   * to its next epoch. `canOpen` false (ShareAcknowledge): epoch 0 is INVALID_SHARE_SESSION_EPOCH.
   */
  check(groupId: string, memberId: string, epoch: number, canOpen: boolean): SessionCheck {
    const key = sessionKey(groupId, memberId);
    const s = this.#sessions.get(key);
    if (epoch === 0) {
      if (!canOpen) return { error: KafkaError.INVALID_SHARE_SESSION_EPOCH, message: 'ShareAcknowledge can not open a share session (epoch 0)' };
      if (s === undefined && this.#sessions.size >= MAX_SHARE_SESSIONS) return { error: KafkaError.SHARE_SESSION_NOT_FOUND, message: `no room for a share session: ${MAX_SHARE_SESSIONS} are open on this broker` };
      const fresh: ShareSession = { groupId, memberId, nextEpoch: 1, partitions: new Map(), streams: new Set(s?.streams ?? []) };
      this.#sessions.set(key, fresh);
      return { session: fresh, closing: false };
    }
    if (s === undefined) return { error: KafkaError.SHARE_SESSION_NOT_FOUND, message: `no share session of member ${memberId} in group ${groupId}` };
    if (epoch === -1) return { session: s, closing: true };
    if (epoch !== s.nextEpoch) return { error: KafkaError.INVALID_SHARE_SESSION_EPOCH, message: `share session epoch ${epoch} is not ${s.nextEpoch}` };
    s.nextEpoch = after(s.nextEpoch);
    return { session: s, closing: false };
  }

  /** Forget the member's session: the streams whose locks it may still hold (empty when none was open). */
  close(groupId: string, memberId: string): Set<string> {
    const key = sessionKey(groupId, memberId);
    const s = this.#sessions.get(key);
    this.#sessions.delete(key);
    return s?.streams ?? new Set();
  }
}
