/** DescribeCluster (key 60), v0–1: the brokers and the controller, as in Metadata (one node, or every live node of a cluster). */
import {
  type DescribeClusterRequest,
  type DescribeClusterResponse,
  DESCRIBE_CLUSTER,
  decodeDescribeClusterRequest,
  encodeDescribeClusterResponse,
} from '../messages/describe-cluster';
import { type ApiHandler } from '../handler';
import { KafkaError } from '../error-codes';
import { CLUSTER_ID, NO_OPERATIONS } from './metadata';

/** EndpointType (KIP-919): 1 = brokers; 2 = controllers is not served (no separate controllers). */
const BROKERS = 1;

export const DESCRIBE_CLUSTER_HANDLER: ApiHandler<DescribeClusterRequest, DescribeClusterResponse> = {
  api: DESCRIBE_CLUSTER,
  decode: decodeDescribeClusterRequest,
  encode: encodeDescribeClusterResponse,
  async handle(ctx, req) {
    const { host, port } = ctx.advertised();
    // In a cluster every live node is a broker, as in Metadata (cluster.ts).
    const brokers = ctx.cluster === null ? [{ brokerId: ctx.nodeId, host, port, rack: null }] : ctx.cluster.brokers().map((b) => ({ brokerId: b.nodeId, host: b.host, port: b.port, rack: null }));
    const base = { throttleTimeMs: 0, endpointType: BROKERS, clusterId: CLUSTER_ID, controllerId: brokers[0]?.brokerId ?? ctx.nodeId, clusterAuthorizedOperations: NO_OPERATIONS };
    if (req.endpointType !== undefined && req.endpointType !== BROKERS) {
      return { ...base, errorCode: KafkaError.UNSUPPORTED_ENDPOINT_TYPE, errorMessage: 'only the broker endpoints are described', brokers: [] };
    }
    return { ...base, errorCode: 0, errorMessage: null, brokers };
  },
};
