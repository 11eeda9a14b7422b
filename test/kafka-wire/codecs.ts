/**
 * The generated codecs looked up by API, for the tests that walk every API: each module's
 * `decode<Name>Request` / `encode<Name>Request` / … pair, typed loosely (values are plain
 * objects checked by the tests themselves).
 */
import * as apiVersions from '../../src/kafka-wire/messages/api-versions';
import * as addOffsetsToTxn from '../../src/kafka-wire/messages/add-offsets-to-txn';
import * as addPartitionsToTxn from '../../src/kafka-wire/messages/add-partitions-to-txn';
import * as alterConfigs from '../../src/kafka-wire/messages/alter-configs';
import * as createPartitions from '../../src/kafka-wire/messages/create-partitions';
import * as deleteGroups from '../../src/kafka-wire/messages/delete-groups';
import * as deleteRecords from '../../src/kafka-wire/messages/delete-records';
import * as describeCluster from '../../src/kafka-wire/messages/describe-cluster';
import * as describeConfigs from '../../src/kafka-wire/messages/describe-configs';
import * as describeProducers from '../../src/kafka-wire/messages/describe-producers';
import * as describeTransactions from '../../src/kafka-wire/messages/describe-transactions';
import * as endTxn from '../../src/kafka-wire/messages/end-txn';
import * as incrementalAlterConfigs from '../../src/kafka-wire/messages/incremental-alter-configs';
import * as listTransactions from '../../src/kafka-wire/messages/list-transactions';
import * as consumerGroupHeartbeat from '../../src/kafka-wire/messages/consumer-group-heartbeat';
import * as consumerGroupDescribe from '../../src/kafka-wire/messages/consumer-group-describe';
import * as offsetDelete from '../../src/kafka-wire/messages/offset-delete';
import * as shareAcknowledge from '../../src/kafka-wire/messages/share-acknowledge';
import * as shareFetch from '../../src/kafka-wire/messages/share-fetch';
import * as shareGroupDescribe from '../../src/kafka-wire/messages/share-group-describe';
import * as shareGroupHeartbeat from '../../src/kafka-wire/messages/share-group-heartbeat';
import * as txnOffsetCommit from '../../src/kafka-wire/messages/txn-offset-commit';
import * as createTopics from '../../src/kafka-wire/messages/create-topics';
import * as deleteTopics from '../../src/kafka-wire/messages/delete-topics';
import * as describeGroups from '../../src/kafka-wire/messages/describe-groups';
import * as fetch from '../../src/kafka-wire/messages/fetch';
import * as findCoordinator from '../../src/kafka-wire/messages/find-coordinator';
import * as heartbeat from '../../src/kafka-wire/messages/heartbeat';
import { type KafkaApi, KAFKA_APIS } from '../../src/kafka-wire/messages/index';
import * as initProducerId from '../../src/kafka-wire/messages/init-producer-id';
import * as joinGroup from '../../src/kafka-wire/messages/join-group';
import * as leaveGroup from '../../src/kafka-wire/messages/leave-group';
import * as listGroups from '../../src/kafka-wire/messages/list-groups';
import * as listOffsets from '../../src/kafka-wire/messages/list-offsets';
import * as metadata from '../../src/kafka-wire/messages/metadata';
import * as offsetCommit from '../../src/kafka-wire/messages/offset-commit';
import * as offsetFetch from '../../src/kafka-wire/messages/offset-fetch';
import * as produce from '../../src/kafka-wire/messages/produce';
import * as saslAuthenticate from '../../src/kafka-wire/messages/sasl-authenticate';
import * as saslHandshake from '../../src/kafka-wire/messages/sasl-handshake';
import * as syncGroup from '../../src/kafka-wire/messages/sync-group';
import { type Reader } from '../../src/kafka-wire/protocol/reader';
import { type Writer } from '../../src/kafka-wire/protocol/writer';

/** Module file name (kebab-case, as in spec/ and messages/) → module. */
const MODULES: Record<string, object> = {
  'api-versions': apiVersions,
  'create-topics': createTopics,
  'delete-topics': deleteTopics,
  'describe-groups': describeGroups,
  fetch,
  'find-coordinator': findCoordinator,
  heartbeat,
  'init-producer-id': initProducerId,
  'join-group': joinGroup,
  'leave-group': leaveGroup,
  'list-groups': listGroups,
  'list-offsets': listOffsets,
  metadata,
  'offset-commit': offsetCommit,
  'offset-fetch': offsetFetch,
  produce,
  'sasl-authenticate': saslAuthenticate,
  'sasl-handshake': saslHandshake,
  'sync-group': syncGroup,
  'add-offsets-to-txn': addOffsetsToTxn,
  'add-partitions-to-txn': addPartitionsToTxn,
  'alter-configs': alterConfigs,
  'create-partitions': createPartitions,
  'delete-groups': deleteGroups,
  'delete-records': deleteRecords,
  'describe-cluster': describeCluster,
  'describe-configs': describeConfigs,
  'describe-producers': describeProducers,
  'describe-transactions': describeTransactions,
  'end-txn': endTxn,
  'incremental-alter-configs': incrementalAlterConfigs,
  'list-transactions': listTransactions,
  'consumer-group-heartbeat': consumerGroupHeartbeat,
  'consumer-group-describe': consumerGroupDescribe,
  'offset-delete': offsetDelete,
  'share-group-heartbeat': shareGroupHeartbeat,
  'share-group-describe': shareGroupDescribe,
  'share-fetch': shareFetch,
  'share-acknowledge': shareAcknowledge,
  'txn-offset-commit': txnOffsetCommit,
};

export type Direction = 'Request' | 'Response';

export interface LooseCodec {
  decode(r: Reader, version: number): Record<string, unknown>;
  encode(w: Writer, v: Record<string, unknown>, version: number): void;
}

/** "ListOffsets" → "list-offsets". */
export function moduleFile(apiName: string): string {
  return apiName.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();
}

/** The decode/encode pair of one API and direction. */
export function codecOf(api: KafkaApi, direction: Direction): LooseCodec {
  const mod = MODULES[moduleFile(api.name)] as Record<string, unknown> | undefined;
  const decode = mod?.[`decode${api.name}${direction}`];
  const encode = mod?.[`encode${api.name}${direction}`];
  if (typeof decode !== 'function' || typeof encode !== 'function') throw new Error(`no ${direction} codec for ${api.name}`);
  return { decode: decode as LooseCodec['decode'], encode: encode as LooseCodec['encode'] };
}

/** Every served API with every advertised version. */
export function everyVersion(): Array<[string, KafkaApi, number]> {
  return KAFKA_APIS.flatMap((api) => {
    const out: Array<[string, KafkaApi, number]> = [];
    for (let v = api.minVersion; v <= api.maxVersion; v++) out.push([`${api.name} v${v}`, api, v]);
    return out;
  });
}

export { KAFKA_APIS, MODULES };
