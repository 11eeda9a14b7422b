/**
 * Named offsets (docs/protocol.md "Named offsets"): a reader's committed position in a stream,
 * under a group name it chooses, so a reader that stops and starts again continues where it was
 * (`svc tail --group`).
 *
 *   GET    /_offsets/{stream}?group=<name>   {group, stream, seq, committedAtMs}; seq null when none
 *   PUT    /_offsets/{stream}?group=<name>   body {"seq": n} (next seq to read, 0..next_seq): the same document
 *   DELETE /_offsets/{stream}?group=<name>   204, forgets it
 *
 * `{stream}` is the rest of the path, as with `/_streams/{name}`. The stream must exist (404),
 * which also sends the request to the stream's owner in a cluster (307, like every request for
 * the stream); the offsets themselves are kept in the metadata store, shared by every node.
 */
import { SvcError } from '../../errors';
import { mediaType } from '../../shards';
import { type HttpRequest } from '../http/engine';
import { type NamedOffsetStore, type SvcContext } from './context';
import { type Reply, parseQuery, parseStreamName } from '../kit';

export const OFFSETS_PATH = '/_offsets';

/** Group names: 1–255 characters, none of them a control character (C0 or DEL). */
const validGroup = (g: string): boolean => g.length >= 1 && g.length <= 255 && ![...g].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

export async function routeOffsets(ctx: SvcContext, store: NamedOffsetStore, req: HttpRequest): Promise<Reply> {
  const rest = req.path.slice(OFFSETS_PATH.length);
  if (rest === '' || rest === '/') throw new SvcError('invalid_stream_name', `${OFFSETS_PATH}/{stream} needs a stream name, such as ${OFFSETS_PATH}/orders?group=billing`);
  const name = parseStreamName(rest, ctx.limits.maxStreamNameBytes);
  const q = parseQuery(req.query);
  const group = q.get('group');
  if (group === undefined || !validGroup(group)) throw new SvcError('invalid_parameter', 'group: required, 1-255 characters, no control characters');
  const extra = [...q.keys()].filter((k) => k !== 'group');
  if (extra.length > 0) throw new SvcError('invalid_parameter', `${extra.join(', ')}: a named offset takes only the group parameter`);
  switch (req.method) {
    case 'GET':
    case 'HEAD': {
      await ctx.shards.head(name); // 404 for a stream that does not exist
      const o = await store.get(group, name);
      return offsetReply(group, name, o?.seq ?? null, o?.committedAt ?? null);
    }
    case 'PUT': {
      const seq = parseSeq(req);
      const s = await ctx.shards.head(name);
      if (seq > s.nextSeq) throw new SvcError('seq_out_of_range', `seq ${seq} is beyond the tail (next_seq ${s.nextSeq})`, { next_seq: s.nextSeq });
      const o = await store.commit(group, name, seq);
      return offsetReply(group, name, o.seq, o.committedAt);
    }
    case 'DELETE':
      await ctx.shards.head(name);
      await store.delete(group, name);
      return { status: 204, headers: [['cache-control', 'no-store']] };
    default:
      throw new SvcError('method_not_allowed', `${req.method} is not allowed on a named offset`, { 'header:allow': 'GET, HEAD, PUT, DELETE' });
  }
}

function parseSeq(req: HttpRequest): number {
  const type = req.headers['content-type'];
  if (type !== undefined && mediaType(type) !== 'application/json') throw new SvcError('unsupported_media_type', 'a named offset is application/json: {"seq": n}');
  let doc: unknown;
  try {
    doc = JSON.parse(req.body.toString('utf8'));
  } catch (e) {
    throw new SvcError('invalid_json', (e as Error).message);
  }
  const seq = typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? (doc as Record<string, unknown>)['seq'] : undefined;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) throw new SvcError('invalid_parameter', 'a named offset is {"seq": n}, n an integer >= 0 (the next seq to read)');
  return seq;
}

function offsetReply(group: string, stream: string, seq: number | null, committedAtMs: number | null): Reply {
  return {
    status: 200,
    headers: [
      ['content-type', 'application/json'],
      ['cache-control', 'no-store'],
    ],
    body: JSON.stringify({ group, stream, seq, committedAtMs }),
  };
}
