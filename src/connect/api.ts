/**
 * The runtime's HTTP API (spec "Endpoints"; bodies and status codes in docs/connectors.md).
 * All responses are JSON except /metrics; errors are `{"error": {"code", "message"}}`. With
 * `[http] api_key` set, every request must carry it in the `api-key` header (401 otherwise).
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import { timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { connectorDetail, connectorStats, connectorView, versionView } from './api-views';
import type { ConnectorsConfig } from './config-schema';
import { type ConnectorType, removeVersion, setActive, storeVersion, validateDefinition } from './definitions';
import type { Forwarder } from './definitions-http';
import type { Logger } from './log';
import { listenError } from '../program/http';
import { formatHostPort, parseHostPort } from '../program';
import type { Metrics } from './metrics';
import { redact } from './redact';
import { activeDefinition, type Connector, type Runtime } from './runtime';

const MAX_BODY = 1024 * 1024; // bytes

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

interface Reply {
  status: number;
  body: unknown;
  contentType?: string;
}

export interface ApiServer {
  /** host:port actually bound. */
  address: string;
  close(): Promise<void>;
}

/** `forward`: with the HTTP definitions provider, create/activate/delete go to it first (spec "[connectors]"). */
export async function startApi(cfg: ConnectorsConfig['http'], runtime: Runtime, metrics: Metrics, log: Logger, forward: Forwarder | null = null): Promise<ApiServer> {
  const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    void handle(req, cfg, runtime, metrics, forward)
      .catch((err: unknown) => {
        if (err instanceof ApiError) return { status: err.status, body: { error: { code: err.code, message: err.message, ...(err.details === undefined ? {} : { details: err.details }) } } };
        log.error({ err: (err as Error).message, url: req.url }, 'API request failed');
        return { status: 500, body: { error: { code: 'internal', message: (err as Error).message } } };
      })
      .then((r: Reply) => {
        const headers: Record<string, string> = { 'content-type': r.contentType ?? 'application/json' };
        if (cfg.cors.enabled) Object.assign(headers, corsHeaders(cfg.cors, req.headers.origin));
        const body = r.status === 204 ? '' : typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
        res.writeHead(r.status, headers).end(body);
      });
  };
  const server = cfg.tls.enabled ? https.createServer({ cert: fs.readFileSync(cfg.tls.cert_file), key: fs.readFileSync(cfg.tls.key_file) }, handler) : http.createServer(handler);
  const parsed = parseHostPort(cfg.address);
  if (!parsed.ok) throw new Error(`http.address: ${parsed.error}`);
  const { host, port } = parsed.address;
  await new Promise<void>((resolve, reject) => {
    // node:http never sets SO_REUSEPORT: a port another process listens on fails with EADDRINUSE.
    server.once('error', (err) => reject(listenError({ name: 'svc-connectors API listener (http.address)', host, port }, err)));
    server.listen(port, host, () => resolve());
  });
  const a = server.address() as AddressInfo;
  return { address: formatHostPort({ host: a.address, port: a.port }), close: () => new Promise((r) => server.close(() => r())) };
}

function corsHeaders(c: ConnectorsConfig['http']['cors'], origin: string | undefined): Record<string, string> {
  const allowed = c.allowed_origins.includes('*') ? '*' : origin !== undefined && c.allowed_origins.includes(origin) ? origin : '';
  if (allowed === '') return {};
  return { 'access-control-allow-origin': allowed, 'access-control-allow-methods': c.allowed_methods.join(', '), 'access-control-allow-headers': c.allowed_headers.join(', '), vary: 'origin' };
}

function keyMatches(expected: string, got: string | string[] | undefined): boolean {
  if (typeof got !== 'string') return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(got);
  return a.length === b.length && timingSafeEqual(a, b);
}

async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > MAX_BODY) throw new ApiError(413, 'body_too_large', `request body over ${MAX_BODY} bytes`);
    chunks.push(c);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(400, 'invalid_json', 'the request body is not JSON');
  }
}

async function handle(req: http.IncomingMessage, cfg: ConnectorsConfig['http'], runtime: Runtime, metrics: Metrics, forward: Forwarder | null): Promise<Reply> {
  const method = req.method ?? 'GET';
  if (method === 'OPTIONS' && cfg.cors.enabled) return { status: 204, body: null };
  if (cfg.api_key !== '' && !keyMatches(cfg.api_key, req.headers['api-key'])) throw new ApiError(401, 'unauthorized', 'missing or wrong api-key header');
  const url = new URL(req.url ?? '/', 'http://x');
  let parts: string[];
  try {
    parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    throw new ApiError(400, 'invalid_path', 'the path is not valid percent-encoding');
  }
  if (parts.length === 0 && method === 'GET') return { status: 200, body: { name: 'svc-connectors', version: process.env.npm_package_version ?? '0.1.0', sdk: 'svc_connector_sdk_v1_0' } };
  if (url.pathname === cfg.metrics.endpoint && cfg.metrics.enabled && method === 'GET') return { status: 200, body: await metrics.exposition(), contentType: metrics.contentType };
  if (parts[0] === 'stats' && parts.length === 1 && method === 'GET') return { status: 200, body: stats(runtime) };
  const type: ConnectorType | null = parts[0] === 'sinks' ? 'sink' : parts[0] === 'sources' ? 'source' : null;
  if (type === null) throw new ApiError(404, 'not_found', `no such endpoint: ${method} ${url.pathname}`);
  if (parts.length === 1 && method === 'GET') return { status: 200, body: runtime.list(type).map(connectorView) };
  const c = runtime.get(type, parts[1] ?? '');
  if (c === undefined) throw new ApiError(404, 'connector_not_found', `no ${type} with key ${JSON.stringify(parts[1])}`);
  const rest = parts.slice(2).join('/');
  if (rest === '' && method === 'GET') return { status: 200, body: connectorDetail(c) };
  if (rest === 'transforms' && method === 'GET') return { status: 200, body: activeDefinition(c).transforms };
  if (rest === 'restart' && method === 'POST') {
    await runtime.restart(c);
    return { status: 200, body: connectorView(c) };
  }
  if (parts[2] === 'configs') return configs(method, parts.slice(3), c, req, url, forward);
  throw new ApiError(404, 'not_found', `no such endpoint: ${method} ${url.pathname}`);
}

function stats(runtime: Runtime): unknown {
  const mem = process.memoryUsage();
  const cpu = process.cpuUsage();
  return {
    uptime_seconds: (Date.now() - runtime.startedAt) / 1000,
    memory: { rss_bytes: mem.rss, heap_used_bytes: mem.heapUsed, heap_total_bytes: mem.heapTotal, external_bytes: mem.external },
    cpu: { user_seconds: cpu.user / 1e6, system_seconds: cpu.system / 1e6 },
    connectors: [...runtime.connectors.values()].map(connectorStats),
  };
}

const parseVersion = (s: string | null | undefined): number => {
  if (s === null || s === undefined || !/^\d+$/.test(s)) throw new ApiError(400, 'invalid_version', `version must be a non-negative integer, got ${JSON.stringify(s ?? null)}`);
  return Number(s);
};

async function configs(method: string, sub: string[], c: Connector, req: http.IncomingMessage, url: URL, forward: Forwarder | null): Promise<Reply> {
  const toProvider = async (f: Parameters<Forwarder>[0]): Promise<void> => {
    if (forward === null) return;
    try {
      await forward(f);
    } catch (err) {
      throw new ApiError(502, 'provider_error', `the definitions provider refused the change: ${(err as Error).message}`);
    }
  };
  const v = c.versions;
  const what = sub.join('/');
  if (what === '' && method === 'GET') return { status: 200, body: { active: v.active, versions: [...v.versions.keys()].sort((a, b) => a - b).map((n) => versionView(c, n)) } };
  if (what === 'plugin' && method === 'GET') return { status: 200, body: redact(activeDefinition(c).plugin_config) };
  if (what === 'active' && method === 'GET') return { status: 200, body: { version: v.active } };
  if (what === 'active' && method === 'PUT') {
    const body = (await readJson(req)) as { version?: unknown };
    const n = parseVersion(body.version === undefined ? undefined : String(body.version));
    if (!v.versions.has(n)) throw new ApiError(404, 'version_not_found', `${c.type} ${c.key} has no version ${n}`);
    await toProvider({ op: 'activate', type: c.type, key: c.key, version: n });
    setActive(v, n);
    return { status: 200, body: { version: n, restart_required: c.status === 'running' || c.status === 'starting' } };
  }
  if (what === '' && method === 'POST') {
    const body = await readJson(req);
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ApiError(400, 'invalid_definition', 'the body must be a JSON object (a connector definition)');
    const raw: Record<string, unknown> = { ...(body as Record<string, unknown>), type: c.type, key: c.key };
    if (raw.version === undefined) raw.version = Math.max(...v.versions.keys()) + 1;
    const r = validateDefinition(raw, 'body');
    if ('errors' in r) throw new ApiError(400, 'invalid_definition', 'the definition is not valid', r.errors);
    if (v.versions.has(r.definition.version)) throw new ApiError(409, 'version_exists', `version ${r.definition.version} is already stored`);
    await toProvider({ op: 'create', type: c.type, key: c.key, definition: r.definition });
    storeVersion(v, r.definition);
    return { status: 201, body: versionView(c, r.definition.version) };
  }
  if (what === '' && method === 'DELETE') {
    const n = parseVersion(url.searchParams.get('version'));
    if (!v.versions.has(n)) throw new ApiError(404, 'version_not_found', `${c.type} ${c.key} has no version ${n}`);
    if (n === v.active) throw new ApiError(409, 'version_active', `version ${n} is active; activate another first`);
    await toProvider({ op: 'delete', type: c.type, key: c.key, version: n });
    removeVersion(v, n);
    return { status: 204, body: null };
  }
  if (sub.length === 1 && method === 'GET') {
    const view = versionView(c, parseVersion(sub[0]));
    if (view === null) throw new ApiError(404, 'version_not_found', `${c.type} ${c.key} has no version ${sub[0]}`);
    return { status: 200, body: view };
  }
  throw new ApiError(404, 'not_found', `no such endpoint: ${method} ${url.pathname}`);
}
