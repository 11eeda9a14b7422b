/**
 * The group APIs spoken with the project's own codecs over RawKafka, for protocol checks the
 * real clients cannot be made to do (a stale generation, a member that stops heartbeating).
 */
import { type ApiVersionsResponse, decodeApiVersionsResponse, encodeApiVersionsRequest } from '../../src/kafka-wire/messages/api-versions';
import { type ConsumerGroupDescribeResponse, decodeConsumerGroupDescribeResponse, encodeConsumerGroupDescribeRequest } from '../../src/kafka-wire/messages/consumer-group-describe';
import {
  type ConsumerGroupHeartbeatRequest,
  type ConsumerGroupHeartbeatResponse,
  decodeConsumerGroupHeartbeatResponse,
  encodeConsumerGroupHeartbeatRequest,
} from '../../src/kafka-wire/messages/consumer-group-heartbeat';
import { decodeCreateTopicsResponse, encodeCreateTopicsRequest } from '../../src/kafka-wire/messages/create-topics';
import { type DescribeGroupsResponse, decodeDescribeGroupsResponse, encodeDescribeGroupsRequest } from '../../src/kafka-wire/messages/describe-groups';
import { type FindCoordinatorResponse, decodeFindCoordinatorResponse, encodeFindCoordinatorRequest } from '../../src/kafka-wire/messages/find-coordinator';
import { decodeHeartbeatResponse, encodeHeartbeatRequest } from '../../src/kafka-wire/messages/heartbeat';
import { type JoinGroupResponse, decodeJoinGroupResponse, encodeJoinGroupRequest } from '../../src/kafka-wire/messages/join-group';
import { type LeaveGroupResponse, decodeLeaveGroupResponse, encodeLeaveGroupRequest } from '../../src/kafka-wire/messages/leave-group';
import { type OffsetCommitResponse, decodeOffsetCommitResponse, encodeOffsetCommitRequest } from '../../src/kafka-wire/messages/offset-commit';
import { type OffsetFetchRequest, type OffsetFetchResponse, decodeOffsetFetchResponse, encodeOffsetFetchRequest } from '../../src/kafka-wire/messages/offset-fetch';
import { type SyncGroupResponse, decodeSyncGroupResponse, encodeSyncGroupRequest } from '../../src/kafka-wire/messages/sync-group';
import { RawKafka } from './kafka-test-client';

export interface JoinOptions {
  memberId?: string;
  sessionTimeoutMs?: number;
  protocolType?: string;
  protocols?: Array<{ name: string; metadata: Buffer }>;
  version?: number;
}

/** One connection speaking the group APIs (flexible versions where the version is). */
export class GroupWire {
  private constructor(readonly k: RawKafka) {}

  static async connect(broker: string): Promise<GroupWire> {
    return new GroupWire(await RawKafka.connect(broker));
  }

  close(): void {
    this.k.close();
  }

  async createTopic(name: string, partitions: number): Promise<number> {
    const r = await this.k.request(19, 7, true, (w) => encodeCreateTopicsRequest(w, { topics: [{ name, numPartitions: partitions, replicationFactor: -1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false }, 7));
    return decodeCreateTopicsResponse(r, 7).topics[0]!.errorCode;
  }

  async findCoordinator(version: number, key: string, keyType = 0): Promise<FindCoordinatorResponse> {
    const r = await this.k.request(10, version, version >= 3, (w) => encodeFindCoordinatorRequest(w, version >= 4 ? { keyType, coordinatorKeys: [key] } : { key, keyType }, version));
    return decodeFindCoordinatorResponse(r, version);
  }

  async join(group: string, o: JoinOptions = {}): Promise<JoinGroupResponse> {
    const version = o.version ?? 9;
    const r = await this.k.request(11, version, version >= 6, (w) =>
      encodeJoinGroupRequest(w, {
        groupId: group,
        sessionTimeoutMs: o.sessionTimeoutMs ?? 10_000,
        rebalanceTimeoutMs: 10_000,
        memberId: o.memberId ?? '',
        groupInstanceId: null,
        protocolType: o.protocolType ?? 'consumer',
        protocols: o.protocols ?? [{ name: 'range', metadata: Buffer.from('meta') }],
        reason: null,
      }, version),
    );
    return decodeJoinGroupResponse(r, version);
  }

  async sync(group: string, memberId: string, generationId: number, assignments: Array<{ memberId: string; assignment: Buffer }> = [], version = 5): Promise<SyncGroupResponse> {
    const r = await this.k.request(14, version, version >= 4, (w) =>
      encodeSyncGroupRequest(w, { groupId: group, generationId, memberId, groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments }, version),
    );
    return decodeSyncGroupResponse(r, version);
  }

  async heartbeat(group: string, memberId: string, generationId: number, version = 4): Promise<number> {
    const r = await this.k.request(12, version, version >= 4, (w) => encodeHeartbeatRequest(w, { groupId: group, generationId, memberId, groupInstanceId: null }, version));
    return decodeHeartbeatResponse(r, version).errorCode;
  }

  async leave(group: string, memberId: string, version = 5): Promise<LeaveGroupResponse> {
    const r = await this.k.request(13, version, version >= 4, (w) =>
      encodeLeaveGroupRequest(w, version >= 3 ? { groupId: group, members: [{ memberId, groupInstanceId: null, reason: null }] } : { groupId: group, memberId }, version),
    );
    return decodeLeaveGroupResponse(r, version);
  }

  async commit(group: string, memberId: string, generationId: number, topic: string, offsets: Array<[number, bigint]>, version = 8): Promise<OffsetCommitResponse> {
    const r = await this.k.request(8, version, version >= 8, (w) =>
      encodeOffsetCommitRequest(w, {
        groupId: group,
        generationIdOrMemberEpoch: generationId,
        memberId,
        groupInstanceId: null,
        retentionTimeMs: -1n,
        topics: [{ name: topic, partitions: offsets.map(([p, o]) => ({ partitionIndex: p, committedOffset: o, committedLeaderEpoch: -1, committedMetadata: `m${p}` })) }],
      }, version),
    );
    return decodeOffsetCommitResponse(r, version);
  }

  /** Error codes of a commit, one per partition in order. */
  async commitErrors(group: string, memberId: string, generationId: number, topic: string, offsets: Array<[number, bigint]>): Promise<number[]> {
    return (await this.commit(group, memberId, generationId, topic, offsets)).topics[0]!.partitions.map((p) => p.errorCode);
  }

  async apiVersions(): Promise<ApiVersionsResponse> {
    // ApiVersions answers with response header v0 even in its flexible versions (KIP-511).
    const r = await this.k.request(18, 3, true, (w) => encodeApiVersionsRequest(w, { clientSoftwareName: 'svc-test', clientSoftwareVersion: '1' }, 3), 0);
    return decodeApiVersionsResponse(r, 3);
  }

  /** ConsumerGroupHeartbeat (KIP-848); fields left out take their "unchanged" values. */
  async cgHeartbeat(req: Partial<ConsumerGroupHeartbeatRequest> & { groupId: string; memberId: string; memberEpoch: number }, version = 1): Promise<ConsumerGroupHeartbeatResponse> {
    const full: ConsumerGroupHeartbeatRequest = { instanceId: null, rackId: null, rebalanceTimeoutMs: -1, subscribedTopicNames: null, subscribedTopicRegex: null, serverAssignor: null, topicPartitions: null, ...req };
    const r = await this.k.request(68, version, true, (w) => encodeConsumerGroupHeartbeatRequest(w, full, version));
    return decodeConsumerGroupHeartbeatResponse(r, version);
  }

  /** DescribeGroups (the classic groups' describe), v5. */
  async describeGroups(groups: string[]): Promise<DescribeGroupsResponse> {
    const r = await this.k.request(15, 5, true, (w) => encodeDescribeGroupsRequest(w, { groups, includeAuthorizedOperations: false }, 5));
    return decodeDescribeGroupsResponse(r, 5);
  }

  async cgDescribe(groupIds: string[]): Promise<ConsumerGroupDescribeResponse> {
    const r = await this.k.request(69, 0, true, (w) => encodeConsumerGroupDescribeRequest(w, { groupIds, includeAuthorizedOperations: false }, 0));
    return decodeConsumerGroupDescribeResponse(r, 0);
  }

  /** Error codes of an OffsetCommit v9 (a consumer-protocol member's: the generation is its member epoch). */
  async commitErrors9(group: string, memberId: string, memberEpoch: number, topic: string, offsets: Array<[number, bigint]>): Promise<number[]> {
    return (await this.commit(group, memberId, memberEpoch, topic, offsets, 9)).topics[0]!.partitions.map((p) => p.errorCode);
  }

  async fetchOffsets(req: OffsetFetchRequest, version: number): Promise<OffsetFetchResponse> {
    const r = await this.k.request(9, version, version >= 6, (w) => encodeOffsetFetchRequest(w, req, version));
    return decodeOffsetFetchResponse(r, version);
  }
}
