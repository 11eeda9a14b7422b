/**
 * svc-cache's listeners: the client listener (on the shared HTTP engines, src/program/http:
 * uWebSockets.js by default, node:http with `server.engine = "node"`; TLS with [server.tls])
 * and the metrics listener. Every request is parsed once into a Ctx, authenticated, then
 * either answered from the cache (read-path.ts) or forwarded (forward.ts).
 *
 *   client ─▶ /-/health ─▶ "ok"
 *          ─▶ authenticate (static: SigV4) ─▶ classify ─▶ GetObject/HeadObject ─▶ read path ─▶ cache / origin
 *                                                     └─▶ everything else ──────▶ forward ─▶ origin (re-signed)
 */
import { randomBytes } from 'node:crypto';
import type * as http from 'node:http';
import { type AddressInfo } from 'node:net';
import { type HttpRequest, type HttpResponse, type HttpServerHandle, listenError, loadHttpEngine } from '../program/http';
import { parseTarget } from './addressing';
import { type Authenticator, authenticator } from './auth';
import { ObjectCache } from './cache/object-cache';
import { type CacheConfig, policyFor } from './config';
import { formatHostPort, isLoopback, parseHostPort, type HostPort } from '../program';
import { type Ctx } from './context';
import { credentialSource } from './credentials';
import { forward } from './forward';
import { type Logger, createLogger } from './log';
import { Metrics } from './metrics';
import { classify } from './ops';
import { Origin } from './origin';
import { serveMemoryHit, serveRead } from './read-path';
import { S3Error } from './errors';
import { Reply } from './reply';
import { sendError } from './respond';
import { type Services } from './services';
import { parseQuery } from './sigv4';

export interface CacheServer {
  /** Base URL of the client listener, e.g. http://127.0.0.1:9000. */
  url: string;
  port: number;
  /** Base URL of the metrics listener, or null when it is off. */
  metricsUrl: string | null;
  services: Services;
  close(): Promise<void>;
}

export interface StartOptions {
  log?: Logger;
  env?: NodeJS.ProcessEnv;
}

/** A listen setting as an address; a config built without loadCacheConfig may still hold a bad one. */
function listenAddress(text: string, key: string): HostPort {
  const parsed = parseHostPort(text);
  if (!parsed.ok) throw new Error(`${key}: ${parsed.error}`);
  return parsed.address;
}

export async function startCacheServer(config: CacheConfig, o: StartOptions = {}): Promise<CacheServer> {
  const log = o.log ?? createLogger(config.log_level);
  const metrics = new Metrics(true);
  const creds = credentialSource(config.origin, o.env ?? process.env);
  const origin = new Origin(config.origin, creds);
  const cache = new ObjectCache(
    {
      dir: config.cache.dir,
      diskBytes: config.cache.disk_bytes,
      memoryBytes: config.cache.memory_bytes,
      memoryObjectMax: config.cache.memory_object_max,
      metadataEntries: config.cache.metadata_entries,
    },
    origin,
    metrics,
    log,
    (bucket) => policyFor(config, bucket),
  );
  const restored = await cache.open();
  const services: Services = { config, origin, cache, metrics, log };
  const auth = authenticator(config.auth);
  const tls = config.server.tls.cert !== '';
  const listen = listenAddress(config.server.listen, 'server.listen');
  const engine = await loadHttpEngine(config.server.engine, log);
  let server: HttpServerHandle;
  try {
    server = await engine.listen(
      {
        name: 'svc-cache listener (server.listen)',
        host: listen.host,
        port: listen.port,
        // Bodies are streamed to the origin (any size), never buffered: no engine body limit.
        streamBodies: true,
        bodyLimit: Number.MAX_SAFE_INTEGER,
        tooLarge: () => ({ status: 413, headers: [], body: '' }),
        tls: tls ? { cert: config.server.tls.cert, key: config.server.tls.key } : undefined,
      },
      (req, res) => handle(req, res, services, auth),
    );
  } catch (err) {
    origin.close();
    throw err;
  }
  const url = `${tls ? 'https' : 'http'}://${formatHostPort({ host: listen.host, port: server.port })}`;

  let metricsServer: http.Server | undefined;
  let metricsUrl: string | null = null;
  if (config.metrics.listen !== '') {
    const m = listenAddress(config.metrics.listen, 'metrics.listen');
    metricsServer = metrics.server(config.metrics.path);
    try {
      await new Promise<void>((resolve, reject) => {
        metricsServer!.once('error', (err) => reject(listenError({ name: 'svc-cache metrics listener (metrics.listen)', host: m.host, port: m.port }, err)));
        metricsServer!.listen(m.port, m.host, () => resolve());
      });
    } catch (err) {
      await server.close();
      origin.close();
      throw err;
    }
    const ma = metricsServer.address() as AddressInfo;
    metricsUrl = `http://${formatHostPort({ host: ma.address, port: ma.port })}`;
  }

  if (config.auth.mode === 'anonymous' && !tls && !isLoopback(listen.host))
    log.warn({ listen: config.server.listen }, '!!! svc-cache is listening beyond loopback with anonymous auth and no TLS: anyone who can reach it reads and writes the origin with this endpoint\'s credentials !!!');
  log.info({ listen: url, engine: engine.name, metrics: metricsUrl, origin: config.origin.endpoint, originCredentials: creds.kind, auth: config.auth.mode, restoredObjects: restored }, 'svc-cache started');

  return {
    url,
    port: server.port,
    metricsUrl,
    services,
    async close() {
      // In-flight responses finish (up to the deadline), then every connection is closed.
      let deadline: NodeJS.Timeout | undefined;
      await Promise.race([server.close(), new Promise<void>((resolve) => (deadline = setTimeout(resolve, config.server.shutdown_timeout_ms)))]);
      clearTimeout(deadline);
      if (metricsServer) await new Promise<void>((resolve) => metricsServer!.close(() => resolve()));
      origin.close();
    },
  };
}

/** Request ids: a random per-process prefix and a counter (a random id per request costs more than the rest of a cache hit's bookkeeping). */
const ID_PREFIX = randomBytes(4).toString('hex').toUpperCase();
/** Two upper-case hex digits per byte value: the counter is written from four of these, with no number-to-text conversion, case change or padding per request. */
const HEX_BYTE: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).toUpperCase().padStart(2, '0'));
let idCounter = 0;
function nextRequestId(): string {
  idCounter = (idCounter + 1) % 0x1_0000_0000;
  const c = idCounter;
  return ID_PREFIX + HEX_BYTE[c >>> 24]! + HEX_BYTE[(c >>> 16) & 0xff]! + HEX_BYTE[(c >>> 8) & 0xff]! + HEX_BYTE[c & 0xff]!;
}

/** Header names as SigV4 canonicalises them: values trimmed, runs of spaces made one. */
function headerMap(h: Readonly<Record<string, string>>): Map<string, string> {
  const out = new Map<string, string>();
  for (const name in h) {
    const raw = h[name]!.trim();
    out.set(name, raw.includes('  ') ? raw.replace(/ {2,}/g, ' ') : raw);
  }
  return out;
}

const HEALTH_HEADERS: ReadonlyArray<readonly [string, string]> = [['content-type', 'text/plain']];

function handle(req: HttpRequest, response: HttpResponse, s: Services, auth: Authenticator): void {
  const started = process.hrtime.bigint();
  const method = req.method;
  const rawPath = req.path;
  if (rawPath === '/-/health' && req.query === '' && (method === 'GET' || method === 'HEAD')) {
    response.send(200, HEALTH_HEADERS, 'ok');
    return;
  }
  const rawQuery = req.query;
  // A repeated presigned URL's query was parsed when it was verified: the verifier keeps the pairs.
  const query = auth.knownQuery(rawQuery) ?? parseQuery(rawQuery);
  const headers = headerMap(req.headers);
  const target = parseTarget(headers.get('host'), rawPath, s.config.server.addressing);
  const op = classify(method, target, query, headers);
  const res = new Reply(response, s.metrics, op, started);
  const ctx: Ctx = {
    body: req.bodyStream ?? null,
    res,
    method,
    rawPath,
    query,
    headers,
    target,
    op,
    verified: undefined,
    requestId: nextRequestId(),
    expectContinue: req.expectContinue === true,
  };
  let work: Promise<void> | undefined;
  try {
    if (method === 'OPTIONS') {
      // CORS preflight: browsers send it without credentials, so it is not authenticated.
      if (!headers.has('origin') || !headers.has('access-control-request-method'))
        throw new S3Error('BadRequest', 'Insufficient information. Origin request header needed.');
      work = forward(ctx, s);
    } else {
      // One clock reading for the signature's window and the entry's freshness.
      const now = Date.now();
      ctx.verified = auth.verify({ method, rawPath, query, headers, rawQuery }, now);
      // The hot case, a fresh object in memory, is answered synchronously.
      if ((op === 'GetObject' || op === 'HeadObject') && serveMemoryHit(ctx, s, now)) return;
    }
    work ??= ctx.op === 'GetObject' || ctx.op === 'HeadObject' ? serveRead(ctx, s) : forward(ctx, s);
  } catch (err) {
    work = Promise.reject(err);
  }
  work.catch((err: unknown) => {
    if (!(err instanceof Error && err.name === 'S3Error')) s.log.error({ method, url: rawQuery === '' ? rawPath : `${rawPath}?${rawQuery}`, err }, 'request failed');
    sendError(ctx, err);
  });
}
