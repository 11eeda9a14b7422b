/**
 * `libsvc_connector_postgres_source`: reads new rows of a table in the order of an increasing
 * column (a bigserial id, say) and produces each row as a JSON object. Checkpoint: the last
 * acknowledged value of that column.
 * plugin_config: `connection_string` (required), `table` (required), `id_column` ("id"),
 * `key_column` (optional: its value becomes the record key).
 */
import type { PluginContext, SourceBatch, SourcePlugin, SourceRecord } from '../plugin-api';
import { connectPg, ident, type PgConnection } from './postgres-client';

export function createSource(): SourcePlugin {
  let db: PgConnection | null = null;
  let url = '';
  let table = '';
  let idColumn = 'id';
  let keyColumn: string | null = null;
  let acked: string | null = null;
  let pending: string | null = null;
  return {
    async open(_ctx: PluginContext, config: Record<string, unknown>, state: Buffer | null) {
      if (typeof config.connection_string !== 'string' || typeof config.table !== 'string') throw new Error('postgres source: plugin_config.connection_string and table are required');
      url = config.connection_string;
      table = config.table;
      if (typeof config.id_column === 'string') idColumn = config.id_column;
      if (typeof config.key_column === 'string') keyColumn = config.key_column;
      acked = state === null ? null : (JSON.parse(state.toString('utf8')) as { last: string | null }).last;
      db = await connectPg(url);
    },
    async poll(max: number, timeoutMs: number): Promise<SourceBatch | null> {
      db ??= await connectPg(url);
      // Qualified by the table alias: an output column named like the id column must not take
      // over ORDER BY (it is text here, and would order 1, 10, 100, 2…).
      const id = `t.${ident(idColumn)}`;
      const where = acked === null ? '' : `WHERE ${id} > $2`;
      const r = await db.query<{ j: string; svc_id: string; svc_key?: string | null }>(
        `SELECT row_to_json(t)::text AS j, ${id}::text AS svc_id${keyColumn === null ? '' : `, t.${ident(keyColumn)}::text AS svc_key`} FROM ${ident(table)} t ${where} ORDER BY ${id} LIMIT $1`,
        acked === null ? [max] : [max, acked],
      );
      if (r.rows.length === 0) {
        await new Promise((res) => setTimeout(res, Math.min(timeoutMs, 200)));
        return null;
      }
      const records: SourceRecord[] = r.rows.map((row) => ({ key: row.svc_key === undefined || row.svc_key === null ? null : Buffer.from(row.svc_key), value: Buffer.from(row.j) }));
      pending = r.rows[r.rows.length - 1]!.svc_id;
      return { records, state: Buffer.from(JSON.stringify({ last: pending })) };
    },
    async commit(ack: boolean) {
      if (ack && pending !== null) acked = pending;
      pending = null;
    },
    async close() {
      await db?.end().catch(() => undefined);
      db = null;
    },
  };
}
