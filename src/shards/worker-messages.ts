/**
 * What a shard worker posts to the main thread, told apart by shape rather than cast: packed
 * replies (wire.ts) travel as a bare ArrayBuffer, or with the read pages moved beside them;
 * everything else is a WorkerEvent object (worker/worker-main.ts).
 */
// By brand, not instanceof: a buffer posted from another thread may come from another realm's constructor (a test's vm context).
import { isSharedArrayBuffer } from 'node:util/types';
import { type WorkerEvent } from './worker/worker-main';

/**
 * A packed message (wire.ts) whose large data travels in transferred buffers of its own: a
 * worker's read pages, a Kafka request frame's batch sent to a worker.
 */
export interface PackedWithExtras {
  packed: ArrayBuffer;
  extras: ArrayBuffer[];
  /** A worker's pooled read pages, as shared memory (worker/page-pool.ts); absent when none. */
  shared?: SharedArrayBuffer[];
}

const NONE: readonly SharedArrayBuffer[] = [];

/** The packed message in a posted one, alone or with its extras; null when it is anything else (an event, a control message). */
export function packedOf(m: unknown): { message: ArrayBuffer; extras: readonly ArrayBuffer[]; shared: readonly SharedArrayBuffer[] } | null {
  if (m instanceof ArrayBuffer) return { message: m, extras: [], shared: NONE };
  if (typeof m !== 'object' || m === null || !('packed' in m) || !('extras' in m)) return null;
  const { packed, extras } = m;
  if (!(packed instanceof ArrayBuffer) || !Array.isArray(extras)) return null;
  const buffers = extras.filter((x): x is ArrayBuffer => x instanceof ArrayBuffer);
  if (buffers.length !== extras.length) return null;
  if (!('shared' in m) || m.shared === undefined) return { message: packed, extras: buffers, shared: NONE };
  const shared = Array.isArray(m.shared) ? m.shared.filter((x): x is SharedArrayBuffer => isSharedArrayBuffer(x)) : [];
  return Array.isArray(m.shared) && shared.length === m.shared.length ? { message: packed, extras: buffers, shared } : null;
}

/** The packed replies in a worker's message, or null when it is an event. */
export const repliesOf = packedOf;

type ControlReply = Extract<WorkerEvent, { type: 'control-reply' }>;

/** A control message's answer, or null for anything else. */
export function controlReplyOf(m: unknown): ControlReply | null {
  if (typeof m !== 'object' || m === null || !('type' in m) || m.type !== 'control-reply' || !('id' in m) || typeof m.id !== 'number') return null;
  const error = 'error' in m && isErrorData(m.error) ? m.error : undefined;
  return { type: 'control-reply', id: m.id, result: 'result' in m ? m.result : undefined, error };
}

type Fatal = Extract<WorkerEvent, { type: 'fatal' }>;
type LogLine = Extract<WorkerEvent, { type: 'log' }>;

/** A line the worker asks the node to log, or null for anything else. */
export function logLineOf(m: unknown): LogLine | null {
  if (typeof m !== 'object' || m === null || !('type' in m) || m.type !== 'log') return null;
  const level = 'level' in m && (m.level === 'info' || m.level === 'warn') ? m.level : 'warn';
  const msg = 'msg' in m && typeof m.msg === 'string' ? m.msg : 'shard worker';
  const fields = 'fields' in m && typeof m.fields === 'object' && m.fields !== null ? (m.fields as Record<string, unknown>) : {};
  return { type: 'log', level, msg, fields };
}

/** The worker's last word before it exits after a storage failure, or null for anything else. */
export function fatalOf(m: unknown): Pick<Fatal, 'message' | 'code'> | null {
  if (typeof m !== 'object' || m === null || !('type' in m) || m.type !== 'fatal') return null;
  const message = 'message' in m && typeof m.message === 'string' ? m.message : 'the shard worker stopped';
  const code = 'code' in m && typeof m.code === 'string' ? m.code : null;
  return { message, code };
}

function isErrorData(e: unknown): e is ControlReply['error'] & object {
  return typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string' && 'message' in e && typeof e.message === 'string';
}
