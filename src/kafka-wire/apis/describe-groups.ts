/**
 * DescribeGroups (key 15), v0–5: state, protocol and members of each classic group. Member
 * metadata and assignments are shown while the group is Stable (Kafka shows them only then). A
 * group nobody knows, a group of the consumer group protocol and a share group are Dead with no
 * error and no protocol type, as Kafka 4.x answers below v6 (v6, not served here, says
 * GROUP_ID_NOT_FOUND "Group … is not a classic group."): each of the other kinds is described by
 * its own API (ConsumerGroupDescribe, ShareGroupDescribe). Authorized operations (v3+) are not computed.
 */
import { type DescribeGroupsRequest, type DescribeGroupsResponse, DESCRIBE_GROUPS, decodeDescribeGroupsRequest, encodeDescribeGroupsResponse } from '../messages/describe-groups';
import { type ApiHandler } from '../handler';
import { GroupError } from '../groups';
import { isShareGroup } from './share-group-kind';

/** "Not computed" in Kafka's AuthorizedOperations (-2^31). */
const NO_OPERATIONS = -2147483648;

export const DESCRIBE_GROUPS_HANDLER: ApiHandler<DescribeGroupsRequest, DescribeGroupsResponse> = {
  api: DESCRIBE_GROUPS,
  decode: decodeDescribeGroupsRequest,
  encode: encodeDescribeGroupsResponse,
  async handle(ctx, req) {
    const now = Date.now();
    return {
      throttleTimeMs: 0,
      groups: req.groups.map((id) => {
        if (id === '') return { errorCode: GroupError.INVALID_GROUP_ID, groupId: id, groupState: '', protocolType: '', protocolData: '', members: [], authorizedOperations: NO_OPERATIONS };
        const notClassic = { errorCode: GroupError.NONE, groupId: id, groupState: 'Dead', protocolType: '', protocolData: '', members: [], authorizedOperations: NO_OPERATIONS };
        if (ctx.groups.groupType(id) === 'consumer') return notClassic;
        if (isShareGroup(ctx, id, now)) return notClassic;
        const s = ctx.groups.describe(id);
        return {
          errorCode: GroupError.NONE,
          groupId: id,
          groupState: s.state,
          protocolType: s.protocolType,
          protocolData: s.protocolName,
          members: s.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost, memberMetadata: m.metadata, memberAssignment: m.assignment })),
          authorizedOperations: NO_OPERATIONS,
        };
      }),
    };
  },
};
