/**
 * PUT (create), POST (append, close), HEAD and DELETE on a Durable Streams stream
 * (PROTOCOL.md "Create", "Append", "Close", "Metadata", "Delete"). Forks are in ds-fork.ts.
 */
import { SvcError } from '../../errors';
import { type AppendPayload, type AppendResult, type ProducerParams } from '../../shards';
import { type HttpRequest } from '../http/engine';
import { type Reply, checkRecords, parseProducerHeaders } from '../kit';
import { type ValidationRule } from '../../util/validation-rule';
import { type DsContext } from './context';
import { createdReply, parseCreate, sameStream } from './create-request';
import { H, isTrue, parseDsUint } from './ds-headers';
import { createFork } from './ds-fork';
import { isJson, toRecords } from './messages';
import { formatOffset } from './offsets';

const PRODUCER_HEADERS = { id: 'Producer-Id', epoch: 'Producer-Epoch', seq: 'Producer-Seq' } as const;

export async function createDsStream(ctx: DsContext, name: string, req: HttpRequest): Promise<Reply> {
  if (req.headers[H.forkedFrom] !== undefined) return createFork(ctx, name, req);
  if (req.headers[H.forkOffset] !== undefined || req.headers[H.forkSubOffset] !== undefined) {
    throw new SvcError('invalid_parameter', 'Stream-Fork-Offset and Stream-Fork-Sub-Offset need Stream-Forked-From');
  }
  const c = parseCreate(req);
  const records = toRecords(req.body, c.contentType, true, ctx);
  const r = await ctx.shards.create({ name, contentType: c.contentType, ttlSeconds: null, expiresAtMs: c.expiresAtMs, idleTtlSeconds: c.idleTtlSeconds, closed: c.closed, records, durability: c.durability });
  if (!r.created && (!sameStream(r.info, c) || r.info.fork !== null)) throw new SvcError('conflict', `stream ${name} exists with other settings`);
  if (r.created) ctx.subscriptions?.onStreamChanged(name.slice(1), formatOffset(r.info.nextSeq));
  return createdReply(req, r.info, r.created);
}

function parseProducer(req: HttpRequest): ProducerParams | null {
  return parseProducerHeaders(PRODUCER_HEADERS, req.headers[H.producerId], req.headers[H.producerEpoch], req.headers[H.producerSeq], parseDsUint);
}

/**
 * A JSON-mode body crosses to the shard's worker as it came (`json` with the `ds` origin): the
 * worker validates it and slices it into messages (shards/worker/json-split.ts), so this thread
 * neither parses nor re-serialises it. Any other body is bytes, cut here into records (views).
 */
function appendPayload(body: Buffer, ct: string | undefined, ctx: DsContext): AppendPayload {
  if (body.length === 0) return { kind: 'records', records: [] };
  if (isJson(ct!)) return { kind: 'json', body };
  return { kind: 'records', records: toRecords(body, ct!, false, ctx) };
}

/** Not `async`: it throws bad requests at once (`InFlight.answer` turns that into a rejection) and answers with the append's own promise. */
export function appendDs(ctx: DsContext, name: string, req: HttpRequest): Promise<Reply> {
  const close = isTrue(req.headers[H.closed]);
  const ct = req.headers['content-type'];
  const producer = parseProducer(req);
  if (req.body.length === 0 && !close) throw new SvcError('bad_request', 'an append needs a body (or Stream-Closed: true to close the stream)');
  if (req.body.length > 0 && (ct === undefined || ct.trim() === '')) throw new SvcError('bad_request', 'an append with a body needs a Content-Type');
  const payload = appendPayload(req.body, ct, ctx);
  const rule = ctx.validation?.rule(name) ?? null;
  const checked = rule === null || req.body.length === 0 ? null : checkDs(ctx, rule, payload);
  const append = (): Promise<AppendResult> =>
    ctx.shards.append({ name, origin: 'ds', payload, contentType: req.body.length > 0 ? ct! : null, close, producer, writerSeq: req.headers[H.seq] ?? null });
  return (checked === null ? append() : checked.then(append)).then((r) => appended(ctx, name, req, close, producer, r));
}

/**
 * A validated stream's messages (docs/schema-registry.md, "Validation at the broker"): each must
 * carry the registry's wire format, so JSON mode, whose messages are JSON values, is refused, and
 * a byte body is checked as the record (or records, past the record size limit) it is stored as.
 */
function checkDs(ctx: DsContext, rule: ValidationRule, payload: AppendPayload): Promise<void> {
  if (payload.kind !== 'records') {
    return Promise.reject(new SvcError('record_invalid', 'this stream validates records against the schema registry: append bytes in its wire format (application/octet-stream), not JSON messages'));
  }
  return checkRecords(ctx.validation!, rule, payload.records.map((r, index) => ({ batch: 0, index, key: r.key as Buffer | null, value: r.value as Buffer | null })));
}

function appended(ctx: DsContext, name: string, req: HttpRequest, close: boolean, producer: ProducerParams | null, r: AppendResult): Reply {
  const headers: Array<[string, string]> = [];
  if (r.duplicate === true) {
    // A retry of an accepted append: nothing written; the producer's highest accepted sequence.
    headers.push([H.producerEpoch, String(producer!.epoch)], [H.producerSeq, String(r.producerLastSeq ?? producer!.seq)]);
    if (r.nextSeq >= 0) headers.push([H.nextOffset, formatOffset(r.nextSeq)]);
    if (r.closed) headers.push([H.closed, 'true']);
    return { status: 204, headers };
  }
  const next = formatOffset(r.nextSeq);
  headers.push([H.nextOffset, next]);
  if (r.closed || close) headers.push([H.closed, 'true']);
  ctx.subscriptions?.onStreamChanged(name.slice(1), next);
  if (producer !== null) {
    headers.push([H.producerEpoch, String(producer.epoch)], [H.producerSeq, String(producer.seq)]);
    // A producer's close without a body acknowledges like any close: 204.
    return { status: req.body.length > 0 ? 200 : 204, headers };
  }
  return { status: 204, headers };
}

export async function headDs(ctx: DsContext, name: string): Promise<Reply> {
  const info = await ctx.shards.head(name);
  const headers: Array<[string, string]> = [
    ['content-type', info.contentType],
    // Where a reader starts to see new data: an open Kafka transaction's records are not skipped (docs/durable-streams.md).
    [H.nextOffset, formatOffset(ctx.live.stableTail(name, info.nextSeq))],
    ['cache-control', 'no-store'],
  ];
  if (info.idleTtlSeconds !== null) headers.push([H.ttl, String(info.idleTtlSeconds)]);
  if (info.expiresAtMs !== null) headers.push([H.expiresAt, new Date(info.expiresAtMs).toISOString()]);
  if (info.closed) headers.push([H.closed, 'true']);
  return { status: 200, headers };
}

export async function deleteDs(ctx: DsContext, name: string): Promise<Reply> {
  await ctx.shards.delete(name);
  await ctx.validation?.forget([name]);
  ctx.subscriptions?.onStreamDeleted(name.slice(1));
  return { status: 204, headers: [] };
}
