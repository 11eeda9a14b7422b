/** The PostgreSQL client of the postgres plugins. The only file under src/connect that imports `pg`. */
import { Client } from 'pg';

export interface PgConnection {
  query<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number }>;
  end(): Promise<void>;
}

/** SQLSTATE of the last failure, if it came from the server (class 08 = connection, 22 = data, 23 = constraint). */
export const sqlState = (err: unknown): string => String((err as { code?: unknown }).code ?? '');

export async function connectPg(connectionString: string): Promise<PgConnection> {
  const c = new Client({ connectionString });
  // An idle connection that the server drops must not crash the runtime; the next query fails and is retried.
  c.on('error', () => undefined);
  await c.connect();
  return {
    async query<R>(text: string, values?: unknown[]) {
      const r = await c.query(text, values);
      return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 };
    },
    end: () => c.end(),
  };
}

/** A quoted SQL identifier ("schema"."table" when it has a dot). */
export const ident = (name: string): string =>
  name
    .split('.')
    .map((p) => `"${p.replace(/"/g, '""')}"`)
    .join('.');
