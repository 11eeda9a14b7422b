/**
 * LeaveGroup (key 13), v0–5: v0–2 name one member; v3+ a batch, answered member by member.
 * The group rebalances among the members that stay.
 */
import { type LeaveGroupRequest, type LeaveGroupResponse, LEAVE_GROUP, decodeLeaveGroupRequest, encodeLeaveGroupResponse } from '../messages/leave-group';
import { type ApiHandler } from '../handler';
import { GroupError } from '../groups';
import { groupAllowed } from '../auth';

export const LEAVE_GROUP_HANDLER: ApiHandler<LeaveGroupRequest, LeaveGroupResponse> = {
  api: LEAVE_GROUP,
  decode: decodeLeaveGroupRequest,
  encode: encodeLeaveGroupResponse,
  async handle(ctx, req, version, conn) {
    if (!groupAllowed(ctx, conn)) return { throttleTimeMs: 0, errorCode: GroupError.GROUP_AUTHORIZATION_FAILED, members: [] };
    if (version <= 2) {
      const r = ctx.groups.leave(req.groupId, [req.memberId ?? '']);
      return { throttleTimeMs: 0, errorCode: r.errorCode !== GroupError.NONE ? r.errorCode : r.members[0]! };
    }
    const members = req.members ?? [];
    const r = ctx.groups.leave(req.groupId, members.map((m) => m.memberId));
    return {
      throttleTimeMs: 0,
      errorCode: r.errorCode,
      members: r.errorCode === GroupError.NONE ? members.map((m, i) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode: r.members[i]! })) : [],
    };
  },
};
