/**
 * Starts the test origin (s3rver behind a verifying shim, test/s3/fixtures/origin-server.js)
 * as a child process on free ports, and stops it with the test file.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const ORIGIN_ACCESS_KEY = 'S3RVER';
export const ORIGIN_SECRET_KEY = 'S3RVER';

export interface TestOrigin {
  /** The shim: what svc-cache is configured with. */
  url: string;
  /** s3rver itself, behind the shim (for comparisons only). */
  directUrl: string;
  port: number;
  stats(): Promise<{ verified: number; rejected: number; byMethod: Record<string, number>; log: string[] }>;
  stop(): Promise<void>;
}

/** Temporary directories made by this test file; removed when it ends, whatever the test kept. */
const made = new Set<string>();

export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.add(dir);
  return dir;
}

afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
  made.clear();
});

export async function startOrigin(buckets: string[]): Promise<TestOrigin> {
  const dir = tempDir('svc-cache-origin-');
  const script = path.join(__dirname, '..', 'fixtures', 'origin-server.js');
  const proc: ChildProcess = spawn(process.execPath, ['--openssl-legacy-provider', script], {
    env: { ...process.env, ORIGIN_DIR: dir, ORIGIN_BUCKETS: buckets.join(',') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const ports = await new Promise<{ shim: number; s3rver: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`origin did not start:\n${err}`)), 20_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        resolve(JSON.parse(out.slice(0, nl)) as { shim: number; s3rver: number });
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`origin exited with ${code}:\n${err}`));
    });
  });
  const url = `http://127.0.0.1:${ports.shim}`;
  return {
    url,
    directUrl: `http://127.0.0.1:${ports.s3rver}`,
    port: ports.shim,
    async stats() {
      const r = await fetch(`${url}/-/shim/stats`);
      return (await r.json()) as { verified: number; rejected: number; byMethod: Record<string, number>; log: string[] };
    },
    async stop() {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
