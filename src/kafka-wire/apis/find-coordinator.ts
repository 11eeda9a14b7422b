/**
 * FindCoordinator (key 10), v0–4: this node coordinates every consumer group, so the answer is
 * always this node's advertised address (v4 answers each key of the batch). It coordinates every
 * transactional id (key type 1) too (txn/).
 */
import { type Coordinator, type FindCoordinatorRequest, type FindCoordinatorResponse, FIND_COORDINATOR, decodeFindCoordinatorRequest, encodeFindCoordinatorResponse } from '../messages/find-coordinator';
import { type ApiHandler } from '../handler';
import { type KafkaContext } from '../context';
import { GroupError } from '../groups';

const GROUP_KEY = 0;
const TRANSACTION_KEY = 1;

function answer(ctx: KafkaContext, key: string, keyType: number): Coordinator {
  const { host, port } = ctx.advertised();
  if (keyType === GROUP_KEY || keyType === TRANSACTION_KEY) {
    if (key === '') return { key, nodeId: -1, host: '', port: -1, errorCode: GroupError.INVALID_GROUP_ID, errorMessage: keyType === GROUP_KEY ? 'the group id is empty' : 'the transactional id is empty' };
    if (ctx.cluster !== null) {
      // The node that coordinates this key (the same answer on every node: cluster.ts).
      const c = ctx.cluster.coordinatorOf(key);
      if (c === null) return { key, nodeId: -1, host: '', port: -1, errorCode: GroupError.COORDINATOR_NOT_AVAILABLE, errorMessage: 'no node is live' };
      return { key, nodeId: c.nodeId, host: c.host, port: c.port, errorCode: GroupError.NONE, errorMessage: null };
    }
    return { key, nodeId: ctx.nodeId, host, port, errorCode: GroupError.NONE, errorMessage: null };
  }
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
