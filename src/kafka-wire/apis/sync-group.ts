/**
 * SyncGroup (key 14), v0–5: the leader sends the assignments its client-side assignor computed;
 * every member (the leader too) gets its own once the leader's call arrived.
 */
import { type SyncGroupRequest, type SyncGroupResponse, SYNC_GROUP, decodeSyncGroupRequest, encodeSyncGroupResponse } from '../messages/sync-group';
import { type ApiHandler } from '../handler';
import { groupAllowed } from '../auth';
import { GroupError } from '../groups';

export const SYNC_GROUP_HANDLER: ApiHandler<SyncGroupRequest, SyncGroupResponse> = {
  api: SYNC_GROUP,
  decode: decodeSyncGroupRequest,
  encode: encodeSyncGroupResponse,
  async handle(ctx, req, _version, conn) {
    if (!groupAllowed(ctx, conn)) return { throttleTimeMs: 0, errorCode: GroupError.GROUP_AUTHORIZATION_FAILED, protocolType: null, protocolName: null, assignment: Buffer.alloc(0) };
    const r = await ctx.groups.sync(req.groupId, req.memberId, req.generationId, req.protocolType ?? null, req.protocolName ?? null, req.assignments);
    return { throttleTimeMs: 0, errorCode: r.errorCode, protocolType: r.protocolType, protocolName: r.protocolName, assignment: r.assignment };
  },
};
