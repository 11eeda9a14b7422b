/** Runs platformatic-driver.mjs (@platformatic/kafka in a child process); every process started is ended when the test file ends. */
import { type ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';

const DRIVER = path.join(__dirname, 'platformatic-driver.mjs');

export interface PltEvent {
  type: 'join' | 'message' | 'closed' | 'result' | 'assignment' | 'commit-failed';
  memberId?: string;
  generationId?: number;
  assignments?: Array<{ topic: string; partitions: number[] }>;
  topic?: string;
  partition?: number;
  offset?: string;
  value?: unknown;
}

export interface PltRun {
  events(): PltEvent[];
  messages(): PltEvent[];
  /** Partitions of the last join (classic) or assignment change (consumer protocol). */
  assignment(): number[] | null;
  stderr(): string;
  /** "running", or how the process ended (exit code or signal). */
  state(): string;
  exited: Promise<number | null>;
  stop(): Promise<number | null>;
}

const running = new Set<ChildProcess>();

/**
 * Which @platformatic/kafka runs the driver: 1.35 on this Node.js (the default), or 2.12 (installed
 * as `@platformatic/kafka-2`; it needs Node.js 22.22 or later) on the Node binary `node` gives
 * (scripts/current-node.js).
 */
export interface PltRuntime {
  node: string;
  package: '@platformatic/kafka' | '@platformatic/kafka-2';
}

export function platformatic(command: object, runtime?: PltRuntime): PltRun {
  const proc = spawn(runtime?.node ?? process.execPath, [DRIVER, JSON.stringify({ ...command, package: runtime?.package })], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(proc);
  const events: PltEvent[] = [];
  let partial = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => {
    const parts = (partial + d.toString()).split('\n');
    partial = parts.pop()!;
    for (const p of parts) if (p !== '') events.push(JSON.parse(p) as PltEvent);
  });
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code) => {
      running.delete(proc);
      resolve(code);
    }),
  );
  return {
    events: () => events,
    messages: () => events.filter((e) => e.type === 'message'),
    assignment() {
      // A classic group's join, or the consumer protocol's assignment between heartbeats.
      const joins = events.filter((e) => e.type === 'join' || e.type === 'assignment');
      const last = joins[joins.length - 1];
      return last === undefined ? null : (last.assignments ?? []).flatMap((a) => a.partitions).sort((a, b) => a - b);
    },
    stderr: () => err,
    state: () => (proc.exitCode !== null ? `exited with ${proc.exitCode}` : proc.signalCode !== null ? `ended by ${proc.signalCode}` : 'running'),
    exited,
    stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      return exited;
    },
  };
}

/** Run an admin command of the driver to completion: its result. */
export async function platformaticAdmin<T>(command: object): Promise<T> {
  const run = platformatic({ op: 'admin', ...command });
  const code = await run.exited;
  if (code !== 0) throw new Error(`platformatic driver exited with ${code}:\n${run.stderr()}`);
  return run.events().find((e) => e.type === 'result')!.value as T;
}

afterAll(() => {
  for (const p of running) p.kill('SIGKILL');
});
