'use strict';
/**
 * The APIs the Kafka listener serves and the version range it advertises for each
 * (design/kafka.md "Versions to advertise"). `file` names the generated module in
 * src/kafka-wire/messages/ and the summary in spec/; `schema` is the prefix of Apache Kafka's
 * <schema>Request.json / <schema>Response.json.
 *
 * Minimums matter: librdkafka enables features only when the advertised range contains the
 * version it pins (often 0), so they are not raised to Kafka 4's minimums.
 */
const APIS = [
  { key: 0, schema: 'Produce', file: 'produce', min: 0, max: 9 },
  { key: 1, schema: 'Fetch', file: 'fetch', min: 4, max: 13 },
  { key: 2, schema: 'ListOffsets', file: 'list-offsets', min: 1, max: 6 },
  { key: 3, schema: 'Metadata', file: 'metadata', min: 0, max: 12 },
  { key: 8, schema: 'OffsetCommit', file: 'offset-commit', min: 2, max: 9 },
  { key: 9, schema: 'OffsetFetch', file: 'offset-fetch', min: 1, max: 9 },
  { key: 10, schema: 'FindCoordinator', file: 'find-coordinator', min: 0, max: 4 },
  { key: 11, schema: 'JoinGroup', file: 'join-group', min: 0, max: 9 },
  { key: 12, schema: 'Heartbeat', file: 'heartbeat', min: 0, max: 4 },
  { key: 13, schema: 'LeaveGroup', file: 'leave-group', min: 0, max: 5 },
  { key: 14, schema: 'SyncGroup', file: 'sync-group', min: 0, max: 5 },
  { key: 15, schema: 'DescribeGroups', file: 'describe-groups', min: 0, max: 5 },
  { key: 16, schema: 'ListGroups', file: 'list-groups', min: 0, max: 5 },
  { key: 17, schema: 'SaslHandshake', file: 'sasl-handshake', min: 0, max: 1 },
  { key: 18, schema: 'ApiVersions', file: 'api-versions', min: 0, max: 3 },
  { key: 19, schema: 'CreateTopics', file: 'create-topics', min: 2, max: 7 },
  { key: 20, schema: 'DeleteTopics', file: 'delete-topics', min: 1, max: 6 },
  { key: 22, schema: 'InitProducerId', file: 'init-producer-id', min: 0, max: 4 },
  { key: 21, schema: 'DeleteRecords', file: 'delete-records', min: 0, max: 2 },
  { key: 24, schema: 'AddPartitionsToTxn', file: 'add-partitions-to-txn', min: 0, max: 3 },
  { key: 25, schema: 'AddOffsetsToTxn', file: 'add-offsets-to-txn', min: 0, max: 3 },
  { key: 26, schema: 'EndTxn', file: 'end-txn', min: 0, max: 3 },
  { key: 28, schema: 'TxnOffsetCommit', file: 'txn-offset-commit', min: 0, max: 3 },
  { key: 32, schema: 'DescribeConfigs', file: 'describe-configs', min: 0, max: 4 },
  { key: 33, schema: 'AlterConfigs', file: 'alter-configs', min: 0, max: 2 },
  { key: 36, schema: 'SaslAuthenticate', file: 'sasl-authenticate', min: 0, max: 2 },
  { key: 37, schema: 'CreatePartitions', file: 'create-partitions', min: 0, max: 3 },
  { key: 42, schema: 'DeleteGroups', file: 'delete-groups', min: 0, max: 2 },
  { key: 44, schema: 'IncrementalAlterConfigs', file: 'incremental-alter-configs', min: 0, max: 1 },
  { key: 47, schema: 'OffsetDelete', file: 'offset-delete', min: 0, max: 0 },
  { key: 60, schema: 'DescribeCluster', file: 'describe-cluster', min: 0, max: 1 },
  { key: 61, schema: 'DescribeProducers', file: 'describe-producers', min: 0, max: 0 },
  { key: 65, schema: 'DescribeTransactions', file: 'describe-transactions', min: 0, max: 0 },
  { key: 66, schema: 'ListTransactions', file: 'list-transactions', min: 0, max: 1 },
  { key: 68, schema: 'ConsumerGroupHeartbeat', file: 'consumer-group-heartbeat', min: 0, max: 1 },
  { key: 69, schema: 'ConsumerGroupDescribe', file: 'consumer-group-describe', min: 0, max: 0 },
  // Share groups (KIP-932): version 0, the first Kafka released (4.0 early access).
  { key: 76, schema: 'ShareGroupHeartbeat', file: 'share-group-heartbeat', min: 0, max: 0 },
  { key: 77, schema: 'ShareGroupDescribe', file: 'share-group-describe', min: 0, max: 0 },
  { key: 78, schema: 'ShareFetch', file: 'share-fetch', min: 0, max: 0 },
  { key: 79, schema: 'ShareAcknowledge', file: 'share-acknowledge', min: 0, max: 0 },
];

module.exports = { APIS };
