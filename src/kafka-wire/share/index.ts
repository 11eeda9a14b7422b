/**
 * Share groups on the Kafka listener (KIP-932): membership (share-groups.ts), share sessions
 * (share-sessions.ts) and the records of share partitions (share-partitions.ts, over the
 * control plane's ShareStates that the Svc listener's `/_share/{stream}` also uses).
 * docs/kafka.md, "Share groups".
 */
import { type ShareStates } from '../../actors';
import { type Logger } from '../../log';
import { type ShardClient } from '../../shards';
import { KafkaSharePartitions } from './share-partitions';
import { ShareGroups } from './share-groups';
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
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  coordinates: (groupId: string) => boolean;
  /** Whether the id belongs to a classic or consumer group. */
  otherKind: (groupId: string) => boolean;
}

/** What the share-group APIs see: the groups, the sessions and the partitions. */
export class KafkaShare {
  readonly groups: ShareGroups;
  readonly sessions = new ShareSessions();
  readonly partitions: KafkaSharePartitions;
  readonly #log: Logger;

  constructor(o: KafkaShareOptions) {
    this.#log = o.log;
    this.partitions = new KafkaSharePartitions(o.shards, o.states, o.pageBytes);
    this.groups = new ShareGroups({
      sessionTimeoutMs: o.sessionTimeoutMs,
      heartbeatIntervalMs: o.heartbeatIntervalMs,
      coordinates: o.coordinates,
      otherKind: o.otherKind,
      onGone: (groupId, memberId) => void this.closeSession(groupId, memberId),
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
