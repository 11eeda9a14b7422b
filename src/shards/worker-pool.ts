/**
 * The shard worker threads and their supervision (main thread).
 *
 *   spawn ──'ready'──▶ up ──'fatal' / 'error' / exit──▶ down ──(backoff)──▶ spawn again …
 *                                                        │
 *                                                        └─▶ onDown: ShardClient fails the
 *                                                            worker's pending and new calls
 *
 * A worker whose storage fails (a log or index write error, a full disk, an exception in a
 * timer) stops itself: it finishes what its healthy shards have in flight, closes its files
 * and exits (worker-main.ts). Its calls fail at once with `storage_unavailable` (503) instead
 * of waiting for ever; a new thread for the same shards starts after a backoff (0.5 s doubling
 * to 30 s) and recovers them from their logs, as a restarted node would. While any worker is
 * down the node is not ready (GET /ready answers 503). docs/operations.md is the runbook.
 */
import { Worker } from 'node:worker_threads';
import { type WorkerConfig, type WorkerEvent } from './worker/worker-main';
import { fatalOf, logLineOf } from './worker-messages';

/** First restart delay; doubles with each death or failed start in a row. */
const RESTART_BASE_MS = 500; // 0.5 s
/** Longest restart delay. */
const RESTART_MAX_MS = 30_000; // 30 s
/** A worker up this long counts as healthy again: its next death restarts it after the base delay. */
const STABLE_MS = 60_000; // 1 min
/** A dying worker that has not exited by then is terminated. */
const EXIT_GRACE_MS = 10_000; // 10 s

export interface PoolLog {
  info(o: object, m: string): void;
  warn(o: object, m: string): void;
  error(o: object, m: string): void;
}

/** Why a worker is down, as logged and shown by GET /ready. */
export interface WorkerDown {
  worker: number;
  shards: number[];
  /** The storage error that stopped it (or the last failed restart). */
  error: string;
  /** errno code when the cause was a file-system error (ENOSPC for a full disk), else null. */
  errorCode: string | null;
  sinceMs: number;
  restarts: number;
}

export interface PoolHooks {
  /** Every message of an up worker except its lifecycle events. */
  message(w: number, m: unknown): void;
  /** The worker stopped: its pending calls must fail now. */
  down(w: number, why: WorkerDown): void;
  /** The worker runs again (after a restart). */
  up(w: number): void;
}

/** Where a ShardClient posts a worker's requests: the worker thread itself, or a channel to it. */
export type WorkerPort = Pick<Worker, 'postMessage'>;

/**
 * What a ShardClient needs of the way to its workers: the pool on the main thread, or a gateway
 * thread's channels to the same workers (worker-links.ts).
 */
export interface WorkerLinks {
  readonly size: number;
  setHooks(h: PoolHooks): void;
  /** Where to post the worker's requests while it is up, else null. */
  worker(w: number): WorkerPort | null;
  downInfo(w: number): WorkerDown | null;
  unavailable(): WorkerDown[];
}

interface Slot {
  worker: Worker | null;
  up: boolean;
  /** Deaths and failed starts in a row (restart backoff). */
  failures: number;
  upSinceMs: number;
  down: WorkerDown | null;
  timer: NodeJS.Timeout | null;
}

export class WorkerPool implements WorkerLinks {
  readonly #file: string;
  readonly #config: (w: number) => WorkerConfig;
  readonly #log: PoolLog;
  readonly #slots: Slot[];
  #hooks: PoolHooks | null = null;
  #closing = false;

  private constructor(file: string, config: (w: number) => WorkerConfig, log: PoolLog, workers: Worker[]) {
    this.#file = file;
    this.#config = config;
    this.#log = log;
    this.#slots = workers.map((worker) => ({ worker, up: true, failures: 0, upSinceMs: Date.now(), down: null, timer: null }));
    workers.forEach((worker, w) => this.#attach(w, worker));
  }

  /** Start every worker; rejects (after stopping the others) when one cannot start. */
  static async start(file: string, count: number, config: (w: number) => WorkerConfig, log: PoolLog): Promise<WorkerPool> {
    const started = await Promise.allSettled(Array.from({ length: count }, (_, w) => spawn(file, config(w), w, log)));
    const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) {
      await Promise.all(started.map((r) => (r.status === 'fulfilled' ? r.value.terminate() : undefined)));
      throw failed.reason;
    }
    return new WorkerPool(file, config, log, started.map((r) => (r as PromiseFulfilledResult<Worker>).value));
  }

  get size(): number {
    return this.#slots.length;
  }

  setHooks(h: PoolHooks): void {
    this.#hooks = h;
  }

  /** The worker thread if it is up, else null. */
  worker(w: number): Worker | null {
    const s = this.#slots[w]!;
    return s.up ? s.worker : null;
  }

  /** A worker that exists (up or starting): control messages reach it before its first request. */
  running(w: number): Worker | null {
    return this.#slots[w]!.worker;
  }

  /** Why the worker is down, or null while it is up. */
  downInfo(w: number): WorkerDown | null {
    return this.#slots[w]!.down;
  }

  /** Every worker that is down (empty when storage is healthy). */
  unavailable(): WorkerDown[] {
    return this.#slots.flatMap((s) => (s.down === null ? [] : [s.down]));
  }

  /** Stop restarting; returns the workers that are up, for the close protocol. */
  stopSupervising(): Worker[] {
    this.#closing = true;
    for (const s of this.#slots) if (s.timer !== null) clearTimeout(s.timer);
    const up: Worker[] = [];
    for (const s of this.#slots) {
      if (s.up && s.worker !== null) up.push(s.worker);
      else void s.worker?.terminate();
    }
    return up;
  }

  #attach(w: number, worker: Worker): void {
    worker.on('message', (m: unknown) => {
      if (this.#slots[w]!.worker !== worker) return;
      const fatal = fatalOf(m);
      if (fatal !== null) {
        this.#died(w, worker, fatal.message, fatal.code);
        return;
      }
      const line = logLineOf(m);
      if (line !== null) {
        this.#log[line.level]({ worker: w, ...line.fields }, line.msg);
        return;
      }
      this.#hooks?.message(w, m);
    });
    worker.on('error', (err) => this.#died(w, worker, err.message, (err as NodeJS.ErrnoException).code ?? null));
    worker.once('exit', (code) => {
      this.#died(w, worker, `the thread exited with code ${code}`, null);
      const s = this.#slots[w]!;
      if (s.worker !== worker) return;
      s.worker = null;
      this.#scheduleRestart(w);
    });
  }

  /** First sign of death wins (a 'fatal' message comes before the exit it announces). */
  #died(w: number, worker: Worker, error: string, errorCode: string | null): void {
    const s = this.#slots[w]!;
    if (s.worker !== worker || !s.up || this.#closing) return;
    s.up = false;
    if (Date.now() - s.upSinceMs >= STABLE_MS) s.failures = 0;
    s.failures++;
    const cfg = this.#config(w);
    s.down = { worker: w, shards: cfg.shardIds, error, errorCode, sinceMs: Date.now(), restarts: s.failures };
    this.#log.error({ worker: w, shards: cfg.shardIds, err: error, code: errorCode }, 'shard worker stopped: its calls fail with storage_unavailable until it is restarted');
    this.#hooks?.down(w, s.down);
    // It closes its files and exits by itself; one that hangs is ended.
    const t = setTimeout(() => void worker.terminate(), EXIT_GRACE_MS);
    t.unref();
    worker.once('exit', () => clearTimeout(t));
  }

  #scheduleRestart(w: number): void {
    const s = this.#slots[w]!;
    if (this.#closing) return;
    const delay = Math.min(RESTART_MAX_MS, RESTART_BASE_MS * 2 ** Math.max(0, s.failures - 1));
    this.#log.warn({ worker: w, inMs: delay, attempt: s.failures }, 'restarting shard worker');
    s.timer = setTimeout(() => {
      s.timer = null;
      if (this.#closing) return;
      spawn(this.#file, this.#config(w), w, this.#log, (worker) => (s.worker = worker)).then(
        (worker) => {
          if (this.#closing || s.worker !== worker) return void worker.terminate();
          s.up = true;
          s.upSinceMs = Date.now();
          s.down = null;
          this.#attach(w, worker);
          this.#log.info({ worker: w, shards: this.#config(w).shardIds }, 'shard worker restarted');
          this.#hooks?.up(w);
        },
        (err: Error & { code?: string }) => {
          s.worker = null;
          s.failures++;
          if (s.down !== null) s.down = { ...s.down, error: err.message, errorCode: err.code ?? null, restarts: s.failures };
          this.#log.error({ worker: w, err: err.message, code: err.code ?? null }, 'shard worker failed to restart');
          this.#scheduleRestart(w);
        },
      );
    }, delay);
    s.timer.unref();
  }
}

/** One worker thread, resolved once its shards are recovered and it is ready. */
function spawn(file: string, workerData: WorkerConfig, w: number, log: PoolLog, created?: (worker: Worker) => void): Promise<Worker> {
  const worker = new Worker(file, { workerData });
  created?.(worker);
  return new Promise<Worker>((resolve, reject) => {
    let settled = false;
    let reason: Error | null = null;
    // A thread that cannot start closes what it opened and exits: the next one needs RocksDB's lock.
    const onExit = (code: number): void => {
      if (settled) return;
      settled = true;
      worker.off('message', onMsg);
      reject(reason ?? new Error(`shard worker ${w} exited with code ${code} while starting`));
    };
    const stop = (err: Error): void => {
      reason ??= err;
      setTimeout(() => void worker.terminate(), EXIT_GRACE_MS).unref();
    };
    const onMsg = (m: ArrayBuffer | WorkerEvent): void => {
      if (m instanceof ArrayBuffer || settled) return;
      if (m.type === 'ready') {
        settled = true;
        worker.off('message', onMsg);
        const replayed = m.recovery.reduce((a, r) => a + r.replayedFrames, 0);
        const truncated = m.recovery.reduce((a, r) => a + r.truncatedBytes, 0);
        log.info({ worker: w, shards: workerData.shardIds.length, replayedFrames: replayed, truncatedBytes: truncated }, 'shard worker ready');
        resolve(worker);
      } else if (m.type === 'failed' || m.type === 'fatal') {
        stop(Object.assign(new Error(`shard worker ${w} failed to start: ${m.message}`), { code: m.code ?? undefined }));
      }
    };
    worker.on('message', onMsg);
    worker.on('error', (err) => {
      if (!settled) stop(err);
    });
    worker.once('exit', onExit);
  });
}
