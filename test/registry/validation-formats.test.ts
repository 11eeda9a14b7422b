/**
 * Schema validation at the broker for PROTOBUF and JSON schemas (docs/schema-registry.md, "Validation
 * at the broker"), over Kafka (kafkajs 2.2.4; the raw Produce for the reason on the wire) and over
 * HTTP. Records are in Confluent's wire format: magic byte 0, the 4-byte id, and for Protobuf the
 * message indexes written by Confluent's own client code (`SchemaId` of `@confluentinc/schemaregistry`),
 * then the message encoded by protobufjs; JSON records come from Confluent's `JsonSerializer`.
 * A valid record passes; a wrong id, an id of another subject, an unknown id, message indexes that
 * name no message, a payload that does not decode, and a JSON document the schema refuses are
 * INVALID_RECORD over Kafka and `422 record_invalid` over HTTP, with the reason. A null value (a
 * tombstone) or null key passes, as in Confluent Server.
 */
import { JsonSerializer, SerdeType } from '@confluentinc/schemaregistry';
import { produce } from '../kafka/raw-produce';
import { encodeRecordBatch } from '../../src/util/record-batch';
import { ORDER_JSON, SHOP_PROTO, encodeShop, protoRecord } from './wire-format';
import { batchOf, validationNode } from './validation-node';

const withId = (framed: Buffer, id: number): Buffer => {
  const b = Buffer.from(framed);
  b.writeInt32BE(id, 1);
  return b;
};

describe('schema validation of Protobuf and JSON Schema records', () => {
  const v = validationNode('svc-validation-formats');

  const refusal = async (p: Promise<unknown>): Promise<Error & { type?: string }> => {
    try {
      await p;
    } catch (err) {
      return err as Error & { type?: string };
    }
    throw new Error('expected the produce to be refused');
  };
  const validatedTopic = async (topic: string): Promise<void> => {
    expect(await v.admin.createTopics({ topics: [{ topic, numPartitions: 1, configEntries: [{ name: 'confluent.value.schema.validation', value: 'true' }] }] })).toBe(true);
  };
  /** The partition's answer to one batch of `values` (raw Produce: the reason is in errorMessage). */
  const wire = (topic: string, values: Buffer[]): ReturnType<typeof produce> => produce(v.raw, topic, batchOf(values));
  const post = (stream: string, body: Buffer): Promise<Response> => fetch(`${v.node.url}${stream}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body });
  const http422 = async (stream: string, body: Buffer): Promise<string> => {
    const r = await post(stream, body);
    expect(r.status).toBe(422);
    const b = (await r.json()) as { error: string; message: string };
    expect(b.error).toBe('record_invalid');
    return b.message;
  };
  const count = async (stream: string): Promise<number> => ((await (await fetch(`${v.node.url}${stream}?seq=0&format=json`)).json()) as unknown[]).length;

  test('Protobuf over Kafka: the message the indexes name decodes (top-level, nested, after an enum); other indexes, bad bytes and foreign ids are INVALID_RECORD', async () => {
    const id = await v.registry.register('pb-value', { schemaType: 'PROTOBUF', schema: SHOP_PROTO });
    await validatedTopic('pb');
    const order = protoRecord(id, [0], encodeShop('shop.v1.Order', { id: 'o-1', amount: 42, lines: [{ sku: 'a', qty: 2 }] }));
    const refund = protoRecord(id, [1], encodeShop('shop.v1.Refund', { order_id: 'o-1', kind: 1 }));
    const line = protoRecord(id, [0, 0], encodeShop('shop.v1.Order.Line', { sku: 'b', qty: 3 }));
    const note = protoRecord(id, [0, 0, 0], encodeShop('shop.v1.Order.Line.Note', { text: 'gift' }));
    // [0] is written as the single byte 0; [1] as count 1, index 1 (zig-zag varints).
    expect(order.subarray(5, 6)).toEqual(Buffer.from([0]));
    expect(refund.subarray(5, 7)).toEqual(Buffer.from([2, 2]));
    const ok = await v.producer.send({ topic: 'pb', messages: [order, refund, line, note].map((value) => ({ value })) });
    expect(ok[0]!.errorCode).toBe(0);
    expect(await count('/pb')).toBe(4);

    // Message indexes naming no message: a third top-level message (the enum is not one), a nested index past the end.
    expect((await wire('pb', [protoRecord(id, [2], encodeShop('shop.v1.Refund', { order_id: 'x' }))])).errorMessage).toMatch(/message indexes \[2\] name no message of the schema/);
    expect((await wire('pb', [protoRecord(id, [1, 0], encodeShop('shop.v1.Refund', { order_id: 'x' }))])).errorMessage).toMatch(/message indexes \[1, 0\] name no message/);
    // The message without its indexes (a serializer that is not Confluent's): the first byte is a field tag.
    const noIndexes = Buffer.concat([order.subarray(0, 5), encodeShop('shop.v1.Refund', { order_id: 'o-1', kind: 1 })]);
    expect((await wire('pb', [noIndexes])).errorMessage).toMatch(/Protobuf message indexes are malformed/);
    // Bytes that are not the message: a length-delimited field longer than the record, an invalid wire type, invalid UTF-8 in a string.
    const truncated = protoRecord(id, [1], Buffer.from([0x0a, 0x05, 0x41]));
    expect((await wire('pb', [truncated])).errorMessage).toMatch(/not a shop\.v1\.Refund message: index out of range/);
    expect((await wire('pb', [protoRecord(id, [0], Buffer.from('this is text, not protobuf'))])).errorMessage).toMatch(/not a shop\.v1\.Order message: invalid wire type/);
    expect((await wire('pb', [protoRecord(id, [1], Buffer.from([0x0a, 0x02, 0xc3, 0x28]))])).errorMessage).toMatch(/not a shop\.v1\.Refund message/);
    // An unknown id, and the id of a schema registered under another subject.
    expect((await wire('pb', [withId(order, 987654)])).errorMessage).toMatch(/schema id 987654 of the value: Schema 987654 not found/);
    const other = await v.registry.register('elsewhere-pb-value', { schemaType: 'PROTOBUF', schema: 'syntax = "proto3";\npackage other.v1;\nmessage Thing { string id = 1; }\n' });
    expect((await wire('pb', [protoRecord(other, [0], encodeShop('shop.v1.Refund', { order_id: 'x' }))])).errorMessage).toMatch(new RegExp(`schema id ${other} of the value is not registered under subject pb-value`));
    // kafkajs sees INVALID_RECORD; one bad record refuses its whole batch.
    expect((await refusal(v.producer.send({ topic: 'pb', messages: [{ value: order }, { value: truncated }] }))).type).toBe('INVALID_RECORD');
    expect(await count('/pb')).toBe(4);
  });

  test('JSON Schema over Kafka: what the JsonSerializer writes passes; a document the schema refuses, non-JSON and foreign ids are INVALID_RECORD', async () => {
    await v.registry.register('js-value', { schemaType: 'JSON', schema: JSON.stringify(ORDER_JSON) });
    await validatedTopic('js');
    const serializer = new JsonSerializer(v.registry, SerdeType.VALUE, { useLatestVersion: true });
    const framed = await serializer.serialize('js', { id: 'o-1', amount: 3 });
    const ok = await v.producer.send({ topic: 'js', messages: [{ value: framed }] });
    expect(ok[0]!.errorCode).toBe(0);

    const header = framed.subarray(0, 5);
    const doc = (v: unknown): Buffer => Buffer.concat([header, Buffer.from(JSON.stringify(v))]);
    expect((await wire('js', [doc({ id: 'o-2', amount: -1 })])).errorMessage).toMatch(/the value does not match schema id \d+: \/amount: must be >= 0/);
    expect((await wire('js', [doc({ id: 'o-2' })])).errorMessage).toMatch(/\(root\): must have required property 'amount'/);
    expect((await wire('js', [doc({ id: 'o-2', amount: 1, extra: true })])).errorMessage).toMatch(/must NOT have additional properties/);
    expect((await wire('js', [Buffer.concat([header, Buffer.from('{"id": "o-2", ')])])).errorMessage).toMatch(/does not match schema id \d+: not JSON/);
    expect((await wire('js', [withId(framed, 987655)])).errorMessage).toMatch(/Schema 987655 not found/);
    const avro = await v.registry.register('elsewhere-js-value', { schemaType: 'JSON', schema: JSON.stringify({ ...ORDER_JSON, title: 'other.Order' }) });
    expect((await wire('js', [withId(framed, avro)])).errorMessage).toMatch(new RegExp(`schema id ${avro} of the value is not registered under subject js-value`));
    // The raw document without the wire format (a producer without the registry).
    expect((await wire('js', [Buffer.from(JSON.stringify({ id: 'o-3', amount: 1 }))])).errorMessage).toMatch(/does not start with the schema registry's wire format/);
    expect((await refusal(v.producer.send({ topic: 'js', messages: [{ value: doc({ id: 'o-4', amount: 1.5 }) }] }))).type).toBe('INVALID_RECORD');
    expect(await count('/js')).toBe(1);
  });

  test('over HTTP: the same records are appended or refused with 422 record_invalid and the reason', async () => {
    const pbId = await v.registry.register('hpb-value', { schemaType: 'PROTOBUF', schema: SHOP_PROTO });
    const jsId = await v.registry.register('hjs-value', { schemaType: 'JSON', schema: JSON.stringify(ORDER_JSON) });
    for (const s of ['/hpb', '/hjs']) {
      expect((await fetch(`${v.node.url}${s}`, { method: 'PUT' })).status).toBe(201);
      const r = await fetch(`${v.node.url}/_streams${s}`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json' }, body: JSON.stringify({ registryValidation: { value: true } }) });
      expect(r.status).toBe(200);
    }
    expect((await post('/hpb', protoRecord(pbId, [0, 0], encodeShop('shop.v1.Order.Line', { sku: 'a', qty: 1 })))).status).toBe(200);
    expect(await http422('/hpb', protoRecord(pbId, [3], encodeShop('shop.v1.Refund', {})))).toMatch(/^records\[0\]: .*message indexes \[3\] name no message/);
    expect(await http422('/hpb', protoRecord(pbId, [1], Buffer.from([0x0a, 0x05, 0x41])))).toMatch(/^records\[0\]: the value does not match schema id \d+: not a shop\.v1\.Refund message/);
    expect(await http422('/hpb', protoRecord(jsId, [0], encodeShop('shop.v1.Order', { id: 'x' })))).toMatch(new RegExp(`schema id ${jsId} of the value is not registered under subject hpb-value`));

    const framed = await new JsonSerializer(v.registry, SerdeType.VALUE, { useLatestVersion: true }).serialize('hjs', { id: 'o-1', amount: 3 });
    expect((await post('/hjs', framed)).status).toBe(200);
    expect(await http422('/hjs', Buffer.concat([framed.subarray(0, 5), Buffer.from('{"id":"o-1","amount":"3"}')]))).toMatch(/^records\[0\]: the value does not match schema id \d+: \/amount: must be integer/);
    expect(await http422('/hjs', withId(framed, 987656))).toMatch(/Schema 987656 not found/);
    // A binary batch: the second record is refused, nothing of the batch is written.
    const batch = encodeRecordBatch({ baseOffset: 0, baseTimestamp: Date.now(), records: [framed, Buffer.concat([framed.subarray(0, 5), Buffer.from('[]')])].map((value) => ({ key: null, value, headers: null })) });
    const r = await fetch(`${v.node.url}/hjs`, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch' }, body: batch });
    expect(r.status).toBe(422);
    expect(((await r.json()) as { message: string }).message).toMatch(/^records\[1\]: the value does not match schema id \d+: \(root\): must be object/);
    expect(await count('/hpb')).toBe(1);
    expect(await count('/hjs')).toBe(1);
  });

  test('a tombstone (null value) and a null key pass validation, as in Confluent Server; over HTTP in a binary batch too', async () => {
    const id = await v.registry.register('tomb-value', { schemaType: 'PROTOBUF', schema: SHOP_PROTO });
    await v.registry.register('tomb-key', { schemaType: 'PROTOBUF', schema: SHOP_PROTO });
    const configEntries = [
      { name: 'confluent.value.schema.validation', value: 'true' },
      { name: 'confluent.key.schema.validation', value: 'true' },
    ];
    expect(await v.admin.createTopics({ topics: [{ topic: 'tomb', numPartitions: 1, configEntries }] })).toBe(true);
    const key = protoRecord(id, [1], encodeShop('shop.v1.Refund', { order_id: 'o-1' }));
    const value = protoRecord(id, [0], encodeShop('shop.v1.Order', { id: 'o-1', amount: 1 }));
    const r = await v.producer.send({
      topic: 'tomb',
      messages: [
        { key, value },
        { key, value: null },
        { key: null, value },
      ],
    });
    expect(r[0]!.errorCode).toBe(0);
    // A raw key beside a tombstone is still refused.
    expect((await produce(v.raw, 'tomb', encodeRecordBatch({ baseOffset: 0, baseTimestamp: Date.now(), records: [{ key: Buffer.from('raw key'), value: null, headers: null }] }))).errorMessage).toMatch(
      /record 0: the key does not start with the schema registry's wire format/,
    );
    expect(await count('/tomb')).toBe(3);

    expect((await fetch(`${v.node.url}/htomb`, { method: 'PUT' })).status).toBe(201);
    await v.registry.register('htomb-value', { schemaType: 'PROTOBUF', schema: SHOP_PROTO });
    await fetch(`${v.node.url}/_streams/htomb`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json' }, body: JSON.stringify({ registryValidation: { value: true } }) });
    const batch = encodeRecordBatch({ baseOffset: 0, baseTimestamp: Date.now(), records: [{ key: Buffer.from('k'), value: null, headers: null }] });
    expect((await fetch(`${v.node.url}/htomb`, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch' }, body: batch })).status).toBe(200);
  });
});
