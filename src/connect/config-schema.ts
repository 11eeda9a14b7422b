/**
 * The schema of config.toml (spec "Configuration"): every section and default, in one TypeBox
 * schema from which the TS type is derived. Unknown keys are errors (a typo must not be silently
 * ignored). Durations are numbers of ms or strings like "5s" (src/connect/duration.ts).
 */
import { type Static, Type as T } from '@sinclair/typebox';

const Duration = (d: string) => T.Union([T.String(), T.Number({ minimum: 0 })], { default: d });
const Strict = { additionalProperties: false } as const;

const Retry = (attempts: number, min: string, max: string) =>
  T.Object(
    {
      /** Attempts in all, the first included. */
      max_attempts: T.Integer({ minimum: 1, default: attempts }),
      initial_backoff: Duration(min),
      max_backoff: Duration(max),
    },
    { ...Strict, default: {} },
  );

export const KafkaSection = T.Object(
  {
    bootstrap_servers: T.String({ minLength: 1, default: 'localhost:9092' }),
    client_id: T.String({ minLength: 1, default: 'svc-connectors' }),
    security_protocol: T.Union([T.Literal('plaintext'), T.Literal('ssl'), T.Literal('sasl_plaintext'), T.Literal('sasl_ssl')], { default: 'plaintext' }),
    sasl: T.Object(
      {
        mechanism: T.Union([T.Literal('plain'), T.Literal('PLAIN'), T.Literal('scram-sha-256'), T.Literal('SCRAM-SHA-256'), T.Literal('scram-sha-512'), T.Literal('SCRAM-SHA-512')], { default: 'plain' }),
        username: T.String({ default: '' }),
        /** A password, or an access token of the node. */
        password: T.String({ default: '' }),
      },
      { ...Strict, default: {} },
    ),
    tls: T.Object(
      {
        ca_file: T.String({ default: '' }),
        cert_file: T.String({ default: '' }),
        key_file: T.String({ default: '' }),
        verify_hostname: T.Boolean({ default: true }),
      },
      { ...Strict, default: {} },
    ),
    /** Any other client setting, applied to every client (see docs/connectors.md for the names understood). */
    properties: T.Record(T.String(), T.Union([T.String(), T.Number(), T.Boolean()]), { default: {} }),
  },
  { ...Strict, default: {} },
);

export const StateSection = T.Object(
  {
    storage: T.Union([T.Literal('file'), T.Literal('http')], { default: 'file' }),
    /** Directory for file storage; one file per source, named by key. */
    path: T.String({ minLength: 1, default: 'local_state' }),
    http: T.Object(
      {
        url: T.String({ default: '' }),
        load_method: T.String({ default: 'get' }),
        save_method: T.String({ default: 'put' }),
        timeout: Duration('5s'),
        request_headers: T.Record(T.String(), T.String(), { default: {} }),
        retry: Retry(4, '200ms', '2s'),
      },
      { ...Strict, default: {} },
    ),
  },
  { ...Strict, default: {} },
);

export const ConnectorsSection = T.Object(
  {
    config_type: T.Union([T.Literal('local'), T.Literal('http')], { default: 'local' }),
    /**
     * What startup does with a connector that cannot start (missing plugin, open() failing or
     * slow): `retry` starts the others and starts it again with backoff (status degraded);
     * `strict` is the spec's rule: the runtime exits, naming every missing plugin at once.
     */
    startup: T.Union([T.Literal('retry'), T.Literal('strict')], { default: 'retry' }),
    /** Definitions directory for `local`; the deployment layout's directory by default. */
    config_dir: T.String({ default: '/etc/svc-connectors/connectors' }),
    http: T.Object(
      {
        base_url: T.String({ default: '' }),
        /** Paths under base_url: `list` (all definitions), `get`, `create`, `update`, `delete` ({type}, {key}, {version} substituted). */
        url_templates: T.Record(T.String(), T.String(), { default: {} }),
        request_headers: T.Record(T.String(), T.String(), { default: {} }),
        /** Where the definitions are in the list response: `data_path` (dot path, empty = the body). */
        response: T.Object({ data_path: T.String({ default: '' }) }, { ...Strict, default: {} }),
        timeout: Duration('5s'),
        retry: Retry(4, '200ms', '2s'),
      },
      { ...Strict, default: {} },
    ),
  },
  { ...Strict, default: {} },
);

export const HttpSection = T.Object(
  {
    enabled: T.Boolean({ default: true }),
    /** host:port; port 0 picks a free port (tests). The container image sets 0.0.0.0:8081. */
    address: T.String({ minLength: 1, default: '127.0.0.1:8081' }),
    /** When non-empty every request must carry it in the `api-key` header. */
    api_key: T.String({ default: '' }),
    metrics: T.Object({ enabled: T.Boolean({ default: false }), endpoint: T.String({ pattern: '^/', default: '/metrics' }) }, { ...Strict, default: {} }),
    cors: T.Object(
      {
        enabled: T.Boolean({ default: false }),
        allowed_origins: T.Array(T.String(), { default: ['*'] }),
        allowed_methods: T.Array(T.String(), { default: ['GET', 'POST', 'PUT', 'DELETE'] }),
        allowed_headers: T.Array(T.String(), { default: ['content-type', 'api-key'] }),
      },
      { ...Strict, default: {} },
    ),
    tls: T.Object({ enabled: T.Boolean({ default: false }), cert_file: T.String({ default: '' }), key_file: T.String({ default: '' }) }, { ...Strict, default: {} }),
  },
  { ...Strict, default: {} },
);

const OtlpTarget = T.Object({ endpoint: T.String({ default: '' }), transport: T.Union([T.Literal('grpc'), T.Literal('http')], { default: 'http' }) }, { ...Strict, default: {} });

export const ConfigSchema = T.Object(
  {
    kafka: KafkaSection,
    state: StateSection,
    connectors: ConnectorsSection,
    http: HttpSection,
    logging: T.Object({ format: T.Union([T.Literal('text'), T.Literal('json')], { default: 'text' }) }, { ...Strict, default: {} }),
    telemetry: T.Object(
      { enabled: T.Boolean({ default: false }), service_name: T.String({ default: 'svc-connectors' }), logs: OtlpTarget, traces: OtlpTarget },
      { ...Strict, default: {} },
    ),
  },
  Strict,
);

export type ConnectorsConfig = Static<typeof ConfigSchema>;
