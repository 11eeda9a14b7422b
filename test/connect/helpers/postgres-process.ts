/**
 * A real PostgreSQL 15 (Debian's postgresql package) for a test file: initdb in a temp folder,
 * the server on a free loopback port (trust auth, socket in the folder), stopped when the file
 * ends. As root the server must run as another user, so the folder goes to `nobody`.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from '../../helpers/node-process';
import { freePort } from '../../helpers/free-ports';

const BIN = '/usr/lib/postgresql/15/bin';

export interface PostgresProcess {
  url: string;
  port: number;
  /** Runs SQL through psql; returns its unaligned, tuples-only output. */
  sql(query: string): string;
  stop(): Promise<void>;
}

/** As root, run as `nobody` (PostgreSQL refuses root); signals then reach the server itself. */
const AS_USER = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};

const started = new Set<ChildProcess>();

/** `port`: listen there (a test that points a sink at it before the server exists); a free one by default. */
export async function startPostgres(o: { port?: number } = {}): Promise<PostgresProcess> {
  const dir = tempDir('svc-connect-pg-');
  fs.chmodSync(dir, 0o777);
  const data = path.join(dir, 'data');
  if (process.getuid?.() === 0) execFileSync('chown', ['nobody', dir]);
  execFileSync(`${BIN}/initdb`, ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'], { stdio: 'pipe', cwd: dir, ...AS_USER });
  const port = o.port ?? (await freePort());
  const proc = spawn(`${BIN}/postgres`, ['-D', data, '-h', '127.0.0.1', '-p', String(port), '-k', dir], { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir, ...AS_USER });
  started.add(proc);
  let out = '';
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 30000;
  for (;;) {
    try {
      execFileSync(`${BIN}/pg_isready`, ['-h', '127.0.0.1', '-p', String(port)], { stdio: 'pipe' });
      break;
    } catch {
      if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`postgres did not start:\n${out}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    sql: (query) => execFileSync(`${BIN}/psql`, ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', 'postgres', '-At', '-v', 'ON_ERROR_STOP=1', '-c', query], { encoding: 'utf8' }).trim(),
    async stop() {
      started.delete(proc);
      if (proc.exitCode === null) proc.kill('SIGINT'); // fast shutdown
      await exited;
    },
  };
}

afterAll(async () => {
  for (const p of started) if (p.exitCode === null) p.kill('SIGKILL');
});
