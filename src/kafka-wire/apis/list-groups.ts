/**
 * ListGroups (key 16), v0–5: every live group and every group known from committed offsets
 * (Empty). v4 filters by state, v5 by type ("classic", or "consumer": the consumer group
 * protocol, KIP-848); both filters compare case-insensitively, as Kafka does.
 */
import { type ListGroupsRequest, type ListGroupsResponse, LIST_GROUPS, decodeListGroupsRequest, encodeListGroupsResponse } from '../messages/list-groups';
import { type ApiHandler } from '../handler';
import { GroupError } from '../groups';

export const LIST_GROUPS_HANDLER: ApiHandler<ListGroupsRequest, ListGroupsResponse> = {
  api: LIST_GROUPS,
  decode: decodeListGroupsRequest,
  encode: encodeListGroupsResponse,
  async handle(ctx, req) {
    const states = (req.statesFilter ?? []).map((s) => s.toLowerCase());
    const types = (req.typesFilter ?? []).map((s) => s.toLowerCase());
    const groups = ctx.groups
      .list()
      .filter((g) => g.state !== 'Dead' && (states.length === 0 || states.includes(g.state.toLowerCase())) && (types.length === 0 || types.includes(g.groupType)))
      .map((g) => ({ groupId: g.groupId, protocolType: g.protocolType, groupState: g.state, groupType: g.groupType }));
    return { throttleTimeMs: 0, errorCode: GroupError.NONE, groups };
  },
};
