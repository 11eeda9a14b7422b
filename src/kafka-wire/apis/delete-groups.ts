/**
 * DeleteGroups (key 42), v0–2: forgets a group with no members, its committed offsets included
 * (groups/coordinator.ts). A group with members is NON_EMPTY_GROUP (68), an unknown one
 * GROUP_ID_NOT_FOUND (69), as in Kafka.
 */
import {
  type DeletableGroupResult,
  type DeleteGroupsRequest,
  type DeleteGroupsResponse,
  DELETE_GROUPS,
  decodeDeleteGroupsRequest,
  encodeDeleteGroupsResponse,
} from '../messages/delete-groups';
import { type ApiHandler } from '../handler';
import { KafkaError } from '../error-codes';
import { groupAllowed } from '../auth';

export const DELETE_GROUPS_HANDLER: ApiHandler<DeleteGroupsRequest, DeleteGroupsResponse> = {
  api: DELETE_GROUPS,
  decode: decodeDeleteGroupsRequest,
  encode: encodeDeleteGroupsResponse,
  async handle(ctx, req, _version, conn) {
    const results: DeletableGroupResult[] = [];
    for (const groupId of req.groupsNames) {
      if (!groupAllowed(ctx, conn)) {
        results.push({ groupId, errorCode: KafkaError.GROUP_AUTHORIZATION_FAILED });
        continue;
      }
      results.push({ groupId, errorCode: await ctx.groups.deleteGroup(groupId) });
      ctx.log.info({ group: groupId }, 'kafka group deleted');
    }
    return { throttleTimeMs: 0, results };
  },
};
