/**
 * ConsumerGroupDescribe (key 69), v0: groups of the consumer group protocol (KIP-848) with their
 * epochs, assignor, and each member's subscription, assignment and target assignment. A classic
 * group, or one nobody knows, is GROUP_ID_NOT_FOUND, as Kafka answers. Authorized operations are
 * not computed.
 */
import {
  type ConsumerGroupDescribeRequest,
  type ConsumerGroupDescribeResponse,
  CONSUMER_GROUP_DESCRIBE,
  decodeConsumerGroupDescribeRequest,
  encodeConsumerGroupDescribeResponse,
} from '../messages/consumer-group-describe';
import { type ApiHandler } from '../handler';
import { groupAllowed } from '../auth';
import { GroupError } from '../groups';

/** "Not computed" in Kafka's AuthorizedOperations (-2^31). */
const NO_OPERATIONS = -2147483648;

export const CONSUMER_GROUP_DESCRIBE_HANDLER: ApiHandler<ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse> = {
  api: CONSUMER_GROUP_DESCRIBE,
  decode: decodeConsumerGroupDescribeRequest,
  encode: encodeConsumerGroupDescribeResponse,
  async handle(ctx, req, _version, conn) {
    const denied = !groupAllowed(ctx, conn);
    if (!denied) for (const id of req.groupIds) await ctx.groups.loadConsumer(id);
    return {
      throttleTimeMs: 0,
      groups: req.groupIds.map((id) =>
        denied
          ? { errorCode: GroupError.GROUP_AUTHORIZATION_FAILED, errorMessage: null, groupId: id, groupState: '', groupEpoch: 0, assignmentEpoch: 0, assignorName: '', members: [], authorizedOperations: NO_OPERATIONS }
          : { ...ctx.groups.consumerDescribe(id), authorizedOperations: NO_OPERATIONS },
      ),
    };
  },
};
