/**
 * ListGroups (key 16), v0–5: every live group and every group known from committed offsets
 * (Empty). v4 filters by state, v5 by type (all groups here are "classic", the pre-KIP-848
 * protocol); both filters compare case-insensitively, as Kafka does.
 */
import { type ListGroupsRequest, type ListGroupsResponse, LIST_GROUPS, decodeListGroupsRequest, encodeListGroupsResponse } from '../messages/list-groups';
import { type ApiHandler } from '../handler';
import { GroupError } from '../groups';

const GROUP_TYPE = 'classic';

export const LIST_GROUPS_HANDLER: ApiHandler<ListGroupsRequest, ListGroupsResponse> = {
  api: LIST_GROUPS,
  decode: decodeListGroupsRequest,
  encode: encodeListGroupsResponse,
  async handle(ctx, req) {
    const states = (req.statesFilter ?? []).map((s) => s.toLowerCase());
    const types = (req.typesFilter ?? []).map((s) => s.toLowerCase());
    if (types.length > 0 && !types.includes(GROUP_TYPE)) return { throttleTimeMs: 0, errorCode: GroupError.NONE, groups: [] };
    const groups = ctx.groups
      .list()
      .filter((g) => g.state !== 'Dead' && (states.length === 0 || states.includes(g.state.toLowerCase())))
      .map((g) => ({ groupId: g.groupId, protocolType: g.protocolType, groupState: g.state, groupType: GROUP_TYPE }));
    return { throttleTimeMs: 0, errorCode: GroupError.NONE, groups };
  },
};
