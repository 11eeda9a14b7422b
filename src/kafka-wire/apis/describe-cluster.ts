/** DescribeCluster (key 60), v0–1: this node is the cluster, its only broker and its controller (as in Metadata). */
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
    const base = { throttleTimeMs: 0, endpointType: BROKERS, clusterId: CLUSTER_ID, controllerId: ctx.nodeId, clusterAuthorizedOperations: NO_OPERATIONS };
    if (req.endpointType !== undefined && req.endpointType !== BROKERS) {
      return { ...base, errorCode: KafkaError.UNSUPPORTED_ENDPOINT_TYPE, errorMessage: 'only the broker endpoints are described', brokers: [] };
    }
    return { ...base, errorCode: 0, errorMessage: null, brokers: [{ brokerId: ctx.nodeId, host, port, rack: null }] };
  },
};
