/**
 * DeleteGroups (key 42), v0–2: forgets a group with no members, its committed offsets included
 * (groups/coordinator.ts), or a share group with its share partitions' state (share/, as Kafka 4.x
 * deletes a share group's state with it). A group with members is NON_EMPTY_GROUP (68), an unknown
 * one GROUP_ID_NOT_FOUND (69), as in Kafka.
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
import { isShareGroup } from './share-group-kind';

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
      const share = isShareGroup(ctx, groupId, Date.now());
      const errorCode = share ? await ctx.share.deleteGroup(groupId, Date.now()) : await ctx.groups.deleteGroup(groupId);
      results.push({ groupId, errorCode });
      if (errorCode === KafkaError.NONE) ctx.log.info({ group: groupId, share }, 'kafka group deleted');
    }
    return { throttleTimeMs: 0, results };
  },
};
