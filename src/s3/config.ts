/**
 * svc-cache's configuration: one TypeBox schema, compiled once with ajv, the `CacheConfig`
 * type derived from it. docs/s3-cache.md describes every key; keep the two in step.
 *
 * Sources, highest precedence first:
 *   SVC_CACHE_* environment  >  TOML file (--config FILE or SVC_CACHE_CONFIG)  >  schema defaults
 * Environment names are the TOML path upper-cased and joined with `_`:
 *   [origin] endpoint        SVC_CACHE_ORIGIN_ENDPOINT
 *   [buckets] ttl_seconds    SVC_CACHE_BUCKETS_TTL_SECONDS
 *   populate_max             SVC_CACHE_POPULATE_MAX
 * Every value is validated and all errors are reported together, each naming its source.
 * Reading and layering the sources is the shared loader's (src/program/config).
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { defineConfig, describeTomlProblem, parseHostPort, type Entry, type SourceProblem } from '../program';
import { LEVELS } from './log';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

const Str = (def: string, description: string) => Type.String({ default: def, description });
const Int = (def: number, min: number, description: string) => Type.Integer({ default: def, minimum: min, description });
const Bool = (def: boolean, description: string) => Type.Boolean({ default: def, description });
const Enum = <const T extends readonly string[]>(values: T, def: T[number], description: string) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], default: def, description });
const Section = <T extends Record<string, TSchema>>(props: T) => Type.Object(props, { additionalProperties: false, default: {} });

/** A bucket's cache policy. `[buckets]` holds the default; `[buckets.override.<name>]` changes fields for one bucket. */
const PolicyFields = {
  /** false forwards every request for the bucket to the origin (nothing is stored). */
  cache: Bool(true, 'cache objects of this bucket'),
  /** How long a cached object (and its metadata) is served without asking the origin again. */
  ttl_seconds: Int(300, 0, 'seconds an entry is served before it is revalidated'), // 5 min
  /**
   * Seconds past the TTL an entry may still be served while the origin cannot confirm it
   * (unreachable, timed out, 5xx), as RFC 5861 stale-if-error; 0 answers 503 at once.
   */
  stale_if_error_seconds: Int(3600, 0, 'seconds past the TTL an entry is served while the origin fails'), // 1 h
  /** Larger objects are never stored; reads of them are forwarded (ranges stay ranges). */
  max_object_bytes: Int(64 * MiB, 0, 'largest object the cache stores (bytes)'), // 64 MiB
};
/** The same fields without defaults, so an override changes only what it names. */
const PolicyOverride = Type.Object(
  {
    cache: Type.Optional(Type.Boolean()),
    ttl_seconds: Type.Optional(Type.Integer({ minimum: 0 })),
    stale_if_error_seconds: Type.Optional(Type.Integer({ minimum: 0 })),
    max_object_bytes: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);

export const CacheConfigSchema = Type.Object(
  {
    log_level: Enum(LEVELS, 'info', 'log level'),
    /** PutObject bodies up to this size are buffered on the way through and inserted into the cache. */
    populate_max: Int(16 * MiB, 0, 'largest PutObject body inserted into the cache (bytes)'), // 16 MiB
    server: Section({
      /** Client listener, host:port. Port 0 picks a free port. */
      listen: Str('127.0.0.1:9000', 'client listener host:port'),
      /** HTTP engine of the client listener: uWebSockets.js, or node:http (also where uWS does not load). docs/s3-cache.md, "Engine". */
      engine: Enum(['uws', 'node'] as const, 'uws', 'HTTP engine of the client listener'),
      addressing: Section({
        style: Enum(['path', 'virtual_hosted'] as const, 'path', 'bucket addressing clients use'),
        /** With virtual_hosted: requests to <bucket>.<domain> address <bucket>; requests to <domain> are path style. */
        domain: Str('', 'base domain for virtual-hosted addressing'),
      }),
      tls: Section({
        /** PEM certificate chain; with `key`, the listener speaks TLS. */
        cert: Str('', 'PEM certificate file'),
        key: Str('', 'PEM private key file'),
      }),
      /** How long a graceful shutdown may take (ms). */
      shutdown_timeout_ms: Int(10_000, 1, 'graceful shutdown deadline (ms)'), // 10 s
    }),
    metrics: Section({
      /** Prometheus listener host:port; empty disables it. */
      listen: Str('127.0.0.1:9464', 'metrics listener host:port (empty: off)'),
      path: Str('/metrics', 'metrics path'),
    }),
    origin: Section({
      /** Base URL of the origin object store, e.g. https://s3.eu-west-1.amazonaws.com. */
      endpoint: Str('', 'origin base URL'),
      region: Str('us-east-1', 'origin signing region'),
      /** true sends <bucket>.<endpoint host>/<key> to the origin; false sends <endpoint>/<bucket>/<key>. */
      virtual_hosted: Bool(false, 'virtual-hosted addressing toward the origin'),
      /** auto = static keys if set, else AWS_* environment, else the shared credentials profile, else the instance role. */
      credentials: Enum(['auto', 'static', 'environment', 'profile', 'instance_role'] as const, 'auto', 'where origin credentials come from'),
      access_key_id: Str('', 'origin access key (static)'),
      secret_access_key: Str('', 'origin secret key (static)'),
      session_token: Str('', 'origin session token (static, optional)'),
      /** Profile in the shared credentials file (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials); empty: AWS_PROFILE or default. */
      profile: Str('', 'credentials profile'),
      /** Instance metadata service base URL (IMDSv2). */
      imds_endpoint: Str('http://169.254.169.254', 'instance metadata endpoint'),
      /** PEM CA bundle for an origin with a private CA; empty uses Node's defaults. */
      ca_file: Str('', 'CA bundle for the origin'),
      /** Time allowed for the origin to start answering (ms). */
      timeout_ms: Int(30_000, 1, 'origin response timeout (ms)'), // 30 s
      /** Idle keep-alive sockets kept per origin host. */
      max_sockets: Int(256, 1, 'origin connections'),
    }),
    auth: Section({
      mode: Enum(['anonymous', 'static'] as const, 'anonymous', 'client authentication'),
      access_key_id: Str('', 'access key clients sign with (static)'),
      secret_access_key: Str('', 'secret key clients sign with (static)'),
      /** Empty accepts any region in the credential scope (clients often default to us-east-1). */
      region: Str('', 'required signing region (empty: any)'),
    }),
    cache: Section({
      /** Directory of the disk tier; kept across restarts. */
      dir: Str('./svc-cache-data', 'disk tier directory'),
      disk_bytes: Int(10 * GiB, 0, 'disk tier capacity (bytes)'), // 10 GiB
      memory_bytes: Int(256 * MiB, 0, 'memory tier capacity (bytes)'), // 256 MiB
      /** Objects up to this size are also held in memory. */
      memory_object_max: Int(1 * MiB, 0, 'largest object held in memory (bytes)'), // 1 MiB
      metadata_entries: Int(100_000, 0, 'metadata cache entries'),
    }),
    buckets: Type.Object(
      { ...PolicyFields, override: Type.Record(Type.String(), PolicyOverride, { default: {} }) },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

export type CacheConfig = Static<typeof CacheConfigSchema>;
export type BucketPolicy = Omit<CacheConfig['buckets'], 'override'>;

/**
 * Names: environment variables are the TOML path upper-cased and joined with `_` under
 * SVC_CACHE_; records (`buckets.override`) are set in the file only. No flags but --config.
 */
const loader = defineConfig({
  schema: CacheConfigSchema,
  naming: { env: (path) => (path.join('.') === 'buckets.override' ? null : 'SVC_CACHE_' + path.join('_').toUpperCase()) },
  file: { flag: '--config', env: 'SVC_CACHE_CONFIG' },
  env: { kind: 'fields', skipEmpty: false }, // an empty SVC_CACHE_METRICS_LISTEN turns metrics off
  fromText: (field, raw) => {
    if (field.kind === 'integer') return /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : raw;
    if (field.kind === 'boolean') return raw === 'true' ? true : raw === 'false' ? false : raw;
    return raw;
  },
  validator: 'ajv',
});

const ONLY_CONFIG = '(svc-cache takes only --config FILE)';

function describeSource(p: SourceProblem): string {
  switch (p.kind) {
    case 'argument': return `${p.arg}: unexpected argument ${ONLY_CONFIG}`;
    case 'unknown-flag': case 'takes-no-value': return `${p.name}: unexpected argument ${ONLY_CONFIG}`;
    case 'missing-value': return `${p.name}: missing value ${ONLY_CONFIG}`;
    case 'file': return p.problem.kind === 'unreadable' ? `cannot read config file ${p.file}: ${p.problem.code}` : `${p.file}: ${describeTomlProblem(p.problem)}`;
    case 'unknown-key': return `${whereOf(p.entry)}: ${p.entry.name}: unknown key`;
    case 'not-a-table': return `${whereOf(p.entry)}: ${p.entry.name}: must be object`;
  }
}

/** The file, or the environment variable, a value came from. */
const whereOf = (e: Entry): string => (e.source === 'file' ? e.file! : e.name);

/**
 * Loads and validates the configuration. `argv` may hold `--config FILE`; nothing else.
 * Returns every problem found, not just the first.
 */
export function loadCacheConfig(argv: readonly string[], env: NodeJS.ProcessEnv): { config: CacheConfig } | { errors: string[] } {
  const loaded = loader.load(argv, env);
  const src = (k: string) => {
    const e = loaded.effective(k);
    return e ? whereOf(e) : (loaded.file ?? 'default');
  };
  const errors = loaded.sourceProblems.map(describeSource);
  for (const v of loaded.invalidValues) {
    const key = v.path.join('.') || '(root)';
    errors.push(`${v.entry ? whereOf(v.entry) : (loaded.file ?? 'default')}: ${key}: ${v.kind === 'unknown' ? 'unknown key' : v.message}`);
  }
  // Schema errors and the checks across keys below are reported together (docs/s3-cache.md): a type
  // error in one key must not hide a bad `listen` in another. The checks read a key only when it has
  // the type the schema wants (every default is filled in, valid or not).
  const str = (k: string): string | undefined => {
    const v = k.split('.').reduce<unknown>((at, p) => (typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[p] : undefined), loaded.config);
    return typeof v === 'string' ? v : undefined;
  };
  const metricsListen = str('metrics.listen');
  for (const k of ['server.listen', ...(metricsListen !== '' ? ['metrics.listen'] : [])]) {
    const v = str(k);
    if (v !== undefined && !parseHostPort(v).ok) errors.push(`${src(k)}: ${k}: must be host:port (got ${JSON.stringify(v)})`);
  }
  if (str('server.addressing.style') === 'virtual_hosted' && str('server.addressing.domain') === '')
    errors.push(`${src('server.addressing.style')}: server.addressing.domain: required with style = "virtual_hosted"`);
  const cert = str('server.tls.cert');
  const key = str('server.tls.key');
  if (cert !== undefined && key !== undefined && (cert === '') !== (key === ''))
    errors.push(`${src('server.tls.cert')}: server.tls: cert and key go together`);
  const endpoint = str('origin.endpoint');
  if (endpoint === '') errors.push(`${src('origin.endpoint')}: origin.endpoint: required (the origin's base URL)`);
  else if (endpoint !== undefined) {
    try {
      const u = new URL(endpoint);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
    } catch {
      errors.push(`${src('origin.endpoint')}: origin.endpoint: must be an http:// or https:// URL (got ${JSON.stringify(endpoint)})`);
    }
  }
  if (str('origin.credentials') === 'static' && (str('origin.access_key_id') === '' || str('origin.secret_access_key') === ''))
    errors.push(`${src('origin.credentials')}: origin: credentials = "static" needs access_key_id and secret_access_key`);
  if (str('auth.mode') === 'static' && (str('auth.access_key_id') === '' || str('auth.secret_access_key') === ''))
    errors.push(`${src('auth.mode')}: auth: mode = "static" needs access_key_id and secret_access_key`);
  const metricsPath = str('metrics.path');
  if (metricsPath !== undefined && !metricsPath.startsWith('/')) errors.push(`${src('metrics.path')}: metrics.path: must start with /`);
  if (errors.length > 0) return { errors };
  return { config: loaded.config }; // the schema validated it
}

/** The effective policy of one bucket. */
export function policyFor(config: CacheConfig, bucket: string): BucketPolicy {
  const { override, ...base } = config.buckets;
  return { ...base, ...(override[bucket] ?? {}) };
}

/** A config with defaults for tests and embedding: `over` is merged section by section. */
export function cacheConfig(over: DeepPartial<CacheConfig>): CacheConfig {
  const loaded = loader.loadDocument(JSON.parse(JSON.stringify(over)) as Record<string, unknown>, 'cacheConfig()');
  if (!loaded.ok) throw new Error('invalid config: ' + [...loaded.sourceProblems.map(describeSource), ...loaded.invalidValues.map((v) => `${v.path.join('.')}: ${v.message}`)].join('; '));
  return loaded.config;
}

export type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };
