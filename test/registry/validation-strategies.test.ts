/**
 * The subject name strategies of validation at the broker (docs/schema-registry.md, "Validation at
 * the broker"), as Confluent Server applies `confluent.value.subject.name.strategy` /
 * `confluent.key.subject.name.strategy`: a record is accepted when its schema id is registered under
 * the subject the topic's strategy gives for it, else refused with INVALID_RECORD (HTTP: 422).
 *
 *   TopicNameStrategy (default)   <topic>-value / <topic>-key
 *   RecordNameStrategy            the record's name (Avro full name, the Protobuf message the
 *                                 indexes name, JSON Schema `title`)
 *   TopicRecordNameStrategy       <topic>-<record name>
 *
 * Avro and JSON subject names are computed by Confluent's own client code (`RecordNameStrategy`,
 * `TopicRecordNameStrategy` and the serializers' `getRecordName` of `@confluentinc/schemaregistry`),
 * so the broker is checked against what the producers' serializers register under. Records are
 * framed by Confluent's serializers (kafkajs 2.2.4 sends them).
 */
import {
  AvroSerializer,
  JsonSerializer,
  RecordNameStrategy,
  type SchemaInfo,
  type SchemaRegistryClient,
  SerdeType,
  TopicRecordNameStrategy,
} from '@confluentinc/schemaregistry';
import { ConfigResourceTypes } from 'kafkajs';
import { produce } from '../kafka/raw-produce';
import { encodeRecordBatch } from '../../src/util/record-batch';
import { ORDER_JSON, SHOP_PROTO, encodeShop, protoRecord } from './wire-format';
import { validationNode } from './validation-node';

const STRATEGY = 'io.confluent.kafka.serializers.subject.';
const USER: SchemaInfo = { schemaType: 'AVRO', schema: JSON.stringify({ type: 'record', name: 'User', namespace: 'com.example', fields: [{ name: 'name', type: 'string' }] }) };
const ACCOUNT: SchemaInfo = { schemaType: 'AVRO', schema: JSON.stringify({ type: 'record', name: 'Account', namespace: 'com.example', fields: [{ name: 'iban', type: 'string' }] }) };

describe('subject name strategies of validation at the broker', () => {
  const v = validationNode('svc-validation-strategies');

  /** Confluent's client's subject for `info` on `topic` under a record strategy. */
  const avroNames = new AvroSerializer({} as SchemaRegistryClient, SerdeType.VALUE, {});
  const recordSubject = async (info: SchemaInfo): Promise<string> => RecordNameStrategy((i) => avroNames.getRecordName(i))('unused', SerdeType.VALUE, info);
  const topicRecordSubject = async (topic: string, info: SchemaInfo): Promise<string> => TopicRecordNameStrategy((i) => avroNames.getRecordName(i))(topic, SerdeType.VALUE, info);
  /** Confluent's Avro serializer writing the latest version of `subject` (the subject its strategy gave). */
  const avro = (subject: string, part = SerdeType.VALUE): AvroSerializer => new AvroSerializer(v.registry, part, { useLatestVersion: true, subjectNameStrategy: () => subject });

  const topicWith = async (topic: string, configs: Record<string, string>): Promise<void> => {
    const configEntries = Object.entries(configs).map(([name, value]) => ({ name, value }));
    expect(await v.admin.createTopics({ topics: [{ topic, numPartitions: 1, configEntries }] })).toBe(true);
  };
  const describe_ = async (topic: string): Promise<Record<string, string>> => {
    const d = await v.admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }], includeSynonyms: false });
    return Object.fromEntries(d.resources[0]!.configEntries.map((e) => [e.configName, e.configValue]));
  };
  const send = async (topic: string, value: Buffer, key: Buffer | null = null): Promise<number> => {
    try {
      return (await v.producer.send({ topic, messages: [{ key, value }] }))[0]!.errorCode;
    } catch (err) {
      expect((err as { type?: string }).type).toBe('INVALID_RECORD');
      return 87;
    }
  };
  /** The reason the partition gives for refusing `value` (raw Produce: the errorMessage). */
  const reason = async (topic: string, value: Buffer, key: Buffer | null = null): Promise<string | null> => {
    const r = await produce(v.raw, topic, encodeRecordBatch({ baseOffset: 0, baseTimestamp: Date.now(), records: [{ key, value, headers: null }] }));
    return r.errorCode === 0 ? null : (r.errorMessage ?? null);
  };

  test('RecordNameStrategy: a record whose id is registered under its full name is accepted, one registered only under <topic>-value is refused', async () => {
    await topicWith('rn', { 'confluent.value.schema.validation': 'true', 'confluent.value.subject.name.strategy': `${STRATEGY}RecordNameStrategy` });
    expect((await describe_('rn'))['confluent.value.subject.name.strategy']).toBe(`${STRATEGY}RecordNameStrategy`);
    const subject = await recordSubject(USER);
    expect(subject).toBe('com.example.User');
    await v.registry.register(subject, USER);
    expect(await send('rn', await avro(subject).serialize('rn', { name: 'ada' }))).toBe(0);

    // Account registered the TopicNameStrategy way only: its record name names no subject holding it.
    await v.registry.register('rn-value', ACCOUNT);
    const account = await avro('rn-value').serialize('rn', { iban: 'DE00' });
    expect(await send('rn', account)).toBe(87);
    expect(await reason('rn', account)).toMatch(/schema id \d+ of the value is not registered under subject com\.example\.Account/);
    // Registered under its record name too: now accepted (the broker sees the new version at once).
    await v.registry.register(await recordSubject(ACCOUNT), ACCOUNT);
    expect(await send('rn', account)).toBe(0);
  });

  test('TopicRecordNameStrategy: <topic>-<record name>; the record name alone, or another topic, is not enough', async () => {
    await topicWith('trn', { 'confluent.value.schema.validation': 'true', 'confluent.value.subject.name.strategy': 'TopicRecordNameStrategy' });
    expect((await describe_('trn'))['confluent.value.subject.name.strategy']).toBe(`${STRATEGY}TopicRecordNameStrategy`);
    const subject = await topicRecordSubject('trn', USER);
    expect(subject).toBe('trn-com.example.User');
    await v.registry.register(subject, USER);
    expect(await send('trn', await avro(subject).serialize('trn', { name: 'ada' }))).toBe(0);

    const other = { schemaType: 'AVRO', schema: JSON.stringify({ type: 'record', name: 'Card', namespace: 'com.example', fields: [{ name: 'pan', type: 'string' }] }) };
    await v.registry.register(await recordSubject(other), other);
    await v.registry.register(await topicRecordSubject('elsewhere', other), other);
    const card = await avro('com.example.Card').serialize('trn', { pan: '4111' });
    expect(await send('trn', card)).toBe(87);
    expect(await reason('trn', card)).toMatch(/not registered under subject trn-com\.example\.Card/);
  });

  test('TopicNameStrategy (default): a record registered only under its record name is refused', async () => {
    await topicWith('tn', { 'confluent.value.schema.validation': 'true' });
    expect((await describe_('tn'))['confluent.value.subject.name.strategy']).toBe(`${STRATEGY}TopicNameStrategy`);
    const user = await avro('com.example.User').serialize('tn', { name: 'ada' });
    expect(await reason('tn', user)).toMatch(/not registered under subject tn-value/);
    await v.registry.register('tn-value', USER);
    expect(await send('tn', user)).toBe(0);
  });

  test('keys: confluent.key.subject.name.strategy names the key subject, apart from the value', async () => {
    await topicWith('kn', { 'confluent.key.schema.validation': 'true', 'confluent.key.subject.name.strategy': `${STRATEGY}RecordNameStrategy` });
    expect(await describe_('kn')).toMatchObject({ 'confluent.key.schema.validation': 'true', 'confluent.value.schema.validation': 'false', 'confluent.key.subject.name.strategy': `${STRATEGY}RecordNameStrategy` });
    const key = await avro('com.example.User', SerdeType.KEY).serialize('kn', { name: 'k' });
    // Values are not checked: raw bytes pass beside a valid key.
    expect(await send('kn', Buffer.from('raw value'), key)).toBe(0);
    // A key schema registered the TopicNameStrategy way only.
    await v.registry.register('kn-key', { schemaType: 'AVRO', schema: JSON.stringify({ type: 'record', name: 'Key', namespace: 'com.example', fields: [{ name: 'k', type: 'string' }] }) });
    const topicKey = await avro('kn-key', SerdeType.KEY).serialize('kn', { k: 'k' });
    expect(await reason('kn', Buffer.from('raw value'), topicKey)).toMatch(/schema id \d+ of the key is not registered under subject com\.example\.Key/);
  });

  test('Protobuf: the record name is the message the indexes name, so one id can be accepted for one message and refused for another', async () => {
    await topicWith('pbrn', { 'confluent.value.schema.validation': 'true', 'confluent.value.subject.name.strategy': `${STRATEGY}RecordNameStrategy` });
    const id = await v.registry.register('shop.v1.Refund', { schemaType: 'PROTOBUF', schema: SHOP_PROTO });
    const refund = protoRecord(id, [1], encodeShop('shop.v1.Refund', { order_id: 'o-1' }));
    const order = protoRecord(id, [0], encodeShop('shop.v1.Order', { id: 'o-1', amount: 1 }));
    const line = protoRecord(id, [0, 0], encodeShop('shop.v1.Order.Line', { sku: 'a' }));
    expect(await send('pbrn', refund)).toBe(0);
    expect(await reason('pbrn', order)).toMatch(new RegExp(`schema id ${id} of the value is not registered under subject shop\\.v1\\.Order$`));
    expect(await reason('pbrn', line)).toMatch(/not registered under subject shop\.v1\.Order\.Line$/);
    // Indexes naming no message name no record either: the reason is the indexes, not the strategy.
    expect(await reason('pbrn', protoRecord(id, [5], encodeShop('shop.v1.Refund', {})))).toMatch(new RegExp(`the value does not match schema id ${id}: message indexes \\[5\\] name no message of the schema$`));
    expect(await v.registry.register('shop.v1.Order', { schemaType: 'PROTOBUF', schema: SHOP_PROTO })).toBe(id);
    expect(await send('pbrn', order)).toBe(0);
  });

  test('JSON Schema: the record name is the title; a schema without one names no subject', async () => {
    await topicWith('jtr', { 'confluent.value.schema.validation': 'true', 'confluent.value.subject.name.strategy': `${STRATEGY}TopicRecordNameStrategy` });
    const info: SchemaInfo = { schemaType: 'JSON', schema: JSON.stringify(ORDER_JSON) };
    const jsonNames = new JsonSerializer({} as SchemaRegistryClient, SerdeType.VALUE, {});
    const subject = await TopicRecordNameStrategy((i) => jsonNames.getRecordName(i))('jtr', SerdeType.VALUE, info);
    expect(subject).toBe('jtr-shop.Order');
    await v.registry.register(subject, info);
    const json = (s: string): JsonSerializer => new JsonSerializer(v.registry, SerdeType.VALUE, { useLatestVersion: true, subjectNameStrategy: () => s });
    expect(await send('jtr', await json(subject).serialize('jtr', { id: 'o-1', amount: 1 }))).toBe(0);
    const { title: _, ...untitled } = ORDER_JSON;
    await v.registry.register('jtr-untitled', { schemaType: 'JSON', schema: JSON.stringify(untitled) });
    expect(await reason('jtr', await json('jtr-untitled').serialize('jtr', { id: 'o-1', amount: 1 }))).toMatch(/names no record, which the TopicRecordNameStrategy needs/);
  });

  test('over HTTP: registryValidation.valueSubjectNameStrategy applies the same names (422 record_invalid)', async () => {
    expect((await fetch(`${v.node.url}/hrn`, { method: 'PUT' })).status).toBe(201);
    const set = await fetch(`${v.node.url}/_streams/hrn`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ registryValidation: { value: true, valueSubjectNameStrategy: 'RecordNameStrategy' } }),
    });
    expect(((await set.json()) as { registryValidation: object }).registryValidation).toMatchObject({ valueSubjectNameStrategy: `${STRATEGY}RecordNameStrategy` });
    const post = (body: Buffer): Promise<Response> => fetch(`${v.node.url}/hrn`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body });
    expect((await post(await avro('com.example.User').serialize('hrn', { name: 'ada' }))).status).toBe(200);
    await v.registry.register('hrn-value', { schemaType: 'AVRO', schema: JSON.stringify({ type: 'record', name: 'Only', namespace: 'com.example', fields: [] }) });
    const r = await post(await avro('hrn-value').serialize('hrn', {}));
    expect(r.status).toBe(422);
    expect((await r.json()) as object).toMatchObject({ error: 'record_invalid', message: expect.stringMatching(/^records\[0\]: schema id \d+ of the value is not registered under subject com\.example\.Only$/) as unknown });
  });
});
