/** Runs kcat (librdkafka) as the tests' real C client; every process started is ended when the test file ends. */
import { type ChildProcess, spawn } from 'node:child_process';

export interface KcatRun {
  proc: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code once kcat exits. */
  exited: Promise<number | null>;
  /** SIGTERM (kcat closes its consumer: commits and leaves the group) and wait for exit. */
  stop(): Promise<number | null>;
}

const running = new Set<ChildProcess>();

export function kcat(args: string[], input?: string): KcatRun {
  const proc = spawn('kcat', args, { stdio: ['pipe', 'pipe', 'pipe'] });
  running.add(proc);
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code) => {
      running.delete(proc);
      resolve(code);
    }),
  );
  if (input !== undefined) proc.stdin!.end(input);
  else proc.stdin!.end();
  return {
    proc,
    stdout: () => out,
    stderr: () => err,
    exited,
    stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      return exited;
    },
  };
}

/** Run kcat to completion (it must exit on its own within `timeoutMs`); its stdout. */
export async function kcatOut(args: string[], input?: string, timeoutMs = 30_000): Promise<string> {
  const run = kcat(args, input);
  const timer = setTimeout(() => run.proc.kill('SIGKILL'), timeoutMs);
  const code = await run.exited;
  clearTimeout(timer);
  if (code !== 0) throw new Error(`kcat ${args.join(' ')} exited with ${code}:\n${run.stderr()}`);
  return run.stdout();
}

/** The partitions of `topic` in kcat's last "assigned:" line (it prints one per rebalance), or null. */
export function lastAssignment(stderr: string, topic: string): number[] | null {
  const lines = stderr.split('\n').filter((l) => l.includes('rebalanced') && l.includes('assigned:'));
  const last = lines[lines.length - 1];
  if (last === undefined) return null;
  return [...last.matchAll(new RegExp(`${topic.replace(/[.]/g, '\\.')} \\[(\\d+)\\]`, 'g'))].map((m) => Number(m[1])).sort((a, b) => a - b);
}

afterAll(() => {
  for (const p of running) p.kill('SIGKILL');
});
