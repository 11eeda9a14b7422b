/**
 * The admin listener. This build serves the probes; the rest of the admin API
 * (cluster, nodes, streams, tokens) answers 404 in the admin error shape until it lands.
 *
 *   GET /health  200 while the process is up
 *   GET /ready   200 or 503 with {ready, serving, registered, appliedIndex, nodeId}
 */
import { type HttpRequest, type HttpResponse, type RequestHandler } from '../http/engine';

export interface ReadinessSource {
  /** Listeners are accepting and storage is open. */
  serving(): boolean;
  nodeId: number;
  /** Position of the last applied metadata command (0 until the metadata log exists). */
  appliedIndex(): number;
}

const JSON_TYPE: [string, string] = ['content-type', 'application/json'];

export function createAdminHandler(src: ReadinessSource): RequestHandler {
  return (req: HttpRequest, res: HttpResponse): void => {
    const get = req.method === 'GET' || req.method === 'HEAD';
    const body = (b: string): string | undefined => (req.method === 'HEAD' ? undefined : b);
    if (get && req.path === '/health') {
      res.send(200, [JSON_TYPE, ['cache-control', 'no-store']], body('{"status":"ok"}'));
      return;
    }
    if (get && req.path === '/ready') {
      const serving = src.serving();
      // A single node registers itself when it starts; clustering adds real registration.
      const registered = serving;
      const ready = serving && registered;
      const doc = { ready, serving, registered, appliedIndex: src.appliedIndex(), nodeId: src.nodeId };
      res.send(ready ? 200 : 503, [JSON_TYPE, ['cache-control', 'no-store']], body(JSON.stringify(doc)));
      return;
    }
    res.send(404, [JSON_TYPE], body('{"error":"not_found"}'));
  };
}
