/**
 * ListGroups (key 16), v0–5: every live group and every group known from committed offsets
 * (Empty), and the share groups (KIP-932: Stable with members, Empty without; type and protocol
 * type "share", as Kafka lists them). v4 filters by state, v5 by type ("classic", "consumer": the
 * consumer group protocol, KIP-848, or "share"); both filters compare case-insensitively, as Kafka
 * does.
 */
import { type ListGroupsRequest, type ListGroupsResponse, type ListedGroup, LIST_GROUPS, decodeListGroupsRequest, encodeListGroupsResponse } from '../messages/list-groups';
import { type ApiHandler } from '../handler';
import { GroupError } from '../groups';

export const LIST_GROUPS_HANDLER: ApiHandler<ListGroupsRequest, ListGroupsResponse> = {
  api: LIST_GROUPS,
  decode: decodeListGroupsRequest,
  encode: encodeListGroupsResponse,
  async handle(ctx, req) {
    const states = (req.statesFilter ?? []).map((s) => s.toLowerCase());
    const types = (req.typesFilter ?? []).map((s) => s.toLowerCase());
    const byId = new Map<string, Required<ListedGroup>>();
    for (const g of ctx.groups.list()) byId.set(g.groupId, { groupId: g.groupId, protocolType: g.protocolType, groupState: g.state, groupType: g.groupType });
    // One entry per id: a share group with members is listed over a classic or consumer group known only from its stored offsets.
    for (const g of ctx.share.list(Date.now())) {
      const other = byId.get(g.groupId);
      if (other === undefined || (g.state === 'Stable' && other.groupState === 'Empty')) byId.set(g.groupId, { groupId: g.groupId, protocolType: 'share', groupState: g.state, groupType: 'share' });
    }
    const groups = [...byId.values()].filter(
      (g) => g.groupState !== 'Dead' && (states.length === 0 || states.includes(g.groupState.toLowerCase())) && (types.length === 0 || types.includes(g.groupType.toLowerCase())),
    );
    return { throttleTimeMs: 0, errorCode: GroupError.NONE, groups };
  },
};
