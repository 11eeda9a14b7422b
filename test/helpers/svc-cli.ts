/**
 * Runs the real `bin/svc` (dist/ built by `npm test`'s pretest step) as a child process, with
 * its own config directory so no test sees another's profiles or tokens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { ROOT, tempDir } from './node-process';

export const SVC_BIN = path.join(ROOT, 'bin', 'svc');

export interface SvcResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface SvcOptions {
  env?: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed (stdin is closed at once without it). */
  input?: string | Buffer;
  timeoutMs?: number;
}

/** The environment of a client run: a private config dir, the file token store, no SVC_* leaks. */
export function clientEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVC_')) env[k] = v;
  return { ...env, SVC_CONFIG_DIR: tempDir('svc-cli-config-'), SVC_NO_KEYRING: '1', ...extra };
}

const running = new Set<ChildProcess>();

/** Starts `svc args…`; the caller reads its output as it comes. */
export function spawnSvc(args: string[], o: SvcOptions = {}): { proc: ChildProcess; result: Promise<SvcResult>; stdout(): string } {
  const proc = spawn(process.execPath, [SVC_BIN, ...args], { env: o.env ?? clientEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  running.add(proc);
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  proc.stdin!.on('error', () => undefined); // the command may exit before reading all of stdin
  proc.stdin!.end(o.input);
  const timer = setTimeout(() => proc.kill('SIGKILL'), o.timeoutMs ?? 60_000);
  const result = new Promise<SvcResult>((resolve) =>
    proc.once('close', (code) => {
      clearTimeout(timer);
      running.delete(proc);
      resolve({ code, stdout, stderr });
    }),
  );
  return { proc, result, stdout: () => stdout };
}

export function svc(args: string[], o: SvcOptions = {}): Promise<SvcResult> {
  return spawnSvc(args, o).result;
}

afterAll(() => {
  for (const p of running) p.kill('SIGKILL');
});
