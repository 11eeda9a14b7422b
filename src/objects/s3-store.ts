/**
 * The `s3://` object store: any S3-compatible store (AWS S3, MinIO, Ceph RGW, s3rver, svc-cache
 * in front of one). A put is durable when the store answers 200 (S3's own guarantee: it answers
 * after the object is stored redundantly). Every operation here is idempotent (a PUT of the same
 * bytes to the same key, GET, DELETE, ListObjectsV2), so each is retried with backoff on a 5xx,
 * `SlowDown`/429, or no answer at all; a 4xx other than those is final and carries S3's code.
 */
import { type Credentials } from '../s3/sigv4';
import { type ObjectOutcome, type ObjectStoreStats, recordObjectRequest } from './object-stats';
import {
  type ByteRange, type ListedObject, type ObjectOp, type ObjectStore, type PutOptions, ObjectNotFoundError, ObjectStoreError, bodyChunks, checkKey, checkPrefix, checkRange,
} from './object-store';
import { type S3Location, describeObjectsLocation } from './objects-url';
import { S3Http, type S3Request, type S3Response } from './s3-http';
import { parseError, parseListPage } from './s3-xml';

export interface S3StoreOptions {
  /** One attempt's deadline, answer included (ms). */
  timeoutMs: number;
  /** Attempts after the first, for 5xx, SlowDown/429 and no answer. */
  retries: number;
  /** The first retry waits up to this long (ms, full jitter); each next one twice as long, at most 5 s. */
  backoffMs: number;
  /** Connections kept to the store (per thread). */
  maxSockets: number;
  /** ListObjectsV2 max-keys (1-1000). */
  listPageSize: number;
}

const DEFAULTS: S3StoreOptions = {
  timeoutMs: 30_000, // 30 s
  retries: 4,
  backoffMs: 100, // 100 ms, 200, 400, 800: ~1.5 s at most before giving up
  maxSockets: 64,
  listPageSize: 1000,
};

const MAX_BACKOFF_MS = 5_000;
/** Status codes and S3 codes worth another attempt. */
const RETRY_STATUS = new Set([429, 500, 502, 503, 504]);
const RETRY_CODES = new Set(['SlowDown', 'InternalError', 'RequestTimeout', 'ServiceUnavailable']);

/** An attempt's failure and whether another attempt may help. */
type Failure = { error: ObjectStoreError; retry: boolean };

export class S3ObjectStore implements ObjectStore {
  readonly describe: string;
  /**
   * Not every S3-compatible server honours `If-None-Match: *` on PUT (s3rver, the tests' server,
   * ignores it), and a store that silently ignores it would break the fence: objects mode keeps
   * the ledger on the acknowledgement path with s3:// (docs/cluster.md, "Fencing").
   */
  readonly createOnly = false;
  readonly #loc: S3Location;
  readonly #http: S3Http;
  readonly #o: S3StoreOptions;
  readonly #stats: ObjectStoreStats | undefined;

  constructor(loc: S3Location, creds: Credentials, stats?: ObjectStoreStats, options: Partial<S3StoreOptions> = {}) {
    this.#loc = loc;
    this.#o = { ...DEFAULTS, ...options };
    this.#http = new S3Http(loc, creds, this.#o);
    this.#stats = stats;
    this.describe = describeObjectsLocation(loc);
  }

  async put(key: string, body: Buffer | readonly Buffer[], options?: PutOptions): Promise<void> {
    checkKey('put', key);
    if (options?.ifAbsent === true) throw new ObjectStoreError('put', key, 'NotImplemented', `object store ${this.describe}: create-only puts are not used with s3://`);
    const { chunks, bytes } = bodyChunks(body);
    await this.#call('put', key, { method: 'PUT', key: this.#full(key), body: chunks, headers: { 'content-type': 'application/octet-stream' } }, (res) => {
      if (res.status !== 200) return undefined;
      return { value: undefined, bytes };
    });
  }

  async get(key: string, range?: ByteRange): Promise<Buffer> {
    checkKey('get', key);
    checkRange(key, range);
    if (range !== undefined && range.length === 0) {
      // No byte range is empty in HTTP: ask for the size and check the offset against it.
      return this.#call('get', key, { method: 'HEAD', key: this.#full(key) }, (res) => {
        if (res.status !== 200) return undefined;
        const size = Number(res.headers['content-length']);
        if (!(range.offset <= size)) throw new ObjectStoreError('get', key, 'InvalidRange', `range ${range.offset}+0 of ${JSON.stringify(key)} is past its end (${size} bytes)`, 200);
        return { value: Buffer.alloc(0), bytes: 0 };
      });
    }
    const headers: Record<string, string> = range === undefined ? {} : { range: `bytes=${range.offset}-${range.offset + range.length - 1}` };
    return this.#call('get', key, { method: 'GET', key: this.#full(key), headers }, (res) => {
      if (range === undefined) return res.status === 200 ? { value: res.body, bytes: res.body.length } : undefined;
      let body: Buffer;
      if (res.status === 206) body = res.body;
      else if (res.status === 200) body = res.body.subarray(range.offset, range.offset + range.length); // a store that ignores Range
      else return undefined;
      if (body.length !== range.length) {
        throw new ObjectStoreError('get', key, 'InvalidRange', `range ${range.offset}+${range.length} of ${JSON.stringify(key)} is past its end (got ${body.length} bytes)`, res.status);
      }
      return { value: body, bytes: body.length };
    });
  }

  async delete(key: string): Promise<void> {
    checkKey('delete', key);
    await this.#call('delete', key, { method: 'DELETE', key: this.#full(key) }, (res) => {
      if (res.status === 204 || res.status === 200) return { value: undefined, bytes: 0 };
      // S3 answers 204 for an absent key; some compatible stores answer 404 NoSuchKey. Both are fine.
      if (res.status === 404 && parseError(res.body.toString('utf8'))?.code === 'NoSuchKey') return { value: undefined, bytes: 0 };
      return undefined;
    });
  }

  async *list(prefix: string, startAfter?: string): AsyncIterable<ListedObject> {
    checkPrefix(prefix);
    const base = this.#loc.prefix === '' ? '' : this.#loc.prefix + '/';
    let token: string | null = null;
    for (;;) {
      const query: [string, string][] = [['list-type', '2'], ['max-keys', String(this.#o.listPageSize)], ['prefix', base + prefix]];
      // The first page only: a continuation token carries where the listing is.
      if (token !== null) query.push(['continuation-token', token]);
      else if (startAfter !== undefined) query.push(['start-after', base + startAfter]);
      const page = await this.#call('list', prefix, { method: 'GET', key: null, query }, (res) => {
        if (res.status !== 200) return undefined;
        const p = parseListPage(res.body.toString('utf8'));
        if (p === null) throw new ObjectStoreError('list', prefix, 'InvalidResponse', `object store ${this.describe}: list ${JSON.stringify(prefix)}: the answer is not a ListObjectsV2 result`, 200);
        return { value: p, bytes: 0 };
      });
      for (const c of page.contents) yield { key: c.key.slice(base.length), size: c.size };
      if (!page.truncated) return;
      if (page.nextToken === null || page.nextToken === token) {
        throw new ObjectStoreError('list', prefix, 'InvalidResponse', `object store ${this.describe}: list ${JSON.stringify(prefix)}: a truncated page without a new continuation token`, 200);
      }
      token = page.nextToken;
    }
  }

  async close(): Promise<void> {
    this.#http.close();
  }

  #full(key: string): string {
    return this.#loc.prefix === '' ? key : `${this.#loc.prefix}/${key}`;
  }

  /**
   * One operation: attempts until `accept` takes an answer (returns a value) or a final failure.
   * `accept` returns undefined for an answer that is not a success; it is then an S3 error.
   */
  async #call<T>(op: ObjectOp, key: string, req: S3Request, accept: (res: S3Response) => { value: T; bytes: number } | undefined): Promise<T> {
    const started = process.hrtime.bigint();
    let outcome: ObjectOutcome = 'error';
    let bytes = 0;
    try {
      for (let attempt = 0; ; attempt++) {
        let failure: Failure;
        try {
          const res = await this.#http.send(req);
          const ok = accept(res);
          if (ok !== undefined) {
            outcome = 'ok';
            bytes = ok.bytes;
            return ok.value;
          }
          failure = this.#answerFailure(op, key, res);
        } catch (err) {
          if (err instanceof ObjectStoreError) throw err;
          failure = this.#networkFailure(op, key, err as NodeJS.ErrnoException, attempt + 1);
        }
        if (failure.error instanceof ObjectNotFoundError) outcome = 'not_found';
        if (!failure.retry || attempt >= this.#o.retries) throw failure.error;
        if (this.#stats !== undefined) this.#stats[op].retries++;
        const cap = Math.min(MAX_BACKOFF_MS, this.#o.backoffMs * 2 ** attempt);
        await new Promise((r) => setTimeout(r, Math.random() * cap));
      }
    } finally {
      if (this.#stats !== undefined) recordObjectRequest(this.#stats, op, outcome, Number(process.hrtime.bigint() - started) / 1e9, bytes);
    }
  }

  #answerFailure(op: ObjectOp, key: string, res: S3Response): Failure {
    const parsed = res.body.length > 0 ? parseError(res.body.toString('utf8')) : null;
    // A HEAD answer has no body: its status is all there is.
    const code = parsed?.code ?? (res.status === 404 ? 'NoSuchKey' : res.status === 403 ? 'AccessDenied' : res.status === 416 ? 'InvalidRange' : `HTTP${res.status}`);
    if (code === 'NoSuchKey' && op === 'get') return { error: new ObjectNotFoundError(op, key, this.describe), retry: false };
    const detail = parsed?.message ? `: ${parsed.message}` : '';
    const error = new ObjectStoreError(op, key, code, `object store ${this.describe}: ${op} ${JSON.stringify(key)}: ${res.status} ${code}${detail}`, res.status);
    return { error, retry: RETRY_STATUS.has(res.status) || RETRY_CODES.has(code) };
  }

  #networkFailure(op: ObjectOp, key: string, err: NodeJS.ErrnoException, attempts: number): Failure {
    const malformed = typeof err.code === 'string' && err.code.startsWith('HPE_');
    const code = malformed ? 'InvalidResponse' : 'Unreachable';
    const what = malformed ? 'answered with something that is not HTTP' : 'gave no answer';
    const message = `object store ${this.describe}: ${op} ${JSON.stringify(key)}: ${this.#loc.endpoint.origin} ${what} (${attempts} attempt${attempts === 1 ? '' : 's'}): ${err.message}`;
    return { error: new ObjectStoreError(op, key, code, message, undefined, { cause: err }), retry: true };
  }
}
