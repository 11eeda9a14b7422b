/**
 * ShareGroupDescribe (key 77), v0: share groups with their epochs, assignor (`simple`) and each
 * member's subscription and assignment; a group without members known only from its stored
 * partition state (share/) is Empty. A classic or consumer group, or one nobody knows, is
 * GROUP_ID_NOT_FOUND, as Kafka answers. Authorized operations are not computed.
 */
import {
  type ShareGroupDescribeRequest,
  type ShareGroupDescribeResponse,
  SHARE_GROUP_DESCRIBE,
  decodeShareGroupDescribeRequest,
  encodeShareGroupDescribeResponse,
} from '../messages/share-group-describe';
import { type ApiHandler } from '../handler';
import { groupAllowed } from '../auth';
import { GroupError } from '../groups';
import { topicsSnapshot } from './consumer-group-heartbeat';

/** "Not computed" in Kafka's AuthorizedOperations (-2^31). */
const NO_OPERATIONS = -2147483648;

export const SHARE_GROUP_DESCRIBE_HANDLER: ApiHandler<ShareGroupDescribeRequest, ShareGroupDescribeResponse> = {
  api: SHARE_GROUP_DESCRIBE,
  decode: decodeShareGroupDescribeRequest,
  encode: encodeShareGroupDescribeResponse,
  async handle(ctx, req, _version, conn) {
    const denied = !groupAllowed(ctx, conn);
    const topics = await topicsSnapshot(ctx);
    const now = Date.now();
    return {
      throttleTimeMs: 0,
      groups: req.groupIds.map((id) =>
        denied
          ? { errorCode: GroupError.GROUP_AUTHORIZATION_FAILED, errorMessage: null, groupId: id, groupState: '', groupEpoch: 0, assignmentEpoch: 0, assignorName: '', members: [], authorizedOperations: NO_OPERATIONS }
          : { ...ctx.share.describe(id, topics, now), authorizedOperations: NO_OPERATIONS },
      ),
    };
  },
};
