/**
 * Share groups over HTTP (docs/protocol.md "Share groups", KIP-932's model): readers of one group
 * lease records of a stream, each record to one reader at a time, and acknowledge them by seq.
 *
 *   POST   /_share/{stream}?group=<g>&op=lease[&max=N][&lock=30s]   lease up to N records
 *   POST   /_share/{stream}?group=<g>&op=ack    {lease, accept:[seq…], release:[…], reject:[…]}
 *   GET    /_share/{stream}?group=<g>                                the partition's state and the group's config
 *   PATCH  /_share/{stream}?group=<g>    {"<Kafka group config>": value|null, …}  the group's config
 *   DELETE /_share/{stream}?group=<g>                                forget the partition's state
 *
 * The state machine and its durable store are the control plane's (`ShareStates`,
 * src/actors/share); this file reads the records, renders them, and writes archived records to
 * the group's dead-letter stream.
 */
import { randomUUID } from 'node:crypto';
import { SvcError } from '../../errors';
import { mediaType } from '../../shards';
import { type AckType, type Acquired, type ShareGroupConfig, type SharePartition, type ShareStates, deadLetter as appendDeadLetter, limitsOf, parseShareGroupConfig, readRange as readSeqs, runsOf } from '../../actors';
import { type HttpRequest } from '../http/engine';
import { type SvcContext } from './context';
import { type Reply, parseQuery, parseStreamName, parseUint } from '../kit';

export const SHARE_PATH = '/_share';

/** Records per lease when `max` is absent, and the most a lease may ask for. */
const DEFAULT_MAX = 100;
const MAX_MAX = 1000;

/** A record as a lease hands it out: the `json` read format's fields plus its delivery count. */
interface LeasedRecord {
  seq: number;
  deliveryCount: number;
  [field: string]: unknown;
}

const validGroup = (g: string): boolean => g.length >= 1 && g.length <= 255 && ![...g].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

export async function routeShare(ctx: SvcContext, states: ShareStates, req: HttpRequest): Promise<Reply> {
  const rest = req.path.slice(SHARE_PATH.length);
  if (rest === '' || rest === '/') throw new SvcError('invalid_stream_name', `${SHARE_PATH}/{stream} needs a stream name, such as ${SHARE_PATH}/orders?group=billing&op=lease`);
  const name = parseStreamName(rest, ctx.limits.maxStreamNameBytes);
  const q = parseQuery(req.query);
  const group = q.get('group');
  if (group === undefined || !validGroup(group)) throw new SvcError('invalid_parameter', 'group: required, 1-255 characters, no control characters');
  const op = q.get('op');
  const allowed = req.method === 'POST' ? (op === 'lease' ? ['group', 'op', 'max', 'lock'] : ['group', 'op']) : ['group'];
  const extra = [...q.keys()].filter((k) => !allowed.includes(k));
  if (extra.length > 0) throw new SvcError('invalid_parameter', `${extra.join(', ')}: not a parameter of ${req.method} ${SHARE_PATH}/{stream}${op !== undefined ? ` op=${op}` : ''}`);
  switch (req.method) {
    case 'POST':
      if (op === 'lease') return lease(ctx, states, group, name, q);
      if (op === 'ack') return acknowledge(ctx, states, group, name, req);
      throw new SvcError('invalid_parameter', 'op: lease or ack');
    case 'GET':
    case 'HEAD': {
      await ctx.shards.head(name);
      return json(describe(group, name, states.peek(group, name), states.config(group)));
    }
    case 'PATCH':
      return alterConfig(ctx, states, group, name, req);
    case 'DELETE':
      await ctx.shards.head(name);
      await states.delete(group, name);
      return { status: 204, headers: [['cache-control', 'no-store']] };
    default:
      throw new SvcError('method_not_allowed', `${req.method} is not allowed on a share group`, { 'header:allow': 'GET, HEAD, POST, PATCH, DELETE' });
  }
}

/** `lock`: `500ms`, `30s`, `2m`, or an integer of milliseconds; within the config's bounds (1 s to 1 h). */
function parseLock(raw: string | undefined, config: ShareGroupConfig): number {
  if (raw === undefined) return config['group.share.record.lock.duration.ms'];
  const m = /^(\d{1,10})(ms|s|m)?$/.exec(raw.trim());
  const ms = m === null ? NaN : Number(m[1]) * (m[2] === 's' ? 1000 : m[2] === 'm' ? 60_000 : 1);
  if (!(ms >= 1000 && ms <= 3_600_000)) throw new SvcError('invalid_parameter', 'lock: a duration from 1s to 60m (500ms, 30s, 2m, or milliseconds)');
  return ms;
}

async function lease(ctx: SvcContext, states: ShareStates, group: string, name: string, q: Map<string, string>): Promise<Reply> {
  const max = parseUint('max', q.get('max')) ?? DEFAULT_MAX;
  if (max < 1 || max > MAX_MAX) throw new SvcError('invalid_parameter', `max: 1 to ${MAX_MAX}`);
  const lockMs = parseLock(q.get('lock'), states.config(group));
  const leaseId = randomUUID();
  const init = async (): Promise<number> => {
    const s = await ctx.shards.head(name);
    return states.config(group)['share.auto.offset.reset'] === 'earliest' ? s.startSeq : s.nextSeq;
  };
  const out = await states.run(group, name, init, async (p, config) => {
    const limits = limitsOf(config);
    const now = Date.now();
    const lockUntil = now + lockMs;
    await deadLetter(ctx, config, group, name, p.expire(now, limits));
    const again = p.acquireAvailable(max, leaseId, lockUntil, limits);
    const records: LeasedRecord[] = await readAcquired(ctx, name, again);
    const room = Math.min(max - again.length, p.room(limits));
    if (room > 0) {
      const r = await ctx.shards.read({ name, seq: p.end, count: room, bytes: ctx.limits.readDefaultBytes, format: 'json' });
      if (r.startSeq > p.end) p.skipTo(r.startSeq);
      const fresh = JSON.parse(r.body.toString('utf8')) as Array<{ seq: number }>;
      const got = p.acquireNew(
        fresh.map((x) => x.seq),
        Math.max(p.end, r.nextSeq),
        leaseId,
        lockUntil,
      );
      got.forEach((a, i) => records.push({ ...fresh[i]!, seq: a.offset, deliveryCount: a.deliveryCount }));
    }
    return { result: { records, lockUntil }, changed: true };
  });
  return json({ group, stream: name, lease: leaseId, lockedUntilMs: out.lockUntil, records: out.records });
}

/** The records of `acquired` (redeliveries, ascending), read in runs of consecutive seqs. */
async function readAcquired(ctx: SvcContext, name: string, acquired: readonly Acquired[]): Promise<LeasedRecord[]> {
  const out: LeasedRecord[] = [];
  const counts = new Map(acquired.map((a) => [a.offset, a.deliveryCount]));
  for (const [first, last] of runsOf(acquired.map((a) => a.offset))) {
    for (const rec of await readRange(ctx, name, first, last)) {
      const deliveryCount = counts.get(rec.seq);
      if (deliveryCount !== undefined) out.push({ ...rec, deliveryCount });
    }
  }
  return out;
}

const ACK_TYPES: readonly AckType[] = ['accept', 'release', 'reject'];

async function acknowledge(ctx: SvcContext, states: ShareStates, group: string, name: string, req: HttpRequest): Promise<Reply> {
  const doc = parseJsonObject(req, '{"lease": "…", "accept": [seq, …], "release": […], "reject": […]}');
  const leaseId = doc['lease'];
  if (typeof leaseId !== 'string' || leaseId === '') throw new SvcError('invalid_parameter', 'lease: the id a lease answered');
  const acks: Array<{ offset: number; type: AckType }> = [];
  const seen = new Set<number>();
  for (const type of ACK_TYPES) {
    const list = doc[type] ?? [];
    if (!Array.isArray(list) || list.some((s) => typeof s !== 'number' || !Number.isSafeInteger(s) || s < 0)) throw new SvcError('invalid_parameter', `${type}: a list of seqs`);
    for (const s of list as number[]) {
      if (seen.has(s)) throw new SvcError('invalid_parameter', `seq ${s} is acknowledged twice`);
      seen.add(s);
      acks.push({ offset: s, type });
    }
  }
  const unknown = Object.keys(doc).filter((k) => k !== 'lease' && !(ACK_TYPES as readonly string[]).includes(k));
  if (unknown.length > 0) throw new SvcError('invalid_parameter', `${unknown.join(', ')}: not a field of an acknowledgement`);
  await ctx.shards.head(name);
  const r = await states.run(
    group,
    name,
    () => ctx.shards.head(name).then((s) => s.nextSeq),
    async (p, config) => {
      const limits = limitsOf(config);
      const now = Date.now();
      const expired = p.expire(now, limits);
      const res = p.acknowledge(leaseId, acks, now, limits);
      await deadLetter(ctx, config, group, name, [...expired, ...res.archived]);
      return { result: res, changed: true };
    },
  );
  const bySeq = (a: number, b: number): number => a - b;
  return json({ group, stream: name, applied: r.applied.sort(bySeq), refused: r.refused.map((x) => ({ seq: x.offset, reason: x.reason })), archived: r.archived.map((a) => a.offset).sort(bySeq) });
}

/** Every record of [first, last] in the `json` read format. */
const readRange = (ctx: SvcContext, name: string, first: number, last: number): ReturnType<typeof readSeqs> => readSeqs(ctx.shards, name, first, last, ctx.limits.readDefaultBytes);

/** Archived records to the group's dead-letter stream (src/actors/share, shared with the Kafka listener). */
const deadLetter = (ctx: SvcContext, config: ShareGroupConfig, group: string, name: string, archived: readonly Acquired[]): Promise<void> => appendDeadLetter(ctx.shards, ctx.limits.readDefaultBytes, config, group, name, archived);

async function alterConfig(ctx: SvcContext, states: ShareStates, group: string, name: string, req: HttpRequest): Promise<Reply> {
  const doc = parseJsonObject(req, '{"group.share.delivery.count.limit": 5, …}');
  const nulls = Object.fromEntries(Object.entries(doc).filter(([, v]) => v === null));
  const { changes, problems } = parseShareGroupConfig(Object.fromEntries(Object.entries(doc).filter(([, v]) => v !== null)));
  if (problems.length > 0) throw new SvcError('invalid_parameter', problems.join('; '));
  const s = await ctx.shards.head(name);
  const dlq = changes['errors.deadletterqueue.topic.name'];
  if (dlq !== undefined && dlq !== '') {
    const dlqName = parseStreamName(dlq, ctx.limits.maxStreamNameBytes);
    if (dlqName === name) throw new SvcError('invalid_parameter', 'errors.deadletterqueue.topic.name: not the stream itself');
    // Created with the stream's content type when it does not exist yet.
    await ctx.shards.head(dlqName).catch(async (e: unknown) => {
      if (!(e instanceof SvcError && e.code === 'not_found')) throw e;
      await ctx.shards.create({ name: dlqName, contentType: s.contentType, ttlSeconds: null, expiresAtMs: null, closed: false, records: [] });
    });
    changes['errors.deadletterqueue.topic.name'] = dlqName;
  }
  const config = await states.alterConfig(group, { ...changes, ...nulls });
  return json(describe(group, name, states.peek(group, name), config));
}

function describe(group: string, stream: string, p: SharePartition | null, config: ShareGroupConfig): Record<string, unknown> {
  return { group, stream, startSeq: p?.start ?? null, endSeq: p?.end ?? null, records: p?.counts() ?? null, totals: p?.totals() ?? null, config };
}

function parseJsonObject(req: HttpRequest, shape: string): Record<string, unknown> {
  const type = req.headers['content-type'];
  if (type !== undefined && mediaType(type) !== 'application/json') throw new SvcError('unsupported_media_type', `a share group request body is application/json: ${shape}`);
  let doc: unknown;
  try {
    doc = JSON.parse(req.body.toString('utf8'));
  } catch (e) {
    throw new SvcError('invalid_json', (e as Error).message);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new SvcError('invalid_parameter', `the body is a JSON object: ${shape}`);
  return doc as Record<string, unknown>;
}

function json(doc: unknown): Reply {
  return {
    status: 200,
    headers: [
      ['content-type', 'application/json'],
      ['cache-control', 'no-store'],
    ],
    body: JSON.stringify(doc),
  };
}
