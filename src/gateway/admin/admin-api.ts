/**
 * The admin API (spec "Admin endpoints"): cluster overview, nodes, stream detail, transfers and
 * tokens, answered from the metadata view and the shard storage. Errors have the admin shape:
 * `{"error": "<code>"}` only. Who is asking comes from the auth guard (principalOf).
 */
import { type MetaStore, type Tokens, denial } from '../../actors';
import { SvcError } from '../../errors';
import { type SchemaStore, type ShardClient } from '../../shards';
import { principalOf } from '../auth/guard';
import { type HttpRequest } from '../http/engine';
import { type Reply } from '../kit';
import { type GroupsSource, dashboardApi } from './dashboard-api';

export interface NodeIdentity {
  nodeId: number;
  /** Incremented at every start of the node (kept in the metadata store). */
  nodeEpoch: number;
  clusterId: string;
  /** Where clients reach this node's protocol listener. */
  advertisedAddress: string;
}

export interface AdminDeps {
  shards: ShardClient;
  meta: MetaStore;
  tokens: Tokens;
  node: NodeIdentity;
  /** Kafka consumer groups for the dashboard (`/admin/groups`); absent without a Kafka listener. */
  groups?: GroupsSource | null;
  /** The schema registry, for a stream's bound schema on the dashboard (`/admin/stream-config/{s}`). */
  schemas?: Pick<SchemaStore, 'has' | 'get'> | null;
}

/** The node record kept in the metadata store under `nodes/<id>`. */
export interface NodeRecord {
  nodeId: number;
  nodeEpoch: number;
  advertisedAddress: string;
  slots: number;
}

export const nodeKey = (id: number): string => `nodes/${id}`;

const JSON_TYPE: [string, string] = ['content-type', 'application/json'];

function json(status: number, doc: unknown): Reply {
  return { status, headers: [JSON_TYPE, ['cache-control', 'no-store']], body: JSON.stringify(doc) };
}

export function adminError(err: unknown): Reply {
  const e = err instanceof SvcError ? err : new SvcError('internal', 'internal error');
  const status = e.code === 'not_found' ? 404 : e.code === 'conflict' ? 409 : e.code === 'forbidden' ? 403 : e.code === 'unauthorized' ? 401 : e.code === 'method_not_allowed' ? 405 : e.code === 'internal' || e.code === 'storage_unavailable' || e.code === 'shutting_down' ? 503 : 400;
  const error = status === 400 ? 'bad_request' : status === 503 && e.code === 'internal' ? 'internal' : e.code;
  return { status: e.code === 'internal' ? 500 : status, headers: [JSON_TYPE], body: JSON.stringify({ error }) };
}

/** The 500 for a request that failed inside the node: the admin shape (`error` only, spec "Error body"), so the id goes in a header. */
export function adminInternalReply(requestId: string): Reply {
  return { status: 500, headers: [JSON_TYPE, ['svc-request-id', requestId]], body: JSON.stringify({ error: 'internal' }) };
}

function parseBody(req: HttpRequest): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(req.body.toString('utf8'));
  } catch {
    throw new SvcError('invalid_json', 'the body is not valid JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new SvcError('bad_request', 'the body must be a JSON object');
  return v as Record<string, unknown>;
}

function nodeDoc(d: AdminDeps, rec: NodeRecord, placed: number): unknown {
  return {
    nodeId: rec.nodeId,
    nodeEpoch: rec.nodeEpoch,
    advertisedAddress: rec.advertisedAddress,
    slots: rec.slots,
    openingCount: 0,
    placedCount: placed,
    local: rec.nodeId === d.node.nodeId,
  };
}

function nodeRecord(d: AdminDeps, id: number): NodeRecord {
  const r = d.meta.get<NodeRecord>(nodeKey(id));
  if (r === null) throw new SvcError('not_found', `no node ${id}`);
  return r.value;
}

/** Answers an /admin request, or null when the path is not the admin API's. */
export async function adminApi(d: AdminDeps, req: HttpRequest): Promise<Reply | null> {
  const p = req.path;
  const m = req.method;
  const get = m === 'GET' || m === 'HEAD';
  if (p === '/admin/cluster' && get) {
    const s = await d.shards.stats();
    return json(200, {
      clusterId: d.node.clusterId,
      nodeId: d.node.nodeId,
      nodeEpoch: d.node.nodeEpoch,
      advertisedAddress: d.node.advertisedAddress,
      registered: true,
      // Metadata commands plus the shards' applied catalog changes and background work (docs/storage.md).
      appliedIndex: d.meta.appliedIndex + s.appliedChanges,
      streamCount: s.streamCount,
      objectCount: s.objectCount,
      destroyedObjectBacklog: s.destroyedObjectBacklog,
      // A single node holds the maintenance lease (it runs retention and the reaper itself).
      leaseHolder: true,
      pendingTransfers: [],
    });
  }
  if (p === '/admin/nodes' && get) {
    const placed = (await d.shards.stats()).streamCount;
    return json(200, { nodes: d.meta.list<NodeRecord>('nodes/').map((r) => nodeDoc(d, r.value, r.value.nodeId === d.node.nodeId ? placed : 0)) });
  }
  const nodeMatch = /^\/admin\/nodes\/([^/]+)$/.exec(p);
  if (nodeMatch !== null) {
    const id = /^(0|[1-9]\d{0,9})$/.test(nodeMatch[1]!) ? Number(nodeMatch[1]) : NaN;
    if (!Number.isSafeInteger(id)) throw new SvcError('bad_request', 'a node id is an integer');
    if (get) {
      const rec = nodeRecord(d, id);
      return json(200, nodeDoc(d, rec, id === d.node.nodeId ? (await d.shards.stats()).streamCount : 0));
    }
    if (m !== 'POST') throw new SvcError('method_not_allowed', `${m} is not allowed here`);
    const body = parseBody(req);
    const slots = body['slots'];
    if (Object.keys(body).some((k) => k !== 'slots') || typeof slots !== 'number' || !Number.isSafeInteger(slots) || slots < 0) {
      throw new SvcError('bad_request', 'the body must be {"slots": integer >= 0}');
    }
    const cur = d.meta.get<NodeRecord>(nodeKey(id));
    if (cur === null) throw new SvcError('not_found', `no node ${id}`);
    const next = { ...cur.value, slots };
    await d.meta.put(nodeKey(id), next, { version: cur.version });
    return json(200, nodeDoc(d, next, id === d.node.nodeId ? (await d.shards.stats()).streamCount : 0));
  }
  if (p.startsWith('/admin/streams/') && get) {
    let name: string;
    try {
      name = decodeURIComponent(p.slice('/admin/streams'.length));
    } catch {
      throw new SvcError('bad_request', 'the stream name is not valid percent-encoded UTF-8');
    }
    const info = await d.shards.head(name);
    return json(200, {
      name: info.name,
      streamId: info.streamId,
      ownerNodeId: d.node.nodeId,
      ownerAdvertisedAddress: d.node.advertisedAddress,
      ownerLocal: true,
      contentType: info.contentType,
      ttlSeconds: info.ttlSeconds,
      expiresAtMs: info.expiresAtMs,
      closed: info.closed,
      state: 'placed',
      epoch: d.node.nodeEpoch,
      nodeId: d.node.nodeId,
      startOffset: info.startSeq,
      endOffset: info.nextSeq,
      pendingTransfer: null,
    });
  }
  if (p === '/admin/transfer') {
    if (m !== 'POST') throw new SvcError('method_not_allowed', `${m} is not allowed here`);
    const body = parseBody(req);
    const stream = body['stream'];
    const toNode = body['toNode'];
    if (typeof stream !== 'string' || typeof toNode !== 'number' || !Number.isSafeInteger(toNode)) throw new SvcError('bad_request', 'the body must be {"stream": string, "toNode": integer}');
    const why = denial(principalOf(req).scope, { audience: 'admin', op: 'transfer_stream', group: 'admin', write: true, stream });
    if (why !== null) throw new SvcError('forbidden', why);
    const info = await d.shards.head(stream);
    // One node: the only valid target is the node itself, and there is nothing to move.
    if (toNode !== d.node.nodeId) throw new SvcError('bad_request', `node ${toNode} is not a valid target: this node is the only one`);
    return json(200, { stream, streamId: info.streamId, toNode, pending: false });
  }
  if (p === '/admin/tokens') {
    const caller = principalOf(req);
    if (get) return json(200, d.tokens.list(caller));
    if (m !== 'POST') throw new SvcError('method_not_allowed', `${m} is not allowed here`);
    return json(201, await d.tokens.issue(caller, parseBody(req)));
  }
  const tokenMatch = /^\/admin\/tokens\/([^/]+)$/.exec(p);
  if (tokenMatch !== null) {
    if (m !== 'DELETE') throw new SvcError('method_not_allowed', `${m} is not allowed here`);
    await d.tokens.revoke(principalOf(req), decodeURIComponent(tokenMatch[1]!));
    return { status: 204, headers: [] };
  }
  // The dashboard's read endpoints (dashboard-api.ts).
  return dashboardApi(d, req);
}
