/** Runs a Python Kafka driver (Debian's /usr/bin/python3 with python3-kafka / python3-confluent-kafka) with one JSON command; killed after `timeoutMs`. */
import { spawn } from 'node:child_process';
import * as path from 'node:path';

/** Debian's interpreter: the one the python3-kafka and python3-confluent-kafka packages install into. */
export const DEBIAN_PYTHON = '/usr/bin/python3';

export interface PythonRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runPythonDriver(driver: string, command: object, timeoutMs = 60_000): Promise<PythonRun> {
  return new Promise((resolve, reject) => {
    const p = spawn(DEBIAN_PYTHON, [path.join(__dirname, 'clients', driver), JSON.stringify(command)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.once('error', reject);
    p.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The driver's JSON result line; throws with its stderr when it failed. */
export async function python<T>(driver: string, command: object, timeoutMs?: number): Promise<T> {
  const r = await runPythonDriver(driver, command, timeoutMs);
  const last = r.stdout.trim().split('\n').pop() ?? '';
  if (r.code !== 0 || last === '') throw new Error(`${driver} ${JSON.stringify(command)} exited with ${r.code}:\n${r.stderr.slice(-3000)}`);
  return JSON.parse(last) as T;
}

export interface RunningDriver {
  /** Resolves with the first JSON line the driver prints. */
  firstLine: Promise<unknown>;
  /** SIGKILL, resolves once it exited. */
  kill(): Promise<void>;
}

const running = new Set<ReturnType<typeof spawn>>();

/** Start a driver that keeps running (e.g. a producer in the middle of a transaction); ended at the end of the test file at the latest. */
export function startPythonDriver(driver: string, command: object): RunningDriver {
  const p = spawn(DEBIAN_PYTHON, [path.join(__dirname, 'clients', driver), JSON.stringify(command)], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(p);
  let err = '';
  p.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((resolve) => p.once('exit', () => (running.delete(p), resolve())));
  const firstLine = new Promise<unknown>((resolve, reject) => {
    let out = '';
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)));
    });
    void exited.then(() => reject(new Error(`${driver} exited before printing:\n${err.slice(-2000)}`)));
  });
  return {
    firstLine,
    async kill() {
      if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
      await exited;
    },
  };
}

afterAll(() => {
  for (const p of running) p.kill('SIGKILL');
});
