/** Heartbeat (key 12), v0–4: keeps a member's session alive; REBALANCE_IN_PROGRESS tells it to rejoin. */
import { type HeartbeatRequest, type HeartbeatResponse, HEARTBEAT, decodeHeartbeatRequest, encodeHeartbeatResponse } from '../messages/heartbeat';
import { type ApiHandler } from '../handler';
import { groupAllowed } from '../auth';
import { GroupError } from '../groups';

export const HEARTBEAT_HANDLER: ApiHandler<HeartbeatRequest, HeartbeatResponse> = {
  api: HEARTBEAT,
  decode: decodeHeartbeatRequest,
  encode: encodeHeartbeatResponse,
  async handle(ctx, req, _version, conn) {
    if (!groupAllowed(ctx, conn)) return { throttleTimeMs: 0, errorCode: GroupError.GROUP_AUTHORIZATION_FAILED };
    return { throttleTimeMs: 0, errorCode: ctx.groups.heartbeat(req.groupId, req.memberId, req.generationId) };
  },
};
