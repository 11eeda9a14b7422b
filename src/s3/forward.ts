/**
 * Requests the cache does not answer go to the origin, re-signed, streaming both ways.
 *
 *   client ──▶ [aws-chunked decoder] ──▶ [payload hash check] ──▶ [PutObject tee ≤ populate_max] ──▶ origin
 *   client ◀── response headers (after the write's cache effect is applied) ◀── origin
 *
 * Cache effects of writes run when the origin answers 2xx and before the response reaches
 * the client, so the client's next read sees its own write whatever the namespace TTL.
 */
import { createHash } from 'node:crypto';
import { type IncomingMessage } from 'node:http';
import { PassThrough, type Readable, Transform, type TransformCallback } from 'node:stream';
import { type ObjectMeta, objectHeaders } from './cache/entry';
import { type Ctx } from './context';
import { S3Error } from './errors';
import { PRESIGN_PARAMS } from './ops';
import { pipeBody } from './reply';
import { HOP_BY_HOP, passHeaders, sendError } from './respond';
import { AwsChunkedDecoder, EMPTY_SHA256, STREAMING_SIGNED, STREAMING_SIGNED_TRAILER, STREAMING_UNSIGNED_TRAILER } from './sigv4';
import { type Services } from './services';
import { deleteObjectsKeys } from './xml-parse';

/** Client headers that never go to the origin: hop-by-hop, the client's own authentication, what we set. */
const DROP = new Set([...HOP_BY_HOP, 'host', 'authorization', 'expect', 'x-amz-date', 'x-amz-content-sha256', 'x-amz-security-token', 'content-length']);

const DELETE_OBJECTS_MAX = 2 * 1024 * 1024; // 2 MiB: 1000 keys of up to 1 KiB each, with XML around them

/** Passes bytes on but holds the latest piece back until the whole body's SHA-256 is checked. */
class PayloadHashCheck extends Transform {
  readonly #hash = createHash('sha256');
  readonly #want: string;
  #held: Buffer | undefined;

  constructor(want: string) {
    super();
    this.#want = want;
  }

  override _transform(b: Buffer, _e: BufferEncoding, cb: TransformCallback): void {
    this.#hash.update(b);
    if (this.#held) this.push(this.#held);
    this.#held = b;
    cb();
  }

  override _flush(cb: TransformCallback): void {
    if (this.#hash.digest('hex') !== this.#want) return cb(new S3Error('XAmzContentSHA256Mismatch', "The provided 'x-amz-content-sha256' header does not match what was computed."));
    if (this.#held) this.push(this.#held);
    cb();
  }
}

function outgoingHeaders(ctx: Ctx): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of ctx.headers) if (!DROP.has(k)) out[k] = v;
  return out;
}

/** The body toward the origin, decoded and checked; `length` is what Content-Length must say (undefined: chunked). */
function requestBody(ctx: Ctx, headers: Record<string, string>): { body: Readable | undefined; length: number | undefined } {
  const cl = ctx.headers.get('content-length');
  const payload = ctx.headers.get('x-amz-content-sha256') ?? '';
  const encodings = (ctx.headers.get('content-encoding') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  // `aws-chunked` describes this request's framing, never the stored object: S3 drops it
  // from Content-Encoding whether or not the body really is chunked.
  if (encodings.includes('aws-chunked')) {
    const rest = encodings.filter((e) => e !== 'aws-chunked');
    if (rest.length > 0) headers['content-encoding'] = rest.join(', ');
    else delete headers['content-encoding'];
  }
  const hasBody = (cl !== undefined && cl !== '0') || ctx.headers.has('transfer-encoding');
  const req = ctx.body;
  if (!hasBody || req === null) return { body: undefined, length: cl !== undefined && Number(cl) === 0 ? 0 : undefined };
  const chunked = payload.startsWith('STREAMING-') || (encodings.includes('aws-chunked') && ctx.headers.has('x-amz-decoded-content-length'));
  let body: Readable = req;
  let length = cl === undefined ? undefined : Number(cl);
  if (chunked) {
    const decoded = ctx.headers.get('x-amz-decoded-content-length');
    if (decoded === undefined || !/^\d+$/.test(decoded)) throw new S3Error('MissingContentLength', 'You must provide the x-amz-decoded-content-length header with aws-chunked bodies.');
    const signed = payload === STREAMING_SIGNED || payload === STREAMING_SIGNED_TRAILER;
    if (signed && ctx.verified === undefined && ctx.headers.has('authorization') === false) throw new S3Error('AccessDenied', 'Signed aws-chunked body without a signed request');
    const v = ctx.verified;
    const trailers = (ctx.headers.get('x-amz-trailer') ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
    const decoder = new AwsChunkedDecoder({
      signing: signed && v !== undefined ? { signingKey: v.signingKey, amzDate: v.amzDate, scope: v.scope, seedSignature: v.signature } : undefined,
      decodedLength: Number(decoded),
      trailers: payload === STREAMING_UNSIGNED_TRAILER || payload === STREAMING_SIGNED_TRAILER ? trailers : [],
    });
    req.once('error', (err: Error) => decoder.destroy(err));
    body = req.pipe(decoder);
    length = Number(decoded);
    delete headers['x-amz-decoded-content-length'];
    delete headers['x-amz-trailer'];
  } else if (ctx.verified !== undefined && /^[0-9a-f]{64}$/.test(payload) && payload !== EMPTY_SHA256) {
    const check = new PayloadHashCheck(payload);
    req.once('error', (err: Error) => check.destroy(err));
    body = req.pipe(check);
  }
  return { body, length };
}

/** Reads a small body whole (DeleteObjects), refusing more than `max` bytes. */
async function readAll(s: Readable, max: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let n = 0;
  for await (const b of s) {
    n += (b as Buffer).length;
    if (n > max) throw new S3Error('MalformedXML', 'The DeleteObjects body is larger than 2 MiB');
    parts.push(b as Buffer);
  }
  return Buffer.concat(parts);
}

export async function forward(ctx: Ctx, s: Services): Promise<void> {
  const headers = outgoingHeaders(ctx);
  const query = ctx.query.filter(([k]) => !PRESIGN_PARAMS.has(k));
  let { body, length } = requestBody(ctx, headers);
  // A body check may fail before the origin request exists; the failure is read from
  // `errored` when the origin request starts, so an early error must not go unhandled.
  body?.on('error', () => undefined);
  if (ctx.expectContinue) ctx.res.writeContinue();

  let deleteKeys: string[] | undefined;
  let populate: Buffer[] | undefined;
  let sendBody: Readable | Buffer | undefined = body;
  if (ctx.op === 'DeleteObjects' && body !== undefined) {
    // Buffered: the keys must be known to invalidate them, and the identical bytes go on with
    // the client's Content-MD5 / checksum.
    const xml = await readAll(body, DELETE_OBJECTS_MAX);
    deleteKeys = deleteObjectsKeys(xml.toString('utf8'));
    sendBody = xml;
    length = xml.length;
    body = undefined;
  } else if (ctx.op === 'PutObject' && body !== undefined && length !== undefined && length <= s.config.populate_max && s.cache.policy(ctx.target.bucket!).cache) {
    populate = [];
    const tee = new PassThrough();
    const parts = populate;
    body.on('data', (b: Buffer) => parts.push(b));
    body.once('error', (err) => tee.destroy(err));
    tee.on('error', () => undefined);
    sendBody = body.pipe(tee);
  }
  if (length !== undefined) headers['content-length'] = String(length);
  else if (sendBody !== undefined) headers['transfer-encoding'] = 'chunked';

  let res: IncomingMessage;
  const started = process.hrtime.bigint();
  try {
    res = await s.origin.send({ method: ctx.method, target: ctx.target, query, headers, body: sendBody });
  } catch (err) {
    if (err instanceof S3Error) throw err;
    // A body that failed our checks (chunk signature, checksum) is the client's error.
    const bodyErr = (body as (Readable & { errored?: unknown }) | undefined)?.errored;
    if (bodyErr instanceof S3Error) throw bodyErr;
    s.metrics.originErrors.inc();
    s.log.warn({ method: ctx.method, bucket: ctx.target.bucket, key: ctx.target.key, err }, 'origin request failed');
    // Refused at connect: nothing reached the origin, so nothing can have landed.
    if ((err as { code?: unknown }).code !== 'ECONNREFUSED') forgetWritten(ctx, s, deleteKeys);
    throw new S3Error('ServiceUnavailable', 'The origin could not be reached; please retry.');
  }
  s.metrics.origin.observe({ method: ctx.method }, Number(process.hrtime.bigint() - started) / 1e9);
  const status = res.statusCode ?? 502;
  if (status >= 500) {
    s.metrics.originErrors.inc();
    forgetWritten(ctx, s, deleteKeys);
  }
  if (status >= 200 && status < 300) await applyEffects(ctx, s, res, deleteKeys, populate, length);

  ctx.res.writeHead(status, passHeaders(res.headers));
  pipeBody(res, ctx.res, (n) => s.metrics.sent('origin', n));
  // The origin answered before the whole upload went through (an early error): stop sending.
  if (body !== undefined) body.once('error', () => undefined);
}

async function applyEffects(ctx: Ctx, s: Services, res: IncomingMessage, deleteKeys: string[] | undefined, populate: Buffer[] | undefined, length: number | undefined): Promise<void> {
  forgetWritten(ctx, s, deleteKeys);
  if (ctx.op !== 'PutObject') return;
  const { bucket, key } = ctx.target;
  const etag = res.headers.etag;
  if (populate === undefined || etag === undefined) return;
  const data = Buffer.concat(populate);
  if (data.length !== length) return;
  // The origin's PUT answer has an ETag but no Last-Modified: its Date header stands in
  // (docs/s3-cache.md, "Populating from writes").
  const meta: ObjectMeta = {
    etag,
    lastModified: res.headers['last-modified'] ?? res.headers.date ?? new Date().toUTCString(),
    size: data.length,
    headers: { 'content-type': 'binary/octet-stream', ...requestObjectHeaders(ctx), ...amzOnly(objectHeaders(res.headers)) },
  };
  await s.cache.populate(bucket!, key!, meta, data);
}

/**
 * A write's keys leave the cache: after a success (a PutObject's new bytes may then be populated),
 * and after a write the origin did not answer, or answered with 5xx, since it may still have
 * landed: the old bytes are never served again, fresh or stale (stale_if_error_seconds), and
 * read-your-writes holds whatever happened.
 */
function forgetWritten(ctx: Ctx, s: Services, deleteKeys: string[] | undefined): void {
  const { bucket, key } = ctx.target;
  switch (ctx.op) {
    case 'PutObject':
    case 'CopyObject':
    case 'DeleteObject':
    case 'CompleteMultipartUpload':
    case 'ObjectWrite':
      s.cache.invalidate(bucket!, key!);
      return;
    case 'DeleteObjects':
      for (const k of deleteKeys ?? []) s.cache.invalidate(bucket!, k);
      return;
    default:
      return;
  }
}

function amzOnly(h: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).filter(([k]) => k.startsWith('x-amz-')));
}

/** Object headers a PutObject request sets (what a later GET from the origin would return). */
function requestObjectHeaders(ctx: Ctx): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of ctx.headers) {
    if (k === 'content-encoding') {
      const rest = v.split(',').map((e) => e.trim()).filter((e) => e !== '' && e !== 'aws-chunked');
      if (rest.length > 0) out[k] = rest.join(', ');
    } else if (k === 'content-type' || k === 'cache-control' || k === 'content-disposition' || k === 'content-language' || k === 'expires' || k.startsWith('x-amz-meta-')) out[k] = v;
    else if (k === 'x-amz-storage-class' || k === 'x-amz-website-redirect-location') out[k] = v;
  }
  return out;
}

export { sendError };
