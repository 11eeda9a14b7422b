/**
 * The node of the broker-validation suites (validation-*.test.ts): started in beforeAll with a
 * schema registry listener, with a registry client, a kafkajs admin and producer (no retries, so
 * a refusal is seen as it is) and a raw Kafka connection; all closed in afterAll.
 */
import { SchemaRegistryClient } from '@confluentinc/schemaregistry';
import { type Admin, Kafka, logLevel, type Producer } from 'kafkajs';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { RawKafka } from '../kafka/kafka-test-client';
import { encodeRecordBatch } from '../../src/util/record-batch';
import { registryUrl } from './registry-node';

export interface ValidationNode {
  readonly node: NodeProcess;
  readonly kafka: Kafka;
  readonly admin: Admin;
  readonly producer: Producer;
  readonly registry: SchemaRegistryClient;
  readonly raw: RawKafka;
}

/** Register the suite's hooks; the values are usable inside tests and later beforeAll hooks. */
export function validationNode(clientId: string): ValidationNode {
  let v: ValidationNode | undefined;
  beforeAll(async () => {
    const node = await startNode({ args: ['--shards', '2', '--shard-workers', '1', '--schema-registry-listen', '127.0.0.1:0'] });
    const kafka = new Kafka({ clientId, brokers: [node.kafka], logLevel: logLevel.NOTHING, retry: { retries: 0 } });
    const admin = kafka.admin();
    await admin.connect();
    const producer = kafka.producer({ allowAutoTopicCreation: false, retry: { retries: 0 } });
    await producer.connect();
    const registry = new SchemaRegistryClient({ baseURLs: [registryUrl(node)], maxRetries: 0 });
    v = { node, kafka, admin, producer, registry, raw: await RawKafka.connect(node.kafka) };
  });
  afterAll(async () => {
    v?.raw.close();
    await v?.producer.disconnect();
    await v?.admin.disconnect();
    await v?.node.stop();
  });
  const get = (): ValidationNode => {
    if (v === undefined) throw new Error('the validation node is not started yet');
    return v;
  };
  return {
    get node() {
      return get().node;
    },
    get kafka() {
      return get().kafka;
    },
    get admin() {
      return get().admin;
    },
    get producer() {
      return get().producer;
    },
    get registry() {
      return get().registry;
    },
    get raw() {
      return get().raw;
    },
  };
}

/** One Kafka record batch of keyless values. */
export const batchOf = (values: Buffer[]): Buffer => encodeRecordBatch({ baseOffset: 0, baseTimestamp: Date.now(), records: values.map((value) => ({ key: null, value, headers: null })) });
