/**
 * The admin API's read endpoints the dashboard needs beyond the spec's list ("Admin endpoints"),
 * all same-origin on the admin listener, so the page needs no CORS and its self-only policy
 * holds (docs/dashboard.md):
 *
 *   GET /admin/whoami                      the caller: {id, scope, auth}; the page hides the
 *                                          buttons the scope cannot use
 *   GET /admin/streams?prefix=&start_after=&limit=
 *                                          one page of streams by name (op stream_inspect over
 *                                          the prefix range)
 *   GET /admin/stream-config/{stream}      the stream's config beyond its detail (schema binding
 *                                          and document, Kafka topic, idle TTL, fork)
 *   GET /admin/records/{stream}?from=&limit=
 *                                          up to `limit` records from `from`, in the JSON read
 *                                          format (docs/protocol.md), for the page's live tail
 *   GET /admin/groups[?group=]             groups of all three kinds (classic, consumer, share;
 *                                          group-doc.ts): members, assignments, committed
 *                                          offsets and lag; share groups' in-flight, pending
 *                                          and running totals. `group`: that one only
 *
 * They cost nothing while nobody asks: no state is kept for them, each call is one shard call.
 */
import { SvcError } from '../../errors';
import { type Schemas, type StreamInfo } from '../../shards';
import { principalOf } from '../auth/guard';
import { type HttpRequest } from '../http/engine';
import { type Reply } from '../kit';
import { type AdminDeps } from './admin-api';

const PAGE_DEFAULT = 50;
const PAGE_MAX = 500;
const TAIL_MAX = 200;
/** A tail read's byte budget: what one poll of the page may carry. */
const TAIL_BYTES = 256 * 1024; // 256 KiB

function json(status: number, doc: unknown): Reply {
  return { status, headers: [['content-type', 'application/json'], ['cache-control', 'no-store']], body: JSON.stringify(doc) };
}

function intParam(q: URLSearchParams, key: string, dflt: number, max: number): number {
  const raw = q.get(key);
  if (raw === null || raw === '') return dflt;
  if (!/^\d{1,15}$/.test(raw)) throw new SvcError('bad_request', `${key} is an integer >= 0`);
  return Math.min(Number(raw), max);
}

function streamName(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new SvcError('bad_request', 'the stream name is not valid percent-encoded UTF-8');
  }
}

function listDoc(s: StreamInfo): unknown {
  return {
    name: s.name,
    streamId: s.streamId,
    contentType: s.contentType,
    startOffset: s.startSeq,
    endOffset: s.nextSeq,
    closed: s.closed,
    ttlSeconds: s.ttlSeconds,
    expiresAtMs: s.expiresAtMs,
    createdAtMs: s.createdAtMs,
  };
}

function schemaDocument(schemas: Pick<Schemas, 'has' | 'get'> | null | undefined, name: string | null): unknown {
  if (name === null || schemas == null || !schemas.has(name)) return null;
  const doc = schemas.get(name);
  return { type: doc.type, version: doc.version, schema: doc.schema };
}

/** Answers the dashboard's endpoints, or null when the path is none of them. */
export async function dashboardApi(d: AdminDeps, req: HttpRequest): Promise<Reply | null> {
  const p = req.path;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    if (p === '/admin/whoami' || p === '/admin/streams' || p === '/admin/groups' || p.startsWith('/admin/records/') || p.startsWith('/admin/stream-config/')) {
      throw new SvcError('method_not_allowed', `${req.method} is not allowed here`);
    }
    return null;
  }
  const q = new URLSearchParams(req.query);
  if (p === '/admin/whoami') {
    const who = principalOf(req);
    return json(200, { id: who.id, scope: who.scope, auth: who.id === 'auth-off' ? 'off' : 'required' });
  }
  if (p === '/admin/streams') {
    const limit = Math.max(1, intParam(q, 'limit', PAGE_DEFAULT, PAGE_MAX));
    const r = await d.shards.list({ prefix: q.get('prefix') || '/', startAfter: q.get('start_after') ?? '', limit });
    // The node's clock when the offsets were read: the page's rates divide by it, not by when the
    // answers arrived (a slow answer after a quick one would show a rate the streams never had).
    const listedAtMs = Date.now();
    const last = r.streams[r.streams.length - 1];
    return json(200, { streams: r.streams.map(listDoc), hasMore: r.hasMore, nextStartAfter: r.hasMore && last !== undefined ? last.name : null, listedAtMs });
  }
  if (p.startsWith('/admin/stream-config/')) {
    const s = await d.shards.head(streamName(p.slice('/admin/stream-config'.length)));
    return json(200, {
      name: s.name,
      contentType: s.contentType,
      ttlSeconds: s.ttlSeconds,
      expiresAtMs: s.expiresAtMs,
      idleTtlSeconds: s.idleTtlSeconds,
      createdAtMs: s.createdAtMs,
      schema: s.schema,
      schemaValidate: s.schemaValidate,
      kafkaTopic: s.kafkaTopic,
      fork: s.fork,
      forkRefs: s.forkRefs,
      // The bound schema's registration ({type, version, schema}), or null (none bound, or not readable here).
      schemaDocument: schemaDocument(d.schemas, s.schema),
    });
  }
  if (p.startsWith('/admin/records/')) {
    const name = streamName(p.slice('/admin/records'.length));
    const limit = Math.max(1, intParam(q, 'limit', 50, TAIL_MAX));
    const from = intParam(q, 'from', 0, Number.MAX_SAFE_INTEGER);
    // A page for the eyes: not a read that renews the stream's idle TTL.
    const r = await d.shards.read({ name, seq: from, count: limit, bytes: TAIL_BYTES, format: 'json', touch: false });
    const head = JSON.stringify({ startSeq: r.startSeq, nextSeq: r.nextSeq, tailSeq: r.tailSeq, count: r.count });
    // The records are already JSON (the shard renders them): spliced in, not parsed and re-encoded.
    const records = r.body.length > 0 ? r.body : Buffer.from('[]');
    return { status: 200, headers: [['content-type', 'application/json'], ['cache-control', 'no-store']], body: Buffer.concat([Buffer.from(head.slice(0, -1) + ',"records":'), records, Buffer.from('}')]) };
  }
  if (p === '/admin/groups') {
    if (d.groups == null) return json(200, { kafka: false, groups: [] });
    const only = q.get('group');
    return json(200, { kafka: true, groups: await d.groups.groups(only === null ? undefined : only) });
  }
  return null;
}
