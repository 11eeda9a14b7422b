/**
 * confluent-kafka-python's SchemaRegistryClient (Debian's python3-confluent-kafka 1.7, with
 * python3-jsonschema for its JSON Schema serializer) against the schema registry listener:
 * register, evolve, a 409 it parses, lookups, ids, and JSON Schema values in the Confluent wire
 * format. (Its Avro serializer needs fastavro, which Debian does not package.)
 */
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { newRootToken, registryUrl } from './registry-node';

const ROOT = newRootToken();
let node: NodeProcess;
let url: string;

beforeAll(async () => {
  node = await startNode({ args: ['--schema-registry-listen', '127.0.0.1:0', '--auth', 'required', '--auth-bootstrap-token', ROOT] });
  url = registryUrl(node);
});

afterAll(async () => {
  await node?.stop();
});

function runClient(command: object): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn('/usr/bin/python3', [path.join(__dirname, 'clients', 'confluent_schema_registry.py'), JSON.stringify(command)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), 45_000);
    p.once('error', reject);
    p.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test('confluent-kafka-python registers, evolves, is refused with 409, looks up and round-trips JSON Schema values', async () => {
  const r = await runClient({ url, token: ROOT });
  if (r.code !== 0) throw new Error(`the Python client failed (${r.code}):\n${r.stderr.slice(-3000)}`);
  const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
  expect(out['id2']).not.toBe(out['id1']);
  expect(out['compatible_bad']).toBe(false);
  expect(out['bad']).toEqual({ status: 409, code: 409 });
  expect(out['latest']).toEqual({ id: out['id2'], version: 2, subject: 'readings-value' });
  expect(out['by_id']).toEqual({ type: 'record', name: 'Reading', namespace: 'py', fields: [{ name: 'value', type: 'double' }] });
  expect(out['lookup']).toEqual({ id: out['id1'], version: 1 });
  expect(out['versions']).toEqual([1, 2]);
  expect(out['missing']).toEqual({ status: 404, code: 40403 });
  expect(out['json_magic']).toBe(0);
  expect(out['json_id']).toBe(out['json_registered']);
  expect(out['json_value']).toEqual({ id: 3, item: 'pen' });
  expect(out['deleted']).toEqual([1]);
});
