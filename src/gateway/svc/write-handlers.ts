/** PUT (create), POST (append, seal, trim) and DELETE on /{stream}. */
import { SvcError } from '../../errors';
import { type AppendResult, type RecordInput, mediaType } from '../../shards';
import { type HttpRequest } from '../http/engine';
import { BINARY_BATCH_TYPE, DEFAULT_CONTENT_TYPE, JSON_BATCH_TYPE, type SvcContext } from './context';
import { parseMatchSeq, parseProducer } from './append-conditions';
import { parseCreateConfig } from './config-handlers';
import { type Reply, checkRecords, parseBool, parseTime, parseUint } from '../kit';
import { batchRecords } from '../../util/batch-records';

export async function createStream(ctx: SvcContext, name: string, req: HttpRequest): Promise<Reply> {
  const h = req.headers;
  const contentType = h['content-type'] ?? DEFAULT_CONTENT_TYPE;
  const ttlSeconds = parseUint('Svc-TTL', h['svc-ttl']) ?? null;
  const expiresAtMs = parseTime('Svc-Expires-At', h['svc-expires-at']) ?? null;
  const closed = parseBool('Svc-Closed', h['svc-closed']) ?? false;
  const key = h['svc-key'];
  const records: RecordInput[] = [];
  if (req.body.length > 0) {
    checkRecordSize(ctx, req.body.length);
    records.push({ key: key === undefined ? null : Buffer.from(key), value: req.body, headers: null });
  }
  const config = parseCreateConfig(ctx, h);
  const r = await ctx.shards.create({ name, contentType, ttlSeconds, expiresAtMs, closed, records, ...config });
  return {
    status: r.created ? 201 : 200,
    headers: [
      ['svc-next-seq', String(r.info.nextSeq)],
      ['svc-start-seq', String(r.info.startSeq)],
      ['location', req.path],
    ],
  };
}

export async function appendOrTrim(ctx: SvcContext, name: string, req: HttpRequest): Promise<Reply> {
  const h = req.headers;
  const trimSeq = parseUint('Svc-Trim-Seq', h['svc-trim-seq']);
  const producer = parseProducer(h);
  const matchSeq = parseMatchSeq(h);
  if (trimSeq !== undefined) {
    if (req.body.length > 0) throw new SvcError('bad_request', 'a trim (Svc-Trim-Seq) takes no body');
    if (producer !== null || matchSeq !== null) throw new SvcError('bad_request', 'Svc-Producer-* and Svc-Match-Seq apply to appends, not to a trim');
    return appended(await ctx.shards.trim({ name, seq: trimSeq }));
  }
  const close = parseBool('Svc-Closed', h['svc-closed']) ?? false;
  const type = mediaType(h['content-type'] ?? '');
  const key = h['svc-key'];
  if (req.body.length === 0) {
    if (!close) throw new SvcError('bad_request', 'an append needs a body (send Svc-Closed: true alone to seal)');
    if (producer !== null) throw new SvcError('bad_request', 'Svc-Producer-* need records: a seal without records carries no producer sequence');
    return appended(await ctx.shards.append({ name, origin: 'http', payload: { kind: 'records', records: [] }, contentType: null, close, matchSeq }));
  }
  if (type === JSON_BATCH_TYPE || type === BINARY_BATCH_TYPE) {
    if (key !== undefined) throw new SvcError('bad_request', 'Svc-Key applies to single-record appends; batches carry keys inline');
  }
  if (type === BINARY_BATCH_TYPE && producer !== null) {
    throw new SvcError('bad_request', 'Svc-Producer-* apply to single records and JSON batches; a binary batch carries its own producer fields');
  }
  // Batches are parsed and checked against the limits on the shard's worker thread, not here:
  // the gateway thread is the one every request shares. Schema validation against the registry
  // (`registryValidation`) is the exception: the registry is on this thread (validateBatch).
  const rule = ctx.validation?.rule(name) ?? null;
  if (rule !== null && type === JSON_BATCH_TYPE) {
    throw new SvcError('record_invalid', 'this stream validates records against the schema registry: send single records or a binary batch (application/vnd.svc.batch) carrying the wire format, not a JSON batch');
  }
  if (rule !== null && type === BINARY_BATCH_TYPE) {
    const d = batchRecords(req.body);
    if (typeof d === 'string') throw new SvcError('corrupt_batch', d);
    await checkRecords(ctx.validation!, rule, d.records);
  }
  if (type === JSON_BATCH_TYPE) {
    return appended(await ctx.shards.append({ name, origin: 'http', payload: { kind: 'json', body: req.body }, contentType: null, close, producer, matchSeq }));
  }
  if (type === BINARY_BATCH_TYPE) {
    return appended(await ctx.shards.append({ name, origin: 'http', payload: { kind: 'batches', body: req.body }, contentType: null, close, matchSeq }));
  }
  checkRecordSize(ctx, req.body.length);
  const record: RecordInput = { key: key === undefined ? null : Buffer.from(key), value: req.body, headers: null };
  if (rule !== null) await checkRecords(ctx.validation!, rule, [{ batch: 0, index: 0, key: record.key as Buffer | null, value: req.body }]);
  return appended(await ctx.shards.append({ name, origin: 'http', payload: { kind: 'records', records: [record] }, contentType: h['content-type'] ?? null, close, producer, matchSeq }));
}

export async function deleteStream(ctx: SvcContext, name: string): Promise<Reply> {
  await ctx.shards.delete(name);
  await ctx.validation?.forget([name]);
  return { status: 204, headers: [] };
}

function appended(r: AppendResult): Reply {
  const headers: Array<[string, string]> = [];
  // A producer duplicate older than the acknowledgements the stream remembers has no seqs to report.
  if (r.duplicate !== true || r.startSeq >= 0) {
    headers.push(['svc-start-seq', String(r.startSeq)], ['svc-next-seq', String(r.nextSeq)], ['svc-timestamp', String(r.timestamp)]);
  }
  if (r.duplicate === true) headers.push(['svc-producer-duplicate', 'true']);
  if (r.closed) headers.push(['svc-closed', 'true']);
  return { status: 200, headers };
}

function checkRecordSize(ctx: SvcContext, n: number): void {
  if (n > ctx.limits.maxRecordBytes) {
    throw new SvcError('record_too_large', `a record is limited to ${ctx.limits.maxRecordBytes} bytes (this one has ${n})`);
  }
}

