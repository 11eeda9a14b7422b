/**
 * The schema registry listener with Confluent's own JavaScript client
 * (`@confluentinc/schemaregistry`): register, evolve (a compatible change accepted, an
 * incompatible one refused with 409 and the error code the client parses), read by id and by
 * version, serialize and deserialize Avro and JSON Schema values (validated against the registered
 * schema) with the Confluent wire format
 * (magic byte 0, 4-byte id), and the same ids after the node restarts on its data directory.
 * Auth: Basic credentials whose password is a scoped token, as the clients send them.
 */
import {
  AvroDeserializer,
  AvroSerializer,
  JsonDeserializer,
  JsonSerializer,
  type RestError,
  SchemaRegistryClient,
  SerdeType,
} from '@confluentinc/schemaregistry';
import { type NodeProcess, startNode, tempDir } from '../helpers/node-process';
import { newRootToken, registryUrl } from './registry-node';

const ROOT = newRootToken();

const clientFor = (url: string, token = ROOT): SchemaRegistryClient =>
  new SchemaRegistryClient({ baseURLs: [url], basicAuthCredentials: { credentialsSource: 'USER_INFO', userInfo: `svc:${token}` }, maxRetries: 0 });

const USER_V1 = { type: 'record', name: 'User', namespace: 'com.example', fields: [{ name: 'name', type: 'string' }] };
const USER_V2 = { ...USER_V1, fields: [...USER_V1.fields, { name: 'email', type: 'string', default: '' }] };
const USER_BAD = { ...USER_V1, fields: [{ name: 'name', type: 'int' }] };
const ORDER_JSON = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'Order',
  type: 'object',
  properties: { id: { type: 'integer' }, item: { type: 'string' } },
  required: ['id'],
  additionalProperties: false,
};

const dataDir = tempDir('svc-registry-');
const args = ['--schema-registry-listen', '127.0.0.1:0', '--auth', 'required', '--auth-bootstrap-token', ROOT];
let node: NodeProcess;
let url: string;

beforeAll(async () => {
  node = await startNode({ dataDir, args });
  url = registryUrl(node);
});

afterAll(async () => {
  await node?.stop();
});

async function refusal(p: Promise<unknown>): Promise<RestError> {
  try {
    await p;
  } catch (err) {
    return err as RestError;
  }
  throw new Error('expected a refusal');
}

describe('Confluent JavaScript client against the schema registry listener', () => {
  let userId: number;
  let userV2Id: number;
  let orderId: number;

  test('registers an Avro schema and gets one global id for it, the same under a second subject', async () => {
    const client = clientFor(url);
    userId = await client.register('users-value', { schemaType: 'AVRO', schema: JSON.stringify(USER_V1) });
    expect(userId).toBeGreaterThan(0);
    // Registering it again under the subject gives the same id and no new version.
    expect(await clientFor(url).register('users-value', { schemaType: 'AVRO', schema: JSON.stringify(USER_V1, null, 2) })).toBe(userId);
    expect(await client.getAllVersions('users-value')).toEqual([1]);
    expect(await client.register('people-value', { schemaType: 'AVRO', schema: JSON.stringify(USER_V1) })).toBe(userId);
  });

  test('accepts a compatible change (a field with a default) as version 2 under BACKWARD', async () => {
    const client = clientFor(url);
    userV2Id = await client.register('users-value', { schemaType: 'AVRO', schema: JSON.stringify(USER_V2) });
    expect(userV2Id).not.toBe(userId);
    const latest = await client.getLatestSchemaMetadata('users-value');
    expect(latest).toMatchObject({ subject: 'users-value', version: 2, id: userV2Id });
    expect(JSON.parse(latest.schema!)).toEqual(USER_V2);
    expect(await client.testSubjectCompatibility('users-value', { schemaType: 'AVRO', schema: JSON.stringify(USER_BAD) })).toBe(false);
  });

  test('refuses an incompatible change with 409, the body the client parses', async () => {
    const err = await refusal(clientFor(url).register('users-value', { schemaType: 'AVRO', schema: JSON.stringify(USER_BAD) }));
    expect(err.status).toBe(409);
    expect(err.errorCode).toBe(409);
    expect(err.message).toMatch(/incompatible/);
  });

  test('answers unknown subjects, versions and ids with 40401, 40402 and 40403', async () => {
    const client = clientFor(url);
    expect((await refusal(client.getLatestSchemaMetadata('nope'))).errorCode).toBe(40401);
    expect((await refusal(client.getSchemaMetadata('users-value', 9))).errorCode).toBe(40402);
    expect((await refusal(client.getBySubjectAndId('users-value', 999_999))).errorCode).toBe(40403);
    expect((await refusal(client.register('bad', { schemaType: 'AVRO', schema: '{"type": "record"}' }))).errorCode).toBe(42201);
  });

  test('serializes and deserializes Avro values: magic byte 0, the schema id, then the record', async () => {
    const client = clientFor(url);
    const ser = new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
    const bytes = await ser.serialize('users', { name: 'ada', email: 'ada@example.com' });
    expect(bytes[0]).toBe(0);
    expect(bytes.readInt32BE(1)).toBe(userV2Id);
    // A fresh client (no cache) finds the schema by id, as a consumer elsewhere would.
    const de = new AvroDeserializer(clientFor(url), SerdeType.VALUE, {});
    expect(await de.deserialize('users', bytes)).toEqual({ name: 'ada', email: 'ada@example.com' });
  });

  test('serializes and deserializes JSON Schema values against the registered schema', async () => {
    orderId = await clientFor(url).register('orders-value', { schemaType: 'JSON', schema: JSON.stringify(ORDER_JSON) });
    const ser = new JsonSerializer(clientFor(url), SerdeType.VALUE, { useLatestVersion: true, validate: true });
    const bytes = await ser.serialize('orders', { id: 7, item: 'book' });
    expect(bytes[0]).toBe(0);
    expect(bytes.readInt32BE(1)).toBe(orderId);
    const byId = await clientFor(url).getBySubjectAndId('orders-value', orderId);
    expect(byId.schemaType).toBe('JSON');
    const de = new JsonDeserializer(clientFor(url), SerdeType.VALUE, { validate: true });
    expect(await de.deserialize('orders', bytes)).toEqual({ id: 7, item: 'book' });
    // A value the registered schema refuses (no `id`) is not serialized.
    await expect(ser.serialize('orders', { item: 'no id' })).rejects.toThrow();
  });

  test('refuses a request without credentials (401) and a token without the schema operations (403)', async () => {
    const noAuth = new SchemaRegistryClient({ baseURLs: [url], maxRetries: 0 });
    const e401 = await refusal(noAuth.getAllSubjects());
    expect(e401.status).toBe(401);
    // A token that may read streams but not schemas.
    const issued = await fetch(`${node.adminUrl}/admin/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ROOT}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'reader', scope: { streams: [{ prefix: '/' }], groups: { stream: { read: true, write: false } }, ops: ['read'], audiences: ['svc'] } }),
    });
    expect(issued.status).toBe(201);
    const { token } = (await issued.json()) as { token: string };
    const e403 = await refusal(clientFor(url, token).getAllSubjects());
    expect(e403.status).toBe(403);
  });

  test('keeps every id, subject and version after the node restarts on its data directory', async () => {
    await node.stop();
    node = await startNode({ dataDir, args });
    url = registryUrl(node);
    const client = clientFor(url);
    expect(await client.getAllSubjects()).toEqual(['orders-value', 'people-value', 'users-value']);
    expect(await client.getId('users-value', { schemaType: 'AVRO', schema: JSON.stringify(USER_V1) })).toBe(userId);
    expect((await client.getSchemaMetadata('users-value', 2)).id).toBe(userV2Id);
    expect((await client.getBySubjectAndId('orders-value', orderId)).schemaType).toBe('JSON');
    // A new schema gets a new id, never one handed out before the restart.
    const next = await client.register('other-value', { schemaType: 'AVRO', schema: '"string"' });
    expect([userId, userV2Id, orderId]).not.toContain(next);
    expect(next).toBeGreaterThan(Math.max(userId, userV2Id, orderId));
  });
});
