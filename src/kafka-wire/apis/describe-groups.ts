/**
 * DescribeGroups (key 15), v0–5: state, protocol and members of each group. Member metadata and
 * assignments are shown while the group is Stable (Kafka shows them only then); a group nobody
 * knows is Dead with no error, as Kafka answers; a group of the consumer group protocol or a share
 * group is GROUP_ID_NOT_FOUND (each is described by its own API: ConsumerGroupDescribe,
 * ShareGroupDescribe). Authorized operations (v3+) are not computed.
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
        const notFound = { errorCode: GroupError.GROUP_ID_NOT_FOUND, groupId: id, groupState: '', protocolType: '', protocolData: '', members: [], authorizedOperations: NO_OPERATIONS };
        if (ctx.groups.groupType(id) === 'consumer') return notFound;
        if (isShareGroup(ctx, id, now)) return notFound;
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
