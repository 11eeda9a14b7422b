/**
 * Startup is not all or nothing (`[connectors] startup = "retry"`, the default): a sink whose
 * PostgreSQL is down at boot is `degraded` and started again with backoff while the other
 * connectors run, and it starts on its own once the database is up. With `startup = "strict"`
 * (the spec's rule) the runtime exits instead, naming every missing plugin at once.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { freePort } from '../helpers/free-ports';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { startPostgres } from './helpers/postgres-process';
import { runRuntimeToExit, startRuntime, waitFor, writeRuntimeFiles } from './helpers/runtime-process';

interface View {
  status: string;
  last_error: { message: string } | null;
}

let node: NodeProcess;
beforeAll(async () => {
  node = await startNode({ args: ['--no-admin', '--shards', '1', '--shard-workers', '1'] });
});
afterAll(async () => {
  await node?.stop();
});

test('a sink whose database is down at start is degraded while the others run, and starts once the database is up', async () => {
  const pgPort = await freePort();
  const pgUrl = `postgres://postgres@127.0.0.1:${pgPort}/postgres`;
  await fetch(`${node.url}/boot-in`, { method: 'PUT', headers: { 'content-type': 'application/json' } });
  const records = Array.from({ length: 100 }, (_, n) => ({ body: JSON.stringify({ n }) }));
  expect((await fetch(`${node.url}/boot-in`, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body: JSON.stringify({ records }) })).status).toBeLessThan(300);
  const dir = writeRuntimeFiles({
    config: `[kafka]\nbootstrap_servers = "${node.kafka}"\n[connectors]\nconfig_dir = "{dir}/connectors"\n[state]\npath = "{dir}/state"\n[http.metrics]\nenabled = true\n`,
    connectors: {
      'pg.toml': `type = "sink"\nkey = "pg"\npath = "libsvc_connector_postgres_sink"\n[[topics]]\nnames = ["boot-in"]\n[plugin_config]\nconnection_string = "${pgUrl}"\ntable = "boot"\n`,
      'file.toml': `type = "sink"\nkey = "file"\npath = "libsvc_connector_file_sink"\n[[topics]]\nnames = ["boot-in"]\n[plugin_config]\npath = "{dir}/out.jsonl"\n`,
    },
  });
  const rt = await startRuntime(dir);
  const view = async (key: string): Promise<View> => (await (await fetch(`${rt.url}/sinks/${key}`)).json()) as View;
  await waitFor(() => fs.existsSync(path.join(dir, 'out.jsonl')) && fs.readFileSync(path.join(dir, 'out.jsonl'), 'utf8').split('\n').length > 100, 'the file sink delivered every record', 20000);
  const pg = await view('pg');
  expect(pg.status).toBe('degraded');
  expect(pg.last_error?.message).toMatch(/ECONNREFUSED/);
  expect(await (await fetch(`${rt.url}/metrics`)).text()).toContain('svc_connector_status{connector_key="pg",connector_type="sink",status="degraded"} 1');

  const db = await startPostgres({ port: pgPort });
  await waitFor(async () => (await view('pg')).status === 'running', 'the PostgreSQL sink started by itself', 40000);
  await waitFor(() => db.sql('SELECT count(*) FROM boot') === '100', 'every record in the table', 20000);
  await rt.stop();
  await db.stop();
}, 58_000);

test('startup = "strict": the runtime exits, naming every missing plugin at once', async () => {
  const dir = writeRuntimeFiles({
    config: `[kafka]\nbootstrap_servers = "${node.kafka}"\n[connectors]\nstartup = "strict"\nconfig_dir = "{dir}/connectors"\n[state]\npath = "{dir}/state"\n`,
    connectors: {
      'a.toml': `type = "sink"\nkey = "a"\npath = "libsvc_connector_nowhere_a"\n[[topics]]\nnames = ["x"]\n`,
      'b.toml': `type = "sink"\nkey = "b"\npath = "libsvc_connector_nowhere_b"\n[[topics]]\nnames = ["x"]\n`,
    },
  });
  const { code, output } = await runRuntimeToExit(dir);
  expect(code).toBe(1);
  expect(output).toContain('2 plugins cannot be found');
  expect(output).toContain('libsvc_connector_nowhere_a');
  expect(output).toContain('libsvc_connector_nowhere_b');
});

test('an invalid enum value names the allowed values', async () => {
  const dir = writeRuntimeFiles({ config: `[connectors]\nstartup = "lenient"\n`, connectors: {} });
  const { code, output } = await runRuntimeToExit(dir);
  expect(code).toBe(1);
  expect(output).toContain('connectors.startup: expected one of "retry", "strict"; got "lenient"');
});
