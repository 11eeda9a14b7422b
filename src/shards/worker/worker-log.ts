/**
 * Log lines from a shard worker: the thread has no logger of its own (the node's writes to one
 * stream from the main thread), so a line travels to it as a `log` message (worker-pool.ts logs it
 * with the worker's number). For what an operator must hear of and that no request answers: a
 * producer snapshot a new owner could not use, or one the owner failed to write.
 */
import { type MessagePort } from 'node:worker_threads';

export type WorkerLogLevel = 'info' | 'warn';

export interface WorkerLog {
  info(fields: Record<string, unknown>, msg: string): void;
  warn(fields: Record<string, unknown>, msg: string): void;
}

/** Lines for the main thread, posted on `port`. */
export function workerLogTo(port: Pick<MessagePort, 'postMessage'>): WorkerLog {
  const line = (level: WorkerLogLevel) => (fields: Record<string, unknown>, msg: string): void => port.postMessage({ type: 'log', level, msg, fields });
  return { info: line('info'), warn: line('warn') };
}

/** Nowhere (tests, tools that open a shard outside a worker). */
export const SILENT_WORKER_LOG: WorkerLog = { info: () => undefined, warn: () => undefined };
