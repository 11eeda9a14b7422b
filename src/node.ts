/**
 * The composition root of a node: storage workers, the protocol listener, the admin listener.
 *
 *   main.ts ──▶ startNode ──▶ ShardClient (worker threads, one per --shard-workers)
 *                        ├──▶ protocol listener  (gateway/svc, on the chosen HTTP engine)
 *                        └──▶ admin listener     (gateway/admin; absent with --no-admin)
 *
 * Shutdown order matters for durability: stop accepting, answer live reads at once (they
 * would hold the drain for a long-poll timeout, or for ever), let in-flight requests finish
 * (their appends are acknowledged only once durable), then let the workers flush,
 * checkpoint with sync and close, then close the sockets.
 */
import * as path from 'node:path';
import { type Config, dsListenAddress, formatHostPort } from './config';
import { type Logger } from './log';
import { createAdminHandler } from './gateway/admin/admin-handler';
import { type DsContext, Subscriptions, createDsHandler, createSubscriptionHost } from './gateway/ds';
import { type HeaderList, type HttpServerHandle, loadHttpEngine } from './gateway/http';
import { InFlight } from './gateway/in-flight';
import { toHttpError } from './gateway/svc/http-errors';
import { LiveWaiters } from './gateway/svc/live-waiters';
import { createSvcHandler } from './gateway/svc/svc-handler';
import { SvcError } from './errors';
import { SchemaStore, ShardClient } from './shards';

/** A running node: listeners, shard workers, actors. */
export interface RunningNode {
  /** Protocol listener port actually bound. */
  readonly port: number;
  /** Admin listener port actually bound, or null with --no-admin. */
  readonly adminPort: number | null;
  /** Durable Streams listener beside the Svc one (--ds-listen), or null. */
  readonly dsPort: number | null;
  /** Graceful stop: stop accepting, finish in-flight appends, fsync, close. */
  close(): Promise<void>;
}

/** Node id of a single node; clustering assigns real ids. */
const SINGLE_NODE_ID = 1;

export async function startNode(config: Config, log: Logger): Promise<RunningNode> {
  const engine = await loadHttpEngine(config.httpEngine, log);
  const schemas = SchemaStore.open(config.dataDir);
  const shards = await ShardClient.start({
    dataDir: config.dataDir,
    workers: config.shardWorkers,
    shards: config.shards,
    segmentBytes: config.storage.segmentBytes,
    limits: config.limits,
    retentionIntervalMs: config.storage.retentionIntervalMs,
    reaperIntervalMs: config.storage.reaperIntervalMs,
    log,
    schemas: schemas.documents(),
  });
  schemas.attach(shards);
  const inFlight = new InFlight();
  // Live reads (long-poll, SSE) wait here on the shards' tail events, not on the workers.
  const live = new LiveWaiters(shards, { longPollTimeoutMs: config.longPollTimeoutMs });
  let serving = false;

  const tooLarge = (): { status: number; headers: HeaderList; body: string } => {
    const e = toHttpError(new SvcError('request_too_large', `request bodies are limited to ${config.limits.maxRequestBytes} bytes`));
    return { status: e.status, headers: [...e.headers, ['connection', 'close']], body: e.body };
  };
  const subscriptions = config.dsSubscriptions
    ? new Subscriptions({ host: createSubscriptionHost(shards), stateFile: path.join(config.dataDir, 'ds-subscriptions.json'), log })
    : null;
  const ds: DsContext = {
    shards,
    live,
    maxRecordBytes: config.limits.maxRecordBytes,
    maxStreamNameBytes: config.limits.maxStreamNameBytes,
    maxBatchRecords: config.limits.maxBatchRecords,
    readBytes: config.limits.readMaxBytes,
    sseReconnectMs: config.sseReconnectMs,
    subscriptions,
  };
  const dsTooLarge = (): { status: number; headers: HeaderList; body: string } => ({
    status: 413,
    headers: [['content-type', 'text/plain; charset=utf-8'], ['connection', 'close']],
    body: `request bodies are limited to ${config.limits.maxRequestBytes} bytes`,
  });
  const svc = await engine.listen(
    { host: config.listen.host, port: config.listen.port, bodyLimit: config.limits.maxRequestBytes, tooLarge: config.protocol === 'ds' ? dsTooLarge : tooLarge },
    config.protocol === 'ds' ? createDsHandler(ds, inFlight) : createSvcHandler({ shards, limits: config.limits, schemas, live }, inFlight),
  );
  const dsAddress = dsListenAddress(config);
  const dsServer = dsAddress === null ? null : await engine.listen({ host: dsAddress.host, port: dsAddress.port, bodyLimit: config.limits.maxRequestBytes, tooLarge: dsTooLarge }, createDsHandler(ds, inFlight));
  let admin: HttpServerHandle | null = null;
  if (config.admin) {
    admin = await engine.listen(
      { host: config.adminListen.host, port: config.adminListen.port, bodyLimit: 1024 * 1024, tooLarge },
      createAdminHandler({ serving: () => serving, nodeId: SINGLE_NODE_ID, appliedIndex: () => 0 }),
    );
  }
  serving = true;
  log.info(
    {
      engine: engine.name,
      listen: formatHostPort({ host: config.listen.host, port: svc.port }),
      protocol: config.protocol,
      ds: dsAddress === null || dsServer === null ? null : formatHostPort({ host: dsAddress.host, port: dsServer.port }),
      admin: admin === null ? null : formatHostPort({ host: config.adminListen.host, port: admin.port }),
      shards: shards.shardCount,
      shardWorkers: Math.min(config.shardWorkers, shards.shardCount),
    },
    'node started',
  );

  let closing: Promise<void> | null = null;
  return {
    port: svc.port,
    adminPort: admin?.port ?? null,
    dsPort: dsServer?.port ?? null,
    close(): Promise<void> {
      closing ??= (async () => {
        serving = false;
        svc.stopAccepting();
        dsServer?.stopAccepting();
        const drained = inFlight.drain();
        // Live reads would hold the drain for up to a long-poll timeout, or for ever (SSE):
        // long-polls answer 204 now, SSE streams end with a `control` event.
        live.shutdown();
        await drained;
        await subscriptions?.close();
        await shards.close();
        await svc.close();
        await dsServer?.close();
        await admin?.close();
        log.info({}, 'node stopped');
      })();
      return closing;
    },
  };
}
