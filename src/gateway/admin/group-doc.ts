/**
 * What the admin API's `/admin/groups` shows of a group (docs/dashboard.md, docs/cli.md `svc
 * groups`): one shape for the three kinds — classic groups (JoinGroup/SyncGroup), consumer groups
 * of the KIP-848 protocol, and share groups (KIP-932, leased over Kafka or HTTP) — with the fields
 * a kind does not have set to null. The node builds it (the Kafka listener's coordinators, the
 * share groups' stored state); the admin API only serves it.
 */
import { type SharePartitionView, type ShareTotals } from '../../actors';

export type GroupKind = 'classic' | 'consumer' | 'share';

export interface TopicPartitions {
  topic: string;
  partitions: number[];
}

export interface GroupMemberDoc {
  memberId: string;
  /** Static membership's `group.instance.id`, or null. */
  instanceId: string | null;
  clientId: string;
  clientHost: string;
  /** Consumer and share groups: the member's epoch; classic: null. */
  memberEpoch: number | null;
  /** Consumer and share groups: the topics it subscribes to; classic: null (inside its opaque metadata). */
  subscribedTopics: string[] | null;
  /** The partitions it owns now (classic: as its leader's assignment gave them, for the `consumer` protocol type). */
  assignment: TopicPartitions[];
  /** Consumer groups: what the server's assignor means it to own (differs while a partition moves); else null. */
  targetAssignment: TopicPartitions[] | null;
}

/** A committed offset with the partition's end and the lag (end − committed; null when the partition is unknown). */
export interface GroupOffsetDoc {
  topic: string;
  partition: number;
  committed: number;
  end: number | null;
  lag: number | null;
}

/** A share partition with its Kafka topic and partition (null when the node runs no Kafka listener). */
export interface SharePartitionDoc extends Omit<SharePartitionView, 'kafkaTopic'> {
  topic: string | null;
  partition: number | null;
}

export interface ShareGroupDoc {
  partitions: SharePartitionDoc[];
  /** Sums over the partitions. */
  inFlight: number;
  redeliveryPending: number;
  lag: number;
  totals: ShareTotals;
}

export interface GroupDoc {
  groupId: string;
  kind: GroupKind;
  /** Kafka's state names: classic Empty, PreparingRebalance, CompletingRebalance, Stable, Dead; consumer and share Empty, Assigning, Reconciling, Stable. */
  state: string;
  /** Classic: the members' protocol type (`consumer`, `connect`, …); consumer: `consumer`; share: `share`. */
  protocolType: string;
  /** Classic: the chosen assignor while Stable; consumer and share: the server's assignor. */
  protocolName: string;
  /** Consumer and share groups: the group epoch; classic: the generation (null while none). */
  groupEpoch: number | null;
  /** The node that coordinates the group; members and state are that node's (another node lists the group as its store knows it, with no members). */
  coordinator: number | null;
  coordinatedHere: boolean;
  members: GroupMemberDoc[];
  /** Classic and consumer groups: committed offsets; share groups: none. */
  offsets: GroupOffsetDoc[];
  /** Share groups: their partitions' delivery state; else null. */
  share: ShareGroupDoc | null;
}

/** What the node's Kafka listener tells the admin API about groups. `only`: just that group (none when unknown). */
export interface GroupsSource {
  groups(only?: string): Promise<GroupDoc[]>;
}
