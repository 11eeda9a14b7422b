/**
 * The admin API (spec "Admin endpoints"): cluster overview, nodes, stream detail, transfers and
 * tokens, answered from the metadata view and the shard storage. Errors have the admin shape:
 * `{"error": "<code>"}` only. Who is asking comes from the auth guard (principalOf).
 */
import { type MaintenanceLease, type Membership, type MetaStore, type Placement, type Rebalancer, type Tokens, type Transfers, denial } from '../../actors';
import { SvcError } from '../../errors';
import { type Schemas, type ShardClient } from '../../shards';
import { principalOf } from '../auth/guard';
import { type HttpRequest } from '../http/engine';
import { type Reply } from '../kit';
import { parseBody } from './json-body';
import { dashboardApi } from './dashboard-api';
import { type GroupsSource } from './group-doc';
import { type ObjectFigures, clusterFigures, nodeDoc, streamDetail } from './cluster-api';
import { type SchemaAdminDeps, schemaApi } from './schema-api';

export interface NodeIdentity {
  clusterId: string;
}

export interface AdminDeps {
  shards: ShardClient;
  meta: MetaStore;
  tokens: Tokens;
  node: NodeIdentity;
  /** This node and the others (docs/cluster.md). */
  members: Membership;
  /** Placement rows, or null with the embedded store (one node owns every stream). */
  placement: Placement | null;
  /** The maintenance lease (leaseHolder); absent: a single node, which holds it. */
  lease?: MaintenanceLease | null;
  /** Transfers between nodes; null with the embedded store. */
  transfers?: Transfers | null;
  /** Rebalance (POST /admin/rebalance, the overview's `rebalance`); null unless in objects mode. */
  rebalancer?: Rebalancer | null;
  /** Objects mode: objectCount and destroyedObjectBacklog from the object ledger (cluster-api.ts). */
  objects?: ObjectFigures | null;
  /** Groups of all kinds for the dashboard and `svc groups` (`/admin/groups`); absent: none shown. */
  groups?: GroupsSource | null;
  /** The schema registry, for a stream's bound schema on the dashboard (`/admin/stream-config/{s}`). */
  schemas?: Pick<Schemas, 'has' | 'get'> | null;
  /** The schema registry's subjects, versions and bindings (`/admin/schemas…`, schema-api.ts). */
  registry?: SchemaAdminDeps | null;
}

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


/** The stream count of this node's shards (placedCount of a single node). */
async function localStreams(d: AdminDeps): Promise<number> {
  return d.placement === null ? (await d.shards.stats()).streamCount : 0;
}

/** Answers an /admin request, or null when the path is not the admin API's. */
export async function adminApi(d: AdminDeps, req: HttpRequest): Promise<Reply | null> {
  const p = req.path;
  const m = req.method;
  const get = m === 'GET' || m === 'HEAD';
  if (p === '/admin/cluster' && get) {
    const f = await clusterFigures(d);
    const me = d.members.node(d.members.nodeId);
    return json(200, {
      clusterId: d.node.clusterId,
      nodeId: d.members.nodeId,
      nodeEpoch: d.members.nodeEpoch,
      advertisedAddress: me?.advertisedAddress ?? '',
      registered: d.members.registered,
      // Metadata commands plus the shards' applied catalog changes and background work (docs/storage.md).
      appliedIndex: d.meta.appliedIndex + f.appliedChanges,
      streamCount: f.streamCount,
      objectCount: f.objectCount,
      destroyedObjectBacklog: f.destroyedObjectBacklog,
      // A single node holds the maintenance lease (it runs retention and the reaper itself); in a
      // cluster one node does, and a node not registered cannot tell (null; docs/cluster.md).
      leaseHolder: d.lease === undefined || d.lease === null ? (d.placement === null ? true : null) : d.lease.leaseHolder(),
      pendingTransfers: d.transfers?.pending() ?? [],
      // Objects mode only (beyond the spec): the rebalance run on this node.
      ...(d.rebalancer !== undefined && d.rebalancer !== null ? { rebalance: d.rebalancer.status() } : {}),
    });
  }
  if (p === '/admin/nodes' && get) {
    const placed = await localStreams(d);
    return json(200, { nodes: d.members.nodes().map((n) => nodeDoc(d, n, placed)) });
  }
  const nodeMatch = /^\/admin\/nodes\/([^/]+)$/.exec(p);
  if (nodeMatch !== null) {
    const id = /^(0|[1-9]\d{0,9})$/.test(nodeMatch[1]!) ? Number(nodeMatch[1]) : NaN;
    if (!Number.isSafeInteger(id)) throw new SvcError('bad_request', 'a node id is an integer');
    if (get) {
      const rec = d.members.node(id);
      if (rec === null) throw new SvcError('not_found', `no node ${id}`);
      return json(200, nodeDoc(d, rec, await localStreams(d)));
    }
    if (m !== 'POST') throw new SvcError('method_not_allowed', `${m} is not allowed here`);
    const body = parseBody(req);
    const slots = body['slots'];
    if (Object.keys(body).some((k) => k !== 'slots') || typeof slots !== 'number' || !Number.isSafeInteger(slots) || slots < 0) {
      throw new SvcError('bad_request', 'the body must be {"slots": integer >= 0}');
    }
    const next = await d.members.setSlots(id, slots);
    if (next === null) throw new SvcError('not_found', `no node ${id}`);
    return json(200, nodeDoc(d, next, await localStreams(d)));
  }
  if (p.startsWith('/admin/streams/') && get) {
    let name: string;
    try {
      name = decodeURIComponent(p.slice('/admin/streams'.length));
    } catch {
      throw new SvcError('bad_request', 'the stream name is not valid percent-encoded UTF-8');
    }
    if (d.placement !== null) return json(200, await streamDetail(d, d.placement, name, req));
    const info = await d.shards.head(name);
    return json(200, {
      name: info.name,
      streamId: info.streamId,
      ownerNodeId: d.members.nodeId,
      ownerAdvertisedAddress: d.members.node(d.members.nodeId)?.advertisedAddress ?? null,
      ownerLocal: true,
      contentType: info.contentType,
      ttlSeconds: info.ttlSeconds,
      expiresAtMs: info.expiresAtMs,
      closed: info.closed,
      state: 'placed',
      epoch: d.members.nodeEpoch,
      nodeId: d.members.nodeId,
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
    if (d.transfers !== undefined && d.transfers !== null) return json(200, await d.transfers.transfer(stream, toNode));
    // A single node: the only valid target is this node, with nothing to move.
    const streamId = (await d.shards.head(stream)).streamId;
    if (toNode !== d.members.nodeId) throw new SvcError('bad_request', `node ${toNode} is not a valid target: this node is the only one`);
    return json(200, { stream, streamId, toNode, pending: false });
  }
  if (p === '/admin/rebalance') {
    if (m !== 'POST') throw new SvcError('method_not_allowed', `${m} is not allowed here`);
    const body = req.body.length === 0 ? {} : parseBody(req);
    const dryRun = body['dryRun'] ?? false;
    if (typeof dryRun !== 'boolean') throw new SvcError('bad_request', 'the body must be {"dryRun": boolean} (or empty)');
    if (d.rebalancer === undefined || d.rebalancer === null) {
      // One node, or streams on their owners' disks (no objects mode): nothing can move.
      if (d.placement === null || dryRun) return json(200, { moves: [], dryRun, started: false });
      throw new SvcError('bad_request', 'streams move between nodes only with --objects (their data in the object store)');
    }
    const r = d.rebalancer.request(dryRun);
    return json(200, { moves: r.moves, dryRun, started: r.started, status: d.rebalancer.status() });
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
  // The schema registry (schema-api.ts).
  const schemaReply = await schemaApi(d.registry, req);
  if (schemaReply !== null) return schemaReply;
  // The dashboard's read endpoints (dashboard-api.ts).
  return dashboardApi(d, req);
}
