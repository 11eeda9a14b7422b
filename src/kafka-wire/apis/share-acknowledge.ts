/**
 * ShareAcknowledge (key 79), v0: a share group member's acknowledgement batches (KIP-932: per
 * offset or per batch, 0 gap, 1 accept, 2 release, 3 reject) for records it acquired, within its
 * share session (share/share-sessions.ts: epoch 0 is INVALID_SHARE_SESSION_EPOCH here, -1 closes
 * the session after the acknowledgements and gives back the member's other locks). A record not
 * acquired by the member, or whose lock expired, makes its partition INVALID_RECORD_STATE; the
 * others of the batch are applied.
 */
import {
  type ShareAcknowledgeRequest,
  type ShareAcknowledgeResponse,
  type ShareAcknowledgeTopicResponse,
  SHARE_ACKNOWLEDGE,
  decodeShareAcknowledgeRequest,
  encodeShareAcknowledgeResponse,
} from '../messages/share-acknowledge';
import { type ApiHandler } from '../handler';
import { admitShareRequest, applyAcks, leaderOf, resolvePartition } from './share-common';

export const SHARE_ACKNOWLEDGE_HANDLER: ApiHandler<ShareAcknowledgeRequest, ShareAcknowledgeResponse> = {
  api: SHARE_ACKNOWLEDGE,
  decode: decodeShareAcknowledgeRequest,
  encode: encodeShareAcknowledgeResponse,
  async handle(ctx, req, _version, conn) {
    const top = (errorCode: number, errorMessage: string | null): ShareAcknowledgeResponse => ({ throttleTimeMs: 0, errorCode, errorMessage, responses: [], nodeEndpoints: [] });
    const chk = admitShareRequest(ctx, conn, req, false);
    if ('error' in chk) return top(chk.error, chk.message);
    const { groupId: group, memberId } = chk.session;
    const responses: ShareAcknowledgeTopicResponse[] = [];
    for (const t of req.topics) {
      const out: ShareAcknowledgeTopicResponse = { topicId: t.topicId, partitions: [] };
      for (const p of t.partitions) {
        const where = await resolvePartition(ctx, conn, t.topicId, p.partitionIndex);
        const r = where.stream === null ? { error: where.error, message: null } : await applyAcks(ctx, group, memberId, where.stream, p.acknowledgementBatches);
        out.partitions.push({ partitionIndex: p.partitionIndex, errorCode: r.error, errorMessage: r.message, currentLeader: leaderOf(ctx, where.error) });
      }
      responses.push(out);
    }
    if (chk.closing) await ctx.share.closeSession(group, memberId);
    return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, responses, nodeEndpoints: [] };
  },
};
