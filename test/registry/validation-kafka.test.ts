/**
 * Schema validation at the broker over Kafka (docs/schema-registry.md, "Validation at the broker"):
 * a topic with `confluent.value.schema.validation=true` refuses a producer that sends raw bytes
 * (INVALID_RECORD, the record and the reason in the message), takes the same record framed by
 * Confluent's own serializer (`@confluentinc/schemaregistry`), compressed batches included; a
 * dead-letter stream receives the refused records unchanged with headers saying why; the configs
 * are set by CreateTopics and AlterConfigs and shown by DescribeConfigs (kafkajs 2.2.4).
 */
import { AvroSerializer, SerdeType } from '@confluentinc/schemaregistry';
import { CompressionTypes, ConfigResourceTypes } from 'kafkajs';
import { produce } from '../kafka/raw-produce';
import { batchOf, validationNode } from './validation-node';

const USER = { type: 'record', name: 'User', namespace: 'com.example', fields: [{ name: 'name', type: 'string' }] };
const STRATEGY = 'io.confluent.kafka.serializers.subject.';

describe('schema validation of Kafka produce', () => {
  const v = validationNode('svc-validation-test');

  const describe_ = async (topic: string): Promise<Record<string, string>> => {
    const d = await v.admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }], includeSynonyms: false });
    return Object.fromEntries(d.resources[0]!.configEntries.map((e) => [e.configName, e.configValue]));
  };
  const serializer = (): AvroSerializer => new AvroSerializer(v.registry, SerdeType.VALUE, { useLatestVersion: true });
  const refusal = async (p: Promise<unknown>): Promise<Error & { type?: string }> => {
    try {
      await p;
    } catch (err) {
      return err as Error & { type?: string };
    }
    throw new Error('expected the produce to be refused');
  };
  /** Every record of a stream, over HTTP (values and headers as the node stores them). */
  const readAll = async (stream: string): Promise<Array<{ body: string; headers: Record<string, string> }>> => {
    const res = await fetch(`${v.node.url}${stream}?seq=0&format=json`);
    return (await res.json()) as Array<{ body: string; headers: Record<string, string> }>;
  };

  test('a raw-bytes producer is refused with INVALID_RECORD; the same record framed by the serializer passes', async () => {
    await v.registry.register('orders-value', { schemaType: 'AVRO', schema: JSON.stringify(USER) });
    expect(await v.admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 2, configEntries: [{ name: 'confluent.value.schema.validation', value: 'true' }] }] })).toBe(true);
    expect(await describe_('orders')).toMatchObject({
      'confluent.value.schema.validation': 'true',
      'confluent.key.schema.validation': 'false',
      'confluent.value.subject.name.strategy': `${STRATEGY}TopicNameStrategy`,
    });
    const framed = await serializer().serialize('orders', { name: 'ada' });
    // The Avro body alone, without the wire format's magic byte and id: what a producer without the registry sends.
    const raw = framed.subarray(5);
    const err = await refusal(v.producer.send({ topic: 'orders', messages: [{ partition: 0, value: raw }] }));
    expect(err.type).toBe('INVALID_RECORD');
    // The reason is in the partition's errorMessage and recordErrors (kafkajs shows its own text: read them on the wire).
    const wire = await produce(v.raw, 'orders', batchOf([raw, raw]));
    expect(wire.errorCode).toBe(87);
    expect(wire.errorMessage).toMatch(/record 0: the value does not start with the schema registry's wire format .*\(and 1 more\)/);
    expect(wire.recordErrors!.map((e) => e.batchIndex)).toEqual([0, 1]);
    // Nothing of the refused batch was written.
    const ok = await v.producer.send({ topic: 'orders', messages: [{ partition: 0, value: framed }] });
    expect(ok[0]!.errorCode).toBe(0);
    expect(ok[0]!.baseOffset).toBe('0');
    // Compressed batches are inflated for the check and stored as sent.
    const gz = await v.producer.send({ topic: 'orders', compression: CompressionTypes.GZIP, messages: [{ partition: 1, value: framed }, { partition: 1, value: framed }] });
    expect(gz[0]!.errorCode).toBe(0);
  });

  test('a registered id that does not decode, or an id of another subject, is refused with the reason', async () => {
    const framed = await serializer().serialize('orders', { name: 'ada' });
    const truncated = framed.subarray(0, framed.length - 1);
    expect((await refusal(v.producer.send({ topic: 'orders', messages: [{ partition: 0, value: truncated }] }))).type).toBe('INVALID_RECORD');
    expect((await produce(v.raw, 'orders', batchOf([truncated]))).errorMessage).toMatch(/does not match schema id \d+: the Avro payload is truncated/);
    const other = await v.registry.register('elsewhere-value', { schemaType: 'AVRO', schema: JSON.stringify({ ...USER, name: 'Other' }) });
    const foreign = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), framed.subarray(5)]);
    foreign.writeInt32BE(other, 1);
    expect((await produce(v.raw, 'orders', batchOf([foreign]))).errorMessage).toMatch(new RegExp(`schema id ${other} of the value is not registered under subject orders-value`));
    expect((await produce(v.raw, 'orders', batchOf([Buffer.from([0, 0x7f, 0, 0, 1, 2])]))).errorMessage).toMatch(/schema id 2130706433 of the value: Schema 2130706433 not found/);
  });

  test('with a dead-letter stream, refused records go there unchanged with headers saying why; the valid ones reach the topic', async () => {
    await v.registry.register('payments-value', { schemaType: 'AVRO', schema: JSON.stringify(USER) });
    expect(await v.admin.createTopics({ topics: [{ topic: 'payments', numPartitions: 1 }, { topic: 'payments-dlq', numPartitions: 1 }] })).toBe(true);
    await v.admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: 'payments', configEntries: [{ name: 'confluent.value.schema.validation', value: 'true' }, { name: 'svc.schema.validation.dead.letter', value: 'payments-dlq' }] }],
    });
    expect(await describe_('payments')).toMatchObject({ 'confluent.value.schema.validation': 'true', 'svc.schema.validation.dead.letter': '/payments-dlq' });
    const framed = await serializer().serialize('payments', { name: 'bob' });
    const r = await v.producer.send({ topic: 'payments', messages: [{ value: Buffer.from('raw bytes'), headers: { trace: 't-1' } }, { value: framed }] });
    expect(r[0]!.errorCode).toBe(0);
    const dead = await readAll('/payments-dlq');
    expect(dead).toHaveLength(1);
    expect(dead[0]!.body).toBe('raw bytes');
    expect(dead[0]!.headers).toMatchObject({ trace: 't-1', 'svc.validation.stream': '/payments', 'svc.validation.part': 'value' });
    expect(dead[0]!.headers['svc.validation.reason']).toMatch(/wire format/);
    const kept = await readAll('/payments');
    expect(kept).toHaveLength(1);
  });

  test('AlterConfigs turns validation off, and an unknown strategy is INVALID_CONFIG', async () => {
    const err = await refusal(
      v.admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'orders', configEntries: [{ name: 'confluent.value.subject.name.strategy', value: 'NoSuchStrategy' }] }] }),
    );
    expect(err.type).toBe('INVALID_CONFIG');
    await v.admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'orders', configEntries: [{ name: 'confluent.value.schema.validation', value: 'false' }] }] });
    expect((await describe_('orders'))['confluent.value.schema.validation']).toBe('false');
    const r = await v.producer.send({ topic: 'orders', messages: [{ partition: 0, value: Buffer.from('raw again') }] });
    expect(r[0]!.errorCode).toBe(0);
  });
});
