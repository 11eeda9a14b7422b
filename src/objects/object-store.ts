/**
 * The object store contract (docs/objects.md): what the shard's group commit, imports, compaction
 * and the reaper need from a place that keeps whole objects. Backends: `file-store.ts` (a shared
 * directory) and `s3-store.ts` (any S3-compatible store).
 */

/** A byte range of an object: `length` bytes from `offset`. */
export interface ByteRange {
  offset: number;
  length: number;
}

/** One listed object: its key (relative to the store's root) and its size in bytes. */
export interface ListedObject {
  key: string;
  size: number;
}

export interface PutOptions {
  /**
   * The key is new, and nothing reads it before this put resolves (group and compacted objects:
   * the ledger names them only afterwards). file: then writes it in place and syncs the file and
   * its directory together, one sync round instead of two in a row; a put cut short leaves a
   * partial object under the key, which nothing refers to (an orphan for the reaper). s3: no
   * difference (a PUT is atomic there).
   */
  fresh?: boolean;
  /**
   * Create-only: the put fails with code `PreconditionFailed` when the key exists, and of two
   * puts of one key exactly one succeeds (S3's `If-None-Match: *`). Objects mode fences group
   * objects with it (docs/cluster.md, "Fencing"). Only for stores whose `createOnly` is true.
   */
  ifAbsent?: boolean;
}

export interface ObjectStore {
  /** The URL with credentials removed, for logs and /admin. */
  readonly describe: string;
  /** The store honours PutOptions.ifAbsent (file: yes; s3: not every S3-compatible server does). */
  readonly createOnly: boolean;
  /** Durable when it resolves (file: write tmp + fsync + rename + fsync dir; s3: 200 to PUT). */
  put(key: string, body: Buffer | readonly Buffer[], options?: PutOptions): Promise<void>;
  /**
   * Keys that will be put soon, create-only (in this order): a store may ready them off the write
   * path (file: opens their temporary files ahead). Optional; never required for a put.
   */
  prepare?(keys: readonly string[]): void;
  /**
   * Whole object or a byte range; rejects with ObjectNotFoundError when absent, and with an
   * ObjectStoreError (code `InvalidRange`) when the range does not lie inside the object.
   */
  get(key: string, range?: ByteRange): Promise<Buffer>;
  /** Idempotent (absent is fine). */
  delete(key: string): Promise<void>;
  /**
   * Keys under prefix, in key order (UTF-8 byte order, as S3 lists), with sizes; with
   * `startAfter`, only the keys after it (S3's `start-after`): a listing resumed where an earlier
   * one stopped costs what it reads from there, not what comes before.
   */
  list(prefix: string, startAfter?: string): AsyncIterable<ListedObject>;
  close(): Promise<void>;
}

export type ObjectOp = 'put' | 'get' | 'delete' | 'list';

/**
 * A failed store operation. `code` is the S3 error code when the store answered with one
 * (`NoSuchKey`, `NoSuchBucket`, `AccessDenied`, `SlowDown`, …), else a name of our own:
 * `InvalidKey`, `InvalidRange`, `Unreachable` (no answer: refused, reset, timed out),
 * `InvalidResponse`, `NoSuchStore` (a file store's directory is missing), or the file system's
 * code (`EACCES`, `ENOSPC`, …).
 */
export class ObjectStoreError extends Error {
  readonly op: ObjectOp;
  readonly key: string;
  readonly code: string;
  /** The HTTP status, for S3; undefined for file stores and for requests that got no answer. */
  readonly status: number | undefined;

  constructor(op: ObjectOp, key: string, code: string, message: string, status?: number, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ObjectStoreError';
    this.op = op;
    this.key = key;
    this.code = code;
    this.status = status;
  }
}

/** The object does not exist (S3 `NoSuchKey`, file `ENOENT`). */
export class ObjectNotFoundError extends ObjectStoreError {
  constructor(op: ObjectOp, key: string, where: string) {
    super(op, key, 'NoSuchKey', `object ${JSON.stringify(key)} not found in ${where}`, 404);
    this.name = 'ObjectNotFoundError';
  }
}

/**
 * An ObjectStoreError as plain data, to cross a thread boundary: postMessage keeps only an
 * Error's message and stack (not its class, name or `code`), so errors cross as data and are
 * rebuilt on the other side (HABITS 5).
 */
export interface ObjectErrorData {
  op: ObjectOp;
  key: string;
  code: string;
  message: string;
  status?: number;
}

export function objectErrorData(err: ObjectStoreError): ObjectErrorData {
  return { op: err.op, key: err.key, code: err.code, message: err.message, ...(err.status !== undefined ? { status: err.status } : {}) };
}

/** The error again, of its class (an ObjectNotFoundError for `NoSuchKey`). */
export function objectErrorFromData(d: ObjectErrorData): ObjectStoreError {
  if (d.code === 'NoSuchKey') {
    const e = new ObjectNotFoundError(d.op, d.key, '');
    e.message = d.message;
    return e;
  }
  return new ObjectStoreError(d.op, d.key, d.code, d.message, d.status);
}

/** True for an ObjectNotFoundError, or its data (objectErrorData) after it crossed a thread. */
export function isObjectNotFound(err: unknown): boolean {
  return err instanceof ObjectNotFoundError || (typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'NoSuchKey');
}

const MAX_KEY_BYTES = 1024; // S3's limit on a key, in UTF-8 bytes

/**
 * Why `key` may not name an object, or null when it may. The same rules for every backend, so a
 * key that works with `file:` works with `s3://`: relative, `/`-separated, no empty, `.` or `..`
 * segment, no segment starting with `.` (the file store's temporary files), no backslash or
 * control character, at most 1024 UTF-8 bytes.
 */
export function keyProblem(key: string, what = 'key'): string | null {
  if (typeof key !== 'string' || key === '') return `${what} is empty`;
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) return `${what} is longer than ${MAX_KEY_BYTES} bytes`;
  if (key.startsWith('/')) return `${what} ${JSON.stringify(key)} is absolute (starts with /)`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(key)) return `${what} ${JSON.stringify(key)} holds a control character or a backslash`;
  for (const seg of key.split('/')) {
    if (seg === '') return `${what} ${JSON.stringify(key)} has an empty segment (// or a trailing /)`;
    if (seg === '..' || seg === '.') return `${what} ${JSON.stringify(key)} has a ${seg} segment`;
    if (seg.startsWith('.')) return `${what} ${JSON.stringify(key)} has a segment starting with . (reserved)`;
  }
  return null;
}

/** Throws ObjectStoreError `InvalidKey` unless `key` is a valid object key. */
export function checkKey(op: ObjectOp, key: string): void {
  const problem = keyProblem(key);
  if (problem !== null) throw new ObjectStoreError(op, String(key), 'InvalidKey', problem);
}

/**
 * A list prefix may be empty or end in `/` or be a partial last segment (`g/1/000`); it obeys
 * the key rules otherwise.
 */
export function checkPrefix(prefix: string): void {
  if (prefix === '') return;
  const problem = keyProblem(prefix.endsWith('/') ? prefix + 'x' : prefix, 'prefix');
  if (problem !== null) throw new ObjectStoreError('list', prefix, 'InvalidKey', problem);
}

/** Throws ObjectStoreError `InvalidRange` unless the range is two non-negative safe integers. */
export function checkRange(key: string, range: ByteRange | undefined): void {
  if (range === undefined) return;
  if (!Number.isSafeInteger(range.offset) || !Number.isSafeInteger(range.length) || range.offset < 0 || range.length < 0) {
    throw new ObjectStoreError('get', key, 'InvalidRange', `range ${JSON.stringify(range)} of ${JSON.stringify(key)}: offset and length must be integers >= 0`);
  }
}

/** The body as one list of chunks, and its length. */
export function bodyChunks(body: Buffer | readonly Buffer[]): { chunks: readonly Buffer[]; bytes: number } {
  const chunks = Buffer.isBuffer(body) ? [body] : body;
  let bytes = 0;
  for (const c of chunks) bytes += c.length;
  return { chunks, bytes };
}
