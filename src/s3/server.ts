/**
 * svc-cache's listeners: the client listener (node:http, or node:https with [server.tls])
 * and the metrics listener. Every request is parsed once into a Ctx, authenticated, then
 * either answered from the cache (read-path.ts) or forwarded (forward.ts).
 *
 *   client ─▶ /-/health ─▶ "ok"
 *          ─▶ authenticate (static: SigV4) ─▶ classify ─▶ GetObject/HeadObject ─▶ read path ─▶ cache / origin
 *                                                     └─▶ everything else ──────▶ forward ─▶ origin (re-signed)
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import { type AddressInfo } from 'node:net';
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
import { serveRead } from './read-path';
import { S3Error } from './errors';
import { sendError } from './respond';
import { type Services } from './services';
import { headerValues, parseQuery } from './sigv4';

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
  const handler = (expectContinue: boolean) => (req: http.IncomingMessage, res: http.ServerResponse) => handle(req, res, services, auth, expectContinue);
  const server = tls
    ? https.createServer({ cert: fs.readFileSync(config.server.tls.cert), key: fs.readFileSync(config.server.tls.key) }, handler(false))
    : http.createServer(handler(false));
  server.on('checkContinue', handler(true));
  // Any other Expect value: S3 ignores it, where Node would answer 417 on its own.
  server.on('checkExpectation', handler(false));
  server.keepAliveTimeout = 65_000; // longer than the usual client idle timeouts, so clients close first
  const listen = listenAddress(config.server.listen, 'server.listen');
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const url = `${tls ? 'https' : 'http'}://${formatHostPort({ host: addr.address, port: addr.port })}`;

  let metricsServer: http.Server | undefined;
  let metricsUrl: string | null = null;
  if (config.metrics.listen !== '') {
    const m = listenAddress(config.metrics.listen, 'metrics.listen');
    metricsServer = metrics.server(config.metrics.path);
    await new Promise<void>((resolve, reject) => {
      metricsServer!.once('error', reject);
      metricsServer!.listen(m.port, m.host, () => resolve());
    });
    const ma = metricsServer.address() as AddressInfo;
    metricsUrl = `http://${formatHostPort({ host: ma.address, port: ma.port })}`;
  }

  if (config.auth.mode === 'anonymous' && !tls && !isLoopback(listen.host))
    log.warn({ listen: config.server.listen }, '!!! svc-cache is listening beyond loopback with anonymous auth and no TLS: anyone who can reach it reads and writes the origin with this endpoint\'s credentials !!!');
  log.info({ listen: url, metrics: metricsUrl, origin: config.origin.endpoint, originCredentials: creds.kind, auth: config.auth.mode, restoredObjects: restored }, 'svc-cache started');

  return {
    url,
    port: addr.port,
    metricsUrl,
    services,
    async close() {
      server.closeIdleConnections();
      const closing = new Promise<void>((resolve) => server.close(() => resolve()));
      const deadline = setTimeout(() => server.closeAllConnections(), config.server.shutdown_timeout_ms);
      await closing;
      clearTimeout(deadline);
      if (metricsServer) await new Promise<void>((resolve) => metricsServer!.close(() => resolve()));
      origin.close();
    },
  };
}

/** Request ids: a random per-process prefix and a counter (a random id per request costs more than the rest of a cache hit's bookkeeping). */
const ID_PREFIX = randomBytes(4).toString('hex').toUpperCase();
let idCounter = 0;
function nextRequestId(): string {
  idCounter = (idCounter + 1) % 0x1_0000_0000;
  return ID_PREFIX + idCounter.toString(16).toUpperCase().padStart(8, '0');
}

function handle(req: http.IncomingMessage, res: http.ServerResponse, s: Services, auth: Authenticator, expectContinue: boolean): void {
  const url = req.url ?? '/';
  const started = process.hrtime.bigint();
  if (url === '/-/health' && (req.method === 'GET' || req.method === 'HEAD')) {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 });
    res.end(req.method === 'HEAD' ? undefined : 'ok');
    return;
  }
  const q = url.indexOf('?');
  const rawPath = q < 0 ? url : url.slice(0, q);
  const query = parseQuery(q < 0 ? '' : url.slice(q + 1));
  const headers = headerValues(req.rawHeaders);
  const method = req.method ?? 'GET';
  const target = parseTarget(headers.get('host'), rawPath, s.config.server.addressing);
  const ctx: Ctx = {
    req,
    res,
    method,
    rawPath,
    query,
    headers,
    target,
    op: classify(method, target, query, headers),
    verified: undefined,
    requestId: nextRequestId(),
    expectContinue,
  };
  res.once('finish', () => {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    s.metrics.requests.observe({ op: ctx.op, result: String(res.statusCode) }, seconds);
  });
  let work: Promise<void> | undefined;
  try {
    if (method === 'OPTIONS') {
      // CORS preflight: browsers send it without credentials, so it is not authenticated.
      if (!headers.has('origin') || !headers.has('access-control-request-method'))
        throw new S3Error('BadRequest', 'Insufficient information. Origin request header needed.');
      work = forward(ctx, s);
    } else ctx.verified = auth({ method, rawPath, query, headers, rawQuery: q < 0 ? '' : url.slice(q + 1) });
    work ??= ctx.op === 'GetObject' || ctx.op === 'HeadObject' ? serveRead(ctx, s) : forward(ctx, s);
  } catch (err) {
    work = Promise.reject(err);
  }
  work.catch((err: unknown) => {
    if (!(err instanceof Error && err.name === 'S3Error')) s.log.error({ method, url, err }, 'request failed');
    sendError(ctx, err);
  });
}
