/**
 * The PostgreSQL plugins against a real PostgreSQL 15 and a real node: records appended over
 * HTTP land as rows through the sink (a batch delivered again adds no rows); rows inserted in
 * PostgreSQL arrive in a stream through the source, and only new rows after a restart.
 */
import * as fs from 'node:fs';
import { type NodeProcess, startNode } from '../helpers/node-process';
import { type PostgresProcess, startPostgres } from './helpers/postgres-process';
import { startRuntime, waitFor, writeRuntimeFiles } from './helpers/runtime-process';

describe('PostgreSQL sink and source', () => {
  let node: NodeProcess;
  let pg: PostgresProcess;
  let config: string;
  beforeAll(async () => {
    [node, pg] = await Promise.all([startNode({ args: ['--no-admin', '--shards', '2', '--shard-workers', '1'] }), startPostgres()]);
    config = `[kafka]\nbootstrap_servers = "${node.kafka}"\n[connectors]\nconfig_dir = "{dir}/connectors"\n[state]\npath = "{dir}/state"\n`;
  });
  afterAll(async () => {
    await Promise.all([node?.stop(), pg?.stop()]);
  });

  test('records appended over HTTP land in a table through the sink, exactly once per offset', async () => {
    const N = 1000;
    await fetch(`${node.url}/pg-in`, { method: 'PUT', headers: { 'content-type': 'application/json' } });
    for (let i = 0; i < N; i += 250) {
      const records = Array.from({ length: 250 }, (_, j) => ({ body: JSON.stringify({ n: i + j, name: `row ${i + j}` }), key: `k${i + j}` }));
      expect((await fetch(`${node.url}/pg-in`, { method: 'POST', headers: { 'content-type': 'application/vnd.svc.batch+json' }, body: JSON.stringify({ records }) })).status).toBeLessThan(300);
    }
    const dir = writeRuntimeFiles({
      config,
      connectors: { 'pg.toml': `type = "sink"\nkey = "pg"\npath = "libsvc_connector_postgres_sink"\n[[topics]]\nnames = ["pg-in"]\n[plugin_config]\nconnection_string = "${pg.url}"\ntable = "events"\n` },
    });
    const rt = await startRuntime(dir);
    await waitFor(() => pg.sql('SELECT count(*) FROM events') === String(N), `${N} rows`);
    expect(pg.sql(`SELECT payload->>'name' FROM events WHERE "offset" = 7`)).toBe('row 7');
    expect(pg.sql(`SELECT convert_from(key, 'UTF8') FROM events WHERE "offset" = 7`)).toBe('k7');
    expect(pg.sql(`SELECT count(DISTINCT (payload->>'n')::int) FROM events`)).toBe(String(N));
    // The secret-bearing plugin_config is never shown in full.
    expect(JSON.stringify(await (await fetch(`${rt.url}/sinks/pg/configs/plugin`)).json())).toContain('"table":"events"');
    await rt.stop();

    // The group is deleted and the topic read again: rows are keyed by offset, so no duplicates.
    fs.rmSync(`${dir}/connectors/pg.toml`);
    fs.writeFileSync(`${dir}/connectors/pg2.toml`, `type = "sink"\nkey = "pg-again"\npath = "libsvc_connector_postgres_sink"\n[[topics]]\nnames = ["pg-in"]\n[plugin_config]\nconnection_string = "${pg.url}"\ntable = "events"\n`);
    const again = await startRuntime(dir);
    await waitFor(async () => ((await (await fetch(`${again.url}/stats`)).json()) as { connectors: { processed: number }[] }).connectors[0]!.processed === N, 'the second sink processed every record');
    expect(pg.sql('SELECT count(*) FROM events')).toBe(String(N));
    await again.stop();
  });

  test('rows inserted in PostgreSQL arrive in a stream through the source, and a restart continues after the checkpoint', async () => {
    pg.sql('CREATE TABLE orders (id bigserial PRIMARY KEY, item text NOT NULL, qty int NOT NULL)');
    pg.sql(`INSERT INTO orders (item, qty) SELECT 'item-' || g, g FROM generate_series(1, 300) g`);
    const dir = writeRuntimeFiles({
      config,
      connectors: { 'orders.toml': `type = "source"\nkey = "orders"\npath = "libsvc_connector_postgres_source"\n[[topics]]\nname = "pg-orders"\n[plugin_config]\nconnection_string = "${pg.url}"\ntable = "orders"\nkey_column = "id"\n[batch]\nmax_records = 128\n` },
    });
    const read = async (): Promise<{ key?: string; body: string }[]> => {
      const r = await fetch(`${node.url}/pg-orders?format=json`);
      return r.status === 200 ? ((await r.json()) as { key?: string; body: string }[]) : [];
    };
    const rt = await startRuntime(dir);
    await waitFor(async () => (await read()).length >= 300, '300 records in the stream');
    await rt.stop();
    pg.sql(`INSERT INTO orders (item, qty) VALUES ('late', 1)`);
    const rt2 = await startRuntime(dir);
    await waitFor(async () => (await read()).length >= 301, 'the new row in the stream');
    await new Promise((r) => setTimeout(r, 500));
    const records = await read();
    expect(records).toHaveLength(301);
    expect(JSON.parse(records[0]!.body)).toEqual({ id: 1, item: 'item-1', qty: 1 });
    expect(records[0]!.key).toBe('1');
    // In the table's order, every row once.
    expect(records.map((r) => (JSON.parse(r.body) as { id: number }).id)).toEqual(Array.from({ length: 301 }, (_, i) => i + 1));
    expect(JSON.parse(records[300]!.body)).toEqual({ id: 301, item: 'late', qty: 1 });
    await rt2.stop();
  });
});
