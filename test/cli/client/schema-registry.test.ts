/**
 * `svc schema subjects|versions|show|register|check|delete|compatibility`: the real `svc` binary
 * against a real node's admin listener (docs/cli.md, "Schema registry").
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type NodeProcess, startNode, tempDir } from '../../helpers/node-process';
import { clientEnv, svc } from '../../helpers/svc-cli';

let node: NodeProcess;
let env: NodeJS.ProcessEnv;
let dir: string;

beforeAll(async () => {
  node = await startNode();
  env = clientEnv({ SVC_URL: node.url, SVC_ADMIN_URL: node.adminUrl! });
  dir = tempDir('svc-cli-schemas-');
});
afterAll(async () => {
  await node.stop();
});

const run = (args: string[], input?: string) => svc(args, { env, input });
const file = (name: string, text: string): string => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
};
const avro = (fields: unknown[]): string => JSON.stringify({ type: 'record', name: 'User', fields });

test('register from a file, list subjects and versions, show a version', async () => {
  const v1 = file('user-v1.avsc', avro([{ name: 'a', type: 'string' }]));
  expect(await run(['schema', 'register', 'users', v1])).toMatchObject({ code: 0, stdout: expect.stringMatching(/^registered users version 1 \(id \d+\)\n$/) });
  const subjects = await run(['schema', 'subjects']);
  expect(subjects.code).toBe(0);
  expect(subjects.stdout).toMatch(/^SUBJECT\s+VERSIONS\s+ID\s+TYPE\s+COMPATIBILITY\s+STREAMS\n/);
  expect(subjects.stdout).toMatch(/users\s+1\s+\d+\s+AVRO\s+BACKWARD/);
  const json = JSON.parse((await run(['schema', 'subjects', '-o', 'json'])).stdout) as { subjects: Array<{ subject: string }> };
  expect(json.subjects.map((s) => s.subject)).toContain('users');
  expect((await run(['schema', 'versions', 'users'])).stdout).toMatch(/VERSION\s+ID\s+TYPE\s+DELETED\n1\s+\d+\s+AVRO\s+false\n/);
  const shown = await run(['schema', 'show', 'users']);
  expect(shown.stdout).toMatch(/^# users version 1 \(id \d+, AVRO\)\n/);
  expect(JSON.parse(shown.stdout.split('\n').slice(1).join('\n'))).toEqual(JSON.parse(avro([{ name: 'a', type: 'string' }])));
  // A JSON Schema from stdin with --type; the stream schema `svc schema put` writes is a subject too.
  expect((await run(['schema', 'register', 'events', '-', '--type', 'json'], '{"type":"object"}')).code).toBe(0);
  expect((await run(['schema', 'put', 'orders', '-'], '{"type":"object"}')).code).toBe(0);
  expect((await run(['schema', 'subjects', '--prefix', 'svc-'])).stdout).toMatch(/svc-orders\s+1\s+\d+\s+JSON\s+NONE/);
});

test('check answers compatible or lists the problems with exit 1; compatibility reads and sets the level', async () => {
  file('u1.avsc', avro([{ name: 'a', type: 'string' }]));
  expect((await run(['schema', 'register', 'people', path.join(dir, 'u1.avsc')])).code).toBe(0);
  const bad = file('u2.avsc', avro([{ name: 'a', type: 'string' }, { name: 'b', type: 'int' }]));
  const incompatible = await run(['schema', 'check', 'people', bad]);
  expect(incompatible.code).toBe(1);
  expect(incompatible.stdout).toMatch(/^incompatible:\n {2}\S/);
  const refused = await run(['schema', 'register', 'people', bad]);
  expect(refused.code).toBe(5);
  expect(refused.stderr).toMatch(/409 conflict: .*incompatible/);
  expect((await run(['schema', 'compatibility', 'people'])).stdout).toMatch(/compatibilityLevel:\s+BACKWARD/);
  expect((await run(['schema', 'compatibility', 'people', 'none'])).stdout).toMatch(/compatibilityLevel:\s+NONE/);
  expect(await run(['schema', 'check', 'people', bad])).toMatchObject({ code: 0, stdout: 'compatible\n' });
  expect((await run(['schema', 'register', 'people', bad])).stdout).toMatch(/version 2/);
});

test('delete removes a version or a subject, soft then permanent; a missing subject exits 4', async () => {
  file('d.avsc', avro([{ name: 'a', type: 'string' }]));
  expect((await run(['schema', 'register', 'doomed', path.join(dir, 'd.avsc')])).code).toBe(0);
  expect((await run(['schema', 'delete', 'doomed', '--version', '1'])).code).toBe(0);
  expect((await run(['schema', 'versions', 'doomed', '--deleted', '-o', 'json'])).stdout).toMatch(/"deleted":true/);
  expect((await run(['schema', 'delete', 'doomed', '--permanent'])).code).toBe(0);
  const gone = await run(['schema', 'show', 'doomed']);
  expect(gone.code).toBe(4);
  expect(gone.stderr).toMatch(/404 not_found/);
  expect((await run(['schema', 'show', 'doomed', 'x'])).code).toBe(2);
});
