/**
 * The runtime's side of a JS plugin worker: starts worker-main in a worker_thread with a heap
 * limit, sends one request at a time, and turns a hang (per-call timeout → terminate()), an
 * uncaught exception or an out-of-memory end of the thread into a PluginHostError that fails
 * the connector; the runtime respawns it with backoff, as for a native plugin host.
 */
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { PluginHostError } from '../native';
import type { PluginContext } from '../plugin-api';
import type { WorkerEnvelope, WorkerInit, WorkerMessage, WorkerRequest, WorkerResults } from './protocol';

/** Most time a worker may take to start and load its module, ms. */
const BOOT_MS = 60_000;

export interface WorkerLimits {
  /** V8 old-generation heap of the worker, MiB. */
  memoryMb: number;
}

export class WorkerClient {
  #worker: Worker | null = null;
  #next = 1;
  #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  #dead: string | null = null;
  /** Resolves when the worker's module is loaded: call timers start from then. */
  #ready: Promise<void> = Promise.resolve();
  #markReady: () => void = () => undefined;
  #loaded = false;
  /** Why the thread ended, when it says so before its exit (an uncaught error, out of memory). */
  #cause: string | null = null;
  readonly #name: string;

  constructor(
    readonly init: WorkerInit,
    readonly limits: WorkerLimits,
    readonly ctx: () => PluginContext | null,
  ) {
    this.#name = path.basename(init.file);
  }

  #spawn(): Worker {
    const w = new Worker(path.join(__dirname, 'worker-main.js'), { workerData: this.init, resourceLimits: { maxOldGenerationSizeMb: this.limits.memoryMb }, execArgv: [] });
    this.#ready = new Promise<void>((resolve) => (this.#markReady = resolve));
    w.on('message', (m: WorkerMessage) => {
      if ('ready' in m) {
        this.#loaded = true;
        return this.#markReady();
      }
      if ('log' in m) return this.ctx()?.log(m.log.level, m.log.msg);
      const p = this.#pending.get(m.call);
      if (p === undefined) return;
      this.#pending.delete(m.call);
      if (m.ok) p.resolve(m.value);
      else p.reject(new Error(m.message));
    });
    w.on('error', (err: Error & { code?: string }) => {
      this.#cause = err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `out of memory (heap limit ${this.limits.memoryMb} MiB)` : `uncaught ${err.name}: ${err.message}`;
    });
    w.on('exit', (code) => {
      this.#dead = this.#cause ?? `exit code ${code}`;
      this.#worker = null;
      const err = new PluginHostError(`plugin worker for ${this.#name} died (${this.#dead})`);
      for (const p of this.#pending.values()) p.reject(err);
      this.#pending.clear();
      this.#markReady();
    });
    this.#worker = w;
    return w;
  }

  /**
   * Starts the worker and resolves once its module is loaded (BOOT_MS at most, then
   * PluginHostError): a thread starting and importing its module is not the plugin's call, so
   * call timeouts count from here.
   */
  async ready(): Promise<void> {
    if (this.#dead !== null) throw new PluginHostError(`plugin worker for ${this.#name} is not running (${this.#dead})`);
    const w = this.#worker ?? this.#spawn();
    if (this.#loaded) return;
    let boot: NodeJS.Timeout | undefined;
    const booted = await Promise.race([this.#ready.then(() => true), new Promise<boolean>((resolve) => (boot = setTimeout(() => resolve(false), BOOT_MS)))]);
    clearTimeout(boot);
    if (!booted) {
      this.#cause = `the module did not load within ${BOOT_MS} ms; the worker was terminated`;
      void w.terminate();
      throw new PluginHostError(`plugin worker for ${this.#name}: ${this.#cause}`);
    }
    if (this.#dead !== null) throw new PluginHostError(`plugin worker for ${this.#name} is not running (${this.#dead})`);
  }

  /** Sends one request; rejects with PluginHostError on timeout (after terminate) or the thread's end. */
  call<K extends WorkerRequest['op']>(req: Extract<WorkerRequest, { op: K }>, timeoutMs: number): Promise<WorkerResults[K]> {
    if (!this.#loaded || this.#dead !== null) return this.ready().then(() => this.call(req, timeoutMs));
    const w = this.#worker!;
    const call = this.#next++;
    return new Promise<WorkerResults[K]>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.#pending.has(call)) return;
        this.#pending.delete(call);
        this.#cause = `${req.op} timed out after ${timeoutMs} ms; the worker was terminated`;
        void w.terminate();
        reject(new PluginHostError(`plugin worker for ${this.#name}: ${this.#cause}`));
      }, timeoutMs);
      this.#pending.set(call, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as WorkerResults[K]);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      w.postMessage({ call, ...req } as WorkerEnvelope);
    });
  }

  /** Ends the worker (after close, or when the connector stops). */
  end(): void {
    const w = this.#worker;
    this.#dead ??= 'closed';
    if (w !== null) void w.terminate();
  }
}
