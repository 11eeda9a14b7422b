/**
 * Starts a real `svc-connectors` process from dist/ with a config.toml and definitions
 * directory in a temporary folder, the API on a free loopback port, and stops it when the
 * test file ends.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT, tempDir } from '../../helpers/node-process';

export const RUNTIME_MAIN = path.join(ROOT, 'dist', 'connect', 'main.js');

export interface RuntimeProcess {
  url: string;
  dir: string;
  proc: ChildProcess;
  output(): string;
  stop(): Promise<number | null>;
  kill(): Promise<void>;
}

export interface RuntimeFiles {
  /** config.toml text; `{dir}` is replaced by the temp folder. */
  config: string;
  /** file name → definition TOML text ({dir} replaced). */
  connectors: Record<string, string>;
}

const running = new Set<RuntimeProcess>();

/** Writes the files into a (new or given) folder; returns the folder. */
export function writeRuntimeFiles(files: RuntimeFiles, dir = tempDir('svc-connect-')): string {
  fs.mkdirSync(path.join(dir, 'connectors'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.toml'), files.config.replaceAll('{dir}', dir));
  for (const [name, text] of Object.entries(files.connectors)) fs.writeFileSync(path.join(dir, 'connectors', name), text.replaceAll('{dir}', dir));
  return dir;
}

/** Starts the runtime on files in `dir`; resolves once it logged "svc-connectors started". */
export async function startRuntime(dir: string, env: NodeJS.ProcessEnv = {}): Promise<RuntimeProcess> {
  const proc = spawn(process.execPath, [RUNTIME_MAIN], {
    cwd: dir,
    env: { ...process.env, SVC_CONNECTORS_CONFIG_PATH: path.join(dir, 'config.toml'), SVC_CONNECTORS_HTTP__ADDRESS: '127.0.0.1:0', SVC_CONNECTORS_LOGGING__FORMAT: 'json', RUST_LOG: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`runtime did not start in time:\n${out}`)), 30000);
    const check = (): void => {
      for (const line of out.split('\n')) {
        if (!line.includes('"svc-connectors started"')) continue;
        clearTimeout(timer);
        resolve((JSON.parse(line) as { address: string }).address);
        return;
      }
    };
    proc.stdout!.on('data', check);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`runtime exited with ${code} before starting:\n${out}`));
    });
  });
  const rt: RuntimeProcess = {
    url: `http://${address}`,
    dir,
    proc,
    output: () => out,
    async stop() {
      running.delete(rt);
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      return exited;
    },
    async kill() {
      running.delete(rt);
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
  running.add(rt);
  return rt;
}

/** Runs the runtime expecting it to exit at startup; resolves with its exit code and output. */
export async function runRuntimeToExit(dir: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; output: string }> {
  const proc = spawn(process.execPath, [RUNTIME_MAIN], { cwd: dir, env: { ...process.env, SVC_CONNECTORS_CONFIG_PATH: path.join(dir, 'config.toml'), SVC_CONNECTORS_HTTP__ADDRESS: '127.0.0.1:0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const timer = setTimeout(() => proc.kill('SIGKILL'), 30000);
  const code = await new Promise<number | null>((resolve) => proc.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, output: out };
}

export async function waitFor(cond: () => boolean | Promise<boolean>, what: string, ms = 30000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for: ${what}`);
}

afterAll(async () => {
  await Promise.all([...running].map((r) => r.kill()));
});
