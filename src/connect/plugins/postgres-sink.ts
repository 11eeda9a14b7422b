/**
 * `libsvc_connector_postgres_sink`: inserts records into a PostgreSQL table, one transaction
 * per batch (durable at COMMIT, so flush() has nothing left to do). Rows are keyed by
 * (topic, partition, offset) with ON CONFLICT DO NOTHING: a batch delivered again after a crash
 * adds no duplicate rows.
 * plugin_config: `connection_string` (required), `table` (required), `create_table` (true),
 * `payload_format` = "json" (jsonb; default), "text" or "bytea".
 * Statuses: connection failures retryable; a record the server rejects as data (SQLSTATE class
 * 22 or 23) permanent, the others of the batch written.
 */
import type { PluginContext, RecordResult, SinkPlugin, SinkRecord } from '../plugin-api';
import { connectPg, ident, type PgConnection, sqlState } from './postgres-client';

const TYPES = { json: 'jsonb', text: 'text', bytea: 'bytea' } as const;

export function createSink(): SinkPlugin {
  let db: PgConnection | null = null;
  let url = '';
  let table = '';
  let format: keyof typeof TYPES = 'json';
  const connect = async (): Promise<PgConnection> => (db ??= await connectPg(url));
  const payload = (r: SinkRecord): unknown => (format === 'bytea' ? r.value : r.value.toString('utf8'));
  const insert = async (c: PgConnection, rs: SinkRecord[]): Promise<void> => {
    const values: unknown[] = [];
    const rows = rs.map((r, i) => {
      values.push(r.topic, r.partition, r.offset, r.key, payload(r), new Date(r.timestamp));
      const b = i * 6;
      return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}::${TYPES[format]}, $${b + 6})`;
    });
    await c.query(`INSERT INTO ${ident(table)} (topic, "partition", "offset", key, payload, record_time) VALUES ${rows.join(', ')} ON CONFLICT DO NOTHING`, values);
  };
  return {
    async open(_ctx: PluginContext, config: Record<string, unknown>) {
      if (typeof config.connection_string !== 'string' || typeof config.table !== 'string') throw new Error('postgres sink: plugin_config.connection_string and table are required');
      url = config.connection_string;
      table = config.table;
      if (typeof config.payload_format === 'string') {
        if (!(config.payload_format in TYPES)) throw new Error(`postgres sink: payload_format must be json, text or bytea`);
        format = config.payload_format as keyof typeof TYPES;
      }
      const c = await connect();
      if (config.create_table !== false) {
        await c.query(
          `CREATE TABLE IF NOT EXISTS ${ident(table)} (topic text NOT NULL, "partition" integer NOT NULL, "offset" bigint NOT NULL, key bytea, payload ${TYPES[format]}, record_time timestamptz, inserted_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (topic, "partition", "offset"))`,
        );
      }
    },
    async write(records: SinkRecord[]): Promise<RecordResult[]> {
      let c: PgConnection;
      try {
        c = await connect();
      } catch (err) {
        db = null;
        return records.map(() => ({ status: 'retryable', message: (err as Error).message }));
      }
      try {
        await insert(c, records);
        return records.map(() => ({ status: 'ok' }));
      } catch (err) {
        const state = sqlState(err);
        if (!state.startsWith('22') && !state.startsWith('23')) {
          if (state === '' || state.startsWith('08') || state.startsWith('57')) db = null;
          return records.map(() => ({ status: 'retryable', message: (err as Error).message }));
        }
      }
      // The batch held a record the server rejects: find which, one by one.
      const out: RecordResult[] = [];
      for (const r of records) {
        try {
          await insert(c, [r]);
          out.push({ status: 'ok' });
        } catch (err) {
          const s = sqlState(err);
          out.push({ status: s.startsWith('22') || s.startsWith('23') ? 'permanent' : 'retryable', message: (err as Error).message });
        }
      }
      return out;
    },
    async flush() {},
    async close() {
      await db?.end().catch(() => undefined);
      db = null;
    },
  };
}
