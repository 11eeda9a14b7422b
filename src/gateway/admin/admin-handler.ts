/**
 * The admin listener: health probes, the dashboard's page and assets, and the admin API.
 *
 *   GET /health            200 while the process is up
 *   GET /ready             200 or 503 with {ready, serving, registered, appliedIndex, nodeId}
 *                          (+ `unavailable`, the shard workers down after a storage failure, while any is;
 *                          + `metadataUnreachable: true` while etcd answers no lease renewal: no quorum;
 *                          + `diskFull: true` while the disk is full, which alone does not make it unready)
 *   GET /, /dashboard/…    the dashboard (or a hint page when the build has no assets)
 *   GET /metrics           Prometheus exposition (docs/metrics.md; op node_read under --auth required)
 *   /admin/…               admin-api.ts
 *
 * Under `--auth required` the guard (gateway/auth) runs first; probes and static assets are open.
 */
import { type HttpRequest, type HttpResponse, type RequestHandler } from '../http/engine';
import { type InFlight } from '../in-flight';
import { isInternal } from '../shield';
import { type Reply } from '../kit';
import { type AdminDeps, adminApi, adminError } from './admin-api';

export interface ReadinessSource {
  /** Listeners are accepting and storage is open. */
  serving(): boolean;
  /** This node's live registration is in the metadata (docs/cluster.md); absent: registered while serving. */
  registered?(): boolean;
  nodeId: number;
  /** Position of the last applied metadata command (metadata commands plus the shards' applied changes: docs/storage.md). */
  appliedIndex(): number | Promise<number>;
  /** Shard workers down after a storage failure (ShardClient.unavailable()); the node is not ready while any is. */
  unavailable?(): ReadonlyArray<{ worker: number; shards: number[]; error: string; errorCode: string | null; sinceMs: number; restarts: number }>;
  /** The metadata store takes writes (etcd: a quorum answers; docs/cluster.md). The node is not ready while it does not. */
  metadataReachable?(): boolean;
  /** The disk is full: creates and appends are refused, reads and deletes served (the node stays ready, so deletes reach it). */
  diskFull?(): boolean;
}

/** What serves the dashboard (gateway/admin/dashboard.ts). */
export interface DashboardSource {
  serve(path: string): { status: number; headers: Array<[string, string]>; body: Buffer | string } | null;
}

const JSON_TYPE: [string, string] = ['content-type', 'application/json'];

/** What serves GET /metrics (gateway/metrics). */
export interface MetricsSource {
  scrape(): Promise<{ contentType: string; body: string }>;
}

export function createAdminHandler(src: ReadinessSource, api: AdminDeps | null, dashboard: DashboardSource | null, inFlight?: InFlight, metrics?: MetricsSource | null): RequestHandler {
  return (req: HttpRequest, res: HttpResponse): void | Promise<void> => {
    const get = req.method === 'GET' || req.method === 'HEAD';
    const send = (r: Reply): void => {
      if (!res.aborted) res.send(r.status, r.headers, req.method === 'HEAD' ? undefined : r.body);
    };
    if (get && req.path === '/health') return send({ status: 200, headers: [JSON_TYPE, ['cache-control', 'no-store']], body: '{"status":"ok"}' });
    if (get && req.path === '/ready') {
      const serving = src.serving();
      // Registered: this start's node record and live lease are in the metadata (docs/cluster.md).
      const registered = serving && (src.registered?.() ?? true);
      const unavailable = src.unavailable?.() ?? [];
      const metadataReachable = src.metadataReachable?.() ?? true;
      const ready = serving && registered && unavailable.length === 0 && metadataReachable;
      const reply = (appliedIndex: number): void => {
        const doc = { ready, serving, registered, appliedIndex, nodeId: src.nodeId, ...(unavailable.length > 0 ? { unavailable } : {}), ...(metadataReachable ? {} : { metadataUnreachable: true }), ...(src.diskFull?.() === true ? { diskFull: true } : {}) };
        send({ status: ready ? 200 : 503, headers: [JSON_TYPE, ['cache-control', 'no-store']], body: JSON.stringify(doc) });
      };
      const idx = src.appliedIndex();
      if (typeof idx === 'number') return reply(idx);
      void idx.then(reply, () => reply(-1));
      return;
    }
    if (get && req.path === '/metrics' && metrics != null) {
      return metrics.scrape().then((m) => send({ status: 200, headers: [['content-type', m.contentType], ['cache-control', 'no-store']], body: m.body }));
    }
    if (get && dashboard !== null) {
      const asset = dashboard.serve(req.path);
      if (asset !== null) return send(asset);
    }
    if (api === null || !req.path.startsWith('/admin/')) return send({ status: 404, headers: [JSON_TYPE], body: '{"error":"not_found"}' });
    inFlight?.begin();
    // Returned: the shield (gateway/shield.ts) answers bugs and `internal` errors, with a request id.
    return adminApi(api, req)
      .then(
        (r) => send(r ?? { status: 404, headers: [JSON_TYPE], body: '{"error":"not_found"}' }),
        (err: unknown) => {
          if (isInternal(err)) throw err;
          send(adminError(err));
        },
      )
      .finally(() => inFlight?.end());
  };
}
