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
      const where = acked === null ? '' : `WHERE ${ident(idColumn)} > $2`;
      const r = await db.query<Record<string, unknown>>(`SELECT row_to_json(t)::text AS j, ${ident(idColumn)}::text AS id${keyColumn === null ? '' : `, ${ident(keyColumn)}::text AS k`} FROM ${ident(table)} t ${where} ORDER BY ${ident(idColumn)} LIMIT $1`, acked === null ? [max] : [max, acked]);
      if (r.rows.length === 0) {
        await new Promise((res) => setTimeout(res, Math.min(timeoutMs, 200)));
        return null;
      }
      const records: SourceRecord[] = r.rows.map((row) => ({ key: keyColumn === null || row.k === null ? null : Buffer.from(String(row.k)), value: Buffer.from(String(row.j)) }));
      pending = String(r.rows[r.rows.length - 1]!.id);
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
