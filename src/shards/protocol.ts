/**
 * The typed trip to the shard workers: one request and one result type per operation (`Ops`),
 * each with its code and its encoding on the wire (wire.ts). `ShardClient` calls
 * `call(op, shard, req): Promise<Res<op>>`; the worker decodes with the same table and
 * dispatches through a table typed by the same map (worker/worker-main.ts), so a request and
 * its reply cannot be paired with another operation's types.
 *
 * Appends and trims, the hot path, are packed fields (append-wire.ts); the rare operations are a
 * JSON object (plus raw record bytes for creates and read pages), decoded without validation:
 * both ends are this build.
 */
import { type ErrorData } from '../errors';
import {
  type AdoptParams,
  type AdoptResult,
  type AppendParams,
  type AppendResult,
  type ConfigureParams,
  type CreateParams,
  type CreateResult,
  type DeleteResult,
  type DropParams,
  type DropResult,
  type HeadParams,
  type ImportBeginParams,
  type ImportFramesParams,
  type ImportFramesResult,
  type ImportResult,
  type ImportStepParams,
  type ListParams,
  type ListResult,
  type ReadParams,
  type ReadResult,
  type ShardStats,
  type StreamInfo,
  type TailEvent,
  type TrimParams,
} from './types';
import { appendReq, appendRes, readRecords, writeRecords } from './append-wire';
import { type Reader, type Writer } from './wire';

export interface NameParams {
  name: string;
}

/** Every operation a shard worker answers: its request and its result. */
export interface Ops {
  create: { req: CreateParams; res: CreateResult };
  append: { req: AppendParams; res: AppendResult };
  trim: { req: TrimParams; res: AppendResult };
  delete: { req: NameParams; res: DeleteResult };
  read: { req: ReadParams; res: ReadResult };
  head: { req: HeadParams; res: StreamInfo };
  list: { req: ListParams; res: ListResult };
  stats: { req: null; res: ShardStats };
  /** Stream config change (PATCH /_streams/{name}). */
  configure: { req: ConfigureParams; res: StreamInfo };
  /** Live reads: start (watch) or stop (unwatch) sending tail events for a stream name. */
  watch: { req: NameParams; res: TailEvent };
  unwatch: { req: NameParams; res: TailEvent };
  /**
   * Import a stream written by another node (docs/storage.md, "Imported streams"), in steps so
   * that a large stream crosses in bounded chunks: begin (a hidden staging stream), frames (one
   * chunk each, answered once durable), end (published, replacing the local copy), abort.
   */
  importBegin: { req: ImportBeginParams; res: { importId: number } };
  importFrames: { req: ImportFramesParams; res: ImportFramesResult };
  importEnd: { req: ImportStepParams; res: ImportResult };
  importAbort: { req: ImportStepParams; res: { aborted: boolean } };
  /** Remove the local copy of a stream (it moved to another node); nothing shared is touched. */
  drop: { req: DropParams; res: DropResult };
  /** Open a stream from the object ledger without copying its records (docs/objects.md, "Opening without a copy"). */
  adopt: { req: AdoptParams; res: AdoptResult };
}

export type OpName = keyof Ops;
export type Req<K extends OpName> = Ops[K]['req'];
export type Res<K extends OpName> = Ops[K]['res'];

/** How one value crosses: written into the sender's message, read back from the receiver's. */
export interface Codec<T> {
  write(w: Writer, v: T): void;
  read(r: Reader): T;
}

export interface OpSpec<K extends OpName> {
  /** The entry's code on the wire (stable: both threads of a build agree, nothing stores it). */
  code: number;
  req: Codec<Req<K>>;
  res: Codec<Res<K>>;
}

function json<T>(): Codec<T> {
  return { write: (w, v) => w.json(v), read: (r) => r.json<T>() };
}

/** A create: its fields as JSON, its initial records packed. */
const createReq: Codec<CreateParams> = {
  write(w, p) {
    const { records, ...fields } = p;
    w.json(fields);
    writeRecords(w, records);
  },
  read(r) {
    // Object.assign onto the parsed fields, not `{ ...fields, x }`: a property after a spread gives
    // every object a hidden class of its own in this V8 (program/http/engine.ts, requestOf).
    return Object.assign(r.json<Omit<CreateParams, 'records'>>(), { records: readRecords(r) });
  },
};

/** A read page: its fields as JSON, the body as bytes (moved, not copied, when large), or as parts lent (Writer.parts). */
const readRes: Codec<ReadResult> = {
  write(w, v) {
    const { body, parts, ...fields } = v;
    w.json(fields);
    if (parts !== undefined) w.parts(parts);
    else w.blob(body);
  },
  read(r) {
    const fields = r.json<Omit<ReadResult, 'body' | 'parts'>>();
    const page = r.page();
    return Array.isArray(page) ? Object.assign(fields, { body: NO_BODY, parts: page }) : Object.assign(fields, { body: page });
  },
};

const NO_BODY = Buffer.alloc(0);

/** An import chunk: its fields as JSON, the frames as bytes. */
const importFramesReq: Codec<ImportFramesParams> = {
  write(w, p) {
    const { frames, ...fields } = p;
    w.json(fields);
    w.blob(frames);
  },
  read(r) {
    return Object.assign(r.json<Omit<ImportFramesParams, 'frames'>>(), { frames: r.blob() });
  },
};

export const OPS: { readonly [K in OpName]: OpSpec<K> } = {
  create: { code: 1, req: createReq, res: json() },
  append: { code: 2, req: appendReq, res: appendRes },
  trim: { code: 3, req: json(), res: appendRes },
  delete: { code: 4, req: json(), res: json() },
  read: { code: 5, req: json(), res: readRes },
  head: { code: 6, req: json(), res: json() },
  list: { code: 7, req: json(), res: json() },
  stats: { code: 8, req: json(), res: json() },
  configure: { code: 16, req: json(), res: json() },
  watch: { code: 24, req: json(), res: json() },
  unwatch: { code: 25, req: json(), res: json() },
  importBegin: { code: 40, req: json(), res: json() },
  importFrames: { code: 41, req: importFramesReq, res: json() },
  importEnd: { code: 42, req: json(), res: json() },
  importAbort: { code: 43, req: json(), res: json() },
  drop: { code: 44, req: json(), res: json() },
  adopt: { code: 45, req: json(), res: json() },
};

const OP_NAMES: readonly OpName[] = ['create', 'append', 'trim', 'delete', 'read', 'head', 'list', 'stats', 'configure', 'watch', 'unwatch', 'importBegin', 'importFrames', 'importEnd', 'importAbort', 'drop', 'adopt'];
const BY_CODE = new Map<number, OpName>(OP_NAMES.map((op) => [OPS[op].code, op]));

/** The operation of a request entry's code, or undefined for a code this build does not know. */
export function opOf(code: number): OpName | undefined {
  return BY_CODE.get(code);
}

/** Error replies (Status.Error) and tail events (Status.Tail), whatever the operation. */
export const errorBody: Codec<ErrorData> = json();
export const tailBody: Codec<TailEvent[]> = json();

/** A buffer handed back (Status.Returned): moved, never copied (wire.ts, Writer.blob); only buffers of at least 64 KiB are handed back. */
export const returnedBody: Codec<Buffer> = {
  write: (w, b) => {
    if (!w.blob(b, true)) throw new Error('wire: a returned buffer must be moved, not copied');
  },
  read: (r) => r.blob(),
};
