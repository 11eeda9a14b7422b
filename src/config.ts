/**
 * The node's configuration: one schema (TypeBox), compiled once (ajv), the `Config` type
 * derived from it. docs/config.md describes every field; keep the two in step.
 *
 * Sources, highest precedence first:
 *   command-line flags  >  SVC_* environment  >  TOML config file  >  defaults in the schema
 *
 * Names are derived mechanically from the field path:
 *   field               flag                 environment            TOML
 *   dataDir             --data-dir           SVC_DATA_DIR           data_dir
 *   limits.maxRecordBytes  --max-record-bytes  SVC_MAX_RECORD_BYTES  [limits] max_record_bytes
 * Grouped fields (`limits`, `storage`) are flat in flags and environment, tables in TOML.
 * Every provided value is validated, even one that a higher-precedence source overrides,
 * and all errors are reported together, each naming where the value came from.
 *
 * Reading and layering the sources is the shared loader's (src/program/config); this file
 * declares the schema, how its names are derived, the words of its messages and the checks
 * that span several fields. A new setting is one property in `ConfigSchema` (with its default
 * and description), a row in docs/config.md, and, if it spans fields, a check in `loadConfig`.
 */
import * as os from 'node:os';
import { Type, type Static } from '@sinclair/typebox';
import {
  camelWords, defineConfig, describeTomlProblem, enumSchema, formatHostPort, hostPortSchema, HOST_PORT_FORM, isLoopback,
  parseHostPort, standardFromText, type ConfigField as ProgramField, type Entry, type SourceProblem,
} from './program';
import { objectsUrlProblem } from './objects/objects-url';

export { formatHostPort, isLoopback };

const MiB = 1024 * 1024;

/** pino's level names, most to least severe. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const OneOf = enumSchema;
const HostPort = hostPortSchema;

/** One web origin as browsers send it (`https://app.example.com:8443`), for `--cors-origins`. */
const ORIGIN = '[A-Za-z][A-Za-z0-9+.-]*://(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9._~%-]+)(:\\d{1,5})?/?';

export const ConfigSchema = Type.Object(
  {
    /** Protocol listener (spec default port 4437). Port 0 picks a free port. */
    listen: HostPort('127.0.0.1', 4437, 'protocol listener address, host:port'),
    /** Admin listener: /health, /ready, /admin API, dashboard (spec default port 9090). */
    adminListen: HostPort('127.0.0.1', 9090, 'admin listener address, host:port'),
    /** What the protocol listener speaks: the Svc protocol, or Durable Streams (docs/durable-streams.md). */
    protocol: OneOf(['svc', 'ds'], { default: 'svc', description: 'protocol of the protocol listener: svc or ds (Durable Streams)' }),
    /** A Durable Streams listener beside the Svc one, host:port; empty for none. */
    dsListen: Type.String({ default: '', pattern: '^$|^(\\[[^\\]]*\\]|[^:\\s/\\[\\]]+):\\d{1,5}$', description: 'also run a Durable Streams listener at host:port (empty: none)' }),
    /** Durable Streams SSE responses end after this long; clients reconnect from their last offset. */
    sseReconnectMs: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 60_000, description: 'Durable Streams SSE reconnect interval (ms)' }), // 60 s
    /**
     * Web origins whose pages may call the Svc and Durable Streams listeners (CORS, docs/protocol.md
     * "Browsers (CORS)"): `*` any (the Durable Streams reference's choice), `none`, or a comma-separated list.
     */
    corsOrigins: Type.String({
      default: '*',
      pattern: `^\\s*(\\*|none|${ORIGIN}(\\s*,\\s*${ORIGIN})*)\\s*$`,
      description: 'web origins allowed to call the Svc and Durable Streams listeners (CORS): *, none, or a comma-separated list of scheme://host[:port]',
    }),
    /** The Durable Streams `__ds` subscription APIs (webhooks, pull-wake). */
    dsSubscriptions: Type.Boolean({ default: true, description: 'serve the Durable Streams __ds subscription APIs (--no-ds-subscriptions turns them off)' }),
    /** Kafka-protocol listener (docs/kafka.md); Kafka's default port 9092. Port 0 picks a free port. */
    kafkaListen: HostPort('127.0.0.1', 9092, 'Kafka listener address, host:port'),
    /** host:port the Kafka listener tells clients to connect to (Metadata, FindCoordinator); empty: the bound address. */
    kafkaAdvertisedListen: Type.String({ default: '', pattern: '^$|^(\\[[^\\]]*\\]|[^:\\s/\\[\\]]+):\\d{1,5}$', description: 'address Kafka clients are told to connect to, host:port (empty: the bound address)' }),
    /** group.consumer.session.timeout.ms: a member of a consumer-protocol group (KIP-848) silent this long is removed (ms). */
    kafkaGroupConsumerSessionTimeoutMs: Type.Integer({ minimum: 1_000, maximum: 1_800_000, default: 45_000, description: 'Kafka consumer group protocol (KIP-848): remove a member that sends no heartbeat for this long (ms)' }), // 45 s
    /** group.consumer.heartbeat.interval.ms: how often members of a consumer-protocol group are told to heartbeat (ms). */
    kafkaGroupConsumerHeartbeatIntervalMs: Type.Integer({ minimum: 100, maximum: 300_000, default: 5_000, description: 'Kafka consumer group protocol (KIP-848): the heartbeat interval members are given (ms); below the session timeout' }), // 5 s
    /** A Confluent-compatible Schema Registry listener (docs/schema-registry.md), host:port; empty for none. Its clients' default port is 8081. */
    schemaRegistryListen: Type.String({ default: '', pattern: '^$|^(\\[[^\\]]*\\]|[^:\\s/\\[\\]]+):\\d{1,5}$', description: 'also run a Confluent-compatible Schema Registry at host:port, e.g. 127.0.0.1:8081 (empty: none)' }),
    /** false removes the admin listener entirely, probes included. */
    admin: Type.Boolean({ default: true, description: 'run the admin listener (--no-admin removes it, probes included)' }),
    /** Prometheus metrics (docs/metrics.md): GET /metrics on the admin listener; --no-metrics turns counting and the endpoint off. */
    metrics: Type.Boolean({ default: true, description: 'keep Prometheus metrics, served at GET /metrics on the admin listener (--no-metrics turns them off)' }),
    /** An extra listener serving only GET /metrics without authentication, host:port; empty for none. */
    metricsListen: Type.String({ default: '', pattern: '^$|^(\\[[^\\]]*\\]|[^:\\s/\\[\\]]+):\\d{1,5}$', description: 'also serve GET /metrics, unauthenticated, at host:port (empty: none)' }),
    /**
     * OpenTelemetry traces (docs/metrics.md, "Traces"): the OTLP/HTTP traces URL of a collector,
     * e.g. http://127.0.0.1:4318/v1/traces; empty: no tracing (then the standard
     * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT are taken, see otlpTracesEndpointOf).
     */
    otlpTracesEndpoint: Type.String({ default: '', pattern: '^$|^https?://\\S+$', description: 'send OpenTelemetry traces (OTLP/HTTP, JSON) to this URL, e.g. http://127.0.0.1:4318/v1/traces (empty: off)' }),
    /** The share of traces started here that are kept, 0 to 1; a request with a `traceparent` follows its caller's decision. */
    otlpTracesSampleRatio: Type.Number({ minimum: 0, maximum: 1, default: 1, description: 'share of new traces kept, 0 to 1 (an incoming traceparent\'s sampled flag is followed)' }),
    /** `service.name` of the exported spans. */
    otlpServiceName: Type.String({ minLength: 1, default: 'svc', description: 'service.name of exported spans' }),
    /** `off` checks nothing and binds loopback only; `required` checks a bearer token on every request (docs/auth.md). */
    auth: OneOf(['off', 'required'], { default: 'off', description: 'authentication mode: off or required' }),
    /** Seeds the root token (a wire token); idempotent across restarts and nodes. Never logged. */
    authBootstrapToken: Type.String({ default: '', description: 'root token to seed (wire form BASE64URL(id).BASE64URL(32 bytes)); empty: none' }),
    /** A file holding the bootstrap token (surrounding whitespace ignored). */
    authBootstrapTokenFile: Type.String({ default: '', description: 'file holding the root token to seed; empty: none' }),
    /** With auth off, allow listen addresses other than loopback. */
    insecureAllowRemote: Type.Boolean({ default: false, description: 'allow non-loopback listen addresses while auth is off' }),
    /** Directory holding shard logs and metadata; relative paths resolve against the working directory. */
    dataDir: Type.String({ minLength: 1, default: './data', description: 'data directory' }),
    /**
     * Where the metadata lives (docs/config.md): `local`, the embedded store in `<dataDir>/meta`,
     * or `etcd://host:port[,host:port…]/<prefix>` for a cluster (src/actors/meta/etcd); `etcds://` over TLS.
     */
    metadata: Type.String({
      default: 'local',
      pattern: '^(local|etcds?://[^/\\s]+/[A-Za-z0-9._\\-/]*[A-Za-z0-9._\\-])$',
      description: 'metadata store: local, or etcd://host:port[,host:port...]/<prefix> (etcds:// over TLS)',
    }),
    /** etcds://: PEM file of the CA(s) the etcd members' certificates must chain to; empty: the system's CAs. */
    metadataCa: Type.String({ default: '', description: 'etcds://: PEM file of the CA that signed the etcd members\' certificates (empty: the system CAs)' }),
    /** etcds://: PEM client certificate (etcd's --client-cert-auth); with --metadata-key. */
    metadataCert: Type.String({ default: '', description: 'etcds://: PEM file of the client certificate to present to etcd (with --metadata-key)' }),
    /** etcds://: PEM private key of --metadata-cert. */
    metadataKey: Type.String({ default: '', description: 'etcds://: PEM file of the client certificate\'s private key' }),
    /** etcd user (etcd `auth enable`); with a password. */
    metadataUser: Type.String({ default: '', description: 'etcd user name when etcd has authentication enabled (empty: none)' }),
    /** The etcd user's password. Never logged; prefer --metadata-password-file or the environment. */
    metadataPassword: Type.String({ default: '', description: 'password of --metadata-user' }),
    /** A file holding the etcd user's password (surrounding whitespace ignored). */
    metadataPasswordFile: Type.String({ default: '', description: 'file holding the password of --metadata-user' }),
    /**
     * Where stream data lives in a cluster (docs/objects.md): `file:<dir>` (a directory every node
     * shares) or `s3://<bucket>/<prefix>?endpoint=…&region=…`; empty: none (data on this node's disk).
     * Needs `--metadata etcd://…` (the object ledger is in etcd).
     */
    objects: Type.String({ default: '', description: 'object store for stream data in a cluster: file:<dir> or s3://<bucket>/<prefix>?endpoint=http://host:port&region=<r> (empty: none; needs --metadata etcd://...)' }),
    /** How long a group commit may wait to gather a bigger object (ms); 0: the group commit's own batching. */
    objectsFlushMs: Type.Integer({ minimum: 0, maximum: 10_000, default: 2, description: 'the least time between the starts of a shard worker\'s group objects with --objects (its shards share one window), to gather bigger objects (ms; a group after a quiet spell starts at once; 0: no pacing)' }), // 2 ms
    /** Groups of a shard at their object PUTs at once (objects mode's commit pipeline, docs/cluster.md "Flush window and the two stages"); beyond 2 paced by the PUT time. */
    objectsPutsInFlight: Type.Integer({ minimum: 1, maximum: 16, default: 2, description: 'with --objects: group objects a shard worker may have at their PUTs at once; beyond 2 they start the smoothed PUT time / this apart (a store with tens of ms per PUT)' }),
    /**
     * The object range cache of reads from the object store (docs/objects.md, "The object cache"),
     * split over the shard workers as --read-cache-bytes is; 0: only the ranges in flight. Holds
     * what reads of adopted streams (`--objects-reads remote`) fetch.
     */
    objectsCacheBytes: Type.Integer({ minimum: 0, default: 256 * MiB, description: 'with --objects: cache of object ranges read for streams served from the object store, split over the shard workers (bytes; 0: only ranges in flight)' }), // 256 MiB
    /**
     * Most bytes compaction may read from and write to the object store in any one second, together
     * (docs/objects.md, "Compaction and the reaper"); 0: no bound. At least 2 MiB/s otherwise: a run
     * is at most half the bound and should still make an object of at least 1 MiB.
     */
    objectsCompactBytesPerSecond: Type.Integer({ minimum: 0, default: 0, description: 'with --objects: most bytes compaction reads from and writes to the object store in any one second, together (bytes per second; 0: no bound; else at least 2097152)' }), // 0: unlimited
    /**
     * How a node opens a stream it is given (transfer, failover, a restart's reopen; docs/objects.md,
     * "Reads from the object store"): `copy` imports every record into the local log first;
     * `remote` adopts it from the ledger and reads older records from the object store on demand.
     */
    objectsReads: OneOf(['copy', 'remote'], { default: 'remote', description: 'with --objects: how a moved stream opens: copy (import its records to the local disk first) or remote (serve at once, older records read from the object store)' }),
    /**
     * The object ledger's format (docs/objects.md, "The ledger's formats"): `entries` records a
     * group's parts as an entry per stream; `records` as one part record per ledger txn, indexed
     * per stream and run behind (src/objects/part-records.ts). Every node of a cluster runs one.
     */
    objectsLedger: OneOf(['cluster', 'entries', 'records'], { default: 'cluster', description: 'with --objects: the object ledger\'s format: cluster (the cluster\'s; entries for a new one), entries (an entry per stream and group) or records (one part record per ledger txn, indexed per stream behind); every node of a cluster runs the same, so one that names the other does not start' }),
    /** This node's id in the cluster (docs/cluster.md); 0: the id kept in `<dataDir>/node-id`, allocated at the first start. */
    nodeId: Type.Integer({ minimum: 0, maximum: 2147483647, default: 0, description: 'node id (0: the one kept in the data directory, allocated at the first start)' }),
    /** Seconds this node stays live without renewing its liveness lease (docs/cluster.md); a dead node's streams move after it. */
    nodeLeaseTtl: Type.Integer({ minimum: 1, maximum: 3600, default: 5, description: 'seconds a node stays live after its last liveness lease renewal (renewed every third of it)' }),
    /** Objects mode: the maintenance lease holder moves streams, one at a time, until every live node holds its share by slots (docs/cluster.md, "Rebalance"); `off`: only POST /admin/rebalance does. */
    rebalance: OneOf(['auto', 'off'], { default: 'auto', description: 'objects mode: auto (the maintenance lease holder evens out the live nodes by transfers) or off (only POST /admin/rebalance)' }),
    /** When appends of streams without a class of their own are acknowledged (docs/storage.md, "Durability classes"): after fdatasync, or once written. */
    durability: OneOf(['sync', 'async'], { default: 'sync', description: 'durability class of streams without their own (Svc-Durability): sync (acknowledged after fdatasync) or async (acknowledged once written, synced within 100 ms; not with --objects)' }),
    /** host:port other nodes send clients to (307 Location) for this node's protocol listener; empty: the bound address. */
    advertise: Type.String({ default: '', pattern: '^$|^(\\[[^\\]]*\\]|[^:\\s/\\[\\]]+):\\d{1,5}$', description: 'address clients are redirected to for this node\'s protocol listener, host:port (empty: the bound address)' }),
    /** host:port other nodes send clients to for this node's Durable Streams listener (--ds-listen); empty: its bound address. */
    dsAdvertise: Type.String({ default: '', pattern: '^$|^(\\[[^\\]]*\\]|[^:\\s/\\[\\]]+):\\d{1,5}$', description: 'address clients are redirected to for this node\'s Durable Streams listener, host:port (empty: the bound address)' }),
    /**
     * Number of storage shards. Streams are hashed to shards, so the number is fixed when
     * a data directory is first initialised; an existing directory keeps its stored count
     * (a different setting only logs a warning).
     */
    shards: Type.Integer({ minimum: 1, maximum: 1024, default: 8, description: 'storage shards, fixed when the data directory is initialised' }),
    /** Storage worker threads (default: CPU cores − 1, at least 1). */
    shardWorkers: Type.Integer({ minimum: 1, default: Math.max(1, os.availableParallelism() - 1), description: 'storage worker threads (default cores - 1)' }), // threads
    /** HTTP engine: uWebSockets.js, or node:http where uWS has no binary. */
    httpEngine: OneOf(['uws', 'node'], { default: 'uws', description: 'HTTP engine: uws or node' }),
    /** Extra uWS threads sharing the protocol listeners' ports: socket I/O (SSE fan-out writes) off the main thread (docs/config.md). */
    sseThreads: Type.Integer({ minimum: 0, maximum: 64, default: 0, description: 'extra uWS I/O threads sharing the protocol listener ports (SSE fan-out writes); 0: none' }), // threads
    /** Gateway threads (default from the cores: defaultGatewayThreads). */
    gatewayThreads: Type.Integer({ minimum: 1, maximum: 64, default: defaultGatewayThreads(os.availableParallelism()), description: 'threads serving the protocol listener\'s stream requests and (a single node) Kafka connections (uWS engine; in a cluster, of the streams placed on this node); 1: the main thread alone; default 1 below 4 cores, else half the cores, at most 16' }), // threads
    /** pino log level; logs are JSON lines on stdout. */
    logLevel: OneOf(LOG_LEVELS, { default: 'info', description: `log level: ${LOG_LEVELS.join(', ')}` }),
    /** How log lines look: JSON lines, or one readable line per event for a person (docs/logs.md); auto picks by whether stdout is a terminal. */
    logFormat: OneOf(['auto', 'json', 'pretty'], { default: 'auto', description: 'log format: auto (pretty on a terminal, else json), json or pretty' }),
    /** How long a graceful shutdown may take before the process exits with status 1. */
    shutdownTimeoutMs: Type.Integer({ minimum: 1, default: 10_000, description: 'graceful shutdown deadline (ms)' }), // 10 s
    /**
     * How long a `live=long-poll` read waits for records before answering 204 (ms). Named
     * `--long-poll-timeout` / SVC_LONG_POLL_TIMEOUT / long_poll_timeout (see NAME_OVERRIDES).
     */
    longPollTimeoutMs: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 30_000, description: 'long-poll wait before 204 (ms)' }), // 30 s
    /** Request and response size limits. */
    limits: Type.Object(
      {
        /** Largest single record body. */
        maxRecordBytes: Type.Integer({ minimum: 1, default: MiB, description: 'largest record (bytes)' }), // 1 MiB
        /** Largest request body (a whole batch). */
        maxRequestBytes: Type.Integer({ minimum: 1, default: 16 * MiB, description: 'largest request body (bytes)' }), // 16 MiB
        /** Most records in one batch append. */
        maxBatchRecords: Type.Integer({ minimum: 1, default: 10_000, description: 'most records in one batch' }), // records
        /** Longest stream name, in UTF-8 bytes. */
        maxStreamNameBytes: Type.Integer({ minimum: 1, default: 1024, description: 'longest stream name (bytes)' }), // 1 KiB
        /** Read size when the request has no `bytes` parameter. */
        readDefaultBytes: Type.Integer({ minimum: 1, default: MiB, description: 'read size without ?bytes (bytes)' }), // 1 MiB
        /** Upper bound for the `bytes` read parameter. */
        readMaxBytes: Type.Integer({ minimum: 1, default: 16 * MiB, description: 'largest ?bytes (bytes)' }), // 16 MiB
        /** Record count when the request has no `count` parameter. */
        readDefaultCount: Type.Integer({ minimum: 1, default: 1000, description: 'records per read without ?count' }), // records
        /** Upper bound for the list `limit` parameter. */
        listMaxLimit: Type.Integer({ minimum: 1, default: 1000, description: 'largest list page (?limit)' }), // entries
      },
      { additionalProperties: false },
    ),
    /** Storage engine tuning. */
    storage: Type.Object(
      {
        /** A segment file is sealed and a new one started past this size. */
        segmentBytes: Type.Integer({ minimum: 1, default: 64 * MiB, description: 'segment file size (bytes)' }), // 64 MiB
        /** How often TTL and absolute expiry are enforced. */
        retentionIntervalMs: Type.Integer({ minimum: 1, default: 1000, description: 'TTL/expiry enforcement interval (ms)' }), // 1 s
        /** How often destroyed objects are deleted. */
        reaperIntervalMs: Type.Integer({ minimum: 1, default: 5000, description: 'destroyed-object reaper interval (ms)' }), // 5 s
        /** Space kept free on the data directory's disk (a file given back when the disk fills, so deletes can free the rest). */
        reserveBytes: Type.Integer({ minimum: 0, default: 64 * MiB, description: 'disk-full reserve (bytes)' }), // 64 MiB
        /** Chunk index entries each shard caches in memory (about 100 bytes each); the index itself is in RocksDB. */
        indexCacheChunks: Type.Integer({ minimum: 0, default: 16_384, description: 'chunk index entries cached in memory per shard' }), // entries
        /** Record values of chunks read in `raw` format, checked and kept in memory for later reads (worker/read-cache.ts). */
        readCacheBytes: Type.Integer({ minimum: 0, default: 64 * MiB, description: 'read cache of the node, split over its shard workers (bytes)' }), // 64 MiB
        /** Idle read page buffers kept for the next pages instead of dropped (worker/page-pool.ts). */
        readPoolBytes: Type.Integer({ minimum: 0, default: 64 * MiB, description: 'idle read page buffers kept for reuse, split over the shard workers (bytes)' }), // 64 MiB
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export type Config = Static<typeof ConfigSchema>;
export type HostPortAddress = Config['listen'];

// ---------------------------------------------------------------------------------------
// Names: the field table, walked once from the schema; --help and docs are generated from it.

export type FieldKind = 'boolean' | 'integer' | 'number' | 'string' | 'enum' | 'hostport';

/** A setting of the node: every one has a flag and an environment variable. */
export interface ConfigField extends ProgramField {
  readonly flag: string;
  readonly env: string;
  readonly kind: FieldKind;
}

/** The config file itself: `--config <path>` or SVC_CONFIG. */
export const CONFIG_FILE_FLAG = '--config';
export const CONFIG_FILE_ENV = 'SVC_CONFIG';

/**
 * Fields whose flag, environment and TOML names are not derived from the field name itself
 * (field path → the name to derive them from). The issue that asked for the long-poll timeout
 * named its flag `--long-poll-timeout`; the field keeps its unit suffix in code.
 */
const NAME_OVERRIDES: Readonly<Record<string, string>> = { longPollTimeoutMs: 'longPollTimeout' };

const words = (path: readonly string[]) => camelWords(NAME_OVERRIDES[path.join('.')] ?? path[path.length - 1]!);

/** A host:port text as an address; text that is not one stays text, which the schema refuses. */
const hostPortValue = (text: string): unknown => {
  const parsed = parseHostPort(text);
  return parsed.ok ? { ...parsed.address } : text;
};

const loader = defineConfig({
  schema: ConfigSchema,
  naming: {
    flag: (path) => '--' + words(path).join('-'),
    env: (path) => 'SVC_' + words(path).join('_').toUpperCase(),
    toml: (path) => (path.length > 1 ? `${path[0]}.${words(path).join('_')}` : words(path).join('_')),
  },
  file: { flag: CONFIG_FILE_FLAG, env: CONFIG_FILE_ENV },
  env: { kind: 'fields', skipEmpty: true },
  fromText: (field, text) => (field.kind === 'hostport' ? hostPortValue(text) : standardFromText(field, text)),
  fromFile: (field, raw) => (field.kind === 'hostport' && typeof raw === 'string' ? hostPortValue(raw) : raw),
  validator: 'ajv',
  checkEachSource: true,
});

export const CONFIG_FIELDS = loader.fields as readonly ConfigField[];
for (const f of CONFIG_FIELDS) {
  if (f.flag === null || f.env === null || !['boolean', 'integer', 'number', 'string', 'enum', 'hostport'].includes(f.kind)) throw new Error(`config: field ${f.path.join('.')} has no flag or an unsupported type`);
}
const fieldAt = (path: string): ConfigField => loader.field(path) as ConfigField;

/** `--kafka-advertised-listen` as an address, or null when the bound address is advertised. */
/**
 * `--gateway-threads`' default for a machine of `cores` cores: 1 (the main thread serves) below 4
 * cores, else half the cores, at most 16. On 2 cores a second thread served fewer appends than
 * the main thread alone (it, a shard worker and the load generator share two cores; perf/README.md,
 * "Gateway threads"); from 4 cores up half of them serve requests and the rest are left to the
 * shard workers (cores − 1 by default), whose cost per append is about a third of a gateway's.
 */
export function defaultGatewayThreads(cores: number): number {
  return cores < 4 ? 1 : Math.min(16, Math.floor(cores / 2));
}

export function kafkaAdvertisedAddress(config: Config): HostPortAddress | null {
  return optionalAddress(config.kafkaAdvertisedListen);
}

/** `--advertise` / `--ds-advertise` as an address, or null when the bound address is advertised. */
export function advertisedAddressOf(text: string): HostPortAddress | null {
  return optionalAddress(text);
}

/** `--metrics-listen` as an address, or null when there is no separate metrics listener. */
export function metricsListenAddress(config: Config): HostPortAddress | null {
  return config.metrics ? optionalAddress(config.metricsListen) : null;
}

/**
 * Where traces go, or null for none (docs/metrics.md, "Traces"): `--otlp-traces-endpoint`, else the
 * OpenTelemetry SDK's standard variables, which operators of instrumented services already set:
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the full URL), or OTEL_EXPORTER_OTLP_ENDPOINT plus `/v1/traces`.
 */
export function otlpTracesEndpointOf(config: Config, env: NodeJS.ProcessEnv): string | null {
  if (config.otlpTracesEndpoint !== '') return config.otlpTracesEndpoint;
  const traces = env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']?.trim();
  if (traces !== undefined && traces !== '') return traces;
  const base = env['OTEL_EXPORTER_OTLP_ENDPOINT']?.trim();
  if (base !== undefined && base !== '') return `${base.replace(/\/+$/, '')}/v1/traces`;
  return null;
}

/** `--schema-registry-listen` as an address, or null when there is no schema registry listener. */
export function schemaRegistryListenAddress(config: Config): HostPortAddress | null {
  return optionalAddress(config.schemaRegistryListen);
}

/** `--ds-listen` as an address, or null when there is no Durable Streams listener beside the Svc one. */
export function dsListenAddress(config: Config): HostPortAddress | null {
  return optionalAddress(config.dsListen);
}

/** An address setting that may be empty (none); `loadConfig` has refused any other text that does not parse. */
function optionalAddress(text: string): HostPortAddress | null {
  const parsed = text === '' ? null : parseHostPort(text);
  return parsed?.ok ? { ...parsed.address } : null;
}

export function defaultOf(field: ConfigField): unknown {
  return field.schema.default;
}

/** The default as a user would type it. */
export function formatDefault(field: ConfigField): string {
  const d = defaultOf(field);
  return field.kind === 'hostport' ? formatHostPort(d as HostPortAddress) : String(d);
}

// ---------------------------------------------------------------------------------------
// Messages: every problem names the flag, variable or file key it came from.

/** `--shards`, `SVC_SHARDS` or `config file <path>: shards`. */
function whereOf(e: Entry): string {
  return e.source === 'file' ? `config file ${e.file}: ${e.name}` : e.name;
}

function describeSource(p: SourceProblem): string {
  switch (p.kind) {
    case 'argument': return `${p.arg}: unexpected argument`;
    case 'unknown-flag': return `${p.name}: unknown flag (svc serve --help lists them)`;
    case 'missing-value': return `${p.name}: missing value`;
    case 'takes-no-value': return `${p.name}: takes no value`;
    case 'file':
      return p.problem.kind === 'unreadable'
        ? `${p.via}: cannot read config file ${p.file}: ${p.problem.code}`
        : `config file ${p.file}: ${describeTomlProblem(p.problem)}`;
    case 'not-a-table': return `${whereOf(p.entry)}: must be a table ([${p.entry.name}])`;
    case 'unknown-key': {
      const key = p.entry.name;
      const home = key.includes('.') ? undefined : CONFIG_FIELDS.find((f) => f.group && f.tomlKey === `${f.group}.${key}`);
      return `${whereOf(p.entry)}: unknown key` + (home ? ` (it belongs in [${home.group}])` : '');
    }
  }
}

/** What a string field with a pattern must look like, for its error message. */
const STRING_EXPECTATIONS: Readonly<Record<string, string>> = {
  metadata: 'must be local or etcd://host:port[,host:port...]/<prefix> (etcds:// over TLS)',
  dsListen: `must be empty or ${HOST_PORT_FORM}`,
  schemaRegistryListen: `must be empty or ${HOST_PORT_FORM}`,
  metricsListen: `must be empty or ${HOST_PORT_FORM}`,
  kafkaAdvertisedListen: `must be empty or ${HOST_PORT_FORM}`,
  advertise: `must be empty or ${HOST_PORT_FORM}`,
  dsAdvertise: `must be empty or ${HOST_PORT_FORM}`,
  corsOrigins: 'must be *, none, or a comma-separated list of origins such as https://app.example.com',
  otlpTracesEndpoint: 'must be empty or an http:// or https:// URL',
};

function expectation(field: ConfigField, textual: boolean): string {
  const s = field.schema;
  switch (field.kind) {
    case 'boolean': return textual ? 'must be true, false, 1 or 0' : 'must be true or false';
    case 'enum': return `must be one of ${(s.enum as string[]).join(', ')}`;
    case 'string': return STRING_EXPECTATIONS[field.path.join('.')] ?? 'must be a non-empty string';
    case 'hostport': return `must be ${HOST_PORT_FORM}`;
    case 'number': return `must be a number from ${s.minimum} to ${s.maximum}`;
    case 'integer':
      return s.maximum !== undefined
        ? `must be an integer from ${s.minimum} to ${s.maximum}`
        : `must be an integer >= ${s.minimum}`;
  }
}

/** The refusal of `--durability async` with `--objects` (docs/storage.md, "Durability classes"). */
export const DURABILITY_ASYNC_WITH_OBJECTS = '--durability async is not offered with --objects: an append is acknowledged once its object is stored and the ledger commit made';

/** The refusal of `--objects` with `--metadata local` (the object ledger lives in etcd). */
export const OBJECTS_NEED_ETCD = '--objects needs --metadata etcd://…';

/**
 * What the node logs as a warning at start for a setting it accepts: etcd metadata without an
 * object store keeps stream data on the owner's disk, so its streams wait for it when it dies.
 */
export function configWarnings(config: Config): string[] {
  return config.metadata !== 'local' && config.objects === ''
    ? ['--metadata etcd://… without --objects: stream data stays on its owner\'s disk, so the streams of a node that dies wait for it to come back (docs/objects.md)']
    : [];
}

/** The least `--objects-compact-bytes-per-second` other than 0 (2 MiB/s): runs are at most half of it, and one under 1 MiB stays small and is compacted again. */
export const MIN_COMPACT_BYTES_PER_SECOND = 2 * MiB;

/** Pairs (smaller, larger) of limits where the first may not exceed the second. */
const ORDERED_PAIRS = [
  ['limits.maxRecordBytes', 'limits.maxRequestBytes'],
  ['limits.readDefaultBytes', 'limits.readMaxBytes'],
] as const;

/** Address settings where empty means "none"; any other text must be host:port. */
const OPTIONAL_ADDRESSES = ['dsListen', 'schemaRegistryListen', 'metricsListen', 'kafkaAdvertisedListen', 'advertise', 'dsAdvertise'] as const;

/**
 * Parse and validate the node's configuration from command-line flags (without the
 * command name), the environment and the config file they name. Never throws for bad
 * input: returns every problem found, each prefixed with the flag, variable or file key.
 */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv): { config: Config } | { errors: string[] } {
  const loaded = loader.load(argv, env);
  const errors = loaded.sourceProblems.map(describeSource);
  const reported = new Set<Entry>(); // one message per bad value given
  for (const v of loaded.invalidValues) {
    const field = v.entry?.field as ConfigField | null | undefined;
    if (v.entry) {
      if (reported.has(v.entry)) continue;
      reported.add(v.entry);
    }
    errors.push(v.entry && field ? `${whereOf(v.entry)}: ${expectation(field, v.entry.source !== 'file')} (got ${JSON.stringify(v.entry.raw)})` : `${v.path.join('.')}: ${v.message}`);
  }
  const { config } = loaded;
  const invalid = new Set(loaded.invalid);
  const whereAt = (name: string) => {
    const field = fieldAt(name);
    const e = loaded.effective(name);
    return { field, name, where: e ? whereOf(e) : `default ${field.flag}` };
  };

  for (const name of OPTIONAL_ADDRESSES) {
    const text = config[name];
    if (invalid.has(name) || text === '' || parseHostPort(text).ok) continue;
    invalid.add(name);
    errors.push(`${whereAt(name).where}: must be empty or ${HOST_PORT_FORM} (got ${JSON.stringify(text)})`);
  }
  // etcd's TLS and authentication settings: each only with what it belongs to.
  if (!invalid.has('metadata')) {
    const tls = config.metadata.startsWith('etcds://');
    for (const name of ['metadataCa', 'metadataCert', 'metadataKey'] as const) {
      if (config[name] !== '' && !tls) errors.push(`${whereAt(name).where}: needs --metadata etcds://… (TLS to etcd)`);
    }
    if ((config.metadataCert === '') !== (config.metadataKey === '')) {
      errors.push(`${whereAt(config.metadataCert === '' ? 'metadataKey' : 'metadataCert').where}: give the client certificate and its key together (--metadata-cert and --metadata-key)`);
    }
    const password = config.metadataPassword !== '' || config.metadataPasswordFile !== '';
    if (config.metadataPassword !== '' && config.metadataPasswordFile !== '') errors.push(`${whereAt('metadataPasswordFile').where}: give the etcd password or its file, not both`);
    if (config.metadataUser !== '' && config.metadata === 'local') errors.push(`${whereAt('metadataUser').where}: needs --metadata etcd://… or etcds://…`);
    else if (config.metadataUser !== '' && !password) errors.push(`${whereAt('metadataUser').where}: needs --metadata-password or --metadata-password-file`);
    else if (config.metadataUser === '' && password) errors.push(`${whereAt(config.metadataPassword !== '' ? 'metadataPassword' : 'metadataPasswordFile').where}: needs --metadata-user`);
  }
  if (config.authBootstrapToken !== '' && config.authBootstrapTokenFile !== '') {
    errors.push(`${whereAt('authBootstrapTokenFile').where}: give the bootstrap token or its file, not both`);
  }
  if (config.auth === 'off' && !invalid.has('auth') && !invalid.has('insecureAllowRemote') && !config.insecureAllowRemote) {
    const addresses: string[] = config.admin ? ['listen', 'adminListen', 'kafkaListen'] : ['listen', 'kafkaListen'];
    if (config.dsListen !== '') addresses.push('dsListen');
    if (config.schemaRegistryListen !== '') addresses.push('schemaRegistryListen');
    // The metrics listener reads only aggregate figures, but "auth off binds loopback only" holds for every listener.
    if (config.metricsListen !== '' && config.metrics) addresses.push('metricsListen');
    for (const name of addresses) {
      if (invalid.has(name)) continue;
      const { where } = whereAt(name);
      const host =
        name === 'dsListen' ? dsListenAddress(config)!.host : name === 'schemaRegistryListen' ? schemaRegistryListenAddress(config)!.host : name === 'metricsListen' ? metricsListenAddress(config)!.host : (config[name as 'listen'] as HostPortAddress).host;
      if (isLoopback(host)) continue;
      errors.push(
        `${where}: ${host} is not a loopback address; auth is off, so anyone who can reach it could read and ` +
          `write every stream. Bind 127.0.0.1, ::1 or localhost, or pass --insecure-allow-remote ` +
          `(SVC_INSECURE_ALLOW_REMOTE=true) to accept the risk`,
      );
    }
  }
  if (config.objects !== '' && !invalid.has('objects')) {
    const problem = objectsUrlProblem(config.objects);
    if (problem !== null) errors.push(`${whereAt('objects').where}: ${problem}`);
    // The object ledger (which object holds which records) lives in etcd: there is none with local metadata.
    else if (config.metadata === 'local' && !invalid.has('metadata')) errors.push(`${whereAt('objects').where}: ${OBJECTS_NEED_ETCD}`);
    else if (config.durability === 'async' && !invalid.has('durability')) errors.push(`${whereAt('durability').where}: ${DURABILITY_ASYNC_WITH_OBJECTS}`);
    else if (config.objects.startsWith('s3://') && (!env.AWS_ACCESS_KEY_ID || !env.AWS_SECRET_ACCESS_KEY)) {
      errors.push(`${whereAt('objects').where}: an s3:// store needs credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones)`);
    }
  }
  const compactRate = config.objectsCompactBytesPerSecond;
  if (!invalid.has('objectsCompactBytesPerSecond') && compactRate > 0 && compactRate < MIN_COMPACT_BYTES_PER_SECOND) {
    errors.push(`${whereAt('objectsCompactBytesPerSecond').where}: must be 0 (no bound) or at least ${MIN_COMPACT_BYTES_PER_SECOND} (2 MiB/s: a compaction run is at most half the bound, and one under 1 MiB would be compacted again) (got ${compactRate})`);
  }
  // A default must fit under its own ceiling.
  for (const [small, large] of ORDERED_PAIRS) {
    const a = whereAt(small);
    const b = whereAt(large);
    const [x, y] = [small, large].map((n) => n.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], config));
    if (invalid.has(small) || invalid.has(large) || (x as number) <= (y as number)) continue;
    errors.push(`${a.where}: must not exceed ${b.field.flag} (${String(x)} > ${String(y)})`);
  }
  return errors.length > 0 ? { errors } : { config };
}
