/**
 * What crosses between the thread that runs the handlers and an I/O thread (io-threads.ts,
 * io-thread.ts). Both directions are batched: at most one message per thread and event-loop turn.
 *
 * Main → I/O thread: the response operations of a turn, in order, as int32 quads
 * `[op, id, offset, length]` into one byte block that holds every distinct body chunk of the turn
 * once. An SSE event written to 10,000 readers is the same Buffer 10,000 times: it crosses once,
 * and each reader costs 16 bytes of the message. Status lines and headers ride beside, in order.
 *
 * I/O thread → main: requests (head and body), bodies refused as too large, aborts, and
 * "writable again" after backpressure.
 */
import { type WriteCut } from './write-pacing';
import { type HeaderList } from './engine';

export const enum Op {
  /** writeHead: meta = {status, headers}. */
  Head = 0,
  Write = 1,
  /** end, with a chunk when length ≥ 0. */
  End = 2,
  /** send: meta = {status, headers}, a body when length ≥ 0. */
  Send = 3,
  /** refuse (a body over the limit, or a too-large answer): meta = {status, headers, body}. */
  Refuse = 4,
  Destroy = 5,
}

export interface HeadMeta {
  status: number;
  headers: HeaderList;
}

export interface RefuseMeta extends HeadMeta {
  body: string;
}

/** One turn of response operations for one I/O thread. */
export interface OpsMessage {
  t: 'ops';
  /** int32 quads: op, response id, offset in `data`, length (−1: no chunk). */
  ops: Int32Array;
  /** Status and headers of Head and Send, the answer of Refuse, in the order of their ops. */
  meta: Array<HeadMeta | RefuseMeta>;
  data: ArrayBuffer;
}

export interface RequestHeadWire {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
}

/** Thread → main, one per turn. */
export interface EventsMessage {
  t: 'events';
  /** New requests: `body` is the request body (transferred). */
  requests: Array<{ id: number; head: RequestHeadWire; body: ArrayBuffer }>;
  /** Requests whose body was over the limit: main answers them with its `tooLarge` reply. */
  tooLarge: Array<{ id: number; head: RequestHeadWire }>;
  /** Responses whose client went away. */
  aborted: number[];
  /** Responses that were backpressured and can take more bytes now. */
  writable: number[];
  /** Responses that reported backpressure (a write that uWS had to buffer). */
  blocked: number[];
  /** Responses the thread cut (write-idle timeout), for the main thread's log; each also comes as `aborted`. */
  cuts: WriteCut[];
}

/** Main → thread control, and the thread's answers to it. */
export type ControlMessage = { t: 'stop-accepting' } | { t: 'close' };
export type ThreadStatus = { t: 'listening' } | { t: 'listen-failed'; message: string } | { t: 'closed' };

/** Collects one turn of operations for one thread; chunks that are the same object are stored once. */
export class OpBatch {
  #ops: number[] = [];
  #meta: Array<HeadMeta | RefuseMeta> = [];
  #chunks: Uint8Array[] = [];
  #at = new Map<Uint8Array | string, [number, number]>();
  #bytes = 0;

  get empty(): boolean {
    return this.#ops.length === 0;
  }

  add(op: Op, id: number, chunk?: Uint8Array | string, meta?: HeadMeta | RefuseMeta): void {
    let offset = 0;
    let length = -1;
    if (chunk !== undefined) {
      let at = this.#at.get(chunk);
      if (at === undefined) {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        at = [this.#bytes, bytes.byteLength];
        this.#chunks.push(bytes);
        this.#bytes += bytes.byteLength;
        this.#at.set(chunk, at);
      }
      [offset, length] = at;
    }
    this.#ops.push(op, id, offset, length);
    if (meta !== undefined) this.#meta.push(meta);
  }

  /** The message, and the buffer to transfer with it; the batch is empty again afterwards. */
  take(): OpsMessage {
    const data = new Uint8Array(this.#bytes);
    let p = 0;
    for (const c of this.#chunks) {
      data.set(c, p);
      p += c.byteLength;
    }
    const m: OpsMessage = { t: 'ops', ops: Int32Array.from(this.#ops), meta: this.#meta, data: data.buffer };
    this.#ops = [];
    this.#meta = [];
    this.#chunks = [];
    this.#at.clear();
    this.#bytes = 0;
    return m;
  }
}
