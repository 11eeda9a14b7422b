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
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { BlockList, isIP } from 'node:net';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import Ajv, { type ErrorObject } from 'ajv';
import { parse as parseToml } from 'smol-toml';

const MiB = 1024 * 1024;

/** pino's level names, most to least severe. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const OneOf = <const T extends readonly string[]>(values: T, options: { default: T[number]; description: string }) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

const HostPort = (host: string, port: number, description: string) =>
  Type.Object(
    {
      host: Type.String({ minLength: 1, pattern: '^[^\\s/\\[\\]]+$' }),
      port: Type.Integer({ minimum: 0, maximum: 65535 }),
    },
    { additionalProperties: false, default: { host, port }, description },
  );

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
    /** The Durable Streams `__ds` subscription APIs (webhooks, pull-wake). */
    dsSubscriptions: Type.Boolean({ default: true, description: 'serve the Durable Streams __ds subscription APIs (--no-ds-subscriptions turns them off)' }),
    /** Kafka-protocol listener (docs/kafka.md); Kafka's default port 9092. Port 0 picks a free port. */
    kafkaListen: HostPort('127.0.0.1', 9092, 'Kafka listener address, host:port'),
    /** host:port the Kafka listener tells clients to connect to (Metadata, FindCoordinator); empty: the bound address. */
    kafkaAdvertisedListen: Type.String({ default: '', pattern: '^$|^(\\[[^\\]]*\\]|[^:\\s/\\[\\]]+):\\d{1,5}$', description: 'address Kafka clients are told to connect to, host:port (empty: the bound address)' }),
    /** false removes the admin listener entirely, probes included. */
    admin: Type.Boolean({ default: true, description: 'run the admin listener (--no-admin removes it, probes included)' }),
    /** Prometheus metrics (docs/metrics.md): GET /metrics on the admin listener; --no-metrics turns counting and the endpoint off. */
    metrics: Type.Boolean({ default: true, description: 'keep Prometheus metrics, served at GET /metrics on the admin listener (--no-metrics turns them off)' }),
    /** An extra listener serving only GET /metrics without authentication, host:port; empty for none. */
    metricsListen: Type.String({ default: '', pattern: '^$|^(\\[[^\\]]*\\]|[^:\\s/\\[\\]]+):\\d{1,5}$', description: 'also serve GET /metrics, unauthenticated, at host:port (empty: none)' }),
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
     * or `etcd://host:port[,host:port…]/<prefix>` for a cluster (src/actors/meta/etcd).
     */
    metadata: Type.String({
      default: 'local',
      pattern: '^(local|etcd://[^/\\s]+/[A-Za-z0-9._\\-/]*[A-Za-z0-9._\\-])$',
      description: 'metadata store: local, or etcd://host:port[,host:port...]/<prefix>',
    }),
    /** This node's id in the cluster (docs/cluster.md); 0: the id kept in `<dataDir>/node-id`, allocated at the first start. */
    nodeId: Type.Integer({ minimum: 0, maximum: 2147483647, default: 0, description: 'node id (0: the one kept in the data directory, allocated at the first start)' }),
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
    /** pino log level; logs are JSON lines on stdout. */
    logLevel: OneOf(LOG_LEVELS, { default: 'info', description: `log level: ${LOG_LEVELS.join(', ')}` }),
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
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export type Config = Static<typeof ConfigSchema>;
export type HostPortAddress = Config['listen'];

const validate = new Ajv({ allErrors: true }).compile<Config>(ConfigSchema);

// ---------------------------------------------------------------------------------------
// Field table, walked once from the schema; --help and docs are generated from it.

export type FieldKind = 'boolean' | 'integer' | 'string' | 'enum' | 'hostport';

export interface ConfigField {
  /** Path in `Config`, e.g. ['limits', 'maxRecordBytes']. */
  readonly path: readonly string[];
  /** Table the field lives in (`limits`, `storage`), or null at top level. */
  readonly group: string | null;
  readonly flag: string;
  readonly env: string;
  /** Key in the TOML file, dotted for tables: `limits.max_record_bytes`. */
  readonly tomlKey: string;
  readonly kind: FieldKind;
  readonly schema: TSchema;
  readonly description: string;
}

/** The config file itself: `--config <path>` or SVC_CONFIG. */
export const CONFIG_FILE_FLAG = '--config';
export const CONFIG_FILE_ENV = 'SVC_CONFIG';

const words = (camel: string) => camel.replace(/[A-Z]/g, (c) => ' ' + c.toLowerCase()).split(' ');

function kindOf(s: TSchema): FieldKind | 'group' {
  if (s.type === 'object') return s.properties && 'host' in s.properties ? 'hostport' : 'group';
  if (s.type === 'string') return s.enum ? 'enum' : 'string';
  return s.type as 'boolean' | 'integer';
}

/**
 * Fields whose flag, environment and TOML names are not derived from the field name itself
 * (field path → the name to derive them from). The issue that asked for the long-poll timeout
 * named its flag `--long-poll-timeout`; the field keeps its unit suffix in code.
 */
const NAME_OVERRIDES: Readonly<Record<string, string>> = { longPollTimeoutMs: 'longPollTimeout' };

function walk(props: Record<string, TSchema>, group: string | null): ConfigField[] {
  return Object.entries(props).flatMap(([key, schema]): ConfigField[] => {
    const kind = kindOf(schema);
    if (kind === 'group') return walk(schema.properties as Record<string, TSchema>, key);
    const w = words(NAME_OVERRIDES[group ? `${group}.${key}` : key] ?? key);
    const snake = w.join('_');
    return [{
      path: group ? [group, key] : [key], group, kind, schema,
      flag: '--' + w.join('-'), env: 'SVC_' + snake.toUpperCase(),
      tomlKey: group ? `${group}.${snake}` : snake,
      description: String(schema.description ?? ''),
    }];
  });
}

export const CONFIG_FIELDS: readonly ConfigField[] = walk(ConfigSchema.properties, null);
const byFlag = new Map(CONFIG_FIELDS.map((f) => [f.flag, f]));
const byToml = new Map(CONFIG_FIELDS.map((f) => [f.tomlKey, f]));
const GROUPS = new Set(CONFIG_FIELDS.flatMap((f) => (f.group ? [f.group] : [])));
if (byFlag.size !== CONFIG_FIELDS.length) throw new Error('config: two fields share a flag name');

/** "host:port", IPv6 hosts in brackets. */
export function formatHostPort(a: HostPortAddress): string {
  return a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}

/** `--kafka-advertised-listen` as an address, or null when the bound address is advertised. */
export function kafkaAdvertisedAddress(config: Config): HostPortAddress | null {
  if (config.kafkaAdvertisedListen === '') return null;
  return parseHostPort(config.kafkaAdvertisedListen) as HostPortAddress;
}

/** `--advertise` / `--ds-advertise` as an address, or null when the bound address is advertised. */
export function advertisedAddressOf(text: string): HostPortAddress | null {
  return text === '' ? null : (parseHostPort(text) as HostPortAddress);
}

/** `--metrics-listen` as an address, or null when there is no separate metrics listener. */
export function metricsListenAddress(config: Config): HostPortAddress | null {
  if (config.metricsListen === '' || !config.metrics) return null;
  return parseHostPort(config.metricsListen) as HostPortAddress;
}

/** `--ds-listen` as an address, or null when there is no Durable Streams listener beside the Svc one. */
export function dsListenAddress(config: Config): HostPortAddress | null {
  if (config.dsListen === '') return null;
  return parseHostPort(config.dsListen) as HostPortAddress;
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
// Loading.

/** One value from one source. `raw` is what the user wrote, `value` its typed form. */
interface Entry { field: ConfigField; where: string; raw: unknown; value: unknown }

function parseHostPort(text: string): unknown {
  const m = /^\[([^\]]*)\]:(.*)$/.exec(text) ?? /^([^:]*):([^:]*)$/.exec(text);
  if (!m) return text; // not host:port at all; the validator rejects the string
  const port = /^\d+$/.test(m[2]!) ? Number(m[2]) : m[2];
  return { host: m[1], port };
}

/** Flags and environment variables are text; give them their field's type where they parse. */
function fromText(field: ConfigField, text: string): unknown {
  switch (field.kind) {
    case 'boolean': return /^(true|1)$/i.test(text) ? true : /^(false|0)$/i.test(text) ? false : text;
    case 'integer': return /^[+-]?\d+$/.test(text) ? Number(text) : text;
    case 'hostport': return parseHostPort(text);
    default: return text;
  }
}

/** What a string field with a pattern must look like, for its error message. */
const STRING_EXPECTATIONS: Readonly<Record<string, string>> = { metadata: 'must be local or etcd://host:port[,host:port...]/<prefix>' };

function expectation(field: ConfigField, textual: boolean): string {
  const s = field.schema;
  switch (field.kind) {
    case 'boolean': return textual ? 'must be true, false, 1 or 0' : 'must be true or false';
    case 'enum': return `must be one of ${(s.enum as string[]).join(', ')}`;
    case 'string': return STRING_EXPECTATIONS[field.path.join('.')] ?? 'must be a non-empty string';
    case 'hostport': return 'must be host:port with a port from 0 to 65535 (IPv6 as [::1]:port)';
    case 'integer':
      return s.maximum !== undefined
        ? `must be an integer from ${s.minimum} to ${s.maximum}`
        : `must be an integer >= ${s.minimum}`;
  }
}

function parseFlags(argv: readonly string[], entries: Entry[], errors: string[]): string | undefined {
  let configPath: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--') || arg === '--') { errors.push(`${arg}: unexpected argument`); continue; }
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg : arg.slice(0, eq);
    const inline = eq < 0 ? undefined : arg.slice(eq + 1);
    const next = argv[i + 1];
    const takeValue = (): string | undefined => {
      if (inline !== undefined) return inline;
      if (next !== undefined && !next.startsWith('--')) { i++; return next; }
      errors.push(`${name}: missing value`);
      return undefined;
    };
    if (name === CONFIG_FILE_FLAG) { configPath = takeValue() ?? configPath; continue; }
    const field = byFlag.get(name);
    const negated = name.startsWith('--no-') ? byFlag.get('--' + name.slice(5)) : undefined;
    if (field?.kind === 'boolean') {
      entries.push({ field, where: name, raw: inline ?? true, value: inline === undefined ? true : fromText(field, inline) });
    } else if (field) {
      const text = takeValue();
      if (text !== undefined) entries.push({ field, where: name, raw: text, value: fromText(field, text) });
    } else if (negated?.kind === 'boolean') {
      if (inline !== undefined) errors.push(`${name}: takes no value`);
      else entries.push({ field: negated, where: name, raw: false, value: false });
    } else {
      errors.push(`${name}: unknown flag (svc serve --help lists them)`);
      if (inline === undefined && next !== undefined && !next.startsWith('--')) i++; // its value
    }
  }
  return configPath;
}

function readFileEntries(path: string, where: string, entries: Entry[], errors: string[]): void {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (err) {
    errors.push(`${where}: cannot read config file ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    return;
  }
  const label = `config file ${path}`;
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(text);
  } catch (err) {
    const e = err as Error & { line?: number; column?: number };
    const what = e.message.split('\n')[0]!.replace(/^Invalid TOML document: /, '');
    errors.push(`${label}: invalid TOML at line ${e.line}, column ${e.column}: ${what}`);
    return;
  }
  const visit = (table: Record<string, unknown>, prefix: string) => {
    for (const [key, raw] of Object.entries(table)) {
      const dotted = prefix + key;
      const field = byToml.get(dotted);
      if (field) {
        const value = field.kind === 'hostport' && typeof raw === 'string' ? parseHostPort(raw) : raw;
        entries.push({ field, where: `${label}: ${dotted}`, raw, value });
      } else if (!prefix && GROUPS.has(key)) {
        if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) visit(raw as Record<string, unknown>, key + '.');
        else errors.push(`${label}: ${key}: must be a table ([${key}])`);
      } else {
        const home = CONFIG_FIELDS.find((f) => f.group && f.tomlKey === `${f.group}.${key}`);
        errors.push(`${label}: ${dotted}: unknown key` + (home && !prefix ? ` (it belongs in [${home.group}])` : ''));
      }
    }
  };
  visit(doc, '');
}

function assign(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  const [head, ...rest] = path as [string, ...string[]];
  if (rest.length === 0) target[head] = value;
  else assign(target[head] as Record<string, unknown>, rest, value);
}

const DEFAULTS: Config = (() => {
  const d: Record<string, unknown> = { limits: {}, storage: {} };
  for (const f of CONFIG_FIELDS) assign(d, f.path, structuredClone(defaultOf(f)));
  return d as Config;
})();

/** The field an ajv error points into (`/listen/port` belongs to `listen`). */
function fieldAt(err: ErrorObject): ConfigField | undefined {
  const path = err.instancePath.split('/').slice(1);
  return CONFIG_FIELDS.find((f) => f.path.every((p, i) => path[i] === p));
}

/** Validate one source's values on top of the defaults; report each bad field once. */
function checkEntries(entries: readonly Entry[], errors: string[]): void {
  const candidate = structuredClone(DEFAULTS) as unknown as Record<string, unknown>;
  for (const e of entries) assign(candidate, e.field.path, e.value);
  if (validate(candidate)) return;
  const bad = new Set((validate.errors ?? []).map(fieldAt));
  for (const e of entries) {
    if (!bad.has(e.field)) continue;
    const textual = !e.where.startsWith('config file');
    errors.push(`${e.where}: ${expectation(e.field, textual)} (got ${JSON.stringify(e.raw)})`);
  }
}

/** Pairs (smaller, larger) of limits where the first may not exceed the second. */
const ORDERED_PAIRS = [
  ['limits.maxRecordBytes', 'limits.maxRequestBytes'],
  ['limits.readDefaultBytes', 'limits.readMaxBytes'],
] as const;

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
LOOPBACK.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');

export function isLoopback(host: string): boolean {
  if (host.toLowerCase() === 'localhost') return true;
  const family = isIP(host);
  return family !== 0 && LOOPBACK.check(host, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Parse and validate the node's configuration from command-line flags (without the
 * command name), the environment and the config file they name. Never throws for bad
 * input: returns every problem found, each prefixed with the flag, variable or file key.
 */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv): { config: Config } | { errors: string[] } {
  const errors: string[] = [];
  const flags: Entry[] = [];
  const envs: Entry[] = [];
  const file: Entry[] = [];

  const flagConfig = parseFlags(argv, flags, errors);
  for (const field of CONFIG_FIELDS) {
    const text = env[field.env];
    if (text !== undefined && text !== '') envs.push({ field, where: field.env, raw: text, value: fromText(field, text) });
  }
  const envConfig = env[CONFIG_FILE_ENV] || undefined;
  const configPath = flagConfig ?? envConfig;
  if (configPath !== undefined) {
    readFileEntries(configPath, flagConfig !== undefined ? CONFIG_FILE_FLAG : CONFIG_FILE_ENV, file, errors);
  }

  // Lowest precedence first, so later entries win.
  const layers = [file, envs, flags];
  for (const layer of layers) checkEntries(layer, errors);
  const effective = new Map<ConfigField, Entry>();
  for (const e of layers.flat()) effective.set(e.field, e);

  const merged = structuredClone(DEFAULTS) as unknown as Record<string, unknown>;
  for (const e of effective.values()) assign(merged, e.field.path, e.value);
  const ok = validate(merged);
  const invalid = new Set(ok ? [] : (validate.errors ?? []).map(fieldAt));
  const config = merged as Config;
  const whereOf = (name: string) => {
    const field = CONFIG_FIELDS.find((f) => f.path.join('.') === name)!;
    return { field, where: effective.get(field)?.where ?? `default ${field.flag}` };
  };

  const auth = whereOf('auth');
  if (config.authBootstrapToken !== '' && config.authBootstrapTokenFile !== '') {
    errors.push(`${whereOf('authBootstrapTokenFile').where}: give the bootstrap token or its file, not both`);
  }
  const allowRemote = whereOf('insecureAllowRemote');
  if (config.auth === 'off' && !invalid.has(auth.field) && !invalid.has(allowRemote.field) && !config.insecureAllowRemote) {
    const addresses = config.admin ? ['listen', 'adminListen', 'kafkaListen'] : ['listen', 'kafkaListen'];
    if (config.dsListen !== '') addresses.push('dsListen');
    // The metrics listener reads only aggregate figures, but "auth off binds loopback only" holds for every listener.
    if (metricsListenAddress(config) !== null) addresses.push('metricsListen');
    for (const name of addresses) {
      const { field, where } = whereOf(name);
      const host =
        name === 'dsListen' ? dsListenAddress(config)!.host : name === 'metricsListen' ? metricsListenAddress(config)!.host : (config[name as 'listen'] as HostPortAddress).host;
      if (invalid.has(field) || isLoopback(host)) continue;
      errors.push(
        `${where}: ${host} is not a loopback address; auth is off, so anyone who can reach it could read and ` +
          `write every stream. Bind 127.0.0.1, ::1 or localhost, or pass --insecure-allow-remote ` +
          `(SVC_INSECURE_ALLOW_REMOTE=true) to accept the risk`,
      );
    }
  }
  // A default must fit under its own ceiling.
  for (const [small, large] of ORDERED_PAIRS) {
    const a = whereOf(small);
    const b = whereOf(large);
    const [x, y] = [small, large].map((n) => n.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], config));
    if (invalid.has(a.field) || invalid.has(b.field) || (x as number) <= (y as number)) continue;
    errors.push(`${a.where}: must not exceed ${b.field.flag} (${String(x)} > ${String(y)})`);
  }
  return errors.length > 0 ? { errors } : { config };
}
