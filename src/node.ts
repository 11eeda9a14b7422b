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
import { type Config, advertisedAddressOf, configWarnings, defaultGatewayThreads, dsListenAddress, formatHostPort, kafkaAdvertisedAddress, metricsListenAddress, otlpTracesEndpointOf, schemaRegistryListenAddress } from './config';
import { REGISTRY_CONTENT_TYPE, SchemaValidation, SvcSchemaView, openSchemaRegistry, registryInternalReply, svcSubject } from './registry';
import { Tracing } from './tracing';
import { type Logger } from './log';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { X509Certificate, createPrivateKey, randomUUID } from 'node:crypto';
import { DEFAULT_SLOTS, FailoverDriver, NamedOffsets, ShareStates, MaintenanceLease, handOffStreams, Membership, MetaConflictError, type MetaStore, type MoveStorage, type NodeRecord, Placement, SYNC_SECONDS_BOUNDS, PlacementIntents, Rebalancer, StreamOpener, Tokens, Transfers, nodeKey, openMetaStore, resolveNodeId, type EtcdCredentials } from './actors';
import {
  CorsPolicy,
  clusterList,
  ownerCheck,
  ServedWatch,
  SharedSchemas,
  DS_CORS,
  FANOUT_LAG_BOUNDS,
  type DsContext,
  type HeaderList,
  type HttpRequest,
  type HttpServerHandle,
  InFlight,
  LiveWaiters,
  NodeMetrics,
  type RequestHandler,
  SVC_CORS,
  Subscriptions,
  adminInternalReply,
  createAdminHandler,
  createDsHandler,
  createSubscriptionHost,
  createSvcHandler,
  dsInternalReply,
  guard,
  internalReply,
  loadDashboard,
  loadHttpEngine,
  metered,
  parseCorsOrigins,
  refusalWithId,
  requestLog,
  shield,
  toHttpError,
  traced,
  withCors,
} from './gateway';
import { SvcError } from './errors';
import { startObjectMaintenance } from './object-maintenance';
import { GatewayThreads } from './gateway-threads';
import { type GatewayThreadData } from './gateway-thread';
import { type CommitStats, type ReadCacheStats, type ReadPoolStats, type SchemaControlResult, type SchemaDocument, type Schemas, SchemaStore, ShardClient, checkSchemaName, parseRegistration, type ShardClientOptions, SpaceGuard, lockDataDir } from './shards';
import { type ObjectStoreStats, addObjectStoreStats, newObjectStoreStats } from './objects';
import { committedReads, kafkaAuthenticator, kafkaCluster, maxKafkaFrameBytes, startKafkaListener } from './kafka-wire';
import { moveStorage as moveStorageOf } from './move-storage';
import { startMallocTrim } from './util/malloc-trim';
import { Ledger, type LedgerFormat, checkObjectStore, openObjectStore } from './objects';

/** How long a graceful stop waits for its streams to be placed on other nodes before it drains (ms; at most half of --shutdown-timeout-ms). */
const HANDOFF_WAIT_MS = 5_000; // 5 s
/** How often free C-heap memory is given back to the kernel (util/malloc-trim.ts; docs/operations.md, "Memory"). */
const MALLOC_TRIM_MS = 2_000; // 2 s: at 10 s a mixed load's C heaps held 20 MiB more of what they had freed

/** A running node: listeners, shard workers, actors. */

export interface RunningNode {
  /** Protocol listener port actually bound. */
  readonly port: number;
  /** Admin listener port actually bound, or null with --no-admin. */
  readonly adminPort: number | null;
  /** Durable Streams listener beside the Svc one (--ds-listen), or null. */
  readonly dsPort: number | null;
  /** Kafka listener port actually bound. */
  readonly kafkaPort: number;
  /** The unauthenticated metrics listener's port (--metrics-listen), or null. */
  readonly metricsPort: number | null;
  /** The HTTP engine serving (not the one asked for: uWS falls back to node:http where it cannot load). */
  readonly httpEngine: 'uws' | 'node';
  /** The schema registry listener's port (--schema-registry-listen), or null. */
  readonly registryPort: number | null;
  /** Graceful stop: stop accepting, finish in-flight appends, fsync, close. */
  close(): Promise<void>;
}

/** The dashboard's static assets: the repository's `dashboard/` folder, next to dist/. */
const DASHBOARD_DIR = path.join(__dirname, '..', 'dashboard');

/** The bootstrap token from --auth-bootstrap-token or the file --auth-bootstrap-token-file names, or null. */
function bootstrapToken(config: Config): string | null {
  if (config.authBootstrapToken !== '') return config.authBootstrapToken;
  if (config.authBootstrapTokenFile === '') return null;
  try {
    return fs.readFileSync(config.authBootstrapTokenFile, 'utf8').trim();
  } catch (err) {
    throw new Error(`--auth-bootstrap-token-file: cannot read ${config.authBootstrapTokenFile}: ${(err as Error).message}`, { cause: err });
  }
}

/** Credentials read once per config: every etcd link of the node (metadata, ledgers, maintenance) uses the same. */
const credentialsRead = new WeakMap<Config, EtcdCredentials>();

/**
 * `--metadata-ca|cert|key|user|password[-file]` as every etcd link takes them. A file that cannot
 * be read, a PEM that is not a certificate or key, or a key that is not the certificate's stops
 * the start with the setting's name.
 */
function metadataCredentials(config: Config): EtcdCredentials {
  const cached = credentialsRead.get(config);
  if (cached !== undefined) return cached;
  const read = (flag: string, file: string): Buffer => {
    try {
      return fs.readFileSync(file);
    } catch (err) {
      throw new Error(`${flag}: cannot read ${file}: ${(err as Error).message}`, { cause: err });
    }
  };
  const out: EtcdCredentials = {};
  if (config.metadataCa !== '') {
    out.ca = read('--metadata-ca', config.metadataCa);
    try {
      new X509Certificate(out.ca);
    } catch (err) {
      throw new Error(`--metadata-ca: ${config.metadataCa} is not a PEM certificate: ${(err as Error).message}`, { cause: err });
    }
  }
  if (config.metadataCert !== '') {
    out.cert = read('--metadata-cert', config.metadataCert);
    out.key = read('--metadata-key', config.metadataKey);
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(out.cert);
    } catch (err) {
      throw new Error(`--metadata-cert: ${config.metadataCert} is not a PEM certificate: ${(err as Error).message}`, { cause: err });
    }
    let key;
    try {
      key = createPrivateKey(out.key);
    } catch (err) {
      throw new Error(`--metadata-key: ${config.metadataKey} is not a PEM private key: ${(err as Error).message}`, { cause: err });
    }
    if (!cert.checkPrivateKey(key)) throw new Error(`--metadata-key: ${config.metadataKey} is not the key of the certificate in ${config.metadataCert}`);
  }
  if (config.metadataUser !== '') {
    out.user = config.metadataUser;
    out.password = config.metadataPassword !== '' ? config.metadataPassword : read('--metadata-password-file', config.metadataPasswordFile).toString('utf8').trim();
  }
  credentialsRead.set(config, out);
  return out;
}

/** Metadata, tokens and this node's identity: opened before storage, so a bad bootstrap token fails fast. */
async function openControlPlane(config: Config, log: Logger): Promise<{ meta: MetaStore; tokens: Tokens; clusterId: string }> {
  for (const warning of configWarnings(config)) log.warn({ metadata: 'etcd', objects: 'none' }, warning);
  // --metadata: the embedded store in the data directory, or etcd shared by the cluster's nodes.
  const meta = await openMetaStore(config.metadata, path.join(config.dataDir, 'meta'), { log, credentials: metadataCredentials(config) });
  try {
    const tokens = new Tokens(meta);
    const wire = bootstrapToken(config);
    if (wire !== null) await tokens.bootstrap(wire);
    if (config.auth === 'required' && !tokens.any()) {
      throw new Error('--auth required, but no token exists yet: seed the first one with --auth-bootstrap-token or --auth-bootstrap-token-file');
    }
    let clusterId = meta.get<string>('cluster/id')?.value;
    if (clusterId === undefined) {
      try {
        clusterId = (await meta.put('cluster/id', randomUUID(), { absent: true })).value;
      } catch (err) {
        // Another node sharing the metadata named the cluster first: take its id.
        if (!(err instanceof MetaConflictError)) throw err;
        clusterId = meta.get<string>('cluster/id')!.value;
      }
    }
    return { meta, tokens, clusterId };
  } catch (err) {
    await meta.close();
    throw err;
  }
}

/**
 * The shard workers. A start that fails for want of space says so, with what to do
 * (docs/operations.md, "Disk full"); any other cause is passed on as it is.
 */
async function startShards(config: Config, log: Logger, schemas: Schemas, space: SpaceGuard, objects: ShardClientOptions['objects']): Promise<ShardClient> {
  try {
    return await ShardClient.start({
      dataDir: config.dataDir,
      workers: config.shardWorkers,
      shards: config.shards,
      segmentBytes: config.storage.segmentBytes,
      durability: config.durability,
      limits: config.limits,
      retentionIntervalMs: config.storage.retentionIntervalMs,
      reaperIntervalMs: config.storage.reaperIntervalMs,
      indexCacheChunks: config.storage.indexCacheChunks,
      readCacheBytes: config.storage.readCacheBytes,
      readPoolBytes: config.storage.readPoolBytes,
      log,
      schemas: schemas.documents(),
      currentSchemas: () => schemas.documents(),
      space,
      objects,
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code !== 'ENOSPC' && !/no space left/i.test(e.message)) throw err;
    throw new Error(
      `the disk holding the data directory ${config.dataDir} is full (${freeBytes(config.dataDir)} bytes free), so the shards cannot be opened: ` +
        'free space on that file system (or grow it) and start again; stored data is kept (docs/operations.md, "Disk full")',
      { cause: err },
    );
  }
}

/**
 * Objects mode (docs/cluster.md, "Objects mode: where data lives"): what the shard workers need,
 * or undefined. Group object keys carry the node's epoch; the workers start before the node
 * registers (registration needs the bound listeners), so they get the epoch registration will
 * write: one above the node record's (one process per node id; a second one takes over).
 */
function objectsMode(config: Config, meta: MetaStore, nodeId: number, format: LedgerFormat): ShardClientOptions['objects'] {
  // Without --objects (etcd metadata alone) openControlPlane logged the warning (config.ts configWarnings).
  if (config.metadata === 'local' || config.objects === '') return undefined;
  const nodeEpoch = (meta.get<NodeRecord>(nodeKey(nodeId))?.value.nodeEpoch ?? 0) + 1;
  return { url: config.objects, metadataUrl: config.metadata, metadataCredentials: metadataCredentials(config), nodeId, nodeEpoch, flushMs: config.objectsFlushMs, putsInFlight: config.objectsPutsInFlight, cacheBytes: config.objectsCacheBytes, records: format === 'records' };
}

/**
 * The cluster's object ledger format (src/objects/ledger-format.ts): the first node writes it, the
 * others take it; a node started with the other one named does not start.
 */
async function ledgerFormatAtStart(config: Config, log: Logger): Promise<LedgerFormat> {
  const ledger = Ledger.open(config.metadata, { credentials: metadataCredentials(config) });
  try {
    const wanted = config.objectsLedger;
    const { format, written } = await ledger.clusterFormat(wanted);
    if (wanted !== 'cluster' && wanted !== format) {
      throw new Error(`--objects-ledger ${wanted}: the cluster's object ledger is in the ${format} format, and every node of a cluster runs the same one; start with --objects-ledger cluster (or ${format})`);
    }
    log.info({ format, written }, written ? 'object ledger format chosen for the cluster' : 'object ledger format: the cluster\'s');
    return format;
  } finally {
    ledger.close();
  }
}

/** Bytes available to this process on the file system holding `dir`, or -1 when unknown. */
function freeBytes(dir: string): number {
  try {
    const s = fs.statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return -1;
  }
}

/** Streams in the data directory without a placement row get one naming this node (a node that joins a cluster with data). */
async function adoptLocalStreams(shards: ShardClient, placement: Placement, log: Logger): Promise<void> {
  let startAfter = '';
  let adopted = 0;
  for (;;) {
    const page = await shards.list({ prefix: '/', startAfter, limit: 1000 });
    for (const s of page.streams) {
      if (placement.row(s.name) === null) {
        if (await placement.adopt(s.name)) adopted++;
        else log.warn({ stream: s.name, owner: placement.row(s.name)?.row.nodeId }, 'a stream in this data directory is placed on another node; requests for it go there');
      }
    }
    if (!page.hasMore || page.streams.length === 0) break;
    startAfter = page.streams[page.streams.length - 1]!.name;
  }
  if (adopted > 0) log.info({ adopted }, 'placed the data directory\'s streams on this node');
}

/** The object store's check at start: refused → the start fails; no answer → a warning. */
async function checkStoreAtStart(url: string, nodeId: number, log: Logger): Promise<void> {
  const store = openObjectStore(url);
  try {
    const r = await checkObjectStore(store, `${nodeId}.${Date.now()}`);
    if (r.ok) return;
    if (r.refused) throw new Error(`--objects: the object store refused a test object (${r.code}): ${r.message}`);
    log.warn({ objects: store.describe, code: r.code, err: r.message }, 'the object store did not answer a test object at start; starting anyway (appends wait for it)');
  } finally {
    await store.close().catch(() => undefined);
  }
}

/**
 * Start a node. The data directory's lock comes first, before anything reads or writes in it
 * (the space reserve, the metadata log, the node id, the sync journals): a second start on a
 * running node's directory is refused having changed nothing (shards/data-dir-lock.ts).
 */
export async function startNode(config: Config, log: Logger): Promise<RunningNode> {
  const lock = lockDataDir(config.dataDir, 'serve');
  let node: RunningNode;
  try {
    node = await startLocked(config, log);
  } catch (err) {
    lock.release();
    throw err;
  }
  return {
    port: node.port,
    adminPort: node.adminPort,
    dsPort: node.dsPort,
    kafkaPort: node.kafkaPort,
    metricsPort: node.metricsPort,
    httpEngine: node.httpEngine,
    registryPort: node.registryPort,
    close: () => node.close().finally(() => lock.release()),
  };
}

async function startLocked(config: Config, log: Logger): Promise<RunningNode> {
  const engine = await loadHttpEngine(config.httpEngine, log);
  if (engine.name === 'node' && config.sseThreads > 0) log.warn({ sseThreads: config.sseThreads }, '--sse-threads applies to the uws engine only; serving without I/O threads');
  // Gateway threads (docs/config.md, --gateway-threads): they serve the protocol listener (Svc or Durable Streams) on the uws engine.
  const gatewayThreads = config.gatewayThreads > 1 && engine.name === 'uws' ? config.gatewayThreads : 1;
  // Only a count asked for is worth a warning: the default (from the cores) quietly serves on the main thread here.
  if (gatewayThreads !== config.gatewayThreads && config.gatewayThreads !== defaultGatewayThreads(os.availableParallelism())) {
    log.warn({ gatewayThreads: config.gatewayThreads }, '--gateway-threads applies to the protocol listener on the uws engine only; serving on the main thread');
  }
  // First, before anything writes to the disk: on a full one the reserve is given back (docs/operations.md, "Disk full").
  fs.mkdirSync(config.dataDir, { recursive: true });
  const space = new SpaceGuard(config.dataDir, config.storage.reserveBytes, log);
  space.open();
  const { meta, tokens, clusterId } = await openControlPlane(config, log).catch((err: unknown) => {
    space.close();
    throw err;
  });
  // This node's id (docs/cluster.md, "Nodes"): --node-id, the one kept in the data directory, or allocated.
  const clustered = config.metadata !== 'local';
  const nodeId = await resolveNodeId(meta, { flag: config.nodeId, dataDir: config.dataDir, clustered, defaultSlots: DEFAULT_SLOTS }).catch(async (err: unknown) => {
    await meta.close();
    space.close();
    throw err;
  });
  // Objects mode: one test object before anything starts, so a store that refuses (credentials,
  // bucket, directory) stops the start with its own words (objects/store-check.ts).
  let ledgerFormat: LedgerFormat = 'entries';
  if (clustered && config.objects !== '') {
    ledgerFormat = await checkStoreAtStart(config.objects, nodeId, log)
      .then(() => ledgerFormatAtStart(config, log))
      .catch(async (err: unknown) => {
        await meta.close();
        space.close();
        throw err;
      });
  }
  const members = new Membership(meta, nodeId, log, config.nodeLeaseTtl);
  // Placement rows and the owner check exist only in a cluster: a single node owns every stream,
  // and its requests pass nothing on the way (docs/cluster.md).
  const placement = clustered ? new Placement(meta, members) : null;
  const intents = placement === null ? null : new PlacementIntents(meta, placement);
  // The maintenance lease: one node of the cluster holds it (a single node always does) and runs
  // failover and the reaper (docs/cluster.md, "The maintenance lease").
  const lease = new MaintenanceLease(meta, members, log);
  // Every listener's handler passes the auth guard first when auth is required; around both, the
  // shield turns any failure into a 500 in the listener's shape (gateway/shield.ts).
  const internalReplies = { svc: internalReply, ds: dsInternalReply, admin: adminInternalReply } as const;
  // Metrics (docs/metrics.md) count outside the shield, so its 500s and the guard's 401s are counted too.
  const metrics = config.metrics ? new NodeMetrics() : null;
  // OpenTelemetry traces (docs/metrics.md, "Traces"): off unless an OTLP endpoint is set; off, no layer and no span is made.
  const tracesEndpoint = otlpTracesEndpointOf(config, process.env);
  const tracingOptions = tracesEndpoint === null ? null : { endpoint: tracesEndpoint, sampleRatio: config.otlpTracesSampleRatio, serviceName: config.otlpServiceName, nodeId };
  const tracing = tracingOptions === null ? null : new Tracing(tracingOptions, log);
  // CORS (--cors-origins) on the stream listeners, outside the shield and the guard: preflights are
  // answered before the guard, and its denials and the shield's 500s carry the headers too.
  const origins = parseCorsOrigins(config.corsOrigins);
  const cors = { svc: new CorsPolicy(origins, SVC_CORS), ds: new CorsPolicy(origins, DS_CORS), admin: null } as const;
  // Objects mode: until this node's local streams are reopened at a new epoch (below), requests
  // for them wait, so a stale local copy is never served or appended to (docs/cluster.md, "Restart").
  let reopened: () => void = () => undefined;
  let reopening: Promise<void> | null = config.metadata !== 'local' && config.objects !== '' ? new Promise<void>((resolve) => (reopened = resolve)) : null;
  const protect = (listener: 'svc' | 'ds' | 'admin', h: RequestHandler): RequestHandler => {
    // In a cluster: requests for streams owned elsewhere are redirected (inside the guard, so only
    // an authorized request learns where a stream lives), and the list is cluster-wide (outside it:
    // every node checks the caller's token on its own page).
    const owned = placement === null || listener === 'admin' ? h : ownerCheck(listener, { placement, maxStreamNameBytes: config.limits.maxStreamNameBytes, log, starting: () => reopening, openFailure: (name) => opener?.failure(name) ?? null }, h);
    const guarded = config.auth === 'required' ? guard(listener, tokens, owned) : owned;
    const listed = placement !== null && listener === 'svc' ? clusterList(members, config.limits.listMaxLimit, guarded) : guarded;
    const shielded = shield(listener, listed, log, internalReplies[listener]);
    const policy = cors[listener];
    const crossOrigin = policy === null ? shielded : withCors(policy, shielded);
    // Every error reply carries an Svc-Request-Id that its log line carries too (gateway/request-log.ts).
    const logged = requestLog(listener, log, crossOrigin);
    // The request span sits outside the request log, so it sees the request id of an error reply.
    const spanned = tracing === null || listener === 'admin' ? logged : traced(listener, tracing, logged);
    return metrics === null ? spanned : metered(listener, metrics.requests, spanned);
  };
  // Stream schemas: this node's files, or in a cluster the shared metadata (docs/cluster.md, "Schemas and topic configs").
  const localSchemas = SchemaStore.open(config.dataDir);
  const shared = clustered ? new SharedSchemas(meta, nodeId, () => members.liveNodes().map((n) => n.nodeId), log) : null;
  if (shared !== null) await shared.adopt(localSchemas.documents());
  // One registry (docs/schema-registry.md): the Confluent-compatible one, over the metadata store;
  // the stream schemas (`/_schemas/{name}`) are a view of its subjects `svc-<name>`.
  const { registry: schemaRegistry, handler: registryHandler } = openSchemaRegistry(meta);
  const schemaView = new SvcSchemaView<SchemaDocument, ShardClient>(schemaRegistry, shared ?? localSchemas, {
    parse: parseRegistration,
    checkName: checkSchemaName,
    warn: (fields, message) => log.warn(fields, message),
  });
  const schemas: Schemas = schemaView;
  const objects = objectsMode(config, meta, nodeId, ledgerFormat);
  const shards = await startShards(config, log, schemas, space, objects);
  const heapTrim = startMallocTrim(MALLOC_TRIM_MS);
  schemas.attach(shards);
  // Registrations from before the view go into the registry; subjects the store lacks come into it.
  await schemaView.open();
  // The hop to a shard worker of an append or a read inside a traced request: a child span.
  if (tracing !== null) shards.setHopTracer(tracing);
  const inFlight = new InFlight();
  // Objects mode (--objects with etcd metadata): streams move between nodes (transfers, failover,
  // a restart's reopen) by importing them from the object store (docs/cluster.md).
  const moveLedger = objects === undefined || placement === null ? null : Ledger.open(config.metadata, { credentials: metadataCredentials(config) });
  const moveStore = moveLedger === null ? null : openObjectStore(config.objects);
  const moveStorage: MoveStorage | null =
    moveLedger === null || moveStore === null
      ? null
      : moveStorageOf({
          nodeId,
          ledger: moveLedger,
          store: moveStore,
          shards,
          reads: config.objectsReads,
          records: ledgerFormat === 'records',
          create: async (name, spec) => {
            await shards.create({ name, contentType: spec.contentType, ttlSeconds: spec.ttlSeconds, expiresAtMs: null, closed: false, records: [], kafkaTopic: spec.kafkaTopic });
          },
          // A gateway thread's request for the stream that meets the dropped copy (404) must find
          // where it went (gateway/cluster/served-streams.ts). The row change that drops it reaches
          // the threads from a listener of the same change: after it, once they acknowledged.
          beforeDrop: async () => {
            await new Promise<void>((resolve) => setImmediate(resolve));
            await Promise.all(threadSets.map((g) => g.servedSynced()));
          },
        });
  const transfers = placement === null ? null : new Transfers(placement, members, moveStorage !== null);
  const opener = placement === null || moveStorage === null ? null : new StreamOpener(meta, placement, moveStorage, log);
  const failover = placement === null || moveStorage === null ? null : new FailoverDriver(meta, placement, members, lease, log);
  // Objects mode: streams move to nodes below their share (a node that joined or came back), one transfer at a time.
  const rebalancer = placement === null || transfers === null || moveStorage === null ? null : new Rebalancer(placement, members, transfers, lease, log, { auto: config.rebalance === 'auto' });
  // Objects mode: compaction of this node's streams, the reaper while this node holds the
  // maintenance lease, and the ledger's object counts (docs/cluster.md, "Compaction and the reaper").
  const objectMaintenance =
    placement === null || config.objects === ''
      ? null
      : startObjectMaintenance({
          metadataUrl: config.metadata, metadataCredentials: metadataCredentials(config), objectsUrl: config.objects, nodeId, lease, placement, log,
          reaper: { intervalMs: Math.min(config.storage.reaperIntervalMs, 2_000) }, compaction: { bytesPerSecond: config.objectsCompactBytesPerSecond },
          // The records format: this node start's shard workers' part records are indexed on the maintenance thread.
          ...(ledgerFormat === 'records' && objects !== undefined ? { indexNode: `g/${nodeId}/${objects.nodeEpoch}/`, liveStarts: () => members.liveNodes().map((n) => `g/${n.nodeId}/${n.nodeEpoch}/`) } : {}),
        });
  // Live reads (long-poll, SSE) wait here on the shards' tail events, not on the workers.
  const live = new LiveWaiters(shards, { longPollTimeoutMs: config.longPollTimeoutMs });
  // HTTP and Durable Streams readers see only committed data of Kafka transactional producers
  // (docs/kafka.md, "Transactions"): reads end at the last stable offset and skip aborted
  // transactions; live readers wait at it and are woken when a transaction ends.
  const txnParts = committedReads(meta);
  shards.setReadVisibility((name, from) => txnParts.visibility(name, from));
  live.setStableTail((name) => txnParts.stableSeq(name));
  txnParts.onEnded((name) => live.visibilityChanged(name));
  let serving = false;
  // Share groups (KIP-932): one state for both listeners, so HTTP leases and Kafka share consumers share a group.
  const shareStates = new ShareStates(meta);

  const tooLarge = (): { status: number; headers: HeaderList; body: string } => {
    const e = toHttpError(new SvcError('request_too_large', `request bodies are limited to ${config.limits.maxRequestBytes} bytes`));
    return { status: e.status, headers: [...e.headers, ['connection', 'close']], body: e.body };
  };
  const subscriptions = config.dsSubscriptions
    ? new Subscriptions({ host: createSubscriptionHost(shards), stateFile: path.join(config.dataDir, 'ds-subscriptions.json'), log })
    : null;
  // Schema validation at the broker (docs/schema-registry.md): rules and registry records in the
  // metadata store, checked on this thread by the edges; the registry's listener need not be on.
  const validation = new SchemaValidation(meta, schemaRegistry);
  const ds: DsContext = {
    shards,
    live,
    maxRecordBytes: config.limits.maxRecordBytes,
    maxStreamNameBytes: config.limits.maxStreamNameBytes,
    readBytes: config.limits.readMaxBytes,
    sseReconnectMs: config.sseReconnectMs,
    subscriptions,
    validation,
  };
  const dsTooLarge = (): { status: number; headers: HeaderList; body: string } => ({
    status: 413,
    headers: [['content-type', 'text/plain; charset=utf-8'], ['connection', 'close']],
    body: `request bodies are limited to ${config.limits.maxRequestBytes} bytes`,
  });
  type TooLarge = typeof tooLarge;
  // The engine refuses an oversized body before any handler runs: its answer gets the CORS headers here.
  const corsTooLarge = (policy: CorsPolicy, make: TooLarge) => (req: Omit<HttpRequest, 'body'>): ReturnType<TooLarge> => {
    const r = make();
    // With a request id and its log line, as every other error reply (gateway/request-log.ts).
    return refusalWithId(policy === cors.ds ? 'ds' : 'svc', log, req, { ...r, headers: r.headers.concat(policy.responseHeaders(req.headers['origin'], req.method)) });
  };
  // With gateway threads they take the listener's connections and serve its stream requests
  // themselves, each over its own channels to the shard workers (gateway-thread.ts); the rest (the
  // list, /_schemas, /_streams, /_offsets, the DS __ds APIs, a validated stream's writes) reach
  // this thread's handler as from I/O threads. `--ds-listen`'s listener beside it gets threads of its own.
  const dsAddress = dsListenAddress(config);
  const threadsFor = (protocol: 'svc' | 'ds', kafka: GatewayThreadData['kafka'], namePrefix: string): GatewayThreads =>
    new GatewayThreads(shards, config.auth === 'required' ? tokens : null, {
      protocol,
      sseReconnectMs: config.sseReconnectMs,
      dsSubscriptions: protocol === 'ds' && subscriptions !== null,
      workers: Math.min(config.shardWorkers, shards.shardCount),
      shardCount: shards.shardCount,
      limits: config.limits,
      longPollTimeoutMs: config.longPollTimeoutMs,
      auth: config.auth === 'required',
      corsOrigins: config.corsOrigins,
      logLevel: config.logLevel,
      logFormat: config.logFormat,
      cluster: placement !== null,
      metrics: metrics !== null,
      traces: tracingOptions,
      kafka,
    }, log, protocol === 'ds' ? subscriptions : null, namePrefix);
  // A single node's Kafka connections are served by the protocol listener's threads too
  // (kafka-wire/thread-front.ts); in a cluster they stay here, where the placement the Kafka APIs read is.
  const gateways = gatewayThreads <= 1 ? null : threadsFor(config.protocol, placement === null ? { nodeId, maxFrameBytes: maxKafkaFrameBytes(config.limits.maxRequestBytes) } : null, 'svc-gw-');
  const dsGateways = gatewayThreads <= 1 || dsAddress === null ? null : threadsFor('ds', null, 'svc-gw-ds-');
  const threadSets = [gateways, dsGateways].flatMap((g) => (g === null ? [] : [g]));
  // In a cluster the threads serve the streams placed on this node, once its own streams are open (below).
  const servedWatches = placement === null ? [] : threadSets.map((g) => new ServedWatch(meta, placement, g === dsGateways ? 'ds' : config.protocol, (c) => void g.served(c)));
  for (const g of threadSets) {
    // Schema validation: the threads check appends themselves with the rules and schemas this thread sends them.
    validation.watch(
      (rules) => g.validated(rules, (id, withDecoder) => validation.schemaFor(id, withDecoder)),
      () => g.registryChanged(),
    );
    // Their readers serve committed data only, as this thread's: each keeps a copy of the Kafka transactions' state.
    g.txnStates(txnParts);
  }
  // A registry write (a version added or deleted) is answered once every thread drops what it knew of the subjects.
  if (threadSets.length > 0) schemaRegistry.onSubjectChange(async () => void (await Promise.all(threadSets.map((g) => g.registrySynced()))));
  const svc = await engine.listen(
    {
      name: 'protocol listener (--listen)', host: config.listen.host, port: config.listen.port, bodyLimit: config.limits.maxRequestBytes,
      threads: gateways === null ? config.sseThreads : gatewayThreads, ...(gateways === null ? {} : { gateway: gateways.spec() }),
      tooLarge: config.protocol === 'ds' ? corsTooLarge(cors.ds, dsTooLarge) : corsTooLarge(cors.svc, tooLarge),
    },
    config.protocol === 'ds' ? protect('ds', createDsHandler(ds, inFlight)) : protect('svc', createSvcHandler({ shards, limits: config.limits, schemas, live, offsets: new NamedOffsets(meta), share: shareStates, validation }, inFlight)),
  );
  const dsServer =
    dsAddress === null
      ? null
      : await engine.listen(
          {
            name: 'Durable Streams listener (--ds-listen)', host: dsAddress.host, port: dsAddress.port, bodyLimit: config.limits.maxRequestBytes,
            threads: dsGateways === null ? config.sseThreads : gatewayThreads, ...(dsGateways === null ? {} : { gateway: dsGateways.spec() }),
            tooLarge: corsTooLarge(cors.ds, dsTooLarge),
          },
          protect('ds', createDsHandler(ds, inFlight)),
        );
  const kafka = await startKafkaListener({
    validation, shareStates,
    host: config.kafkaListen.host, port: config.kafkaListen.port, advertised: kafkaAdvertisedAddress(config),
    maxRequestBytes: config.limits.maxRequestBytes, nodeId, shards, live, meta, log, txnParts, tracing,
    consumerGroupTimeouts: { sessionTimeoutMs: config.kafkaGroupConsumerSessionTimeoutMs, heartbeatIntervalMs: config.kafkaGroupConsumerHeartbeatIntervalMs },
    cluster: placement === null || intents === null ? null : kafkaCluster(placement, intents, members, () => reopening !== null, config.objects !== ''),
    // SASL/PLAIN: the password is an access token, authenticated like a bearer token.
    authenticate: config.auth === 'required' ? kafkaAuthenticator(tokens) : null,
    threads: gateways !== null && placement === null ? gateways : null,
  });
  // appliedIndex (spec: grows with all activity, background work included) is the metadata
  // commands plus every shard's applied catalog changes (docs/storage.md). /ready asks the
  // shards, and shows the last figure it had when they do not answer within 500 ms.
  let shardChanges = 0;
  let commits: CommitStats | null = null;
  let readCache: ReadCacheStats | null = null;
  let readPool: ReadPoolStats | null = null;
  /** Objects mode: the shards' object store figures as of the last stats call (svc_object_store_*). */
  let objectStats: ObjectStoreStats | null = null;
  const appliedIndex = async (): Promise<number> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), 500)));
    const s = await Promise.race([shards.stats().catch(() => null), late]);
    clearTimeout(timer);
    if (s !== null) {
      shardChanges = Math.max(shardChanges, s.appliedChanges);
      commits = s.commits ?? null;
      readCache = s.readCache ?? null;
      readPool = s.readPool ?? null;
      objectStats = s.objects ?? null;
    }
    return meta.appliedIndex + shardChanges;
  };
  let admin: HttpServerHandle | null = null;
  if (config.admin) {
    // The registry on the admin listener (`/admin/schemas…`): subjects, versions, and the streams bound to stream schemas.
    const registryAdmin = {
      registry: schemaRegistry,
      subjectOf: svcSubject,
      bindings: async () => ((await shards.control({ type: 'schemas', op: 'bindings' })) as SchemaControlResult[]).flatMap((r) => r.bindings ?? []),
    };
    const api = { shards, meta, tokens, node: { clusterId }, members, placement, lease, transfers, rebalancer, groups: { groups: (only?: string) => kafka.groups(only) }, schemas, registry: registryAdmin, objects: objectMaintenance?.census ?? null };
    admin = await engine.listen(
      { name: 'admin listener (--admin-listen)', host: config.adminListen.host, port: config.adminListen.port, bodyLimit: 1024 * 1024, tooLarge },
      protect('admin', createAdminHandler({ serving: () => serving, registered: () => members.registered, nodeId, appliedIndex, unavailable: () => shards.unavailable(), metadataReachable: () => meta.reachable?.() ?? true, diskFull: () => shards.space().low }, api, loadDashboard(DASHBOARD_DIR), inFlight, metrics)),
    );
  }
  // The Confluent-compatible schema registry (docs/schema-registry.md): its records live in the
  // metadata store, so every node sharing it serves the same ids and subjects.
  const registryAddress = schemaRegistryListenAddress(config);
  let registryServer: HttpServerHandle | null = null;
  if (registryAddress !== null) {
    const handler = registryHandler;
    const registryTooLarge = (): { status: number; headers: HeaderList; body: string } => ({
      status: 413,
      headers: [['content-type', REGISTRY_CONTENT_TYPE], ['connection', 'close']],
      body: JSON.stringify({ error_code: 413, message: `request bodies are limited to ${config.limits.maxRequestBytes} bytes` }),
    });
    registryServer = await engine.listen(
      { name: 'schema registry listener (--schema-registry-listen)', host: registryAddress.host, port: registryAddress.port, bodyLimit: config.limits.maxRequestBytes, tooLarge: registryTooLarge },
      shield('registry', config.auth === 'required' ? guard('registry', tokens, handler) : handler, log, registryInternalReply),
    );
  }
  // This node's record (a new epoch at every start, its advertised addresses, its slots kept) and,
  // in a cluster, its live record on a lease; then the streams already in its data directory get
  // placement rows (a node that joins a cluster with data keeps serving it).
  const kafkaAdvertised = kafkaAdvertisedAddress(config);
  const dsAdvertised = advertisedAddressOf(config.dsAdvertise);
  await members.register({
    advertisedAddress: config.advertise !== '' ? config.advertise : formatHostPort({ host: config.listen.host, port: svc.port }),
    protocol: config.protocol,
    dsAddress: dsAddress === null || dsServer === null ? null : dsAdvertised !== null ? formatHostPort(dsAdvertised) : formatHostPort({ host: dsAddress.host, port: dsServer.port }),
    kafkaAddress: formatHostPort(kafkaAdvertised ?? { host: config.kafkaListen.host, port: kafka.port }),
    adminAddress: admin === null ? null : formatHostPort({ host: config.adminListen.host, port: admin.port }),
  });
  lease.start();
  if (placement !== null) {
    // Objects mode: this node's local streams reopen at a new epoch, copies of streams placed
    // elsewhere are dropped, and moves to this node are followed; otherwise the data directory's
    // streams get rows naming this node.
    if (opener !== null) await opener.start();
    else await adoptLocalStreams(shards, placement, log);
    reopening = null;
    reopened();
    for (const w of servedWatches) w.start();
    failover?.start();
    rebalancer?.start();
    // Streams other nodes place here without a request to redirect (a Kafka topic's partitions) are created here.
    intents?.start(
      async (name, spec) => {
        await shards.create({ name, contentType: spec.contentType, ttlSeconds: spec.ttlSeconds, expiresAtMs: null, closed: false, records: [], kafkaTopic: spec.kafkaTopic });
      },
      async (name) => {
        await shards.delete(name).catch((err: unknown) => {
          if ((err as { code?: unknown }).code !== 'not_found') throw err;
        });
      },
    );
    // Objects mode counts objects in the ledger (objectMaintenance); otherwise each node publishes its own.
    if (objectMaintenance === null) members.publishStorage(async () => {
      const s = await shards.stats();
      return { objectCount: s.objectCount, destroyedObjectBacklog: s.destroyedObjectBacklog };
    });
  }
  metrics?.attach({
    ...(threadSets.length === 0 ? {} : { gatewayThreads: async () => (await Promise.all(threadSets.map((g) => g.figures()))).flat() }),
    appended: () => shards.appended,
    liveReaders: () => live.readers(),
    fanoutLag: () => ({ bounds: FANOUT_LAG_BOUNDS, lag: live.fanoutLag }),
    kafka: () => ({ connections: kafka.connections(), requests: kafka.requestsByApi() }),
    shards: async () => ({ appliedIndex: await appliedIndex(), commits, readCache, readPool }),
    // The shards' object store figures come with their stats (one call per scrape, as for `shards`).
    objectStore: async () => {
      await appliedIndex();
      if (objectMaintenance === null) return objectStats;
      // Beside the shards' requests: the maintenance thread's, for compaction and the reaper.
      const total = newObjectStoreStats();
      if (objectStats !== null) addObjectStoreStats(total, objectStats);
      addObjectStoreStats(total, objectMaintenance.stats());
      return total;
    },
    shardHealth: () => {
      const down = shards.unavailable();
      return { workersDown: down.length, diskFull: shards.space().low, shards: shards.shardCount, shardsDown: down.reduce((n, w) => n + w.shards.length, 0) };
    },
    metadataSync: () => (meta.syncLatency === undefined ? null : { bounds: SYNC_SECONDS_BOUNDS, latency: meta.syncLatency }),
    ...(objectMaintenance === null ? {} : { objectCounts: () => objectMaintenance.census.counts(), compaction: () => objectMaintenance.compactionStats() }),
    leaseHolder: () => lease.leaseHolder(),
    moves: () => (transfers === null ? null : { pending: transfers.pending().length, opened: opener?.opened ?? 0 }),
    groupLag: async () => (await kafka.groups()).flatMap((g) => g.offsets.flatMap((o) => (o.lag === null ? [] : [{ group: g.groupId, topic: o.topic, partition: o.partition, lag: o.lag }]))),
  });
  // --metrics-listen: GET /metrics alone, without authentication, for a scraper that holds no token.
  const metricsAddress = metricsListenAddress(config);
  const metricsServer =
    metricsAddress === null || metrics === null
      ? null
      : await engine.listen(
          { name: 'metrics listener (--metrics-listen)', host: metricsAddress.host, port: metricsAddress.port, bodyLimit: 1024, tooLarge },
          shield('admin', (req, res) => {
            if ((req.method === 'GET' || req.method === 'HEAD') && req.path === '/metrics') {
              return metrics.scrape().then((m) => res.aborted || res.send(200, [['content-type', m.contentType], ['cache-control', 'no-store']], req.method === 'HEAD' ? undefined : m.body));
            }
            res.send(404, [['content-type', 'application/json']], '{"error":"not_found"}');
            return undefined;
          }, log, adminInternalReply),
        );
  serving = true;
  log.info(
    {
      engine: engine.name,
      listen: formatHostPort({ host: config.listen.host, port: svc.port }),
      protocol: config.protocol,
      ds: dsAddress === null || dsServer === null ? null : formatHostPort({ host: dsAddress.host, port: dsServer.port }),
      admin: admin === null ? null : formatHostPort({ host: config.adminListen.host, port: admin.port }),
      kafka: formatHostPort({ host: config.kafkaListen.host, port: kafka.port }),
      metrics: metricsAddress === null || metricsServer === null ? null : formatHostPort({ host: metricsAddress.host, port: metricsServer.port }),
      schemaRegistry: registryAddress === null || registryServer === null ? null : formatHostPort({ host: registryAddress.host, port: registryServer.port }),
      shards: shards.shardCount,
      shardWorkers: Math.min(config.shardWorkers, shards.shardCount),
      gatewayThreads,
      nodeId,
      nodeEpoch: members.nodeEpoch,
      metadata: clustered ? 'etcd' : 'local',
    },
    'node started',
  );

  let closing: Promise<void> | null = null;
  return {
    port: svc.port,
    adminPort: admin?.port ?? null,
    dsPort: dsServer?.port ?? null,
    kafkaPort: kafka.port,
    metricsPort: metricsServer?.port ?? null,
    httpEngine: engine.name,
    registryPort: registryServer?.port ?? null,
    close(): Promise<void> {
      closing ??= (async () => {
        // Objects mode: the streams move to the other live nodes while this one still answers
        // (307), instead of answering shutting_down until its lease is gone and they fail over.
        if (placement !== null && moveStorage !== null) {
          await handOffStreams(placement, members, log, Math.min(HANDOFF_WAIT_MS, config.shutdownTimeoutMs / 2)).catch((err: unknown) => log.warn({ err: (err as Error).message }, 'handing streams off before stopping failed; they fail over once this node is gone'));
        }
        serving = false;
        svc.stopAccepting();
        dsServer?.stopAccepting();
        registryServer?.stopAccepting();
        kafka.stopAccepting();
        const drained = inFlight.drain();
        // Live reads would hold the drain for up to a long-poll timeout, or for ever (SSE):
        // long-polls answer 204 now, SSE streams end with a `control` event.
        live.shutdown();
        await drained;
        // The gateway threads' requests too, and Kafka requests in progress (a Fetch wait ended with
        // live.shutdown), before the workers close: together, as a thread's Kafka request may wait
        // on this thread's group coordinator, which kafka.close() answers.
        await Promise.all([...threadSets.map((g) => g.drain()), kafka.close()]);
        await subscriptions?.close();
        failover?.stop();
        rebalancer?.stop();
        opener?.stop();
        lease.stop();
        await objectMaintenance?.close();
        shared?.close();
        await shards.close();
        heapTrim.stop();
        moveLedger?.close();
        await moveStore?.close();
        members.stop();
        await meta.close();
        await svc.close();
        await dsServer?.close();
        await admin?.close();
        await metricsServer?.close();
        await registryServer?.close();
        // The spans of the last requests are sent (bounded by the export timeout).
        await tracing?.close();
        log.info({}, 'node stopped');
      })();
      return closing;
    },
  };
}
