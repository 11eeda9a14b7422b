/**
 * Schema validation at the broker over the protocol listener (docs/protocol.md, "Stream config"):
 * `registryValidation` set by PATCH /_streams/{name}, shown by GET; an append whose body is not in
 * the registry's wire format is `422 record_invalid` naming the record and the reason; the same
 * record framed by Confluent's serializer (`@confluentinc/schemaregistry`) is appended; a binary
 * batch is checked record by record; `null` turns validation off. The same stream's appends on the
 * Durable Streams listener are checked too (JSON mode refused), and a delete there forgets the rule.
 */
import { AvroSerializer, SchemaRegistryClient, SerdeType } from '@confluentinc/schemaregistry';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { encodeRecordBatch } from '../../src/util/record-batch';
import { registryUrl } from './registry-node';

const USER = { type: 'record', name: 'User', namespace: 'com.example', fields: [{ name: 'name', type: 'string' }] };

describe('schema validation of HTTP appends', () => {
  let node: NodeProcess;
  let registry: SchemaRegistryClient;

  beforeAll(async () => {
    node = await startNode({ args: ['--schema-registry-listen', '127.0.0.1:0', '--ds-listen', '127.0.0.1:0'] });
    registry = new SchemaRegistryClient({ baseURLs: [registryUrl(node)], maxRetries: 0 });
  });
  afterAll(async () => {
    await node?.stop();
  });

  const patch = (stream: string, body: unknown): Promise<Response> =>
    fetch(`${node.url}/_streams${stream}`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json' }, body: JSON.stringify(body) });
  const post = (stream: string, body: Buffer, type = 'application/octet-stream'): Promise<Response> => fetch(`${node.url}${stream}`, { method: 'POST', headers: { 'content-type': type }, body });

  test('a raw body is 422 record_invalid, the framed record is appended, a binary batch is checked per record, null turns it off', async () => {
    expect((await fetch(`${node.url}/users`, { method: 'PUT' })).status).toBe(201);
    await registry.register('users-value', { schemaType: 'AVRO', schema: JSON.stringify(USER) });
    const set = await patch('/users', { registryValidation: { value: true } });
    expect(set.status).toBe(200);
    expect((await set.json()) as object).toMatchObject({
      registryValidation: { value: true, key: false, valueSubjectNameStrategy: 'io.confluent.kafka.serializers.subject.TopicNameStrategy', deadLetter: null },
    });
    const framed = await new AvroSerializer(registry, SerdeType.VALUE, { useLatestVersion: true }).serialize('users', { name: 'ada' });

    const raw = await post('/users', framed.subarray(5));
    expect(raw.status).toBe(422);
    const body = (await raw.json()) as { error: string; message: string };
    expect(body.error).toBe('record_invalid');
    expect(body.message).toMatch(/^records\[0\]: the value does not start with the schema registry's wire format/);

    expect((await post('/users', framed)).status).toBe(200);
    const batch = encodeRecordBatch({ baseOffset: 0, baseTimestamp: Date.now(), records: [framed, Buffer.from('raw')].map((value) => ({ key: null, value, headers: null })) });
    const refused = await post('/users', batch, 'application/vnd.svc.batch');
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as { message: string }).message).toMatch(/^records\[1\]: /);
    expect((await fetch(`${node.url}/users?seq=0`).then((r) => r.json())) as unknown[]).toHaveLength(1);

    const off = await patch('/users', { registryValidation: null });
    expect(((await off.json()) as { registryValidation: unknown }).registryValidation).toBeNull();
    expect((await post('/users', Buffer.from('raw'))).status).toBe(200);
  });

  test('the Durable Streams listener checks the same stream: raw bytes and JSON messages are 422, the framed record is appended; its delete forgets the rule', async () => {
    expect((await fetch(`${node.url}/dsv`, { method: 'PUT' })).status).toBe(201);
    await registry.register('dsv-value', { schemaType: 'AVRO', schema: JSON.stringify(USER) });
    expect((await patch('/dsv', { registryValidation: { value: true } })).status).toBe(200);
    const framed = await new AvroSerializer(registry, SerdeType.VALUE, { useLatestVersion: true }).serialize('dsv', { name: 'grace' });
    const ds = (body: Buffer | string, type = 'application/octet-stream'): Promise<Response> => fetch(`${node.dsUrl}/v1/stream/dsv`, { method: 'POST', headers: { 'content-type': type }, body });

    const raw = await ds(framed.subarray(5));
    expect(raw.status).toBe(422);
    expect(await raw.text()).toMatch(/^records\[0\]: the value does not start with the schema registry's wire format/);
    const json = await ds('[{"name": "grace"}]', 'application/json');
    expect(json.status).toBe(422);
    expect(await json.text()).toMatch(/not JSON messages/);
    expect((await ds(framed)).status).toBe(204);
    const stored = (await fetch(`${node.url}/dsv?seq=0`).then((r) => r.json())) as unknown[];
    expect(stored).toHaveLength(1);

    expect((await fetch(`${node.dsUrl}/v1/stream/dsv`, { method: 'DELETE' })).status).toBe(204);
    expect((await fetch(`${node.url}/dsv`, { method: 'PUT' })).status).toBe(201);
    expect(((await fetch(`${node.url}/_streams/dsv`).then((r) => r.json())) as { registryValidation: unknown }).registryValidation).toBeNull();
    expect((await ds(Buffer.from('raw'))).status).toBe(204);
  });

  test('a malformed registryValidation is 400 invalid_parameter', async () => {
    expect((await fetch(`${node.url}/users2`, { method: 'PUT' })).status).toBe(201);
    const r = await patch('/users2', { registryValidation: { valueSubjectNameStrategy: 'Nope' } });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: string }).error).toBe('invalid_parameter');
  });
});
