/**
 * ShareGroupHeartbeat (key 76), v0: membership of a share group (KIP-932). A member joins with
 * epoch 0 and its subscription, heartbeats with its epoch, leaves with -1; the coordinator answers
 * the member's epoch and, when it changed or the member sent its subscription, its assignment
 * (share/share-groups.ts: the `simple` assignor, no revocation step). Leaving gives back the
 * member's locks. A group id of a classic or consumer group is GROUP_ID_NOT_FOUND.
 */
import {
  type ShareGroupHeartbeatRequest,
  type ShareGroupHeartbeatResponse,
  SHARE_GROUP_HEARTBEAT,
  decodeShareGroupHeartbeatRequest,
  encodeShareGroupHeartbeatResponse,
} from '../messages/share-group-heartbeat';
import { type ApiHandler } from '../handler';
import { groupAllowed } from '../auth';
import { GroupError } from '../groups';
import { clientHostOf } from './join-group';
import { topicsSnapshot } from './consumer-group-heartbeat';

export const SHARE_GROUP_HEARTBEAT_HANDLER: ApiHandler<ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse> = {
  api: SHARE_GROUP_HEARTBEAT,
  decode: decodeShareGroupHeartbeatRequest,
  encode: encodeShareGroupHeartbeatResponse,
  async handle(ctx, req, _version, conn) {
    if (!groupAllowed(ctx, conn)) {
      return { throttleTimeMs: 0, errorCode: GroupError.GROUP_AUTHORIZATION_FAILED, errorMessage: null, memberId: null, memberEpoch: -1, heartbeatIntervalMs: 0, assignment: null };
    }
    const r = ctx.share.groups.heartbeat(
      req.groupId,
      {
        memberId: req.memberId,
        memberEpoch: req.memberEpoch,
        rackId: req.rackId,
        subscribedTopicNames: req.subscribedTopicNames,
        clientId: conn.clientId ?? '',
        clientHost: clientHostOf(conn.remote),
      },
      await topicsSnapshot(ctx),
      Date.now(),
    );
    return { throttleTimeMs: 0, ...r };
  },
};
