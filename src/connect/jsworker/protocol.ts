/**
 * Messages between the runtime and a JS plugin's worker thread (worker-main.ts). Buffers cross
 * as Uint8Array (structured clone) and are turned back into Buffers on each side. One request
 * at a time per worker, as for the native plugin host.
 */
import type { RecordResult, SinkRecord, SourceBatch } from '../plugin-api';

export type WorkerRequest =
  | { op: 'open'; config: Record<string, unknown>; state: Uint8Array | null }
  | { op: 'write'; records: SinkRecord[] }
  | { op: 'flush' }
  | { op: 'poll'; max: number; timeoutMs: number }
  | { op: 'commit'; ack: boolean }
  | { op: 'close' };

export interface WorkerResults {
  open: null;
  write: RecordResult[];
  flush: null;
  poll: SourceBatch | null;
  commit: null;
  close: null;
}

export type WorkerMessage =
  | { call: number; ok: true; value: unknown }
  | { call: number; ok: false; message: string }
  | { log: { level: 'error' | 'warn' | 'info' | 'debug'; msg: string } }
  /** The module is loaded (or failed to load; the first call says so). */
  | { ready: true };

export type WorkerEnvelope = { call: number } & WorkerRequest;

/** What the worker is started with. */
export interface WorkerInit {
  file: string;
  type: 'sink' | 'source';
  key: string;
  /** plugin_timeout, ms (the plugin's PluginContext.timeoutMs). */
  timeoutMs: number;
}

/** A Uint8Array that crossed a thread boundary, as a Buffer again (no copy). */
export const asBuffer = (u: Uint8Array): Buffer => (Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength));
