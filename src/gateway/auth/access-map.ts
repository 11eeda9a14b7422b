/**
 * Every endpoint → the operation, group and resource its token must cover (docs/auth.md has the
 * table), and, for tenant tokens (`autoPrefixStreams`), the request with the tenant prefix put in
 * front of each stream name it carries.
 */
import { type Access, type Audience, type Op } from '../../actors';
import { type HttpRequest } from '../http/engine';

export type Listener = 'svc' | 'ds' | 'admin' | 'registry';

export interface Plan {
  /** What must be allowed (all of them). Empty: the request needs no token (probes, preflights, static assets). */
  accesses: Access[];
  /** The request as the handler sees it (tenant prefix applied). */
  req: HttpRequest;
  /** The stream names the client wrote and what they became: responses are mapped back. */
  renamed: Array<[from: string, to: string]>;
  /** Whether this request is exempt from authentication. */
  open: boolean;
}

const READ_OPS = new Set<Op>(['read', 'head', 'list', 'list_tokens', 'cluster_read', 'node_read', 'stream_inspect', 'schema_read']);
const SCHEMA_OPS = new Set<Op>(['schema_read', 'schema_write', 'schema_delete', 'schema_config']);

function access(audience: Audience, op: Op, stream?: string): Access {
  const group = SCHEMA_OPS.has(op) ? 'schemas' : op === 'issue_token' || op === 'revoke_token' || op === 'list_tokens' ? 'tokens' : op === 'cluster_read' || op === 'node_read' || op === 'stream_inspect' || op === 'transfer_stream' || op === 'update_node_slots' ? 'admin' : 'stream';
  const a: Access = { audience, op, group, write: !READ_OPS.has(op) };
  if (stream !== undefined) a.stream = stream;
  return a;
}

function decode(raw: string): string {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

const isTrue = (v: string | undefined): boolean => v !== undefined && v.trim().toLowerCase() === 'true';

/** Put the tenant prefix (`/tenant-a/`, URL-safe by scope validation) in front of a raw stream path (`/orders`). */
function prefixed(prefix: string, rawPath: string): string {
  return prefix + rawPath.slice(1);
}

export function plan(listener: Listener, req: HttpRequest, prefix: string | null): Plan {
  if (listener === 'admin') return planAdmin(req);
  if (listener === 'registry') return planRegistry(req);
  if (req.method === 'OPTIONS') return { accesses: [], req, renamed: [], open: true };
  return listener === 'svc' ? planSvc(req, prefix) : planDs(req, prefix);
}

function planSvc(req: HttpRequest, prefix: string | null): Plan {
  const m = req.method;
  if (req.path === '/') {
    // A list names its range in `prefix`: the token must cover it (a tenant lists inside its prefix).
    const q = new URLSearchParams(req.query);
    let listPrefix = q.get('prefix') ?? '/';
    const renamed: Array<[string, string]> = [];
    if (prefix !== null) {
      const to = prefix + listPrefix.replace(/^\//, '');
      renamed.push([listPrefix, to]);
      q.set('prefix', to);
      const after = q.get('start_after');
      if (after !== null && after !== '') q.set('start_after', prefix + after.replace(/^\//, ''));
      listPrefix = to;
      req = { ...req, query: q.toString() };
    }
    return { accesses: [{ ...access('svc', 'list', listPrefix), range: true }], req, renamed, open: false };
  }
  if (req.path === '/_schemas' || req.path.startsWith('/_schemas/')) {
    // Schemas are shared by every stream: their names are matched as `/_schemas/<name>`, never tenant-prefixed.
    const op: Op = m === 'PUT' ? 'create' : m === 'DELETE' ? 'delete' : m === 'HEAD' ? 'head' : 'read';
    return { accesses: [access('svc', op, decode(req.path))], req, renamed: [], open: false };
  }
  if (req.path.startsWith('/_share/')) return planShare(req, prefix);
  for (const base of ['/_streams', '/_offsets']) {
    if (!req.path.startsWith(base + '/')) continue;
    let raw = req.path.slice(base.length);
    const renamed: Array<[string, string]> = [];
    if (prefix !== null) {
      renamed.push([decode(raw), decode(prefixed(prefix, raw))]);
      raw = prefixed(prefix, raw);
      req = { ...req, path: base + raw };
    }
    // Reading a stream's config is a HEAD; changing it is part of creating (configuring) the stream.
    // A named offset (read or committed) is part of reading the stream: a read-only token keeps its place.
    const op: Op = base === '/_offsets' ? 'read' : m === 'PATCH' ? 'create' : 'head';
    return { accesses: [access('svc', op, decode(raw))], req, renamed, open: false };
  }
  let raw = req.path;
  const renamed: Array<[string, string]> = [];
  if (prefix !== null) {
    renamed.push([decode(raw), decode(prefixed(prefix, raw))]);
    raw = prefixed(prefix, raw);
    req = { ...req, path: raw };
  }
  const name = decode(raw);
  const h = req.headers;
  let ops: Op[];
  if (m === 'GET') ops = ['read'];
  else if (m === 'HEAD') ops = ['head'];
  else if (m === 'PUT') ops = ['create'];
  else if (m === 'DELETE') ops = ['delete'];
  else if (m === 'POST') {
    if (h['svc-trim-seq'] !== undefined) ops = ['trim'];
    else if (isTrue(h['svc-closed'])) ops = req.body.length > 0 ? ['append', 'close'] : ['close'];
    else ops = ['append'];
  } else ops = ['read'];
  return { accesses: ops.map((op) => access('svc', op, name)), req, renamed, open: false };
}

/** The config field of a share group that names a stream: its dead-letter stream. */
const DEAD_LETTER = 'errors.deadletterqueue.topic.name';

/**
 * Share groups (`/_share/{stream}?group=`, docs/protocol.md "Share groups"): leasing,
 * acknowledging, describing and forgetting are part of reading the stream, as named offsets are;
 * changing the group's config is configuring (`create`) the stream, and naming a dead-letter
 * stream needs `create` and `append` on it (the node creates it and appends archived records).
 */
function planShare(req: HttpRequest, prefix: string | null): Plan {
  const base = '/_share';
  let raw = req.path.slice(base.length);
  const renamed: Array<[string, string]> = [];
  if (prefix !== null) {
    renamed.push([decode(raw), decode(prefixed(prefix, raw))]);
    raw = prefixed(prefix, raw);
    req = { ...req, path: base + raw };
  }
  if (req.method !== 'PATCH') return { accesses: [access('svc', 'read', decode(raw))], req, renamed, open: false };
  const accesses = [access('svc', 'create', decode(raw))];
  let doc: unknown = null;
  try {
    doc = JSON.parse(req.body.toString('utf8'));
  } catch {
    // The handler answers a body that is not JSON.
  }
  const dlq = typeof doc === 'object' && doc !== null ? (doc as Record<string, unknown>)[DEAD_LETTER] : undefined;
  if (typeof dlq === 'string' && dlq.startsWith('/')) {
    let name = dlq;
    if (prefix !== null) {
      name = prefixed(prefix, dlq);
      renamed.push([dlq, name]);
      req = { ...req, body: Buffer.from(JSON.stringify({ ...(doc as Record<string, unknown>), [DEAD_LETTER]: name })) };
    }
    accesses.push(access('svc', 'create', name), access('svc', 'append', name));
  }
  return { accesses, req, renamed, open: false };
}

const DS_BASE = '/v1/stream';

function planDs(req: HttpRequest, prefix: string | null): Plan {
  const m = req.method;
  if (req.path.startsWith(`${DS_BASE}/__ds/`)) {
    // The subscription APIs: matched as `/__ds/<subpath>`, never tenant-prefixed.
    const op: Op = m === 'PUT' ? 'create' : m === 'DELETE' ? 'delete' : m === 'POST' ? 'append' : 'read';
    return { accesses: [access('durable_streams', op, decode(req.path.slice(DS_BASE.length)))], req, renamed: [], open: false };
  }
  if (!req.path.startsWith(DS_BASE + '/')) return { accesses: [access('durable_streams', 'read', decode(req.path))], req, renamed: [], open: false };
  let raw = req.path.slice(DS_BASE.length);
  const renamed: Array<[string, string]> = [];
  if (prefix !== null) {
    renamed.push([decode(DS_BASE + raw), decode(DS_BASE + prefixed(prefix, raw))]);
    raw = prefixed(prefix, raw);
    req = { ...req, path: DS_BASE + raw };
  }
  const name = decode(raw);
  const h = req.headers;
  const accesses: Access[] = [];
  if (m === 'GET') accesses.push(access('durable_streams', 'read', name));
  else if (m === 'HEAD') accesses.push(access('durable_streams', 'head', name));
  else if (m === 'DELETE') accesses.push(access('durable_streams', 'delete', name));
  else if (m === 'PUT') {
    accesses.push(access('durable_streams', 'create', name));
    const from = h['stream-forked-from'];
    if (from !== undefined) {
      // A fork reads its source: the token must cover reading it (tenant-prefixed like any name).
      let src = from.trim();
      if (src.startsWith(DS_BASE + '/') && prefix !== null) {
        const to = DS_BASE + prefixed(prefix, src.slice(DS_BASE.length));
        req = { ...req, headers: { ...req.headers, 'stream-forked-from': to } };
        src = to;
      }
      accesses.push(access('durable_streams', 'read', decode(src.startsWith(DS_BASE + '/') ? src.slice(DS_BASE.length) : src)));
    }
  } else if (m === 'POST') {
    if (isTrue(h['stream-closed'])) {
      if (req.body.length > 0) accesses.push(access('durable_streams', 'append', name));
      accesses.push(access('durable_streams', 'close', name));
    } else accesses.push(access('durable_streams', 'append', name));
  } else accesses.push(access('durable_streams', 'read', name));
  return { accesses, req, renamed, open: false };
}

function planAdmin(req: HttpRequest): Plan {
  const p = req.path;
  const m = req.method;
  const open = (): Plan => ({ accesses: [], req, renamed: [], open: true });
  if (p === '/health' || p === '/ready' || p === '/' || p.startsWith('/dashboard/') || m === 'OPTIONS') return open();
  const one = (op: Op, stream?: string): Plan => ({ accesses: [access('admin', op, stream)], req, renamed: [], open: false });
  if (p === '/admin/cluster') return one('cluster_read');
  // The node's own metrics (docs/metrics.md): a token that may read nodes may scrape.
  if (p === '/metrics') return one('node_read');
  if (p === '/admin/nodes' || (p.startsWith('/admin/nodes/') && m !== 'POST')) return one('node_read');
  if (p.startsWith('/admin/nodes/')) return one('update_node_slots');
  if (p.startsWith('/admin/streams/')) return one('stream_inspect', decode(p.slice('/admin/streams'.length)));
  // The dashboard's endpoints (gateway/admin/dashboard-api.ts, docs/dashboard.md).
  // Who am I: any token that may use the admin listener may read its own scope.
  if (p === '/admin/whoami') return { accesses: [], req, renamed: [], open: false };
  if (p === '/admin/streams') {
    const prefix = new URLSearchParams(req.query).get('prefix') || '/';
    return { accesses: [{ ...access('admin', 'stream_inspect', prefix), range: true }], req, renamed: [], open: false };
  }
  if (p.startsWith('/admin/stream-config/')) return one('stream_inspect', decode(p.slice('/admin/stream-config'.length)));
  // Records are the stream's data: reading them is the read op (group stream) on the admin audience.
  if (p.startsWith('/admin/records/')) return one('read', decode(p.slice('/admin/records'.length)));
  if (p === '/admin/groups') return one('cluster_read');
  // The schema registry (gateway/admin/schema-api.ts): its operations, subjects matched as on the registry listener.
  if (p === '/admin/schemas') return { accesses: [{ ...access('admin', 'schema_read', SUBJECTS), range: true }], req, renamed: [], open: false };
  if (p.startsWith('/admin/schemas/')) {
    const [raw, ...rest] = p.slice('/admin/schemas/'.length).split('/');
    const subject = SUBJECTS + decode(raw!);
    const what = rest.join('/');
    if (m === 'GET' || m === 'HEAD' || what === 'compatibility') return one('schema_read', subject);
    if (m === 'DELETE') return one('schema_delete', subject);
    if (what === 'config') return one('schema_config', subject);
    return one('schema_write', subject);
  }
  // The stream of a transfer is in the body; the handler checks it against the same scope.
  if (p === '/admin/transfer') return one('transfer_stream');
  // A rebalance may move any stream: the token must allow transfers of every stream.
  if (p === '/admin/rebalance') return { accesses: [{ ...access('admin', 'transfer_stream', '/'), range: true }], req, renamed: [], open: false };
  // Token endpoints check the token id against the caller's scope themselves (Tokens.issue / revoke / list).
  if (p === '/admin/tokens' && m === 'GET') return one('list_tokens');
  if (p === '/admin/tokens') return one('issue_token');
  if (p.startsWith('/admin/tokens/')) return one('revoke_token');
  return one('cluster_read');
}

/**
 * The schema registry listener (docs/schema-registry.md): subjects are matched by `streams`
 * matchers as `/_subjects/<subject>`, never tenant-prefixed; schemas by id, the type list and the
 * global settings' reads touch no subject (a deserializer knows only the id).
 */
const SUBJECTS = '/_subjects/';

function planRegistry(req: HttpRequest): Plan {
  const m = req.method;
  const seg = req.path.replace(/\/+$/, '').split('/').slice(1).map(decode);
  const one = (op: Op, stream?: string, range = false): Plan => ({ accesses: [{ ...access('schema_registry', op, stream), ...(range ? { range: true } : {}) }], req, renamed: [], open: false });
  const [a, b, c] = seg;
  const write = m !== 'GET' && m !== 'HEAD';
  if (a === 'subjects') {
    // The subject list covers every subject under `subjectPrefix`.
    if (b === undefined) return one('schema_read', SUBJECTS + (new URLSearchParams(req.query).get('subjectPrefix') ?? ''), true);
    const subject = SUBJECTS + b;
    if (m === 'DELETE') return one('schema_delete', subject);
    // POST /subjects/{s} is a lookup (a read); POST /subjects/{s}/versions registers.
    if (m === 'POST' && c === 'versions') return one('schema_write', subject);
    return one('schema_read', subject);
  }
  // POST /compatibility/subjects/{s}/versions[/{v}]: a test, nothing is written.
  if (a === 'compatibility' && b === 'subjects' && c !== undefined) return one('schema_read', SUBJECTS + c);
  if (a === 'config' || a === 'mode') {
    // A global setting applies to every subject: changing it needs them all.
    if (b === undefined) return write ? one('schema_config', SUBJECTS, true) : one('schema_read');
    return one(write ? 'schema_config' : 'schema_read', SUBJECTS + b);
  }
  return one('schema_read');
}
