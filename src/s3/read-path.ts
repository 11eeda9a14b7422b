/**
 * GetObject and HeadObject answered from the cache.
 *
 *   fresh entry (memory or disk) ─────────────▶ conditionals ▶ range ▶ bytes from the entry
 *   stale entry ─▶ fill with If-None-Match ─▶ 304: touch, serve the entry │ 200: as a miss
 *                  └─ origin unreachable, timed out or 5xx, entry within stale_if_error_seconds
 *                     past its TTL ─▶ serve the entry, marked stale (x-svc-cache: stale, Warning)
 *   miss ─▶ fill (shared by concurrent misses) ─▶ headers as soon as the origin answers,
 *           body streamed to every reader while the cache fills
 *   cold range of an object larger than max_object_bytes ─▶ the range alone from the origin
 *           (sized by one origin HEAD shared by concurrent cold reads of the object)
 *   HEAD ─▶ entry, else metadata cache, else origin HEAD (remembered)
 *
 * Checksum headers are never replayed from the cache: the SDK validates them, also on 206,
 * and a partial body under the whole object's checksum makes it throw.
 */
import * as fsp from 'node:fs/promises';
import { type IncomingMessage } from 'node:http';
import { type Readable } from 'node:stream';
import { type ObjectMeta, metaFromResponse } from './cache/entry';
import { type Hit } from './cache/object-cache';
import { evaluateConditionals } from './conditionals';
import { type Ctx } from './context';
import { S3Error } from './errors';
import { forward } from './forward';
import { pipeBody } from './reply';
import { passHeaders } from './respond';
import { parseRange } from './range';
import { type Services } from './services';

type Label = 'hit' | 'miss' | 'revalidated' | 'stale';

/**
 * RFC 7234 §5.5: 110 on every stale response, 111 because revalidation failed. The Warning header
 * is obsoleted by RFC 9111 but still what caches and tools look for; `x-svc-cache: stale` says the same.
 */
const STALE_WARNING = '110 svc-cache "Response is Stale", 111 svc-cache "Revalidation Failed"';
/** The body of HEAD answers and empty objects. */
const EMPTY = Buffer.alloc(0);
type Body = Buffer | ((start: number, end: number) => Readable);

const SSE_CUSTOMER = 'x-amz-server-side-encryption-customer-';

/** Requests whose answer depends on more than the object: customer-key encryption, ownership checks, requester pays. */
function bypass(ctx: Ctx): boolean {
  // Every name looked for is at least 19 characters long: shorter ones (most) are not compared.
  for (const k of ctx.headers.keys())
    if (k.length >= 19 && (k.startsWith(SSE_CUSTOMER) || k === 'x-amz-expected-bucket-owner' || k === 'x-amz-request-payer')) return true;
  return false;
}


/**
 * A fresh memory-tier hit answered at once, without a promise or a microtask per hit (what
 * serveRead would do for it, step for step); false when the request needs serveRead.
 */
export function serveMemoryHit(ctx: Ctx, s: Services, now = Date.now()): boolean {
  const bucket = ctx.target.bucket!;
  const key = ctx.target.key!;
  const policy = s.cache.policy(bucket);
  if (!policy.cache || bypass(ctx)) return false;
  const hit = s.cache.lookup(bucket, key);
  if (hit === undefined || hit.tier !== 'memory' || now - hit.entry.checkedAt >= policy.ttl_seconds * 1000) return false;
  s.metrics.hit('memory');
  serveObject(ctx, s, hit.entry.meta, hit.entry.body, 'hit');
  return true;
}

export async function serveRead(ctx: Ctx, s: Services, retried = false): Promise<void> {
  const bucket = ctx.target.bucket!;
  const key = ctx.target.key!;
  const policy = s.cache.policy(bucket);
  if (!policy.cache || bypass(ctx)) return forward(ctx, s);
  const ttl = policy.ttl_seconds * 1000;
  const hit = s.cache.lookup(bucket, key);
  if (hit !== undefined && Date.now() - hit.entry.checkedAt < ttl) return serveHit(ctx, s, hit, 'hit');
  if (ctx.method === 'HEAD') return serveHead(ctx, s, hit, ttl);

  if (hit === undefined && ctx.headers.has('range') && !s.cache.filling(bucket, key)) {
    // Size the object before deciding: a small range of a huge object must not download all of it.
    const meta = await metadata(ctx, s, ttl);
    if (meta !== undefined && meta.size > policy.max_object_bytes) return rangeFromOrigin(ctx, s, meta);
  }
  const f = s.cache.fill(bucket, key, hit?.entry.meta);
  let head;
  try {
    head = await f.head;
  } catch (err) {
    s.log.warn({ bucket, key, err }, 'origin fetch failed');
    const stale = staleHit(s, bucket, key);
    if (stale !== undefined) return serveStale(ctx, s, stale);
    throw new S3Error('ServiceUnavailable', 'The origin could not be reached; please retry.');
  }
  switch (head.kind) {
    case 'not-modified': {
      s.cache.touch(bucket, key);
      const again = s.cache.lookup(bucket, key);
      if (again !== undefined) return serveHit(ctx, s, again, 'revalidated');
      if (!retried) return serveRead(ctx, s, true);
      throw new S3Error('ServiceUnavailable', 'The cached object changed while it was read; please retry.');
    }
    case 'object':
      return serveObject(ctx, s, head.meta, (start, end) => f.reader(start, end), 'miss');
    case 'status': {
      if (head.status >= 500) {
        const stale = staleHit(s, bucket, key);
        if (stale !== undefined) return serveStale(ctx, s, stale);
      }
      const h = passHeaders(head.headers);
      h['content-length'] = String(head.body.length);
      delete h['transfer-encoding'];
      ctx.res.writeHead(head.status, h);
      ctx.res.end(head.body);
      return;
    }
    case 'passthrough': {
      const res = head.take();
      if (res === undefined || head.meta === undefined || ctx.headers.has('range')) {
        res?.destroy();
        return forward(ctx, s);
      }
      return passthrough(ctx, s, head.meta, res);
    }
  }
}

/**
 * The entry to answer with while the origin fails: looked up again now, so an entry a write
 * invalidated meanwhile is gone (never served stale), and taken only while it is younger than
 * the TTL plus the bucket's stale_if_error_seconds. A fresh entry found here (a write through
 * the cache populated it meanwhile) is served as a plain hit.
 */
function staleHit(s: Services, bucket: string, key: string, now = Date.now()): Hit | undefined {
  const policy = s.cache.policy(bucket);
  const hit = s.cache.lookup(bucket, key);
  if (hit === undefined || now - hit.entry.checkedAt >= (policy.ttl_seconds + policy.stale_if_error_seconds) * 1000) return undefined;
  return hit;
}

function serveStale(ctx: Ctx, s: Services, hit: Hit): Promise<void> {
  const fresh = Date.now() - hit.entry.checkedAt < s.cache.policy(ctx.target.bucket!).ttl_seconds * 1000;
  if (!fresh) s.metrics.staleServed.inc();
  return serveHit(ctx, s, hit, fresh ? 'hit' : 'stale');
}

/** The per-object part of the response headers, built once per cached metadata object. */
const baseHeaders = new WeakMap<ObjectMeta, ReadonlyArray<[string, string]>>();

/**
 * An object response's headers as the list the engine writes (no header object to convert on a
 * hit): the cached per-object part, then this response's own.
 */
function objectHeaders(ctx: Ctx, meta: ObjectMeta, label: Label): Array<[string, string]> {
  let base = baseHeaders.get(meta);
  if (base === undefined) {
    const h: Record<string, string> = { ...meta.headers, etag: meta.etag, 'last-modified': meta.lastModified, 'accept-ranges': 'bytes' };
    base = Object.entries(h);
    baseHeaders.set(meta, base);
  }
  const out = base.slice();
  out.push(['x-amz-request-id', ctx.requestId], ['x-svc-cache', label]);
  if (label === 'stale') out.push(['warning', STALE_WARNING]);
  return out;
}

async function serveHit(ctx: Ctx, s: Services, hit: Hit, label: Label): Promise<void> {
  s.metrics.hit(hit.tier);
  if (hit.tier === 'memory') return serveObject(ctx, s, hit.entry.meta, hit.entry.body, label);
  const d = hit.entry;
  const bucket = ctx.target.bucket!;
  const key = ctx.target.key!;
  let fh: fsp.FileHandle;
  try {
    fh = await fsp.open(d.file, 'r');
  } catch {
    // Evicted or invalidated between lookup and open: read it again the normal way.
    return serveRead(ctx, s, true);
  }
  if (ctx.method !== 'HEAD' && s.cache.fitsMemory(d.meta.size)) {
    // Small: read it whole and keep it in memory for the next reader.
    try {
      const body = Buffer.alloc(d.meta.size);
      await fh.read(body, 0, d.meta.size, d.bodyOffset);
      s.cache.promote(bucket, key, d, body);
      return serveObject(ctx, s, d.meta, body, label);
    } finally {
      await fh.close();
    }
  }
  // The handle passes to the read stream (autoClose) only once the stream exists; on every
  // other way out (HEAD, 304, 412, 416, an empty body, a throw) it is closed here.
  let stream: Readable | undefined;
  const body: Body = (start, end) => (stream = fh.createReadStream({ start: d.bodyOffset + start, end: d.bodyOffset + end - 1, autoClose: true }));
  try {
    serveObject(ctx, s, d.meta, body, label);
  } finally {
    if (stream === undefined) await fh.close();
  }
}

/** Writes an object response: conditionals, then range, then headers and body. */
function serveObject(ctx: Ctx, s: Services, meta: ObjectMeta, body: Body, label: Label): void {
  const verdict = evaluateConditionals(ctx.headers, meta);
  const headers = objectHeaders(ctx, meta, label);
  if (verdict === 304) {
    const h: Array<[string, string]> = [['etag', meta.etag], ['last-modified', meta.lastModified], ['x-amz-request-id', ctx.requestId], ['x-svc-cache', label]];
    if (label === 'stale') h.push(['warning', STALE_WARNING]);
    ctx.res.send(304, h);
    return;
  }
  if (verdict === 412) throw new S3Error('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', { Condition: conditionName(ctx) });
  const r = parseRange(ctx.headers.get('range'), meta.size);
  if (r.kind === 'unsatisfiable')
    throw new S3Error('InvalidRange', 'The requested range is not satisfiable', { RangeRequested: ctx.headers.get('range') ?? '', ActualObjectSize: String(meta.size) }, { 'content-range': `bytes */${meta.size}` });
  let start = 0;
  let end = meta.size; // exclusive
  let status = 200;
  if (r.kind === 'range') {
    start = r.start;
    end = r.end + 1;
    status = 206;
    headers.push(['content-range', `bytes ${r.start}-${r.end}/${meta.size}`]);
  }
  headers.push(['content-length', String(end - start)]);
  if (ctx.method === 'HEAD') {
    ctx.res.send(status, headers);
    return;
  }
  const source = label === 'miss' ? 'origin' : 'cache';
  s.metrics.sent(source, end - start);
  if (Buffer.isBuffer(body) || end === start) {
    // One write: status, headers and body (the engine frames it). An empty body opens no stream.
    ctx.res.send(status, headers, !Buffer.isBuffer(body) ? EMPTY : start === 0 && end === body.length ? body : body.subarray(start, end));
    return;
  }
  ctx.res.writeHead(status, headers);
  const stream = body(start, end);
  stream.once('error', (err) => s.log.warn({ bucket: ctx.target.bucket, key: ctx.target.key, err: err.message }, 'object body failed'));
  pipeBody(stream, ctx.res);
}

function conditionName(ctx: Ctx): string {
  return ctx.headers.has('if-match') ? 'If-Match' : 'If-Unmodified-Since';
}

/** HEAD that the content cache cannot answer: the metadata cache, else the origin. */
async function serveHead(ctx: Ctx, s: Services, stale: Hit | undefined, ttl: number): Promise<void> {
  const bucket = ctx.target.bucket!;
  const key = ctx.target.key!;
  const m = s.cache.metadata(bucket, key);
  if (m !== undefined && Date.now() - m.checkedAt < ttl) {
    s.metrics.hit('metadata');
    if (stale !== undefined && stale.entry.meta.etag === m.meta.etag) s.cache.touch(bucket, key);
    return serveObject(ctx, s, m.meta, Buffer.alloc(0), 'hit');
  }
  s.metrics.misses.inc();
  let res: IncomingMessage;
  try {
    res = await originHead(ctx, s);
  } catch (err) {
    if (serveStaleHead(ctx, s)) return;
    throw err;
  }
  if ((res.statusCode ?? 502) >= 500 && serveStaleHead(ctx, s)) return;
  const meta = res.statusCode === 200 ? metaFromResponse(res.headers) : undefined;
  if (meta === undefined) {
    ctx.res.writeHead(res.statusCode ?? 502, passHeaders(res.headers));
    ctx.res.end();
    return;
  }
  if (stale !== undefined) {
    if (stale.entry.meta.etag === meta.etag) s.cache.touch(bucket, key);
    else s.cache.invalidate(bucket, key);
  }
  s.cache.rememberMetadata(bucket, key, meta);
  serveObject(ctx, s, meta, Buffer.alloc(0), stale !== undefined && stale.entry.meta.etag === meta.etag ? 'revalidated' : 'miss');
}

/**
 * HEAD while the origin fails: the stored entry, else the metadata cache, each looked up again
 * (a write meanwhile removed both) and only within the TTL plus stale_if_error_seconds.
 */
function serveStaleHead(ctx: Ctx, s: Services): boolean {
  const bucket = ctx.target.bucket!;
  const key = ctx.target.key!;
  const now = Date.now();
  const policy = s.cache.policy(bucket);
  const ttl = policy.ttl_seconds * 1000;
  const hit = staleHit(s, bucket, key, now);
  const m = hit?.entry ?? s.cache.metadata(bucket, key);
  if (m === undefined || now - m.checkedAt >= ttl + policy.stale_if_error_seconds * 1000) return false;
  const fresh = now - m.checkedAt < ttl;
  if (!fresh) s.metrics.staleServed.inc();
  serveObject(ctx, s, m.meta, EMPTY, fresh ? 'hit' : 'stale');
  return true;
}

async function originHead(ctx: Ctx, s: Services): Promise<IncomingMessage> {
  const started = process.hrtime.bigint();
  try {
    const res = await s.origin.send({ method: 'HEAD', target: ctx.target });
    s.metrics.origin.observe({ method: 'HEAD' }, Number(process.hrtime.bigint() - started) / 1e9);
    res.resume();
    if ((res.statusCode ?? 502) >= 500) s.metrics.originErrors.inc();
    return res;
  } catch (err) {
    s.metrics.originErrors.inc();
    s.log.warn({ bucket: ctx.target.bucket, key: ctx.target.key, err }, 'origin HEAD failed');
    throw new S3Error('ServiceUnavailable', 'The origin could not be reached; please retry.');
  }
}

/** Metadata for sizing a cold range read, or undefined when the origin has no such object (the GET then reports why). */
async function metadata(ctx: Ctx, s: Services, ttl: number): Promise<ObjectMeta | undefined> {
  const m = s.cache.metadata(ctx.target.bucket!, ctx.target.key!);
  if (m !== undefined && Date.now() - m.checkedAt < ttl) return m.meta;
  return s.cache.sharedHead(ctx.target.bucket!, ctx.target.key!, async () => {
    const res = await originHead(ctx, s);
    return res.statusCode === 200 ? metaFromResponse(res.headers) : undefined;
  });
}

/**
 * A range of an object too large to cache: conditionals and range are decided here (the
 * origin may not handle suffix ranges), then exactly that byte window is fetched, under
 * If-Match so a concurrent overwrite cannot splice two versions.
 */
async function rangeFromOrigin(ctx: Ctx, s: Services, meta: ObjectMeta): Promise<void> {
  const r = parseRange(ctx.headers.get('range'), meta.size);
  if (r.kind === 'none') return forward(ctx, s);
  // Unsatisfiable: serveObject answers 412/304/416 before it needs a body.
  if (r.kind === 'unsatisfiable') return serveObject(ctx, s, meta, Buffer.alloc(0), 'miss');
  const verdict = evaluateConditionals(ctx.headers, meta);
  if (verdict !== 200) return serveObject(ctx, s, meta, Buffer.alloc(0), 'miss');
  let res: IncomingMessage;
  try {
    res = await s.origin.send({ method: 'GET', target: ctx.target, headers: { range: `bytes=${r.start}-${r.end}`, 'if-match': meta.etag } });
  } catch (err) {
    s.metrics.originErrors.inc();
    s.log.warn({ bucket: ctx.target.bucket, key: ctx.target.key, err }, 'origin range GET failed');
    throw new S3Error('ServiceUnavailable', 'The origin could not be reached; please retry.');
  }
  if (res.statusCode !== 206) {
    if (res.statusCode === 412) s.cache.invalidate(ctx.target.bucket!, ctx.target.key!);
    const h = passHeaders(res.headers);
    for (const k of Object.keys(h)) if (k.startsWith('x-amz-checksum-')) delete h[k];
    ctx.res.writeHead(res.statusCode ?? 502, h);
    pipeBody(res, ctx.res);
    return;
  }
  const headers = objectHeaders(ctx, meta, 'miss');
  headers.push(['content-range', `bytes ${r.start}-${r.end}/${meta.size}`], ['content-length', String(r.end - r.start + 1)]);
  ctx.res.writeHead(206, headers);
  pipeBody(res, ctx.res, (n) => s.metrics.sent('origin', n));
}

/** A whole object too large to cache, streamed from the origin's response (conditionals decided here). */
function passthrough(ctx: Ctx, s: Services, meta: ObjectMeta, res: IncomingMessage): void {
  const verdict = evaluateConditionals(ctx.headers, meta);
  if (verdict !== 200) {
    res.destroy();
    return serveObject(ctx, s, meta, Buffer.alloc(0), 'miss');
  }
  const h = passHeaders(res.headers);
  // Checksums only when the client asked for them; this 200 is the origin's own full body.
  if (ctx.headers.get('x-amz-checksum-mode')?.toUpperCase() !== 'ENABLED') for (const k of Object.keys(h)) if (k.startsWith('x-amz-checksum-')) delete h[k];
  h['x-svc-cache'] = 'miss';
  ctx.res.writeHead(200, h);
  pipeBody(res, ctx.res, (n) => s.metrics.sent('origin', n));
}
