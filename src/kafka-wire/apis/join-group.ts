/**
 * JoinGroup (key 11), v0–9: answered when the group's join round completes (group.ts), which
 * can take up to the rebalance timeout; the connection's later requests wait behind it, as
 * they do on a Kafka broker. A member without an id gets one at once (no MEMBER_ID_REQUIRED
 * round trip; docs/kafka.md). v0 has no rebalance timeout: the session timeout stands in.
 */
import { type JoinGroupRequest, type JoinGroupResponse, JOIN_GROUP, decodeJoinGroupRequest, encodeJoinGroupResponse } from '../messages/join-group';
import { type ApiHandler } from '../handler';
import { groupAllowed } from '../auth';
import { GroupError } from '../groups';

/** Kafka's clientHost: the peer address with a leading slash (InetAddress.toString). */
export function clientHostOf(remote: string): string {
  return `/${remote.slice(0, remote.lastIndexOf(':'))}`;
}

export const JOIN_GROUP_HANDLER: ApiHandler<JoinGroupRequest, JoinGroupResponse> = {
  api: JOIN_GROUP,
  decode: decodeJoinGroupRequest,
  encode: encodeJoinGroupResponse,
  async handle(ctx, req, version, conn) {
    if (!groupAllowed(ctx, conn)) {
      return { throttleTimeMs: 0, errorCode: GroupError.GROUP_AUTHORIZATION_FAILED, generationId: -1, protocolType: null, protocolName: version >= 7 ? null : '', leader: '', skipAssignment: false, memberId: req.memberId, members: [] };
    }
    const rebalance = req.rebalanceTimeoutMs ?? -1;
    const r = await ctx.groups.join(req.groupId, {
      memberId: req.memberId,
      groupInstanceId: req.groupInstanceId ?? null,
      clientId: conn.clientId ?? '',
      clientHost: clientHostOf(conn.remote),
      sessionTimeoutMs: req.sessionTimeoutMs,
      rebalanceTimeoutMs: rebalance < 0 ? req.sessionTimeoutMs : rebalance,
      protocolType: req.protocolType,
      protocols: req.protocols,
    });
    return {
      throttleTimeMs: 0,
      errorCode: r.errorCode,
      generationId: r.generationId,
      protocolType: r.protocolType,
      // Nullable from v7 only.
      protocolName: version >= 7 ? r.protocolName : (r.protocolName ?? ''),
      leader: r.leader,
      skipAssignment: false,
      memberId: r.memberId,
      members: r.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, metadata: m.metadata })),
    };
  },
};
