/**
 * Forks (PROTOCOL.md "Forks"): `PUT` with `Stream-Forked-From: <stream path>` and optionally
 * `Stream-Fork-Offset` (default: the source's tail) and `Stream-Fork-Sub-Offset` creates a stream
 * that reads the source up to the fork point, then its own appends (fork-reads.ts).
 *
 * The sub-offset reaches into the append that starts at the fork offset: for JSON streams it
 * counts messages of that append (the fork point moves that many records on); for other streams
 * it counts bytes of that message, and the fork gets the first bytes of it as its own first record.
 *
 * The source keeps a reference count (its CONFIG frames): it is taken before the fork is created
 * and given back when the create fails, so a failed fork leaks nothing; a crash in between leaves
 * a reference too many (the source is kept), never a fork without its source.
 */
import { SvcError } from '../../errors';
import { type ForkInfo, type RecordInput, type StreamInfo, mediaType } from '../../shards';
import { readBatchHeader } from '../../util/record-batch';
import { type HttpRequest } from '../http/engine';
import { type Reply, parseStreamName } from '../kit';
import { STREAM_BASE, type DsContext } from './context';
import { H } from './ds-headers';
import { createdReply, parseCreate, sameStream } from './create-request';
import { toRecords } from './messages';
import { formatOffset, parseOffset } from './offsets';

const UINT_RE = /^(0|[1-9]\d*)$/;

/** `Stream-Forked-From`: the source's path on this listener (a full URL is accepted too). */
function sourceName(raw: string, maxBytes: number): string {
  let path = raw.trim();
  if (/^https?:\/\//i.test(path)) path = new URL(path).pathname;
  if (!path.startsWith(STREAM_BASE + '/')) throw new SvcError('invalid_parameter', `Stream-Forked-From must name a stream under ${STREAM_BASE}/`);
  return parseStreamName(path.slice(STREAM_BASE.length), maxBytes);
}

export async function createFork(ctx: DsContext, name: string, req: HttpRequest): Promise<Reply> {
  const source = sourceName(req.headers[H.forkedFrom]!, ctx.maxStreamNameBytes);
  const offsetRaw = req.headers[H.forkOffset];
  const subRaw = req.headers[H.forkSubOffset];
  if (subRaw !== undefined && !UINT_RE.test(subRaw)) throw new SvcError('invalid_parameter', 'Stream-Fork-Sub-Offset is a whole number');
  const sub = subRaw === undefined ? 0 : Number(subRaw);
  const offsetSeq = offsetRaw === undefined ? null : parseOffset(offsetRaw);

  const existing = await headOrNull(ctx, name);
  let src: StreamInfo;
  try {
    src = await ctx.shards.head(source);
  } catch (err) {
    // A deleted source kept for its forks cannot be forked again.
    if (err instanceof SvcError && err.details?.['gone'] === true) throw new SvcError('conflict', `stream ${source} was deleted`);
    if (existing === null) throw err;
    src = existing as StreamInfo;
  }
  const c = parseCreate(req, src.contentType);
  if (existing !== null) return recreate(req, existing, c, source, offsetRaw ?? '', sub);
  if (mediaType(src.contentType) !== mediaType(c.contentType)) throw new SvcError('conflict', `the fork's content type ${c.contentType} differs from the source's ${src.contentType}`);

  const at = offsetSeq === null ? src.nextSeq : offsetSeq < 0 ? src.nextSeq : offsetSeq;
  if (at > src.nextSeq) throw new SvcError('invalid_parameter', `Stream-Fork-Offset is beyond the end of ${source}`);
  const { seq, first } = await forkPoint(ctx, source, src, at, sub);
  // Without a lifetime of its own, a fork lives as long as its source would.
  const inherit = c.idleTtlSeconds === null && c.expiresAtMs === null;
  const fork: ForkInfo = { source, sourceId: src.streamId, seq, offset: offsetRaw ?? '', subOffset: sub };
  const records: RecordInput[] = first === null ? [] : [first];
  records.push(...toRecords(req.body, c.contentType, true, ctx));

  await ctx.shards.configure({ name: source, forkRefsDelta: 1 });
  let created: Awaited<ReturnType<typeof ctx.shards.create>>;
  try {
    created = await ctx.shards.create({
      name,
      contentType: c.contentType,
      ttlSeconds: null,
      expiresAtMs: inherit ? src.expiresAtMs : c.expiresAtMs,
      idleTtlSeconds: inherit ? src.idleTtlSeconds : c.idleTtlSeconds,
      closed: c.closed,
      records,
      fork,
    });
  } catch (err) {
    await ctx.shards.releaseFork(source);
    throw err;
  }
  if (!created.created) {
    // Created concurrently by another request: this one's reference goes back.
    await ctx.shards.releaseFork(source);
    return recreate(req, created.info, c, source, offsetRaw ?? '', sub);
  }
  ctx.subscriptions?.onStreamChanged(name.slice(1), formatOffset(created.info.nextSeq));
  return createdReply(req, created.info, true);
}

async function headOrNull(ctx: DsContext, name: string): Promise<StreamInfo | null> {
  try {
    return await ctx.shards.head(name);
  } catch (err) {
    if (err instanceof SvcError && err.code === 'not_found' && err.details?.['gone'] !== true) return null;
    if (err instanceof SvcError && err.details?.['gone'] === true) throw new SvcError('conflict', `stream ${name} was deleted and is kept for its forks`);
    throw err;
  }
}

/** PUT of an existing stream: 200 when it is this very fork, 409 otherwise. */
function recreate(req: HttpRequest, info: StreamInfo, c: ReturnType<typeof parseCreate>, source: string, offset: string, sub: number): Reply {
  const f = info.fork;
  const sameFork = f !== null && f.source === source && f.offset === offset && f.subOffset === sub;
  const lifetimeGiven = c.idleTtlSeconds !== null || c.expiresAtMs !== null;
  const same = lifetimeGiven ? sameStream(info, c) : mediaType(info.contentType) === mediaType(c.contentType) && info.closed === c.closed;
  if (!sameFork || !same) throw new SvcError('conflict', `stream ${info.name} exists with other settings`);
  return createdReply(req, info, false);
}

/** The fork's first own seq, and its partial first record when a byte sub-offset cuts a message. */
async function forkPoint(ctx: DsContext, source: string, src: StreamInfo, at: number, sub: number): Promise<{ seq: number; first: RecordInput | null }> {
  if (sub === 0) return { seq: at, first: null };
  if (at >= src.nextSeq) throw new SvcError('invalid_parameter', 'Stream-Fork-Sub-Offset reaches past the end of the source');
  if (mediaType(src.contentType) === 'application/json') {
    // The append starting at `at` is one batch: the sub-offset counts its messages.
    const r = await ctx.shards.read({ name: source, seq: at, count: 1 << 20, bytes: 1, format: 'binary', internal: true, touch: false });
    const h = readBatchHeader(r.body, 0);
    const inBatch = h.baseOffset + h.recordsCount - at;
    if (sub > inBatch) throw new SvcError('invalid_parameter', `Stream-Fork-Sub-Offset ${sub} is past the ${inBatch} messages of that append`);
    return { seq: at + sub, first: null };
  }
  const r = await ctx.shards.read({ name: source, seq: at, count: 1, bytes: 1, format: 'raw', internal: true, touch: false });
  if (sub > r.body.length) throw new SvcError('invalid_parameter', `Stream-Fork-Sub-Offset ${sub} is past the ${r.body.length} bytes of that message`);
  if (sub === r.body.length) return { seq: at + 1, first: null };
  return { seq: at, first: { key: null, value: Buffer.from(r.body.subarray(0, sub)), headers: null } };
}
