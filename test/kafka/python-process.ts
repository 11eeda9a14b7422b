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
