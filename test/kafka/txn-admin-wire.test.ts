/**
 * The APIs no tested client library sends, over the wire with the project's codecs, against a
 * real node and a real librdkafka transactional producer: ListTransactions, DescribeTransactions,
 * DescribeProducers and ListOffsets read_committed while a transaction is open and after it was
 * aborted; IncrementalAlterConfigs; OffsetDelete; DescribeCluster's refused endpoint type.
 */
import { decodeDescribeClusterResponse, encodeDescribeClusterRequest } from '../../src/kafka-wire/messages/describe-cluster';
import { decodeDescribeProducersResponse, encodeDescribeProducersRequest } from '../../src/kafka-wire/messages/describe-producers';
import { decodeDescribeTransactionsResponse, encodeDescribeTransactionsRequest } from '../../src/kafka-wire/messages/describe-transactions';
import { decodeIncrementalAlterConfigsResponse, encodeIncrementalAlterConfigsRequest } from '../../src/kafka-wire/messages/incremental-alter-configs';
import { decodeListOffsetsResponse, encodeListOffsetsRequest } from '../../src/kafka-wire/messages/list-offsets';
import { decodeListTransactionsResponse, encodeListTransactionsRequest } from '../../src/kafka-wire/messages/list-transactions';
import { decodeOffsetDeleteResponse, encodeOffsetDeleteRequest } from '../../src/kafka-wire/messages/offset-delete';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { RawKafka } from './kafka-test-client';
import { python, startPythonDriver } from './python-process';

describe('transaction and admin APIs over the wire', () => {
  let node: NodeProcess;
  let k: RawKafka;

  beforeAll(async () => {
    node = await startNode({ args: ['--shards', '2', '--shard-workers', '1'] });
    k = await RawKafka.connect(node.kafka);
  });
  afterAll(async () => {
    k.close();
    await node.stop();
  });

  const latest = async (topic: string, isolationLevel: number): Promise<bigint> => {
    const req = { replicaId: -1, isolationLevel, topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }] };
    const res = decodeListOffsetsResponse(await k.request(2, 5, false, (w) => encodeListOffsetsRequest(w, req, 5)), 5);
    return res.topics[0]!.partitions[0]!.offset;
  };

  test('an open transaction is listed, described and holds the last stable offset; its abort releases it', async () => {
    await python('confluent_driver.py', { op: 'txn_produce', broker: node.kafka, topic: 'wire-tx', txnId: 'wire-seed', txns: [{ values: ['s1', 's2'], commit: true }] });
    expect(await latest('wire-tx', 1)).toBe(3n); // two records and the commit marker
    const hung = startPythonDriver('confluent_driver.py', { op: 'hang', broker: node.kafka, topic: 'wire-tx', txnId: 'wire-open', values: ['o1', 'o2'], txnTimeoutMs: 6000 });
    await hung.firstLine;
    const listed = decodeListTransactionsResponse(await k.request(66, 1, true, (w) => encodeListTransactionsRequest(w, { stateFilters: ['Ongoing', 'NoSuchState'], producerIdFilters: [], durationFilter: -1n }, 1)), 1);
    expect(listed.errorCode).toBe(0);
    expect(listed.unknownStateFilters).toEqual(['NoSuchState']);
    expect(listed.transactionStates.map((t) => [t.transactionalId, t.transactionState])).toEqual([['wire-open', 'Ongoing']]);
    const described = decodeDescribeTransactionsResponse(await k.request(65, 0, true, (w) => encodeDescribeTransactionsRequest(w, { transactionalIds: ['wire-open', 'nobody'] }, 0)), 0);
    expect(described.transactionStates[0]).toMatchObject({ errorCode: 0, transactionState: 'Ongoing', transactionTimeoutMs: 6000, topics: [{ topic: 'wire-tx', partitions: [0] }] });
    expect(described.transactionStates[1]!.errorCode).toBe(105);
    const producers = decodeDescribeProducersResponse(await k.request(61, 0, true, (w) => encodeDescribeProducersRequest(w, { topics: [{ name: 'wire-tx', partitionIndexes: [0] }] }, 0)), 0);
    const active = producers.topics[0]!.partitions[0]!.activeProducers;
    expect(active).toHaveLength(1);
    expect(active[0]!.producerId).toBe(described.transactionStates[0]!.producerId);
    expect(active[0]!.currentTxnStartOffset).toBe(3n);
    // read_committed stops at the open transaction; read_uncommitted sees its records.
    expect(await latest('wire-tx', 1)).toBe(3n);
    expect(await latest('wire-tx', 0)).toBe(5n);
    await hung.kill();
    const end = Date.now() + 20_000;
    while ((await latest('wire-tx', 1)) !== 6n && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
    expect(await latest('wire-tx', 1)).toBe(6n); // the abort marker at 5
    // The markers are written before the coordinator records the end (PrepareAbort, then CompleteAbort once
    // every participant is done, as Kafka does): the state may still say PrepareAbort for a moment.
    const stateOf = async (): Promise<string | undefined> =>
      decodeListTransactionsResponse(await k.request(66, 0, true, (w) => encodeListTransactionsRequest(w, { stateFilters: [], producerIdFilters: [] }, 0)), 0).transactionStates.find((t) => t.transactionalId === 'wire-open')?.transactionState;
    const settled = Date.now() + 10_000;
    let state = await stateOf();
    while (state === 'PrepareAbort' && Date.now() < settled) {
      await new Promise((r) => setTimeout(r, 100));
      state = await stateOf();
    }
    expect(state).toBe('CompleteAbort');
  }, 60_000);

  test('IncrementalAlterConfigs sets and deletes retention.ms and refuses compaction with INVALID_CONFIG', async () => {
    await python('confluent_driver.py', { op: 'produce_records', broker: node.kafka, topic: 'wire-cfg', records: [{ value: 'x' }] });
    const alter = async (configs: Array<{ name: string; configOperation: number; value: string | null }>): Promise<number> => {
      const req = { resources: [{ resourceType: 2, resourceName: 'wire-cfg', configs }], validateOnly: false };
      return decodeIncrementalAlterConfigsResponse(await k.request(44, 1, true, (w) => encodeIncrementalAlterConfigsRequest(w, req, 1)), 1).responses[0]!.errorCode;
    };
    const ttl = async (): Promise<number | null> => ((await (await fetch(`${node.url}/_streams/wire-cfg`)).json()) as { ttlSeconds: number | null }).ttlSeconds;
    expect(await alter([{ name: 'retention.ms', configOperation: 0, value: '30000' }])).toBe(0);
    expect(await ttl()).toBe(30);
    expect(await alter([{ name: 'cleanup.policy', configOperation: 0, value: 'compact' }])).toBe(40);
    expect(await alter([{ name: 'retention.ms', configOperation: 3, value: '1' }])).toBe(40);
    expect(await ttl()).toBe(30);
    expect(await alter([{ name: 'retention.ms', configOperation: 1, value: null }])).toBe(0);
    expect(await ttl()).toBeNull();
  }, 30_000);

  test('OffsetDelete drops a partition\'s committed offset of an empty group; an unknown group is GROUP_ID_NOT_FOUND', async () => {
    await python('kafka_python_driver.py', { op: 'produce', broker: node.kafka, topic: 'wire-od', values: ['a', 'b'] });
    await python('kafka_python_driver.py', { op: 'consume', broker: node.kafka, topic: 'wire-od', group: 'wire-od-g', count: 2 });
    const del = async (groupId: string): Promise<{ errorCode: number; partition: number | undefined }> => {
      const res = decodeOffsetDeleteResponse(await k.request(47, 0, false, (w) => encodeOffsetDeleteRequest(w, { groupId, topics: [{ name: 'wire-od', partitions: [{ partitionIndex: 0 }] }] }, 0)), 0);
      return { errorCode: res.errorCode, partition: res.topics[0]?.partitions[0]?.errorCode };
    };
    expect(await del('wire-od-g')).toEqual({ errorCode: 0, partition: 0 });
    const again = await python<{ records: unknown[]; committed: Record<string, number> }>('kafka_python_driver.py', { op: 'consume', broker: node.kafka, topic: 'wire-od', group: 'wire-od-g', count: 2 });
    expect(again.records).toHaveLength(2); // no committed offset: from the earliest again
    expect((await del('wire-od-nobody')).errorCode).toBe(69);
  }, 60_000);

  test('DescribeCluster refuses the controller endpoint type with UNSUPPORTED_ENDPOINT_TYPE', async () => {
    const res = decodeDescribeClusterResponse(await k.request(60, 1, true, (w) => encodeDescribeClusterRequest(w, { includeClusterAuthorizedOperations: false, endpointType: 2 }, 1)), 1);
    expect(res.errorCode).toBe(115);
    const ok = decodeDescribeClusterResponse(await k.request(60, 1, true, (w) => encodeDescribeClusterRequest(w, { includeClusterAuthorizedOperations: false, endpointType: 1 }, 1)), 1);
    expect(ok.brokers.map((b) => b.brokerId)).toEqual([1]);
  });
});
