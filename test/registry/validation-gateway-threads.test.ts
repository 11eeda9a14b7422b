/**
 * Schema validation with `--gateway-threads 2` (docs/schema-registry.md, "Where it runs"): the
 * gateway threads check a validated stream's appends themselves, with the rules the main thread
 * sends them before a rule change is answered and the schemas it sends them as records need them;
 * a registry change is answered once every thread has dropped what it knew of the subjects; a
 * validated stream's create and delete go to the main thread, which keeps the rules. Sixteen
 * keep-alive connections, spread by the kernel over both threads, so an append answered by a
 * thread that skipped the check would be a 200 among the 422s. Which thread served an append comes
 * from its trace span (`thread.name`).
 */
import type * as http from 'node:http';
import { AvroSerializer, SchemaRegistryClient, SerdeType } from '@confluentinc/schemaregistry';
import { type Answer, connections, requestOn } from '../helpers/keep-alive';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { registryUrl } from './registry-node';
import { type OtlpReceiver, startOtlpReceiver } from '../helpers/otlp-receiver';

const USER = { type: 'record', name: 'User', namespace: 'com.example', fields: [{ name: 'name', type: 'string' }] };
const CONNECTIONS = 16;

describe('schema validation with gateway threads', () => {
  let node: NodeProcess;
  let registry: SchemaRegistryClient;
  let agents: http.Agent[];
  let receiver: OtlpReceiver;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    node = await startNode({
      args: ['--gateway-threads', '2', '--schema-registry-listen', '127.0.0.1:0', '--otlp-traces-endpoint', receiver.url],
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '', OTEL_EXPORTER_OTLP_ENDPOINT: '', SVC_OTLP_TRACES_ENDPOINT: '' },
    });
    registry = new SchemaRegistryClient({ baseURLs: [registryUrl(node)], maxRetries: 0 });
    agents = connections(CONNECTIONS);
  }, 60_000);
  afterAll(async () => {
    for (const a of agents ?? []) a.destroy();
    await node?.stop();
    await receiver?.close();
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

  test('the threads check the appends themselves; a subject deleted in the registry is refused on every connection once the delete is answered', async () => {
    expect((await request(0, 'PUT', '/gwd')).status).toBe(201);
    await registry.register('gwd-value', { schemaType: 'AVRO', schema: JSON.stringify(USER) });
    const framed = await new AvroSerializer(registry, SerdeType.VALUE, { useLatestVersion: true }).serialize('gwd', { name: 'grace' });
    const set = await request(1, 'PATCH', '/_streams/gwd', JSON.stringify({ registryValidation: { value: true } }), { 'content-type': 'application/merge-patch+json' });
    expect(set.status).toBe(200);
    expect(statuses(await everyConnection((c) => request(c, 'POST', '/gwd', framed, octets)))).toEqual(Array(CONNECTIONS).fill(200));
    // Served and checked on the gateway threads: each append's span carries its thread's name.
    await receiver.waitFor((spans) => spans.filter((x) => x.name === 'svc append' && x.attributes['svc.stream'] === '/gwd').length === CONNECTIONS);
    const threads = new Set(receiver.spans.filter((x) => x.name === 'svc append' && x.attributes['svc.stream'] === '/gwd').map((x) => String(x.attributes['thread.name'])));
    expect([...threads].every((t) => /^svc-gw-\d+$/.test(t))).toBe(true);
    expect(threads.size).toBe(2);

    // The subject's versions deleted: the schema id is no longer registered under gwd-value.
    await registry.deleteSubject('gwd-value');
    const refused = await everyConnection((c) => request(c, 'POST', '/gwd', framed, octets));
    expect(statuses(refused)).toEqual(Array(CONNECTIONS).fill(422));
    for (const r of refused) expect(r.body).toContain('is not registered under subject gwd-value');
  });
});
