/**
 * The runtime's side of a native plugin host process: forks host-main, sends one request at
 * a time, and turns a hang (per-call timeout → SIGKILL) or a crash (the child exits) into a
 * PluginHostError that fails the connector; the runtime then respawns it with backoff.
 */
import { type ChildProcess, fork } from 'node:child_process';
import * as path from 'node:path';
import type { Envelope, HostMessage, HostRequest, HostResults } from './host-protocol';

export class PluginHostError extends Error {
  override name = 'PluginHostError';
}

export class HostClient {
  #child: ChildProcess | null = null;
  #next = 1;
  #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  #exit: string | null = null;

  constructor(
    readonly file: string,
    readonly onLog: (level: number, msg: string) => void,
  ) {}

  #spawn(): ChildProcess {
    const child = fork(path.join(__dirname, 'host-main.js'), [], { serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] });
    child.on('message', (m: HostMessage) => {
      if ('log' in m) return this.onLog(m.log.level, m.log.msg);
      const p = this.#pending.get(m.call);
      if (p === undefined) return;
      this.#pending.delete(m.call);
      if (m.ok) p.resolve(m.value);
      else p.reject(new Error(m.message));
    });
    child.on('exit', (code, signal) => {
      this.#exit = signal !== null ? `signal ${signal}` : `exit code ${code}`;
      const err = new PluginHostError(`plugin host for ${path.basename(this.file)} died (${this.#exit})`);
      for (const p of this.#pending.values()) p.reject(err);
      this.#pending.clear();
      this.#child = null;
    });
    child.on('error', () => undefined);
    this.#child = child;
    return child;
  }

  /** Sends one request; rejects with PluginHostError on timeout (after SIGKILL) or crash. */
  call<K extends HostRequest['op']>(req: Extract<HostRequest, { op: K }>, timeoutMs: number): Promise<HostResults[K]> {
    if (this.#exit !== null && this.#child === null) return Promise.reject(new PluginHostError(`plugin host for ${path.basename(this.file)} is not running (${this.#exit})`));
    const child = this.#child ?? this.#spawn();
    const call = this.#next++;
    return new Promise<HostResults[K]>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.#pending.has(call)) return;
        this.#pending.delete(call);
        child.kill('SIGKILL');
        reject(new PluginHostError(`plugin host for ${path.basename(this.file)}: ${req.op} timed out after ${timeoutMs} ms; the host was killed`));
      }, timeoutMs);
      this.#pending.set(call, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as HostResults[K]);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      child.send({ call, ...req } as Envelope);
    });
  }

  /** Ends the host (after close). */
  kill(): void {
    if (this.#child !== null) {
      this.#child.disconnect();
      const c = this.#child;
      setTimeout(() => c.kill('SIGKILL'), 2000).unref();
    }
  }
}
