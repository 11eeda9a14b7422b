/**
 * Starts a real `svc serve` process from dist/ (built by `npm test`'s pretest step) on free
 * ports and a temporary data directory, and stops it when the test file ends.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');
export const MAIN = path.join(ROOT, 'dist', 'main.js');

export interface NodeProcess {
  url: string;
  adminUrl: string | null;
  /** The Durable Streams listener beside the Svc one (--ds-listen), or null. */
  dsUrl: string | null;
  /** The Kafka listener's bound address, host:port (bootstrap server for Kafka clients). */
  kafka: string;
  dataDir: string;
  proc: ChildProcess;
  /** Everything the process printed so far. */
  output(): string;
  /** SIGTERM and wait for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
}

export interface StartOptions {
  engine?: 'uws' | 'node';
  dataDir?: string;
  args?: string[];
  env?: NodeJS.ProcessEnv;
}

const started = new Set<NodeProcess>();
/** Temporary directories made by this test file; removed when it ends (a node's data dir with its
 * preallocated RocksDB logs takes tens of MiB, so a suite that kept them would fill the disk). */
const made = new Set<string>();

export function tempDir(prefix = 'svc-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.add(dir);
  return dir;
}

export async function startNode(o: StartOptions = {}): Promise<NodeProcess> {
  const dataDir = o.dataDir ?? tempDir();
  const args = [MAIN, 'serve', '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--kafka-listen', '127.0.0.1:0', '--data-dir', dataDir, '--http-engine', o.engine ?? 'uws', ...(o.args ?? [])];
  // No 64 MiB disk-full reserve per test node (hundreds of them share the machine's disk); the disk-full tests set --reserve-bytes.
  // The main thread serves, whatever the machine's cores (the default is from them), unless the
  // run asks for gateway threads (.ci/run's gateway-threads pass sets SVC_GATEWAY_THREADS).
  const proc = spawn(process.execPath, args, { cwd: ROOT, env: { SVC_RESERVE_BYTES: '0', SVC_GATEWAY_THREADS: '1', ...process.env, ...o.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));

  const started_ = await new Promise<{ listen: string; admin: string | null; ds?: string | null; kafka: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`node did not start in time:\n${out}`)), 60000); // generous: a loaded machine starts a node in 20 s and more
    const check = (): void => {
      for (const line of out.split('\n')) {
        if (!line.includes('"node started"')) continue;
        const j = JSON.parse(line) as { listen: string; admin: string | null; ds?: string | null; kafka: string };
        clearTimeout(timer);
        resolve(j);
        return;
      }
    };
    proc.stdout!.on('data', check);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`node exited with ${code} before starting:\n${out}`));
    });
  });
  const node: NodeProcess = {
    url: `http://${started_.listen}`,
    adminUrl: started_.admin === null ? null : `http://${started_.admin}`,
    dsUrl: started_.ds == null ? null : `http://${started_.ds}`,
    kafka: started_.kafka,
    dataDir,
    proc,
    output: () => out,
    async stop() {
      started.delete(node);
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      return exited;
    },
    async kill() {
      started.delete(node);
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
  started.add(node);
  return node;
}

afterAll(async () => {
  await Promise.all([...started].map((n) => n.kill()));
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
  made.clear();
});
