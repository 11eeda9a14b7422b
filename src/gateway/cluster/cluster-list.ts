/**
 * `GET /` (list) is cluster-wide on the Svc listener (spec: "list (`GET /`) is cluster-wide";
 * docs/cluster.md, "List"). Every live node lists its own streams; this node asks each of them
 * (itself included) for the same page with `svc-list-scope: node`, re-sending `Authorization`,
 * and merges the pages in name order:
 *
 *   GET /?prefix&start_after&limit ──▶ every live node: GET /?same query, svc-list-scope: node
 *                                        └─▶ merge by name, first `limit`, has_more if any node had more
 *
 * It sits outside the auth guard, so each node checks the caller's token on its own page exactly
 * as for a direct request (a refusal is passed back as it came). A node that does not answer in
 * LIST_TIMEOUT_MS makes the list fail with 503: a list silently missing a node's streams would lie.
 */
import { type Membership } from '../../actors';
import { SvcError } from '../../errors';
import { type HeaderList, type HttpRequest, type HttpResponse, type RequestHandler } from '../http/engine';
import { toHttpError } from '../kit';

/** The header that asks a node for its own streams only. */
export const LIST_SCOPE_HEADER = 'svc-list-scope';
const LIST_TIMEOUT_MS = 5_000;

interface Entry {
  name: string;
}
interface Page {
  streams: Entry[];
  has_more: boolean;
}

/** `maxLimit`: the largest page (`--list-max-limit`), also the page size without `limit`. */
export function clusterList(members: Membership, maxLimit: number, handler: RequestHandler): RequestHandler {
  return (req: HttpRequest, res: HttpResponse): void | Promise<unknown> => {
    const isList = req.path === '/' && (req.method === 'GET' || req.method === 'HEAD');
    if (!isList || req.headers[LIST_SCOPE_HEADER] === 'node') return handler(req, res);
    return merged(members, maxLimit, req).then((r) => {
      if (!res.aborted) res.send(r.status, r.headers, req.method === 'HEAD' ? undefined : r.body);
    });
  };
}

async function merged(members: Membership, maxLimit: number, req: HttpRequest): Promise<{ status: number; headers: HeaderList; body: string }> {
  const nodes = members.liveNodes().filter((n) => n.protocol === 'svc');
  const headers: Record<string, string> = { [LIST_SCOPE_HEADER]: 'node' };
  if (req.headers['authorization'] !== undefined) headers['authorization'] = req.headers['authorization'];
  const query = req.query === '' ? '' : '?' + req.query;
  let answers: Array<{ status: number; contentType: string; body: string }>;
  try {
    answers = await Promise.all(
      nodes.map(async (n) => {
        const r = await fetch(`http://${n.advertisedAddress}/${query}`, { headers, signal: AbortSignal.timeout(LIST_TIMEOUT_MS), redirect: 'manual' });
        return { status: r.status, contentType: r.headers.get('content-type') ?? 'application/json', body: await r.text() };
      }),
    );
  } catch (err) {
    const e = toHttpError(new SvcError('storage_unavailable', `a node did not answer the list: ${(err as Error).message}`));
    return { status: e.status, headers: [...e.headers], body: e.body };
  }
  // A refusal (bad parameter, 401, 403) is the same on every node: pass the first one back.
  const refused = answers.find((a) => a.status !== 200);
  if (refused !== undefined) return { status: refused.status, headers: [['content-type', refused.contentType]], body: refused.body };
  const limit = Math.min(limitOf(req.query) ?? maxLimit, maxLimit);
  const pages = answers.map((a) => JSON.parse(a.body) as Page);
  const all = pages.flatMap((p) => p.streams).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const streams = all.slice(0, limit);
  const hasMore = pages.some((p) => p.has_more) || streams.length < all.length;
  return { status: 200, headers: [['content-type', 'application/json']], body: JSON.stringify({ streams, has_more: hasMore }) };
}

/** `limit` when given (the nodes validated it), else null. */
function limitOf(query: string): number | null {
  const v = new URLSearchParams(query).get('limit');
  return v === null || !/^\d+$/.test(v) ? null : Number(v);
}
