/**
 * Schema validation with `--gateway-threads 2` (docs/schema-registry.md, "Where it runs"): the
 * gateway threads leave a validated stream's writes to the main thread, which holds the registry,
 * and learn which streams those are before a rule change is answered. Sixteen keep-alive
 * connections, spread by the kernel over both threads (and the main thread's I/O), so an append
 * answered by a thread that skipped the check would be a 200 among the 422s.
 */
import type * as http from 'node:http';
import { AvroSerializer, SchemaRegistryClient, SerdeType } from '@confluentinc/schemaregistry';
import { type Answer, connections, requestOn } from '../helpers/keep-alive';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { registryUrl } from './registry-node';

const USER = { type: 'record', name: 'User', namespace: 'com.example', fields: [{ name: 'name', type: 'string' }] };
const CONNECTIONS = 16;

describe('schema validation with gateway threads', () => {
  let node: NodeProcess;
  let registry: SchemaRegistryClient;
  let agents: http.Agent[];

  beforeAll(async () => {
    node = await startNode({ args: ['--gateway-threads', '2', '--schema-registry-listen', '127.0.0.1:0'] });
    registry = new SchemaRegistryClient({ baseURLs: [registryUrl(node)], maxRetries: 0 });
    agents = connections(CONNECTIONS);
  }, 60_000);
  afterAll(async () => {
    for (const a of agents ?? []) a.destroy();
    await node?.stop();
  });

  /** One request on connection `c`'s one keep-alive socket. */
  const request = (c: number, method: string, path: string, body?: Buffer | string, headers: Record<string, string> = {}): Promise<Answer> => requestOn(agents[c]!, `${node.url}${path}`, method, body, headers);
  const everyConnection = (f: (c: number) => Promise<Answer>): Promise<Answer[]> => Promise.all(agents.map((_, c) => f(c)));
  const statuses = (answers: Answer[]): number[] => answers.map((a) => a.status);
  const octets = { 'content-type': 'application/octet-stream' };

  test('every connection\'s raw append is refused once the rule is answered; framed ones are appended; a delete on any connection forgets the rule', async () => {
    expect((await request(0, 'PUT', '/gwv')).status).toBe(201);
    await registry.register('gwv-value', { schemaType: 'AVRO', schema: JSON.stringify(USER) });
    const framed = await new AvroSerializer(registry, SerdeType.VALUE, { useLatestVersion: true }).serialize('gwv', { name: 'ada' });
    // Connections opened (and spread over the threads) before the rule exists.
    expect(statuses(await everyConnection((c) => request(c, 'POST', '/gwv', framed, octets)))).toEqual(Array(CONNECTIONS).fill(200));

    const set = await request(3, 'PATCH', '/_streams/gwv', JSON.stringify({ registryValidation: { value: true } }), { 'content-type': 'application/merge-patch+json' });
    expect(set.status).toBe(200);
    const raw = await everyConnection((c) => request(c, 'POST', '/gwv', Buffer.from(`raw ${c}`), octets));
    expect(statuses(raw)).toEqual(Array(CONNECTIONS).fill(422));
    for (const r of raw) expect(JSON.parse(r.body)).toMatchObject({ error: 'record_invalid' });
    expect(statuses(await everyConnection((c) => request(c, 'POST', '/gwv', framed, octets)))).toEqual(Array(CONNECTIONS).fill(200));
    const records = JSON.parse((await request(5, 'GET', '/gwv?seq=0')).body) as unknown[];
    expect(records).toHaveLength(2 * CONNECTIONS);

    // A delete, wherever it lands, forgets the stream's rule: a new stream of that name validates nothing.
    expect((await request(CONNECTIONS - 1, 'DELETE', '/gwv')).status).toBe(204);
    expect((await request(7, 'PUT', '/gwv')).status).toBe(201);
    expect(statuses(await everyConnection((c) => request(c, 'POST', '/gwv', Buffer.from(`raw ${c}`), octets)))).toEqual(Array(CONNECTIONS).fill(200));
    expect(JSON.parse((await request(2, 'GET', '/_streams/gwv')).body)).toMatchObject({ registryValidation: null });
  });
});
