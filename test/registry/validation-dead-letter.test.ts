/**
 * Which appends a validation dead letter (`svc.schema.validation.dead.letter`, `registryValidation.deadLetter`)
 * takes, path by path (docs/schema-registry.md, "Validation at the broker"):
 *
 *   Kafka, plain producer (kafkajs, @platformatic/kafka)   refused records → dead letter, the others → the partition
 *     one batch, compressed or not; several batches in one partition's data
 *   Kafka, idempotent producer (kafkajs, @platformatic/kafka)   refused whole: INVALID_RECORD; nothing written
 *     anywhere, and the producer's next batch (same sequence) is accepted
 *   HTTP, single record or binary batch                  refused whole: 422 record_invalid; nothing written
 */
import { AvroSerializer, SerdeType } from '@confluentinc/schemaregistry';
import { CompressionTypes } from 'kafkajs';
import { initProducerId, produce } from '../kafka/raw-produce';
import { platformatic } from '../kafka/platformatic';
import { encodeRecordBatch } from '../../src/util/record-batch';
import { validationNode } from './validation-node';

const USER = { type: 'record', name: 'User', namespace: 'com.example', fields: [{ name: 'name', type: 'string' }] };

interface Stored {
  key: string | null;
  body: string;
  headers: Record<string, string>;
}

describe('dead letters of validation at the broker, per append path', () => {
  const v = validationNode('svc-validation-dlq');
  let valid: Buffer;

  beforeAll(async () => {
    for (const t of ['dl', 'idem', 'pf', 'nodl']) await v.registry.register(`${t}-value`, { schemaType: 'AVRO', schema: JSON.stringify(USER) });
    valid = await new AvroSerializer(v.registry, SerdeType.VALUE, { useLatestVersion: true }).serialize('dl', { name: 'ada' });
    const withDlq = (t: string): Array<{ name: string; value: string }> => [
      { name: 'confluent.value.schema.validation', value: 'true' },
      { name: 'svc.schema.validation.dead.letter', value: `${t}-dlq` },
    ];
    expect(
      await v.admin.createTopics({
        topics: [
          ...['dl', 'idem', 'pf'].flatMap((t) => [{ topic: t, numPartitions: 1, configEntries: withDlq(t) }, { topic: `${t}-dlq`, numPartitions: 1 }]),
          { topic: 'nodl', numPartitions: 1, configEntries: [{ name: 'confluent.value.schema.validation', value: 'true' }] },
        ],
      }),
    ).toBe(true);
  });

  const readAll = async (stream: string): Promise<Stored[]> => (await (await fetch(`${v.node.url}${stream}?seq=0&format=json`)).json()) as Stored[];
  const batch = (values: Buffer[], producer?: { id: bigint; epoch: number; seq: number }): Buffer =>
    encodeRecordBatch({
      baseOffset: 0,
      baseTimestamp: Date.now(),
      records: values.map((value, i) => ({ key: Buffer.from(`k${i}`), value, headers: null })),
      ...(producer === undefined ? {} : { producerId: producer.id, producerEpoch: producer.epoch, baseSequence: producer.seq }),
    });

  test('a plain producer: refused records of a compressed batch go to the dead letter with key and headers, the valid ones reach the partition', async () => {
    const r = await v.producer.send({
      topic: 'dl',
      compression: CompressionTypes.GZIP,
      messages: [
        { key: 'k1', value: valid },
        { key: 'k2', value: Buffer.from('raw'), headers: { trace: 't-2' } },
        { key: 'k3', value: valid },
      ],
    });
    expect(r[0]!.errorCode).toBe(0);
    const dead = await readAll('/dl-dlq');
    expect(dead.map((d) => [d.key, d.body])).toEqual([['k2', 'raw']]);
    expect(dead[0]!.headers).toMatchObject({ trace: 't-2', 'svc.validation.stream': '/dl', 'svc.validation.part': 'value' });
    expect((await readAll('/dl')).map((d) => d.key)).toEqual(['k1', 'k3']);
  });

  test('several batches in one partition: the refused records of each go to the dead letter; without one, each is named by batch', async () => {
    const two = Buffer.concat([batch([valid, Buffer.from('raw a')]), batch([Buffer.from('raw b'), valid, valid])]);
    const r = await produce(v.raw, 'dl', two);
    expect(r.errorCode).toBe(0);
    expect((await readAll('/dl-dlq')).slice(1).map((d) => d.body)).toEqual(['raw a', 'raw b']);
    expect(await readAll('/dl')).toHaveLength(2 + 3);

    const refused = await produce(v.raw, 'nodl', two);
    expect(refused.errorCode).toBe(87);
    expect(refused.errorMessage).toMatch(/^schema validation refused record 1: .*\(and 1 more\)$/);
    expect(refused.recordErrors!.map((e) => e.batchIndexErrorMessage)).toEqual([expect.stringMatching(/^record 1: /), expect.stringMatching(/^record 0 of batch 1: /)]);
    expect(await readAll('/nodl')).toHaveLength(0);
  });

  test('an idempotent producer: its batch is refused whole (INVALID_RECORD) although a dead letter is set, and its sequence stays usable', async () => {
    // kafkajs needs retries for idempotence; INVALID_RECORD is not retried.
    const idem = v.kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false, retry: { retries: 2, initialRetryTime: 50 } });
    await idem.connect();
    try {
      let type: string | undefined;
      try {
        await idem.send({ topic: 'idem', messages: [{ value: valid }, { value: Buffer.from('raw') }] });
      } catch (err) {
        type = (err as { type?: string }).type;
      }
      expect(type).toBe('INVALID_RECORD');
      // The refused batch consumed no sequence: the producer's next batch (sequence 0 again) is written at offset 0.
      expect((await idem.send({ topic: 'idem', messages: [{ value: valid }] }))[0]).toMatchObject({ errorCode: 0, baseOffset: '0' });
      expect((await idem.send({ topic: 'idem', messages: [{ value: valid }, { value: valid }] }))[0]).toMatchObject({ errorCode: 0, baseOffset: '1' });
    } finally {
      await idem.disconnect();
    }
    // The reason says why the dead letter was not used.
    const pid = await initProducerId(v.raw);
    const r = await produce(v.raw, 'idem', batch([valid, Buffer.from('raw')], { id: pid.producerId, epoch: pid.producerEpoch, seq: 0 }));
    expect(r.errorCode).toBe(87);
    expect(r.errorMessage).toMatch(/record 1: .*; an idempotent or transactional batch is not dead-lettered: its sequence numbers cannot skip records$/);
    expect(await readAll('/idem-dlq')).toHaveLength(0);
    expect(await readAll('/idem')).toHaveLength(3);
  });

  test('@platformatic/kafka: a plain producer is dead-lettered, an idempotent one is refused whole', async () => {
    const messages = [
      { key: 'ok', valueBase64: valid.toString('base64') },
      { key: 'bad', value: 'raw' },
    ];
    const plain = await platformatic({ op: 'produce', broker: v.node.kafka, topic: 'pf', messages });
    expect(plain.ok).toBe(true);
    expect((await readAll('/pf-dlq')).map((d) => d.key)).toEqual(['bad']);
    expect((await readAll('/pf')).map((d) => d.key)).toEqual(['ok']);

    const idem = await platformatic({ op: 'produce', broker: v.node.kafka, topic: 'pf', idempotent: true, messages });
    expect(idem.ok).toBe(false);
    // The client reports the partition's error without its code; what was stored shows it was refused whole.
    expect(idem.errors).toEqual([expect.stringMatching(/error while executing API Produce/)]);
    expect(await readAll('/pf-dlq')).toHaveLength(1);
    expect(await readAll('/pf')).toHaveLength(1);
  });

  test('HTTP: a single record or a binary batch is refused whole (422 record_invalid) with a dead letter set; nothing reaches either stream', async () => {
    for (const s of ['/hdl', '/hdl-dlq']) expect((await fetch(`${v.node.url}${s}`, { method: 'PUT' })).status).toBe(201);
    await v.registry.register('hdl-value', { schemaType: 'AVRO', schema: JSON.stringify(USER) });
    const set = await fetch(`${v.node.url}/_streams/hdl`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ registryValidation: { value: true, deadLetter: '/hdl-dlq' } }),
    });
    expect(((await set.json()) as { registryValidation: object }).registryValidation).toMatchObject({ value: true, deadLetter: '/hdl-dlq' });
    const post = (body: Buffer, type = 'application/octet-stream'): Promise<Response> => fetch(`${v.node.url}/hdl`, { method: 'POST', headers: { 'content-type': type }, body });
    const single = await post(Buffer.from('raw'));
    expect(single.status).toBe(422);
    expect(((await single.json()) as { error: string }).error).toBe('record_invalid');
    const refused = await post(batch([valid, Buffer.from('raw')]), 'application/vnd.svc.batch');
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as { message: string }).message).toMatch(/^records\[1\]: /);
    expect(await readAll('/hdl-dlq')).toHaveLength(0);
    expect(await readAll('/hdl')).toHaveLength(0);
    expect((await post(valid)).status).toBe(200);
  });
});
