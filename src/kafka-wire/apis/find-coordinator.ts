/**
 * FindCoordinator (key 10), v0–4: this node coordinates every consumer group, so the answer is
 * always this node's advertised address (v4 answers each key of the batch). Transaction
 * coordinators (key type 1) are not served: COORDINATOR_NOT_AVAILABLE, so a transactional client
 * fails clearly instead of sending transaction APIs this listener does not serve.
 */
import { type Coordinator, type FindCoordinatorRequest, type FindCoordinatorResponse, FIND_COORDINATOR, decodeFindCoordinatorRequest, encodeFindCoordinatorResponse } from '../messages/find-coordinator';
import { type ApiHandler } from '../handler';
import { type KafkaContext } from '../context';
import { GroupError } from '../groups';

const GROUP_KEY = 0;
const TRANSACTION_KEY = 1;

function answer(ctx: KafkaContext, key: string, keyType: number): Coordinator {
  const { host, port } = ctx.advertised();
  if (keyType === GROUP_KEY) {
    if (key === '') return { key, nodeId: -1, host: '', port: -1, errorCode: GroupError.INVALID_GROUP_ID, errorMessage: 'the group id is empty' };
    return { key, nodeId: ctx.nodeId, host, port, errorCode: GroupError.NONE, errorMessage: null };
  }
  if (keyType === TRANSACTION_KEY) return { key, nodeId: -1, host: '', port: -1, errorCode: GroupError.COORDINATOR_NOT_AVAILABLE, errorMessage: 'transactions are not supported' };
  return { key, nodeId: -1, host: '', port: -1, errorCode: GroupError.INVALID_REQUEST, errorMessage: `unknown coordinator key type ${keyType}` };
}

export const FIND_COORDINATOR_HANDLER: ApiHandler<FindCoordinatorRequest, FindCoordinatorResponse> = {
  api: FIND_COORDINATOR,
  decode: decodeFindCoordinatorRequest,
  encode: encodeFindCoordinatorResponse,
  async handle(ctx, req, version) {
    const keyType = req.keyType ?? GROUP_KEY;
    if (version >= 4) return { throttleTimeMs: 0, coordinators: (req.coordinatorKeys ?? []).map((k) => answer(ctx, k, keyType)) };
    const c = answer(ctx, req.key ?? '', keyType);
    return { throttleTimeMs: 0, errorCode: c.errorCode, errorMessage: c.errorMessage, nodeId: c.nodeId, host: c.host, port: c.port };
  },
};
